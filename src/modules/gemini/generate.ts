/**
 * `:generateContent` and `:streamGenerateContent` for every model: the body is decoded by the Gemini codec, the model
 * comes from the URL and streaming from the method (`alt=sse` → SSE, else a JSON array). Gemini channels take the
 * body verbatim (the relay's fast path); OpenAI and Anthropic channels convert through the canonical model. A request
 * naming files uploaded through the gateway goes to the channel holding them (modules/gemini-files/refs.ts); one naming
 * a context cache gets the cache in front of it (modules/gemini-caches/expand.ts).
 * @module
 */
import type { AuthToken } from '../../auth/api-key'
import { GatewayError } from '../../core/errors'
import { errorResponse } from '../../http/error-shapes'
import { gemini, GeminiRequest } from '../../protocols/gemini'
import { relayChat } from '../../relay/chat'
import type { Services } from '../../services'
import { type CacheEnd, cacheNameOf, expandCache, markCacheEnd } from '../gemini-caches/expand'
import { type Pinned, pinFiles } from '../gemini-files/refs'
import { toJsonArray } from './json-array'
import { checkBody } from './target'

export type ModelCall = {
	svc: Services
	token: AuthToken
	requestId: string
	startedAt: number
	request: Request
	model: string
	/** `/v1beta` or `/v1`, as the client called it (recorded as the endpoint). */
	version: string
}

export async function generate(c: ModelCall, body: unknown, stream: boolean): Promise<Response> {
	const array = stream && new URL(c.request.url).searchParams.get('alt') !== 'sse'
	let res: Response
	try {
		res = await relay(c, body, stream)
	} catch (e) {
		// Without alt=sse even an error is an array element; elsewhere the app's error handler renders it.
		if (!array || !(e instanceof GatewayError)) throw e
		res = errorResponse(e, 'gemini', c.requestId)
	}
	return array ? toJsonArray(res) : res
}

function relay(c: ModelCall, body: unknown, stream: boolean): Promise<Response> {
	const given = checkBody(GeminiRequest, body) as Record<string, unknown>
	const cache = cacheNameOf(given)
	if (cache !== undefined && cache !== null) return withCache(c, given, cache, stream)
	// Uploaded files named by their gateway URIs go to the channel holding them, under the vendor's URIs.
	const pinning = pinFiles(c.svc, c.token.accountId, given)
	return pinning instanceof Promise ? pinning.then((files) => send(c, files, stream)) : send(c, pinning, stream)
}

/** A request naming a context cache of the gateway's: the cache goes in front of it (modules/gemini-caches/expand.ts). */
async function withCache(c: ModelCall, given: Record<string, unknown>, name: unknown, stream: boolean): Promise<Response> {
	const { body, end } = await expandCache(c.svc, c.token.accountId, c.model, given, name)
	return send(c, await pinFiles(c.svc, c.token.accountId, body), stream, end)
}

function send(c: ModelCall, files: Pinned, stream: boolean, cacheEnd?: CacheEnd): Promise<Response> {
	const wire = files.body as GeminiRequest
	const ir = { ...gemini.decodeRequest(wire, { stream }), model: c.model }
	if (cacheEnd) markCacheEnd(ir, cacheEnd)
	return relayChat({
		svc: c.svc,
		token: c.token,
		requestId: c.requestId,
		startedAt: c.startedAt,
		endpoint: `${c.version}/models/{model}:${stream ? 'streamGenerateContent' : 'generateContent'}`,
		shape: 'gemini',
		client: gemini,
		body: wire as Record<string, unknown>,
		ir,
		includeUsage: false,
		inbound: c.request.headers,
		signal: c.request.signal,
		pinned: files.channelId === undefined ? undefined : { channelId: files.channelId, what: 'A file this request names' },
	})
}
