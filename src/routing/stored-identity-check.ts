/**
 * Channels stored through the management API before the host-identity rule (providers/ambient-endpoints.ts): their
 * `ambient` key, or a vertex external_account whose subject token is the host's, may send credentials made from the
 * gateway host's identity off the cloud's own hosts. The management API refuses such a save now; one saved before must
 * not keep working unseen, so the catalog disables it as it loads it (catalog.ts), saying this rule and AMBIENT_ENDPOINTS.
 * Channels from GATEWAY_CONFIG and the quick-start variables are the operator's and not checked.
 * @module
 */
import type { channels } from '../db/schema'
import { hostIdentityProblem } from '../providers/channel-key'

/** The types whose keys can be the host's identity. */
const CLOUD_TYPES = new Set(['bedrock', 'vertex', 'azure'])

type Row = Pick<typeof channels.$inferSelect, 'id' | 'type' | 'baseUrl' | 'apiKeyEnc' | 'source' | 'settings' | 'models' | 'modelMap'>

/**
 * A check of stored channels against AMBIENT_ENDPOINTS (`allow`): the reason to disable one, or undefined. Each channel's
 * answer is kept until its key or where it sends changes: a reload asks DNS (whether a subject token URL is the host's)
 * once per such channel, not at every reload; a name resolving elsewhere later is the subject token fetch's to refuse
 * (google/subject-token.ts).
 */
export function storedIdentityCheck(allow: readonly string[]): (r: Row, apiKey: string) => Promise<string | undefined> {
	const seen = new Map<number, { said: string; reason: string | undefined }>()
	return async (r, apiKey) => {
		if (r.source !== 'api' || !CLOUD_TYPES.has(r.type)) return undefined
		const said = JSON.stringify([r.type, r.apiKeyEnc, r.baseUrl, r.settings?.control_plane_url])
		const known = seen.get(r.id)
		if (known?.said === said) return known.reason
		const problem = await hostIdentityProblem({ type: r.type, apiKey, baseUrl: r.baseUrl, settings: r.settings ?? {}, models: r.models, modelMap: r.modelMap ?? {} }, allow)
		const reason =
			problem &&
			`saved through the management API before credentials made from the gateway host's identity were kept to its cloud's own hosts and AMBIENT_ENDPOINTS: ${problem.param}: ${problem.reason}. List the host in AMBIENT_ENDPOINTS, or change the channel, then enable it`
		seen.set(r.id, { said, reason })
		return reason
	}
}
