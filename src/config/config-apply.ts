/**
 * Applies GATEWAY_CONFIG and the quick-start vendor keys to the database at every start: upsert by name; entries
 * that came from the file earlier but are gone now are disabled (not deleted), so old usage rows keep their
 * references. Channels and models created through the management API are left alone.
 * @module
 */
import { and, eq, notInArray } from 'drizzle-orm'
import { usdToMicros } from '../billing/money'
import { isUnitPrice } from '../billing/unit-prices'
import type { Db } from '../db/client'
import { channels, models } from '../db/schema'
import type { Cipher } from '../lib/secrets'
import { ConfigError, type ChannelEntry, type GatewayConfig, type ModelEntry } from './gateway-file'

/** Quick-start channels, created only when no configured channel has that type. */
const QUICK_START: Array<{ env: string; type: 'openai' | 'anthropic' | 'gemini'; baseEnv: string; baseUrl: string; models: string[] }> = [
	{ env: 'OPENAI_API_KEY', type: 'openai', baseEnv: 'OPENAI_BASE_URL', baseUrl: 'https://api.openai.com/v1', models: ['gpt-*', 'o1*', 'o3*', 'o4*', 'chatgpt-*', 'text-embedding-*', 'dall-e-*', 'gpt-image-*', 'whisper-*', 'tts-*', 'omni-moderation-*'] },
	{ env: 'ANTHROPIC_API_KEY', type: 'anthropic', baseEnv: 'ANTHROPIC_BASE_URL', baseUrl: 'https://api.anthropic.com', models: ['claude-*'] },
	{ env: 'GEMINI_API_KEY', type: 'gemini', baseEnv: 'GEMINI_BASE_URL', baseUrl: 'https://generativelanguage.googleapis.com', models: ['gemini-*', 'text-embedding-004', 'gemini-embedding-*'] },
]

export function withQuickStart(cfg: GatewayConfig, vars: Record<string, string | undefined>): GatewayConfig {
	const out = { ...cfg, channels: [...cfg.channels] }
	for (const q of QUICK_START) {
		const key = vars[q.env]
		if (!key || cfg.channels.some((c) => c.type === q.type)) continue
		out.channels.push({ name: `${q.type}-default`, type: q.type, base_url: vars[q.baseEnv] || q.baseUrl, api_key: `env:${q.env}`, models: q.models })
	}
	return out
}

function resolveKey(c: ChannelEntry, vars: Record<string, string | undefined>, source: string): string {
	if (!c.api_key.startsWith('env:')) return c.api_key
	const name = c.api_key.slice(4)
	const v = vars[name]
	if (!v) throw new ConfigError(`${source}: channel "${c.name}": field "api_key" names environment variable ${name}, which is not set`)
	return v
}

/**
 * A validated entry's prices as columns (micro-USD). Throws PriceError naming the field of a price micro-USD cannot
 * hold. Unit prices are kept only under names something charges: a stored name from before those were checked is
 * dropped at the next update (it never billed anything).
 */
function priceColumns(m: ModelEntry) {
	const micros = (v: number | undefined, field: string) => {
		if (v === undefined) return null
		try {
			return usdToMicros(v)
		} catch (e) {
			throw new PriceError(field, (e as Error).message)
		}
	}
	const extra: Record<string, number> = {}
	for (const [k, v] of Object.entries(m)) if (isUnitPrice(k)) extra[k] = micros(v as number, k)!
	return {
		inputPerMtok: micros(m.input_per_mtok, 'input_per_mtok') ?? 0,
		outputPerMtok: micros(m.output_per_mtok, 'output_per_mtok') ?? 0,
		cacheReadPerMtok: micros(m.cache_read_per_mtok, 'cache_read_per_mtok'),
		cacheWritePerMtok: micros(m.cache_write_per_mtok, 'cache_write_per_mtok'),
		perRequest: micros(m.per_request, 'per_request'),
		maxOutputTokens: m.max_output_tokens ?? null,
		prices: extra,
	}
}

export async function applyGatewayConfig(db: Db, cipher: Cipher, cfg: GatewayConfig, vars: Record<string, string | undefined>, source = 'GATEWAY_CONFIG') {
	const keys = new Map(cfg.channels.map((c) => [c.name, resolveKey(c, vars, source)]))
	await db.orm.transaction(async (tx) => {
		for (const c of cfg.channels) {
			const row = {
				type: c.type,
				baseUrl: c.base_url,
				apiKeyEnc: await cipher.encrypt(keys.get(c.name)!),
				models: c.models,
				modelMap: c.model_map ?? {},
				priority: c.priority ?? 0,
				weight: c.weight ?? 1,
				status: c.enabled === false ? 'disabled' : 'enabled',
				disabledReason: c.enabled === false ? 'disabled in config' : null,
				source: 'config',
				settings: c.settings ?? {},
				updatedAt: new Date(),
			}
			await tx.insert(channels).values({ name: c.name, ...row }).onConflictDoUpdate({ target: channels.name, set: row })
		}
		const names = cfg.channels.map((c) => c.name)
		await tx
			.update(channels)
			.set({ status: 'disabled', disabledReason: 'removed from config', updatedAt: new Date() })
			.where(names.length ? and(eq(channels.source, 'config'), notInArray(channels.name, names)) : eq(channels.source, 'config'))

		for (const m of cfg.models) {
			const row = { ...priceColumns(m), status: m.enabled === false ? 'disabled' : 'enabled', source: 'config', updatedAt: new Date() }
			await tx.insert(models).values({ name: m.name, ...row }).onConflictDoUpdate({ target: models.name, set: row })
		}
		const mnames = cfg.models.map((m) => m.name)
		await tx
			.update(models)
			.set({ status: 'disabled', updatedAt: new Date() })
			.where(mnames.length ? and(eq(models.source, 'config'), notInArray(models.name, mnames)) : eq(models.source, 'config'))
	})
}

/** A price that micro-USD cannot hold (more than 6 decimals, out of range), with the field it came from. */
export class PriceError extends Error {
	constructor(
		readonly field: string,
		message: string,
	) {
		super(`${field}: ${message}`)
	}
}

export { priceColumns }
