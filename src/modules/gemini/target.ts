/**
 * The `{model}:{method}` tail of a Gemini model route (Google's custom-method syntax,
 * https://google.aip.dev/136), and the per-method body check.
 * @module
 */
import type { TSchema } from 'elysia'
import { Value } from '@sinclair/typebox/value'
import { badRequest, GatewayError } from '../../core/errors'
import { fieldOf } from '../../http/error-map'

export const METHODS = ['generateContent', 'streamGenerateContent', 'countTokens', 'embedContent', 'batchEmbedContents', 'predict', 'predictLongRunning', 'batchGenerateContent'] as const
export type GeminiMethod = (typeof METHODS)[number]

/**
 * Splits the path tail at its last colon. The model may be given as `models/…` (as the SDKs do in bodies).
 * @example parseTarget('gemini-2.5-flash:generateContent') // { model: 'gemini-2.5-flash', method: 'generateContent' }
 */
export function parseTarget(tail: string): { model: string; method: GeminiMethod } {
	const raw = decodeURIComponent(tail)
	const at = raw.lastIndexOf(':')
	const method = at === -1 ? '' : raw.slice(at + 1)
	const model = (at === -1 ? raw : raw.slice(0, at)).replace(/^models\//, '')
	if (!(METHODS as readonly string[]).includes(method))
		throw new GatewayError('not_found', `Method not found: ${method ? `models/${model}:${method}` : raw} (supported: ${METHODS.join(', ')})`, { code: 'method_not_found' })
	if (!model) throw badRequest('the model name is missing from the path', 'model')
	return { model, method: method as GeminiMethod }
}

/** Checks `body` against the method's schema; a 400 names the first offending field. */
export function checkBody<S extends TSchema>(schema: S, body: unknown): S['static'] {
	if (Value.Check(schema, body)) return body as S['static']
	const first = Value.Errors(schema, body).First()
	const field = first?.path ? fieldOf(first.path) : 'body'
	throw badRequest(`Invalid body: "${field}" ${first?.message ?? 'is invalid'}`, field)
}
