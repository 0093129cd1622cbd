/**
 * JSON text that may not be JSON (an upstream's stream frame): its value, or undefined, for callers that treat
 * malformed and unexpected shapes alike.
 * @module
 */

/** The object (or array) `text` holds, or undefined when it holds another value or is no JSON. */
export function jsonObjectOrUndefined(text: string): object | undefined {
	const v = jsonOrUndefined(text)
	return v !== null && typeof v === 'object' ? v : undefined
}

export function jsonOrUndefined(text: string): unknown {
	try {
		return JSON.parse(text)
	} catch {
		return undefined
	}
}

/** A JSON object (not an array, not null): what a reader of untrusted JSON may take members of. */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
