/**
 * Defensive readers for untrusted JSON. The route validates bodies with the `t` schema first, but codecs are
 * also called on upstream bodies and in tests, so every read here turns odd input into a 400 naming the field,
 * never a TypeError (which would surface as a 500).
 * @module
 */
import { badRequest } from '../../core/errors'
import { isObject } from '../../core/json'

export type Json = Record<string, unknown>

/** A plain JSON object (not an array, not null). */
export { isObject }

/** The 400s of `reqObject` and `reqString`, for callers that check inline and build the field's path only to throw. */
export const notObject = (param: string) => badRequest(`${param} must be an object`, param)
export const notString = (param: string) => badRequest(`${param} is required and must be a string`, param)

/** @example reqObject(body, 'body') // throws 400 "body must be an object" for [] */
export function reqObject(v: unknown, param: string): Json {
	if (!isObject(v)) throw notObject(param)
	return v
}

export function reqString(v: unknown, param: string): string {
	if (typeof v !== 'string') throw notString(param)
	return v
}

export function reqArray(v: unknown, param: string): unknown[] {
	if (!Array.isArray(v)) throw badRequest(`${param} must be an array`, param)
	return v
}

/** Optional field: undefined and null both mean absent (OpenAI accepts explicit nulls for optional fields). */
export function optString(v: unknown, param: string): string | undefined {
	if (v === undefined || v === null) return undefined
	return reqString(v, param)
}

export function optNumber(v: unknown, param: string): number | undefined {
	if (v === undefined || v === null) return undefined
	if (typeof v !== 'number' || !Number.isFinite(v)) throw badRequest(`${param} must be a number`, param)
	return v
}

export function optInteger(v: unknown, param: string, min = 0): number | undefined {
	const n = optNumber(v, param)
	if (n !== undefined && (!Number.isInteger(n) || n < min)) throw badRequest(`${param} must be an integer >= ${min}`, param)
	return n
}

export function optBoolean(v: unknown, param: string): boolean | undefined {
	if (v === undefined || v === null) return undefined
	if (typeof v !== 'boolean') throw badRequest(`${param} must be a boolean`, param)
	return v
}

/** A non-negative integer from an upstream body, or 0 (usage fields are absent or null on many compatibles). */
export const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0)

/** A string from an upstream body, or undefined. */
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

/** The strings of an array from an upstream body (others left out), or undefined when it is no array. */
export const strings = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined)
