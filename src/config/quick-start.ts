/**
 * The quick start: vendor credentials in the environment, under the names the vendors' own SDKs read, make a default
 * channel per vendor at every start (`{type}-default`, stored with source `env`), when no configured channel has that
 * type. OPENAI_API_KEY, ANTHROPIC_API_KEY and GEMINI_API_KEY each make one; the cloud vendors' (Bedrock, Azure OpenAI,
 * Vertex AI) are read by quick-start-cloud.ts. config-apply.ts writes them and disables those whose variables went.
 * @module
 */
import { cloudQuickStarts, type QuickStartChannel } from './quick-start-cloud'
import type { ChannelEntry, GatewayConfig } from './gateway-file'

/**
 * OpenAI's, Anthropic's and Google's own APIs. Their globs must not overlap across vendors: OpenAI's embeddings are
 * `text-embedding-3-*` and `text-embedding-ada-*`, while `text-embedding-004` is Google's (a wider `text-embedding-*`
 * sent half its calls to OpenAI, which answers 404 for it).
 */
export const OPENAI_MODELS = ['gpt-*', 'o1*', 'o3*', 'o4*', 'chatgpt-*', 'text-embedding-3-*', 'text-embedding-ada-*', 'dall-e-*', 'gpt-image-*', 'whisper-*', 'tts-*', 'omni-moderation-*']
const FIRST_PARTY: Array<{ env: string; type: 'openai' | 'anthropic' | 'gemini'; baseEnv: string; baseUrl: string; models: string[] }> = [
	{ env: 'OPENAI_API_KEY', type: 'openai', baseEnv: 'OPENAI_BASE_URL', baseUrl: 'https://api.openai.com/v1', models: OPENAI_MODELS },
	{ env: 'ANTHROPIC_API_KEY', type: 'anthropic', baseEnv: 'ANTHROPIC_BASE_URL', baseUrl: 'https://api.anthropic.com', models: ['claude-*'] },
	{ env: 'GEMINI_API_KEY', type: 'gemini', baseEnv: 'GEMINI_BASE_URL', baseUrl: 'https://generativelanguage.googleapis.com', models: ['gemini-*', 'text-embedding-004', 'gemini-embedding-*'] },
]

/** The entries withQuickStart made, each with the variables its key and settings came from (for messages naming them). */
const origins = new WeakMap<ChannelEntry, Record<string, string>>()

/**
 * The variable(s) a quick-start entry's field came from (`api_key`, `settings.region`…), or undefined for an entry of
 * GATEWAY_CONFIG. A quick-start entry is stored with source `env`, so that the console names the variable, not a file
 * the operator never wrote.
 */
export function quickStartOrigin(c: ChannelEntry): Record<string, string> | undefined {
	return origins.get(c)
}

/**
 * `cfg` with the quick-start channels added. Throws ConfigError naming the variable for one that cannot be used (a
 * missing partner variable, an unreadable key file); `warn` hears of variables left unused, and why.
 */
export async function withQuickStart(cfg: GatewayConfig, vars: Record<string, string | undefined>, warn: (message: string) => void = () => {}): Promise<GatewayConfig> {
	const out = { ...cfg, channels: [...cfg.channels] }
	const configured = (type: string) => cfg.channels.some((c) => c.type === type)
	const add = (q: QuickStartChannel) => {
		const entry: ChannelEntry = { name: `${q.type}-default`, type: q.type, base_url: q.baseUrl, api_key: q.apiKey, models: q.models, ...(q.settings && { settings: q.settings }) }
		origins.set(entry, q.origin)
		out.channels.push(entry)
	}
	const made = new Set<string>()
	for (const q of FIRST_PARTY) {
		const key = vars[q.env]
		if (!key || configured(q.type)) continue
		// Trimmed as config/env.ts checked it: a blank `OPENAI_BASE_URL= ` is unset, not a base URL of one space.
		add({ type: q.type, baseUrl: vars[q.baseEnv]?.trim() || q.baseUrl, apiKey: `env:${q.env}`, models: q.models, origin: { api_key: q.env } })
		made.add(q.type)
	}
	for (const q of await cloudQuickStarts(vars, { skip: configured, firstParty: made, warn })) add(q)
	return out
}
