/** `:countTokens` for every model (modules/count-tokens decides who counts). Not billed. */
import { GeminiRequest } from '../../protocols/gemini'
import { decodeRequest } from '../../protocols/gemini/request'
import { countTokens } from '../count-tokens/counter'
import { cacheNameOf, expandCache } from '../gemini-caches/expand'
import { pinFiles } from '../gemini-files/refs'
import type { ModelCall } from './generate'
import { GeminiCountTokensRequest } from './model'
import { checkBody } from './target'

export async function count(c: ModelCall, raw: unknown): Promise<Response> {
	const given = checkBody(GeminiCountTokensRequest, raw)
	// Uploaded files named by their gateway URIs are counted by the channel holding them, under the vendor's URIs.
	const wrapped = given.generateContentRequest !== undefined
	let counted = (wrapped ? given.generateContentRequest : given) as Record<string, unknown>
	// A context cache the request names is counted with it, as the request would send it (modules/gemini-caches).
	const cache = wrapped ? cacheNameOf(counted) : undefined
	if (cache !== undefined && cache !== null) counted = (await expandCache(c.svc, c.token.accountId, c.model, counted, cache)).body
	const files = await pinFiles(c.svc, c.token.accountId, counted)
	const body = (wrapped ? { ...given, generateContentRequest: files.body } : files.body) as typeof given
	const inner = body.generateContentRequest ?? checkBody(GeminiRequest, { contents: body.contents ?? [] })
	const ir = { ...decodeRequest(inner, { counting: true }), model: c.model }
	const tokens = await countTokens({
		svc: c.svc,
		token: c.token,
		requestId: c.requestId,
		model: c.model,
		ir,
		native: { protocol: 'gemini', body: body as Record<string, unknown> },
		inbound: c.request.headers,
		signal: c.request.signal,
		channelId: files.channelId,
	})
	const out = tokens.protocol === 'gemini' && tokens.body ? tokens.body : { totalTokens: tokens.tokens }
	return Response.json(out, { headers: { 'x-request-id': c.requestId, 'x-switchboard-counted-by': tokens.by } })
}
