/**
 * GATEWAY_CONFIG: channels and model prices declared in a JSON or YAML file, validated here with messages that
 * name the file, the entry and the field, then applied at every start (config-apply.ts).
 * @module
 */
import { type Static, Type as T } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { usdToMicros } from '../billing/money'
import { CHANNEL_TYPES } from '../providers/channel-types'

const Usd = T.Number({ minimum: 0 })

export const ChannelEntry = T.Object({
	name: T.String({ minLength: 1 }),
	type: T.Union(CHANNEL_TYPES.map((c) => T.Literal(c))),
	base_url: T.String({ minLength: 1 }),
	api_key: T.String(),
	models: T.Array(T.String({ minLength: 1 }), { minItems: 1 }),
	priority: T.Optional(T.Integer()),
	weight: T.Optional(T.Integer({ minimum: 0 })),
	model_map: T.Optional(T.Record(T.String(), T.String())),
	enabled: T.Optional(T.Boolean()),
	settings: T.Optional(T.Record(T.String(), T.Unknown())),
})
export type ChannelEntry = Static<typeof ChannelEntry>

export const ModelEntry = T.Object(
	{
		name: T.String({ minLength: 1 }),
		input_per_mtok: T.Optional(Usd),
		output_per_mtok: T.Optional(Usd),
		cache_read_per_mtok: T.Optional(Usd),
		cache_write_per_mtok: T.Optional(Usd),
		per_request: T.Optional(Usd),
		max_output_tokens: T.Optional(T.Integer({ minimum: 1 })),
		enabled: T.Optional(T.Boolean()),
	},
	// Any other `per_*` key is a unit price in USD (per_image, per_minute, per_mchar …).
	{ additionalProperties: Usd },
)
export type ModelEntry = Static<typeof ModelEntry>

const GatewayFile = T.Object({
	channels: T.Optional(T.Array(T.Unknown())),
	models: T.Optional(T.Array(T.Unknown())),
})

export type GatewayConfig = { channels: ChannelEntry[]; models: ModelEntry[] }

export class ConfigError extends Error {}

/** Reads and validates the file. Throws ConfigError naming file, entry and field. */
export async function loadGatewayFile(path: string): Promise<GatewayConfig> {
	const file = Bun.file(path)
	if (!(await file.exists())) throw new ConfigError(`${path}: file not found`)
	const text = await file.text()
	let raw: unknown
	try {
		raw = /\.ya?ml$/i.test(path) ? Bun.YAML.parse(text) : JSON.parse(text)
	} catch (e) {
		throw new ConfigError(`${path}: cannot parse: ${(e as Error).message}`)
	}
	return parseGatewayConfig(raw, path)
}

export function parseGatewayConfig(raw: unknown, source = 'GATEWAY_CONFIG'): GatewayConfig {
	if (!Value.Check(GatewayFile, raw)) throw new ConfigError(`${source}: must be an object with "channels" and/or "models" arrays`)
	const channels = (raw.channels ?? []).map((c, i) => check(ChannelEntry, c, `${source}: channels[${i}]`))
	const models = (raw.models ?? []).map((m, i) => check(ModelEntry, m, `${source}: models[${i}]`))
	dupes(channels.map((c) => c.name), `${source}: channels`)
	dupes(models.map((m) => m.name), `${source}: models`)
	for (const [i, m] of models.entries()) {
		for (const [k, v] of Object.entries(m)) {
			if (k === 'name' || k === 'enabled' || k === 'max_output_tokens') continue
			if (!k.endsWith('_per_mtok') && !k.startsWith('per_'))
				throw new ConfigError(`${source}: models[${i}] ("${m.name}"): unknown field "${k}" (prices are *_per_mtok or per_*)`)
			try {
				usdToMicros(v as number)
			} catch (e) {
				throw new ConfigError(`${source}: models[${i}] ("${m.name}"): field "${k}": ${(e as Error).message}`)
			}
		}
	}
	return { channels, models }
}

function check<S extends Parameters<typeof Value.Check>[0]>(schema: S, value: unknown, where: string): Static<S> {
	if (Value.Check(schema, value)) return value as Static<S>
	const name = (value as { name?: unknown } | null)?.name
	const label = typeof name === 'string' ? `${where} ("${name}")` : where
	const first = Value.Errors(schema, value).First()
	const field = first?.path.replace(/^\//, '').replace(/\//g, '.') || '(entry)'
	const msg = first?.value === undefined && first ? 'is required' : first?.message
	throw new ConfigError(`${label}: field "${field}" ${msg}`)
}

function dupes(names: string[], where: string) {
	const seen = new Set<string>()
	for (const n of names) {
		if (seen.has(n)) throw new ConfigError(`${where}: duplicate name "${n}"`)
		seen.add(n)
	}
}
