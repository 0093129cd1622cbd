/**
 * Defensive readers for untrusted request JSON. `decodeRequest` may see bodies that skipped schema validation
 * (tests, internal callers), so every read is checked and failures become 400s phrased like Anthropic's own
 * validation errors (`max_tokens: Field required`), never TypeErrors.
 * @module
 */
import { badRequest } from '../../core/errors'
import { isObject } from '../../core/json'

export type Json = Record<string, unknown>

/** A plain JSON object (not null, not an array). */
export { isObject }

/** A GatewayError('invalid_request') whose message starts with the dotted path, as Anthropic words it. */
export const invalid = (path: string, message: string) => badRequest(`${path}: ${message}`, path)

/** Joins a path and a key: `at('messages.0', 'content') === 'messages.0.content'`. */
export const at = (path: string, key: string | number) => (path ? `${path}.${key}` : String(key))

const missing = (v: unknown) => v === undefined || v === null

/** A required string field. @example reqString({ a: 'x' }, 'a', 'messages.0') === 'x' */
export function reqString(o: Json, key: string, path: string): string {
	const v = o[key]
	if (missing(v)) throw invalid(at(path, key), 'Field required')
	if (typeof v !== 'string') throw invalid(at(path, key), 'Input should be a valid string')
	return v
}

/** An optional string field (absent or null → undefined). */
export function optString(o: Json, key: string, path: string): string | undefined {
	const v = o[key]
	if (missing(v)) return undefined
	if (typeof v !== 'string') throw invalid(at(path, key), 'Input should be a valid string')
	return v
}

/** An optional finite number, optionally bounded (inclusive). */
export function optNumber(o: Json, key: string, path: string, min?: number, max?: number): number | undefined {
	const v = o[key]
	if (missing(v)) return undefined
	if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(at(path, key), 'Input should be a valid number')
	if (min !== undefined && v < min) throw invalid(at(path, key), `Input should be greater than or equal to ${min}`)
	if (max !== undefined && v > max) throw invalid(at(path, key), `Input should be less than or equal to ${max}`)
	return v
}

/** An optional integer, optionally with a lower bound. */
export function optInteger(o: Json, key: string, path: string, min?: number): number | undefined {
	const v = optNumber(o, key, path, min)
	if (v !== undefined && !Number.isInteger(v)) throw invalid(at(path, key), 'Input should be a valid integer')
	return v
}

/** An optional boolean field. */
export function optBoolean(o: Json, key: string, path: string): boolean | undefined {
	const v = o[key]
	if (missing(v)) return undefined
	if (typeof v !== 'boolean') throw invalid(at(path, key), 'Input should be a valid boolean')
	return v
}

/** A required JSON object field. */
export function reqObject(o: Json, key: string, path: string): Json {
	const v = o[key]
	if (missing(v)) throw invalid(at(path, key), 'Field required')
	if (!isObject(v)) throw invalid(at(path, key), 'Input should be a valid dictionary')
	return v
}

/** An optional JSON object field. */
export function optObject(o: Json, key: string, path: string): Json | undefined {
	const v = o[key]
	if (missing(v)) return undefined
	if (!isObject(v)) throw invalid(at(path, key), 'Input should be a valid dictionary')
	return v
}

/** An optional array field. */
export function optArray(o: Json, key: string, path: string): unknown[] | undefined {
	const v = o[key]
	if (missing(v)) return undefined
	if (!Array.isArray(v)) throw invalid(at(path, key), 'Input should be a valid list')
	return v
}

/** Reads a non-negative count from a usage object, tolerating null and absent fields. */
export const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0)
