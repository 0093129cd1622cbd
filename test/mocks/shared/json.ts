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

/** The first defined of two keys: Gemini's REST API accepts both lowerCamel and snake_case field names. */
export const pick = (o: Obj | undefined, camel: string, snake: string): unknown => (o ? (o[camel] ?? o[snake]) : undefined)
