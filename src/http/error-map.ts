/**
 * What anything thrown while serving a request means to the client: the GatewayError it becomes, whichever pipeline
 * caught it (Elysia's `onError`, src/app.ts; the hot routes, src/http/hot-route.ts).
 * @module
 */
import type { TSchema } from '@sinclair/typebox'
import { Value, ValueErrorType } from '@sinclair/typebox/value'
import { didYouMean, schemaKeys } from '../config/nearest-key'
import type { Services } from '../services'
import { GatewayError } from '../core/errors'
import { pointerKeys } from '../lib/json-pointer'

/**
 * The request's parts as Elysia parsed them, before its schemas coerced them, and its content type (which a body that
 * could not be parsed is named by).
 */
export type RequestParts = { query?: unknown; params?: unknown; body?: unknown; contentType?: string | null }

type FieldError = { type?: number; path?: string; message?: string; summary?: string; schema?: { pattern?: unknown; description?: unknown; const?: unknown; type?: unknown }; errors?: Iterable<FieldError>[] }
type ValidationLike = { all?: FieldError[]; type?: string; value?: unknown; validator?: unknown }

/** Maps anything thrown into a GatewayError; unknown errors are logged (redacted) and become a generic 500. */
export function toGatewayError(code: string | number, error: unknown, svc: Services, parts: RequestParts = {}): GatewayError {
	if (error instanceof GatewayError) return error
	switch (code) {
		case 'VALIDATION': {
			const v = error as ValidationLike
			const first = v.all?.[0] && specific(v.all[0])
			const detail = (patternRule(first) ?? first?.message ?? first?.summary ?? 'is invalid') + nearestField(first)
			let where = v.type ?? 'request'
			let field: string | null = first?.path ? fieldOf(first.path) : null
			if (v.type === 'property') {
				// A numeric query or path value out of bounds is refused after coercion, by its own schema alone: Elysia
				// reports the value, not where it stood (type "property", path ""), so it is looked up in the request.
				const found = coercedField(v, parts)
				where = found?.where ?? 'request'
				field = found?.field ?? null
			} else if (!field) field = v.type ?? 'body'
			return new GatewayError('invalid_request', `Invalid ${where}: ${field ? `"${field}" ` : ''}${detail}`, { param: field ?? undefined, code: validationCode(first) })
		}
		case 'PARSE':
			// A route's parse hook that refused the body itself (form-limits.ts, raw-json.ts) said why: Elysia wraps it.
			if ((error as Error | null)?.cause instanceof GatewayError) return (error as Error).cause as GatewayError
			return parseError(parts.contentType)
		case 'NOT_FOUND':
			return new GatewayError('not_found', 'Not found', { code: 'not_found' })
		case 'INVALID_COOKIE_SIGNATURE':
			return new GatewayError('authentication', 'Invalid session', { code: 'invalid_session' })
		default:
			const refused = dataException(error)
			if (refused) return new GatewayError('invalid_request', `Invalid value: ${refused}`, { code: 'invalid_value' })
			if (isDatabaseDown(error)) return new GatewayError('unavailable', 'Service temporarily unavailable: the database cannot be reached', { code: 'database_unavailable' })
			svc.log.error('unhandled error', {
				code: String(code),
				error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
				// A wrapped error's reason (Drizzle's "Failed query" says where, its cause says why).
				cause: error instanceof Error && error.cause instanceof Error ? `${error.cause.name}: ${error.cause.message}` : undefined,
				stack: error instanceof Error ? error.stack : undefined,
			})
			return new GatewayError('api_error', 'Internal error')
	}
}

/** The type checks whose failure is a value of the wrong JSON type. */
const TYPE_CHECKS = new Set([ValueErrorType.String, ValueErrorType.Number, ValueErrorType.Integer, ValueErrorType.Boolean, ValueErrorType.Array, ValueErrorType.Object, ValueErrorType.Null])

/** OpenAI's codes for a value past a bound (its 400 for `max_output_tokens: 5`: `integer_below_min_value`). */
const BOUND_CODES = new Map<number, string>([
	[ValueErrorType.IntegerMinimum, 'integer_below_min_value'],
	[ValueErrorType.IntegerMaximum, 'integer_above_max_value'],
	[ValueErrorType.StringMaxLength, 'string_above_max_length'],
	[ValueErrorType.ObjectMaxProperties, 'object_above_max_properties'],
	[ValueErrorType.ArrayMaxItems, 'array_above_max_length'],
])

/**
 * The code OpenAI gives a refused parameter, which its SDKs' callers switch on: `missing_required_parameter`,
 * `unknown_parameter`, `invalid_type`, a bound's (`integer_below_min_value`…), else `invalid_value`
 * (https://platform.openai.com/docs/guides/error-codes).
 */
function validationCode(e: FieldError | undefined): string {
	if (e?.type === ValueErrorType.ObjectRequiredProperty) return 'missing_required_parameter'
	if (e?.type === ValueErrorType.ObjectAdditionalProperties || e?.type === ValueErrorType.IntersectUnevaluatedProperties) return 'unknown_parameter'
	const bound = e?.type === undefined ? undefined : BOUND_CODES.get(e.type)
	if (bound) return bound
	return e?.type !== undefined && TYPE_CHECKS.has(e.type) ? 'invalid_type' : 'invalid_value'
}

/** A TypeBox error's path as a validation message names the field: its keys as written, joined by dots. */
export const fieldOf = (path: string): string => pointerKeys(path).join('.')

/** Paths of the model API, whose callers are SDKs that show the message alone. */
const MODEL_API = /^\/v1(beta)?\//

/**
 * The 404 of a path no route serves. On the model API it names the method and path, since an SDK shows only the
 * message (the AI SDK's calls to a route of a vendor's API the gateway lacks); elsewhere
 * it stays a bare "Not found", which the console reads as a route an older server lacks.
 * @example unknownRoute('POST', '/v1/assistants').message // 'No route POST /v1/assistants on this gateway (…)'
 */
export function unknownRoute(method: string, path: string): GatewayError {
	// A base URL ending in a slash joined to a path starting with one (`http://host/` + `/v1/chat/completions`).
	const single = path.replace(/\/{2,}/g, '/')
	const meant = single === path ? undefined : MODEL_API.test(single) ? single : withApiPrefix(single)
	if (meant)
		return new GatewayError('not_found', `No route ${method} ${path} on this gateway: the path has an empty segment (//); check the base URL of the client for a trailing slash (${method} ${meant} here)`, {
			code: 'not_found',
		})
	// `/v1` given twice: the Anthropic SDK's base URL is the root, where OpenAI's ends in /v1 (still a 404, with the way).
	const twice = /^\/v1\/(v1(?:beta)?\/.*)$/.exec(path)
	if (twice)
		return new GatewayError('not_found', `No route ${method} ${path} on this gateway: the path repeats /v1; give the client the base URL without it (${method} /${twice[1]} here; Anthropic's SDKs take the root, OpenAI's the root with /v1)`, {
			code: 'not_found',
		})
	if (!MODEL_API.test(path)) {
		const prefixed = withApiPrefix(path)
		if (prefixed)
			return new GatewayError('not_found', `No route ${method} ${path} on this gateway: the model API is under /v1 and /v1beta (${method} ${prefixed} here); check the base URL of the client`, {
				code: 'not_found',
			})
		return new GatewayError('not_found', 'Not found', { code: 'not_found' })
	}
	return new GatewayError('not_found', `No route ${method} ${path} on this gateway (GET /docs lists the routes it serves)`, { code: 'not_found' })
}

/** Model API paths a client given the root as its base URL calls without their prefix (@ai-sdk/anthropic appends only `/messages`). */
const UNPREFIXED = /^\/(?:chat\/completions|completions|messages|responses|embeddings|models|audio|images|moderations|rerank|files|batches|conversations)(?:\/|$)/

/** The path as the model API serves it: Gemini's methods (`/models/{model}:generateContent`) under /v1beta, the rest under /v1. */
function withApiPrefix(path: string): string | undefined {
	if (!UNPREFIXED.test(path)) return undefined
	return path.startsWith('/models/') && path.includes(':') ? `/v1beta${path}` : `/v1${path}`
}

/**
 * A body that could not be parsed, named by the content type it was sent as (QA non-chat item 10: a multipart body
 * with a bad boundary was told "not valid JSON"). No content type, or a JSON one, is JSON: what the endpoints take.
 * @example parseError('multipart/form-data').message // 'Malformed request body: multipart/form-data without a boundary …'
 */
export function parseError(contentType: string | null | undefined): GatewayError {
	const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase()
	if (!media || media === 'application/json' || media.endsWith('+json'))
		return new GatewayError('invalid_request', 'Malformed request body: not valid JSON', { code: 'invalid_json' })
	if (media.startsWith('multipart/') && !/;\s*boundary=/i.test(contentType ?? ''))
		return new GatewayError('invalid_request', `Malformed request body: ${media} without a boundary parameter in its content-type`, { code: 'invalid_body' })
	return new GatewayError('invalid_request', `Malformed request body: not valid ${media}`, { code: 'invalid_body' })
}

/** A type mismatch at the union's own path ("Expected number"), not a constraint ("Expected number to be …"). */
const kindMismatch = (e: FieldError, at: string | undefined) => e.path === at && !/ to /.test(e.message ?? '') && !e.errors?.length

/**
 * A schema that takes only given values (a literal, or a union of literals), or a catch-all's pattern taking every
 * value but its siblings' (`^(?!(?:text|image)$)…`: Anthropic's content blocks of types the gateway does not model).
 */
const isTag = (s: FieldError['schema'] & { anyOf?: Array<{ const?: unknown }> }) =>
	!!s && ('const' in s || (Array.isArray(s.anyOf) && s.anyOf.every((m) => 'const' in m)) || (typeof s.pattern === 'string' && s.pattern.startsWith('^(?!')))

/**
 * A member refusing the value on a tag of its own (`role`, `type`: a field right below the union's path that takes
 * fixed values) is not the member the value meant: `{role: "user"}` without content is a user message missing its
 * content, not an assistant message (which may omit it) with the wrong role.
 */
const refusesTag = (x: FieldError, at: string | undefined) =>
	x.path !== undefined && x.path.startsWith(`${at ?? ''}/`) && !x.path.slice((at ?? '').length + 1).includes('/') && isTag(x.schema as Parameters<typeof isTag>[0])

/**
 * When every member refuses the value on the same tag (`{role: "robot"}`: no message has that role), the tag's error,
 * listing the values every member takes, rather than the one member's that came first (which named only "system" or
 * "developer", QA).
 */
function everyTag(members: FieldError[][], at: string | undefined): FieldError | undefined {
	let path: string | undefined
	const values: unknown[] = []
	for (const l of members) {
		const x = l.find((y) => refusesTag(y, at))
		if (!x || (path !== undefined && x.path !== path)) return undefined
		path = x.path
		const s = x.schema as { const?: unknown; anyOf?: Array<{ const?: unknown }> }
		if (!('const' in s) && !Array.isArray(s.anyOf)) return undefined
		for (const v of 'const' in s ? [s.const] : s.anyOf!.map((m) => m.const)) if (!values.includes(v)) values.push(v)
	}
	if (path === undefined || values.length < 2) return undefined
	const listed = values.map((v) => JSON.stringify(v))
	return { path, message: `Expected one of ${listed.slice(0, -1).join(', ')} or ${listed.at(-1)}` }
}

/** What a schema takes, in words: a literal as written, else its type. */
const kindOf = (s: FieldError['schema']) => (s && 'const' in s ? JSON.stringify(s.const) : typeof s?.type === 'string' ? s.type : 'value')

/**
 * A union's error ("Expected union value", which says nothing) → the error of the member the value came closest to:
 * the one that failed on a constraint or deeper in, with the fewest errors (`temperature: 3` → "Expected number to be
 * less or equal to 2"; a message with a bad `content` → that content's error). When every member refuses the value's
 * kind outright, what they take is listed ("Expected one of "auto", "none", "required" or object").
 */
function specific(e: FieldError, depth = 0): FieldError {
	if (!e.errors?.length || depth > 8) return e
	const members = e.errors.map((it) => {
		const list: FieldError[] = []
		for (const x of it) if (list.push(x) >= 50) break
		return list
	})
	const named = members.filter((l) => !l.some((x) => refusesTag(x, e.path)))
	if (!named.length) {
		const tag = everyTag(members, e.path)
		if (tag) return tag
	}
	const near = (named.length ? named : members).filter((l) => l.length && !(l.length === 1 && kindMismatch(l[0]!, e.path)))
	if (!near.length) {
		const kinds = [...new Set(members.flatMap((l) => (l[0] ? [kindOf(l[0].schema)] : [])))]
		if (kinds.length < 2) return e
		return { ...e, errors: undefined, message: `Expected one of ${kinds.slice(0, -1).join(', ')} or ${kinds.at(-1)}` }
	}
	const best = near.reduce((a, b) => (b.length < a.length || (b.length === a.length && (b[0]!.path ?? '').length > (a[0]!.path ?? '').length) ? b : a))
	return specific(best[0]!, depth + 1)
}

/**
 * A value that does not match its field's pattern is told what the field takes, from the schema's description, rather
 * than the regular expression itself (QA: the console showed "Expected string to match '^[A-Za-z0-9._@-]+$'").
 */
function patternRule(e: NonNullable<ValidationLike['all']>[number] | undefined): string | undefined {
	const s = e?.schema
	if (typeof s?.pattern !== 'string' || typeof s.description !== 'string' || !e?.message?.includes(s.pattern)) return undefined
	return `does not fit: ${s.description}`
}

/**
 * A field no schema names (the management API's closed bodies) is told the nearest one it does, as the config file
 * is (config/nearest-key.ts): `"cached_input_per_mtok" Unexpected property: did you mean "cache_read_per_mtok"?`.
 */
function nearestField(e: FieldError | undefined): string {
	if (e?.type !== ValueErrorType.ObjectAdditionalProperties && e?.type !== ValueErrorType.IntersectUnevaluatedProperties) return ''
	const key = e.path === undefined ? undefined : pointerKeys(e.path).at(-1)
	const near = key ? didYouMean(key, schemaKeys(e.schema)) : ''
	return near && `: ${near}`
}

/** The member of the query, path or body whose value, coerced, is the refused one and fails the schema reported. */
function coercedField(v: ValidationLike, parts: RequestParts): { where: string; field: string } | undefined {
	const schema = v.validator as TSchema | undefined
	const fails = (raw: unknown) => {
		const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw
		if (!Object.is(n, v.value)) return false
		try {
			return !schema || !Value.Check(schema, n)
		} catch {
			return true
		}
	}
	for (const where of ['query', 'params', 'body'] as const) {
		const field = find(parts[where], fails, '', 0)
		if (field) return { where, field }
	}
	return undefined
}

function find(value: unknown, fails: (raw: unknown) => boolean, at: string, depth: number): string | undefined {
	if (!value || typeof value !== 'object' || depth > 8) return undefined
	for (const [k, x] of Object.entries(value)) {
		const path = at ? `${at}.${k}` : k
		if (typeof x === 'string' || typeof x === 'number') {
			if (fails(x)) return path
		} else {
			const inner = find(x, fails, path, depth + 1)
			if (inner) return inner
		}
	}
	return undefined
}

/** The SQLSTATE of a database error, also when Drizzle wrapped it (DrizzleQueryError keeps the driver's as `cause`). */
function sqlState(e: unknown): unknown {
	const o = e as { code?: unknown; cause?: { code?: unknown } } | null
	return o?.code ?? o?.cause?.code
}

/**
 * PostgreSQL refused a value the request carried (SQLSTATE class 22, "data exception": a number out of its column's
 * range, a NUL byte in text, an impossible date): the caller's input, so a 400 saying which rule, never a 500.
 * Returns the database's reason (which names the rule, not our query), or undefined for any other error.
 */
function dataException(e: unknown): string | undefined {
	const code = sqlState(e)
	// 54000: a value too long for an index (a text column that has no length cap of its own in its schema).
	if (typeof code !== 'string' || !(/^22[0-9A-Z]{3}$/.test(code) || code === '54000')) return undefined
	const o = e as { message?: unknown; cause?: { message?: unknown } }
	const m = typeof o.cause?.message === 'string' ? o.cause.message : typeof o.message === 'string' ? o.message : 'rejected by the database'
	// PostgreSQL's words name a byte and an encoding, not what the caller sent.
	if (code === '22021' || code === '22P05') if (m.includes('0x00') || m.includes('\\u0000')) return 'a text value holds a NUL character (\\u0000), which cannot be stored'
	if (code === '54000') return 'a value is too long to be stored'
	return m.split('\n')[0]!.slice(0, 200)
}

/** Connection-level database failures (PostgreSQL down or restarting): 503, never a silent unbilled answer. */
function isDatabaseDown(e: unknown): boolean {
	const code = sqlState(e)
	if (typeof code !== 'string') return false
	return ['ECONNREFUSED', 'ECONNRESET', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', '57P01', '57P02', '57P03'].includes(code) || code.startsWith('08')
}
