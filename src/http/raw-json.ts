/**
 * JSON bodies with their text kept: a same-protocol relay forwards the client's bytes upstream when it changes
 * nothing in them, instead of serialising the parsed body again (chat bodies run to hundreds of kilobytes).
 * @module
 */

import { GatewayError } from '../core/errors'

const texts = new WeakMap<Request, string>()

/**
 * Deepest nesting of arrays and objects a JSON body may have. Real requests (tool schemas, agent turns) stay far below;
 * a body of nothing but brackets costs JSON.parse ~0.4 µs per level (1.5 s of the event loop for 8 MiB) and then
 * Elysia's validation error, which JSON.stringifies the body, a stack overflow after seconds more (a 200 KB body held
 * the server for 21 s and answered 500).
 */
export const MAX_JSON_DEPTH = 512

/**
 * Whether `text` nests deeper than `max`, counted without parsing: brackets inside strings are skipped by jumping to
 * each string's closing quote (indexOf is native, so plain text costs little: ~14 µs for 280 KB of chat).
 * @example jsonTooDeep('[[[]]]', 2) === true; jsonTooDeep('["[[["]', 2) === false
 */
export function jsonTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
	// Each level takes at least two characters.
	if (text.length <= max * 2) return false
	let depth = 0
	for (let i = 0; i < text.length; i++) {
		const c = text.charCodeAt(i)
		if (c === 34 /* " */) {
			for (;;) {
				const q = text.indexOf('"', i + 1)
				if (q === -1) return false
				let b = q - 1
				while (text.charCodeAt(b) === 92 /* \ */) b--
				i = q
				if ((q - 1 - b) % 2 === 0) break // not escaped: an even run of backslashes before it
			}
		} else if (c === 91 /* [ */ || c === 123 /* { */) {
			if (++depth > max) return true
		} else if (c === 93 /* ] */ || c === 125 /* } */) depth--
	}
	return false
}

/** The 400 for a body `jsonTooDeep` refused. */
export const tooDeepError = () => new GatewayError('invalid_request', `Malformed request body: JSON nested deeper than ${MAX_JSON_DEPTH} levels`, { code: 'invalid_json' })

/**
 * An Elysia `parse` hook: parses JSON bodies as Elysia's own parser does and keeps their text for `rawJson`. Other
 * content types return undefined, which leaves them to Elysia's parsers; a JSON syntax error becomes Elysia's
 * ParseError, as before.
 * @example app.post('/v1/messages', handler, { parse: keepRawJson, body: AnthropicRequest })
 */
export async function keepRawJson({ request }: { request: Request }, contentType: string): Promise<unknown> {
	if (!isJsonType(contentType)) return undefined
	const text = await request.text()
	if (jsonTooDeep(text)) throw tooDeepError()
	texts.set(request, text)
	return JSON.parse(text)
}

/** The body text `keepRawJson` kept for this request. */
export const rawJson = (request: Request): string | undefined => texts.get(request)

/**
 * A JSON body's media type, as `keepRawJson` is given it (the header up to its parameters): the test Elysia's default
 * parser dispatch uses, `application/json` with or without a suffix.
 */
export const isJsonType = (contentType: string): boolean => contentType.charCodeAt(12) === 106 /* j */

/**
 * The body of a request being rewritten into another route's (the Azure, Vertex and Bedrock dialects) as a JSON
 * object, or the 400 saying why it is not one; an empty body is an empty object.
 */
export async function readJsonObject(request: Request): Promise<Record<string, unknown> | GatewayError> {
	const text = await request.text()
	let body: unknown
	try {
		body = text === '' ? {} : JSON.parse(text)
	} catch {
		return new GatewayError('invalid_request', 'Malformed request body: not valid JSON', { code: 'invalid_json' })
	}
	if (body === null || typeof body !== 'object' || Array.isArray(body)) return new GatewayError('invalid_request', 'request body must be a JSON object', { code: 'invalid_request_error' })
	return body as Record<string, unknown>
}
