/**
 * Narrowing helpers for untrusted request JSON (the mocks validate like vendors, so nothing is assumed).
 * @module
 */

export type Obj = Record<string, unknown>

/** The value as a plain object, or undefined. */
export const asObj = (v: unknown): Obj | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined)

/** The value as an array, or an empty one. */
export const asArr = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])

/** The value as a string, or undefined. */
export const asStr = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

/** The value as a finite number, or undefined. */
export const asNum = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined)

/**
 * A field Gemini's REST API reads under its lowerCamel or its snake_case name. Given both, the one written later
 * wins: ProtoJSON keeps the last of several assignments to one field, "using duplicate or equivalent JSON keys"
 * (protobuf.dev/programming-guides/json), so a whole `generation_config` written after a `generationConfig` replaces it.
 */
export function pick(o: Obj | undefined, camel: string, snake: string): unknown {
	if (!o) return undefined
	if (o[camel] === undefined || o[snake] === undefined) return o[camel] ?? o[snake]
	for (const k of Object.keys(o).reverse()) if (k === camel || k === snake) return o[k]
}
