/**
 * JSON text that may not be JSON (an upstream's stream frame): its value, or undefined, for callers that treat
 * malformed and unexpected shapes alike.
 * @module
 */

export function jsonOrUndefined(text: string): unknown {
	try {
		return JSON.parse(text)
	} catch {
		return undefined
	}
}
