/**
 * GATEWAY_CONFIG: channels and model prices declared in a JSON or YAML file, validated here with messages that
 * name the file, the entry and the field, then applied at every start (config-apply.ts).
 * @module
 */
import { type Static, type TLiteral, type TNull, type TNumber, type TRecord, type TSchema, type TString, type TTemplateLiteral, type TUnion, Type as T } from '@sinclair/typebox'
import { Value, type ValueError, ValueErrorType } from '@sinclair/typebox/value'
import { usdToMicros } from '../billing/money'
import { UNIT_PRICE_NAMES, UNIT_PRICE_PATTERN } from '../billing/unit-prices'
import { CHANNEL_TYPES } from '../providers/channel-types'
import { didYouMean, schemaKeys } from './nearest-key'
import { jsonDuplicateKey, jsonErrorAt, keyPosition, type Position, yamlDuplicateKey, yamlErrorLine } from './parse-position'
import { BaseUrl, ChannelSettings, guardrailProblem, INT32_MAX, Priority, Weight, unlistedMapKey, unlistedMapKeyMessage } from './channel-settings'
import { pointerKeys } from '../lib/json-pointer'

const Usd = T.Number({ minimum: 0 })

export const ChannelEntry = T.Object(
	{
		name: T.String({ minLength: 1 }),
		type: T.Union(CHANNEL_TYPES.map((c) => T.Literal(c))),
		base_url: BaseUrl,
		api_key: T.String(),
		models: T.Array(T.String({ minLength: 1 }), { minItems: 1 }),
		priority: T.Optional(Priority),
		weight: T.Optional(Weight),
		model_map: T.Optional(T.Record(T.String(), T.String())),
		enabled: T.Optional(T.Boolean()),
		settings: T.Optional(ChannelSettings),
	},
	// A misspelt field ("prioirty") would otherwise be dropped without a word.
	{ additionalProperties: false },
)
export type ChannelEntry = Static<typeof ChannelEntry>

/** A priced model's name: its unique index holds ~2,700 bytes at most, and no vendor's model id comes near 200 characters. */
const ModelName = T.String({ minLength: 1, maxLength: 200 })

const ModelFields = T.Object({
	name: ModelName,
	input_per_mtok: T.Optional(Usd),
	output_per_mtok: T.Optional(Usd),
	cache_read_per_mtok: T.Optional(Usd),
	cache_write_per_mtok: T.Optional(Usd),
	per_request: T.Optional(Usd),
	max_output_tokens: T.Optional(T.Integer({ minimum: 1, maximum: INT32_MAX })),
	context_window: T.Optional(T.Integer({ minimum: 1, maximum: INT32_MAX })),
	enabled: T.Optional(T.Boolean()),
})

/**
 * Unit prices in USD (and the one factor, `us_inference_multiplier`): only the names billing/unit-prices.ts lists.
 * Typed as `per_*`, `*_per_mtok` and `*_multiplier` keys (the checked pattern is narrower) so that the entry's other
 * fields keep their own types.
 */
type UnitKey = TUnion<[TTemplateLiteral<[TLiteral<'per_'>, TString]>, TTemplateLiteral<[TString, TLiteral<'_per_mtok'>]>, TTemplateLiteral<[TString, TLiteral<'_multiplier'>]>]>
const UnitPrices = T.Record(T.String({ pattern: UNIT_PRICE_PATTERN }), Usd, {
	description: `Unit prices in USD: ${UNIT_PRICE_NAMES}`,
}) as unknown as TRecord<UnitKey, TNumber>

// A field neither part names is refused: a misspelt price must not bill that price at $0.
export const ModelEntry = T.Intersect([ModelFields, UnitPrices], { unevaluatedProperties: false })
export type ModelEntry = Static<typeof ModelEntry>

/** `null` in a PATCH: remove the stored value (input and output then cost 0, as when a new entry leaves them out). */
const Clearable = <S extends TSchema>(s: S) => T.Optional(T.Union([s, T.Null()]))

const UnitPriceUpdates = T.Record(T.String({ pattern: UNIT_PRICE_PATTERN }), T.Union([Usd, T.Null()]), {
	description: `Unit prices in USD, null to remove one: ${UNIT_PRICE_NAMES}`,
}) as unknown as TRecord<UnitKey, TUnion<[TNumber, TNull]>>

/**
 * The management API's PATCH: a field left out keeps its stored value, a price set to null is removed. Without
 * null an emptied price could not be taken away and went on billing.
 */
export const ModelEntryUpdate = T.Intersect(
	[
		T.Object({
			name: T.Optional(ModelName),
			input_per_mtok: Clearable(Usd),
			output_per_mtok: Clearable(Usd),
			cache_read_per_mtok: Clearable(Usd),
			cache_write_per_mtok: Clearable(Usd),
			per_request: Clearable(Usd),
			max_output_tokens: Clearable(T.Integer({ minimum: 1, maximum: INT32_MAX })),
			context_window: Clearable(T.Integer({ minimum: 1, maximum: INT32_MAX })),
			enabled: T.Optional(T.Boolean()),
		}),
		UnitPriceUpdates,
	],
	{ unevaluatedProperties: false },
)
export type ModelEntryUpdate = Static<typeof ModelEntryUpdate>

const GatewayFile = T.Object({
	channels: T.Optional(T.Array(T.Unknown())),
	models: T.Optional(T.Array(T.Unknown())),
})
const FILE_FIELDS = Object.keys(GatewayFile.properties)

/** Where in the file the key at a path (`['models', '0', 'cached_input_per_mtok']`) is written, when known. */
export type Locate = (path: readonly string[]) => Position | undefined

export type GatewayConfig = { channels: ChannelEntry[]; models: ModelEntry[] }

/** What an entry may name, for the message about a field it may not. */
const CHANNEL_FIELDS = Object.keys(ChannelEntry.properties).join(', ')
const MODEL_FIELDS = `${Object.keys(ModelFields.properties).join(', ')}, and unit prices ${UNIT_PRICE_NAMES}`

export class ConfigError extends Error {}

/** Reads and validates the file. Throws ConfigError naming file, entry and field. */
export async function loadGatewayFile(path: string): Promise<GatewayConfig> {
	const file = Bun.file(path)
	if (!(await file.exists())) throw new ConfigError(`${path}: file not found`)
	const text = await file.text()
	const yaml = /\.ya?ml$/i.test(path)
	let raw: unknown
	try {
		raw = yaml ? Bun.YAML.parse(text) : JSON.parse(text)
	} catch (e) {
		// Bun's message says what, not where: the place is found apart (parse-position.ts).
		const at = yaml ? yamlErrorLine(text) : jsonErrorAt(text)
		const where = typeof at === 'number' ? ` at line ${at}` : at ? ` at line ${at.line}, column ${at.column}` : ''
		// A name that says neither was read as JSON: say so, since the file may well be YAML.
		const how = yaml || /\.json$/i.test(path) ? '' : 'read as JSON (only a name ending .yaml or .yml is read as YAML): '
		throw new ConfigError(`${path}: cannot parse${where}: ${how}${(e as Error).message}`)
	}
	// Both parsers keep the last of a key given twice: a price copied and edited would bill one of them silently.
	const twice = yaml ? yamlDuplicateKey(text) : jsonDuplicateKey(text)
	if (twice) throw new ConfigError(`${path}: line ${twice.line}, column ${twice.column}: key "${twice.key}" given twice (${twice.path}); remove one`)
	const parse = yaml ? (t: string) => Bun.YAML.parse(t) : (t: string) => JSON.parse(t)
	return parseGatewayConfig(raw, path, (at) => keyPosition(text, at, parse))
}

/**
 * Validates a parsed file. Every object is closed (the schemas above and channel-settings.ts refuse a key they do not
 * name), but for the open maps `model_map` and `settings.headers`; a refused key is named with the nearest known one
 * and, through `locate`, its line and column.
 */
export function parseGatewayConfig(raw: unknown, source = 'GATEWAY_CONFIG', locate: Locate = () => undefined): GatewayConfig {
	const at = (path: readonly string[]) => {
		const p = locate(path)
		return p ? `${source}: line ${p.line}, column ${p.column}` : source
	}
	if (!Value.Check(GatewayFile, raw)) throw new ConfigError(`${source}: must be an object with "channels" and/or "models" arrays`)
	// A misspelt "modles" would drop every price.
	const stray = Object.keys(raw).find((k) => !FILE_FIELDS.includes(k))
	if (stray !== undefined) throw new ConfigError(`${at([stray])}: unknown field "${stray}"${hint(stray, FILE_FIELDS)} (allowed: ${FILE_FIELDS.join(', ')})`)
	const channels = (raw.channels ?? []).map((c, i) => check(ChannelEntry, c, ['channels', String(i)], at, CHANNEL_FIELDS))
	const models = (raw.models ?? []).map((m, i) => check(ModelEntry, m, ['models', String(i)], at, MODEL_FIELDS))
	for (const [i, c] of channels.entries()) {
		const key = unlistedMapKey(c.models, c.model_map)
		if (key !== undefined) throw new ConfigError(`${at(['channels', String(i), 'model_map', key])}: channels[${i}] ("${c.name}"): field "model_map.${key}": ${unlistedMapKeyMessage(key)}`)
		const guard = guardrailProblem(c.settings)
		if (guard) throw new ConfigError(`${at(['channels', String(i), 'settings', guard.given])}: channels[${i}] ("${c.name}"): field "settings.${guard.field}": ${guard.message}`)
	}
	dupes(channels.map((c) => c.name), `${source}: channels`)
	dupes(models.map((m) => m.name), `${source}: models`)
	for (const [i, m] of models.entries()) {
		// Every other field is a USD price (the schema admits no other); micro-USD must hold it exactly.
		for (const [k, v] of Object.entries(m)) {
			if (k === 'name' || k === 'enabled' || k === 'max_output_tokens' || k === 'context_window') continue
			try {
				usdToMicros(v as number)
			} catch (e) {
				throw new ConfigError(`${at(['models', String(i), k])}: models[${i}] ("${m.name}"): field "${k}": ${(e as Error).message}`)
			}
		}
	}
	return { channels, models }
}

/** `: did you mean "cache_read_per_mtok"?` when a known key is near, else nothing. */
function hint(key: string, known: readonly string[]): string {
	const near = didYouMean(key, known)
	return near && `: ${near}`
}

function check<S extends Parameters<typeof Value.Check>[0]>(schema: S, value: unknown, entry: string[], at: (path: readonly string[]) => string, allowed: string): Static<S> {
	if (Value.Check(schema, value)) return value as Static<S>
	const name = (value as { name?: unknown } | null)?.name
	const where = `${entry[0]}[${entry[1]}]`
	const label = typeof name === 'string' ? `${where} ("${name}")` : where
	const first = Value.Errors(schema, value).First()
	// A JSON pointer below the entry.
	const path = first ? pointerKeys(first.path) : []
	const field = path.join('.') || '(entry)'
	const prefix = `${at([...entry, ...path])}: ${label}`
	if (first?.type === ValueErrorType.ObjectAdditionalProperties || first?.type === ValueErrorType.IntersectUnevaluatedProperties) {
		// A key of a map with a pattern (settings.headers) is not unknown but malformed.
		const keyPattern = first.schema.patternProperties && Object.keys(first.schema.patternProperties)[0]
		if (keyPattern) throw new ConfigError(`${prefix}: field "${field}": not a valid name (it must match ${keyPattern})`)
		// Deeper than the entry (settings.timeoutz): what that object may name.
		const nested = path.length > 1 && first.schema.properties ? Object.keys(first.schema.properties).join(', ') : undefined
		throw new ConfigError(`${prefix}: unknown field "${field}"${hint(path.at(-1)!, schemaKeys(first.schema))} (allowed: ${nested ?? allowed})`)
	}
	throw new ConfigError(`${prefix}: field "${field}" ${first ? describe(first) : 'is invalid'}`)
}

/**
 * TypeBox's message, except where it hides what is wanted: a union of literals ("type") lists them, and a pattern
 * with a description (base_url) says what it takes rather than the regular expression.
 */
function describe(e: ValueError): string {
	if (e.value === undefined) return 'is required'
	if (e.type === ValueErrorType.StringPattern && typeof e.schema.description === 'string') return `does not fit: ${e.schema.description}, not ${JSON.stringify(e.value)}`
	const literals = (e.schema.anyOf as Array<{ const?: unknown }> | undefined)?.map((s) => s.const)
	if (e.type === ValueErrorType.Union && literals?.every((l) => typeof l === 'string')) return `must be one of ${literals.join(', ')}, not ${JSON.stringify(e.value)}`
	return e.message
}

function dupes(names: string[], where: string) {
	const seen = new Set<string>()
	for (const n of names) {
		if (seen.has(n)) throw new ConfigError(`${where}: duplicate name "${n}"`)
		seen.add(n)
	}
}
