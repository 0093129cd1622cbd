/**
 * JSON bodies with their text kept: a same-protocol relay forwards the client's bytes upstream when it changes
 * nothing in them, instead of serialising the parsed body again (chat bodies run to hundreds of kilobytes).
 * @module
 */

const texts = new WeakMap<Request, string>()

/**
 * An Elysia `parse` hook: parses JSON bodies as Elysia's own parser does and keeps their text for `rawJson`. Other
 * content types return undefined, which leaves them to Elysia's parsers; a JSON syntax error becomes Elysia's
 * ParseError, as before.
 * @example app.post('/v1/messages', handler, { parse: keepRawJson, body: AnthropicRequest })
 */
export async function keepRawJson({ request }: { request: Request }, contentType: string): Promise<unknown> {
	if (!isJsonType(contentType)) return undefined
	const text = await request.text()
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
