/**
 * Where credentials made from the gateway host's own identity may go when a channel is given through the management
 * API: an `ambient` key's SigV4-signed requests or bearer tokens (metadata-service.ts), and the tokens a `vertex`
 * external_account key makes from a subject token of the host's (its AWS role, its metadata service, a private
 * address). A console administrator is not necessarily the host's operator: such credentials go only to the cloud's own
 * hosts, over https, or to hosts the operator lists in AMBIENT_ENDPOINTS (a corporate proxy, a private endpoint with a
 * name of its own). Channels from GATEWAY_CONFIG and the quick-start variables are the operator's and not checked
 * (channel-key.ts KeySource). After the save, a subject token URL taken for being public is read from a public address
 * only (google/subject-token.ts), and a channel stored before this rule that breaks it is disabled as it loads
 * (routing/stored-identity-check.ts).
 * @module
 */
import { isPrivateAddress } from '../lib/safe-fetch'

export type Cloud = 'aws' | 'google' | 'azure'

/**
 * The cloud's own hosts. AWS's are Bedrock's endpoints (runtime, control plane, agents, FIPS; China's partition) and
 * their VPC endpoints' names, not all of `*.amazonaws.com`: API Gateway, load balancers and EC2 instances there are
 * customers' own servers. Azure's are its AI resources' (Azure OpenAI, AI services, Foundry; US Government, China):
 * a resource under them is Azure's service, which validates a token and gives it to no one.
 */
const OFFICIAL: Record<Cloud, { host: RegExp; names: string }> = {
	aws: {
		host: /^(vpce-[a-z0-9-]+\.)?bedrock(-[a-z0-9]+)*\.[a-z0-9-]+\.(vpce\.)?amazonaws\.com(\.cn)?$/,
		names: "bedrock*.{region}.amazonaws.com (or .amazonaws.com.cn, or a VPC endpoint's vpce-….bedrock*.{region}.vpce.amazonaws.com)",
	},
	google: { host: /^([a-z0-9-]+\.)+googleapis\.com$/, names: '*.googleapis.com' },
	azure: {
		host: /^[a-z0-9-]+\.(openai\.azure\.(com|us|cn)|cognitiveservices\.azure\.(com|us|cn)|services\.ai\.azure\.com)$/,
		names: '*.openai.azure.com, *.cognitiveservices.azure.com, *.services.ai.azure.com (or .azure.us, .azure.cn)',
	},
}

const hostOf = (url: URL) => url.hostname.toLowerCase().replace(/^\[|\]$/g, '')

/** An AMBIENT_ENDPOINTS entry: a host as it is, or `*.suffix` for any host under the suffix. */
const listed = (host: string, allow: readonly string[]) => allow.some((a) => (a.startsWith('*.') ? host.endsWith(a.slice(1)) : host === a))

/**
 * Why `url` may not receive the host's credentials of `cloud`, or undefined when it may: the cloud's own host over
 * https, or a host AMBIENT_ENDPOINTS lists. Says where they may go, never the URL (it may be part of a key).
 * @example identityEndpointProblem('https://bedrock-runtime.us-east-1.amazonaws.com', 'aws', []) // undefined
 */
export function identityEndpointProblem(url: string, cloud: Cloud, allow: readonly string[]): string | undefined {
	let u: URL
	try {
		u = new URL(url)
	} catch {
		return 'is not a URL'
	}
	const host = hostOf(u)
	if (listed(host, allow)) return undefined
	if (u.protocol === 'https:' && !u.username && !u.password && OFFICIAL[cloud].host.test(host)) return undefined
	return `through the management API it must be an https URL on ${OFFICIAL[cloud].names}, or on a host the operator lists in AMBIENT_ENDPOINTS`
}

/**
 * The first of `sends` (the fields an external_account key's tokens go to) that may not receive the host's credentials
 * of `cloud`, with why; undefined when all may. A key given through the management API with such a field was taken
 * only because its subject token is not the host's: channel-key.ts at the save, subject-token.ts at every fetch.
 */
export function foreignSend(sends: readonly { field: string; url: string }[], cloud: Cloud, allow: readonly string[]): { field: string; why: string } | undefined {
	for (const s of sends) {
		const why = identityEndpointProblem(s.url, cloud, allow)
		if (why !== undefined) return { field: s.field, why }
	}
	return undefined
}

/** A name resolves in well under this where it resolves at all. */
const LOOKUP_MS = 3_000

/**
 * Whether a subject token URL reads something of the host's rather than a public identity provider's: a loopback,
 * link-local (metadata services), private or otherwise non-public address, or a name resolving to one (or to nothing:
 * a name unknown now may be an internal one later).
 */
export async function isHostAddress(url: string): Promise<boolean> {
	const host = hostOf(new URL(url))
	if (/^[\d.]+$/.test(host) || host.includes(':')) return isPrivateAddress(host)
	try {
		const found = await Promise.race([Bun.dns.lookup(host, {}), Bun.sleep(LOOKUP_MS).then(() => [])])
		return found.length === 0 || found.some((a) => isPrivateAddress(a.address))
	} catch {
		return true
	}
}
