/**
 * Where a channel came from, as the channels page and the channel form say it: the operator looks in the file or the
 * variable named, and learns that an edit made here is undone at the next start.
 */
import type { Channel } from '../types'

/**
 * The quick-start variables each type's `env` channel comes from (src/config/quick-start.ts, quick-start-cloud.ts):
 * `label` in the list, `all` in the form's note. A cloud vendor's key is one of two kinds, so both are named.
 */
const QUICK_START_VARS: Record<string, { label: string; all: string }> = {
	openai: { label: 'OPENAI_API_KEY', all: 'OPENAI_API_KEY' },
	anthropic: { label: 'ANTHROPIC_API_KEY', all: 'ANTHROPIC_API_KEY' },
	gemini: { label: 'GEMINI_API_KEY', all: 'GEMINI_API_KEY' },
	bedrock: { label: 'AWS_BEARER_TOKEN_BEDROCK or AWS_ACCESS_KEY_ID', all: 'AWS_BEARER_TOKEN_BEDROCK (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) with AWS_REGION' },
	azure: { label: 'AZURE_OPENAI_API_KEY or AZURE_CLIENT_ID', all: 'AZURE_OPENAI_ENDPOINT with AZURE_OPENAI_API_KEY (or AZURE_TENANT_ID and AZURE_CLIENT_ID with AZURE_CLIENT_SECRET, AZURE_CLIENT_CERTIFICATE_PATH or AZURE_FEDERATED_TOKEN_FILE)' },
	vertex: { label: 'GOOGLE_APPLICATION_CREDENTIALS', all: 'GOOGLE_APPLICATION_CREDENTIALS (a service_account, authorized_user, impersonated_service_account or external_account credentials file)' },
}

/** The origin of a channel made at start (null for one made here or through the management API). */
export function channelOrigin(c: Pick<Channel, 'source' | 'type'>): { label: string; note: string } | null {
	if (c.source === 'config') return { label: 'from GATEWAY_CONFIG', note: "This channel comes from GATEWAY_CONFIG: the file's values are applied again at the next start." }
	if (c.source !== 'env') return null
	const vars = QUICK_START_VARS[c.type] ?? { label: 'a vendor key variable', all: 'a vendor key variable' }
	return { label: `from ${vars.label}`, note: `This channel is the quick start's, made from ${vars.all}: its values are applied again at every start while the variables are set.` }
}
