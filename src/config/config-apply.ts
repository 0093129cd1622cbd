/**
 * Applies GATEWAY_CONFIG and the quick-start vendor keys to the database at every start: upsert by name; entries
 * that came from the file (or a vendor key variable) earlier but are gone now are disabled (not deleted), so old usage rows keep their
 * references. Channels and models created through the management API are left alone. Only what differs is written,
 * and the caller learns whether anything did: other instances running on the same database then reload their
 * catalog at once (src/services.ts) rather than at their 30 s backstop.
 * @module
 */
import { and, eq, inArray, ne, notInArray, or, sql } from 'drizzle-orm'
import { usdToMicros } from '../billing/money'
import { isUnitPrice } from '../billing/unit-prices'
import type { Db } from '../db/client'
import { channels, models } from '../db/schema'
import type { Cipher } from '../lib/secrets'
import { channelKeyProblem } from '../providers/channel-key'
import { storedPrice } from '../routing/catalog'
import { ConfigError, type ChannelEntry, type GatewayConfig, type ModelEntry } from './gateway-file'
import { quickStartOrigin } from './quick-start'

/** Why a channel made at an earlier start is disabled at this one, by its source. */
const REMOVED = {
	config: 'removed from config',
	env: 'quick-start key no longer applied (its variable is unset, or GATEWAY_CONFIG has a channel of its type)',
} as const

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
		contextWindow: m.context_window ?? null,
		prices: extra,
	}
}

/**
 * Writes the config's channels and models where they differ from the database; returns whether anything changed
 * (a channel or model added, altered, enabled or disabled).
 */
export async function applyGatewayConfig(db: Db, cipher: Cipher, cfg: GatewayConfig, vars: Record<string, string | undefined>, source = 'GATEWAY_CONFIG'): Promise<boolean> {
	const keys = new Map(cfg.channels.map((c) => [c.name, resolveKey(c, vars, source)]))
	// A key that cannot work stops the start with why, as a bad field does, rather than failing the channel's first call.
	for (const c of cfg.channels) {
		const problem = await channelKeyProblem({ type: c.type, apiKey: keys.get(c.name)!, baseUrl: c.base_url, settings: c.settings ?? {}, models: c.models, modelMap: c.model_map ?? {} })
		if (!problem) continue
		// A quick-start channel's fields came from variables, not from a file: the message names the variable.
		const from = quickStartOrigin(c)?.[problem.param]
		throw new ConfigError(from ? `${from}: ${problem.reason} (quick-start channel "${c.name}")` : `${source}: channel "${c.name}": field "${problem.param}": ${problem.reason}`)
	}
	return db.orm.transaction(async (tx) => {
		let changed = false
		const names = cfg.channels.map((c) => c.name)
		const had = new Map((names.length ? await tx.select().from(channels).where(inArray(channels.name, names)) : []).map((r) => [r.name, r]))
		for (const c of cfg.channels) {
			const want = {
				type: c.type,
				baseUrl: c.base_url,
				models: c.models,
				modelMap: c.model_map ?? {},
				priority: c.priority ?? 0,
				weight: c.weight ?? 1,
				status: c.enabled === false ? 'disabled' : 'enabled',
				disabledReason: c.enabled === false ? 'disabled in config' : null,
				source: quickStartOrigin(c) ? 'env' : 'config',
				settings: c.settings ?? {},
			}
			const old = had.get(c.name)
			if (old && sameChannel(old, want) && (await holdsKey(cipher, old.apiKeyEnc, keys.get(c.name)!))) continue
			changed = true
			const row = { ...want, apiKeyEnc: await cipher.encrypt(keys.get(c.name)!), updatedAt: new Date() }
			await tx.insert(channels).values({ name: c.name, ...row }).onConflictDoUpdate({ target: channels.name, set: row })
		}
		for (const [source, reason] of Object.entries(REMOVED)) {
			const gone = await tx
				.update(channels)
				.set({ status: 'disabled', disabledReason: reason, updatedAt: new Date() })
				.where(
					and(
						names.length ? and(eq(channels.source, source), notInArray(channels.name, names)) : eq(channels.source, source),
						or(ne(channels.status, 'disabled'), sql`${channels.disabledReason} IS DISTINCT FROM ${reason}`),
					),
				)
				.returning({ id: channels.id })
			if (gone.length) changed = true
		}

		const mnames = cfg.models.map((m) => m.name)
		const priced = new Map((mnames.length ? await tx.select().from(models).where(inArray(models.name, mnames)) : []).map((r) => [r.name, r]))
		for (const m of cfg.models) {
			const want = { ...priceColumns(m), status: m.enabled === false ? 'disabled' : 'enabled', source: 'config' }
			const old = priced.get(m.name)
			if (old && sameModel(old, want)) continue
			changed = true
			const row = { ...want, updatedAt: new Date() }
			await tx.insert(models).values({ name: m.name, ...row }).onConflictDoUpdate({ target: models.name, set: row })
		}
		const unpriced = await tx
			.update(models)
			.set({ status: 'disabled', updatedAt: new Date() })
			.where(and(mnames.length ? and(eq(models.source, 'config'), notInArray(models.name, mnames)) : eq(models.source, 'config'), ne(models.status, 'disabled')))
			.returning({ id: models.id })
		if (unpriced.length) changed = true
		return changed
	})
}

type ChannelRow = typeof channels.$inferSelect
type ModelRow = typeof models.$inferSelect

/**
 * Whether a stored channel already is what the config says (its key aside). JSON columns compare by value: PostgreSQL
 * gives `jsonb` objects back with their keys reordered.
 */
function sameChannel(r: ChannelRow, want: Omit<ChannelRow, 'id' | 'name' | 'apiKeyEnc' | 'createdAt' | 'updatedAt'>): boolean {
	const have = { type: r.type, baseUrl: r.baseUrl, models: r.models, modelMap: r.modelMap ?? {}, priority: r.priority, weight: r.weight, status: r.status, disabledReason: r.disabledReason, source: r.source, settings: r.settings ?? {} }
	return Bun.deepEquals(have, want)
}

function sameModel(r: ModelRow, want: ReturnType<typeof priceColumns> & { status: string; source: string }): boolean {
	return Bun.deepEquals({ ...storedPrice(r), status: r.status, source: r.source }, want)
}

/** The stored key decrypts to `key` (one encrypted under another SECRET_KEY does not: it is written again). */
async function holdsKey(cipher: Cipher, enc: string, key: string): Promise<boolean> {
	try {
		return (await cipher.decrypt(enc)) === key
	} catch {
		return false
	}
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
