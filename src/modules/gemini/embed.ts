/**
 * `:embedContent` and `:batchEmbedContents` (https://ai.google.dev/api/embeddings): verbatim to Gemini channels
 * (only the model renamed), converted to `POST {base_url}/embeddings` for OpenAI channels and to `:predict` for
 * Vertex channels (each request an instance with its `taskType` and `title`; modules/embeddings/vertex.ts). Billed on
 * input tokens: OpenAI's `usage.prompt_tokens` or Vertex's token counts, else counted locally (Gemini reports none).
 * The reservation covers the input only. A request that fails after some of Vertex's calls were answered is charged
 * for their tokens (embeddings/batch-pool.ts `Spent`).
 * @module
 */
import { failedRow } from '../../billing/usage-record'
import { badRequest, GatewayError } from '../../core/errors'
import { errorResponse } from '../../http/error-shapes'
import { OPENAI_TYPES, credentialHooks, openaiUrl } from '../../passthrough/upstream'
import { geminiMethodUrl } from '../../providers/native-endpoints'
import { chatAdapterFor } from '../../providers/registry'
import { upstreamError } from '../../providers/upstream-error'
import { type Budget, type CallInfo, release, reserveBudget, resolveModel, settle } from '../../relay/budget'
import { countText } from '../../relay/estimate'
import { answerText, channelTimeouts, fetchUpstream } from '../../relay/upstream-fetch'
import type { Channel } from '../../routing/catalog'
import { tryChannels } from '../../routing/attempts'
import { Spent } from '../embeddings/batch-pool'
import { vertexBatches, vertexEmbedAll } from '../embeddings/vertex'
import type { ModelCall } from './generate'
import { GeminiBatchEmbedRequest, type GeminiEmbedContentRequest, GeminiEmbedContentRequest as EmbedSchema } from './model'
import { checkBody } from './target'

type Method = 'embedContent' | 'batchEmbedContents'
type Json = Record<string, unknown>
type Answer = { body: unknown; input?: number }

/** The text of one request's content; `strict` (OpenAI conversion) refuses non-text parts rather than dropping them. */
function textOf(r: GeminiEmbedContentRequest, at: string, strict: boolean): string {
	return r.content.parts
		.map((p, j) => {
			if (typeof p.text === 'string') return p.text
			if (strict) throw badRequest(`${at}.content.parts[${j}]: only text parts can be embedded by this model`, `${at}.content.parts[${j}]`)
			return ''
		})
		.join('')
}

async function call(c: ModelCall, ch: Channel, url: string, headers: Record<string, string>, body: unknown): Promise<Json> {
	const up = await fetchUpstream(url, { headers, body: JSON.stringify(body), ...credentialHooks(ch) }, channelTimeouts(ch.settings, 'answer'), c.request.signal)
	const { res } = up
	const text = await answerText(up)
	if (!res.ok) throw upstreamError(res.status, text, res.headers)
	try {
		return JSON.parse(text) as Json
	} catch {
		throw new GatewayError('upstream', 'upstream sent a malformed response', { retryable: true, code: 'upstream_malformed' })
	}
}

async function viaGemini(c: ModelCall, ch: Channel, upstream: string, method: Method, body: Json): Promise<Answer> {
	// batchEmbedContents requires each request's model to equal the parent model.
	const out = method === 'batchEmbedContents' ? { ...body, requests: (body.requests as Json[]).map((r) => ({ ...r, model: `models/${upstream}` })) } : { ...body, ...(body.model !== undefined && { model: `models/${upstream}` }) }
	return { body: await call(c, ch, geminiMethodUrl(ch, upstream, method), chatAdapterFor('gemini')!.headers(ch), out) }
}

/** The one `outputDimensionality` of all the requests (a converted call has one for all), or a 400. */
function oneDimensionality(requests: GeminiEmbedContentRequest[]): number | undefined {
	const dims = new Set(requests.map((r) => r.outputDimensionality))
	if (dims.size > 1) throw badRequest('all requests must ask for the same outputDimensionality for this model', 'requests')
	return [...dims][0]
}

const where = (method: Method, i: number) => (method === 'embedContent' ? 'body' : `requests[${i}]`)

async function viaOpenAI(c: ModelCall, ch: Channel, upstream: string, method: Method, requests: GeminiEmbedContentRequest[]): Promise<Answer> {
	const input = requests.map((r, i) => textOf(r, where(method, i), true))
	const dimensions = oneDimensionality(requests)
	const body = { model: upstream, input, encoding_format: 'float', ...(dimensions !== undefined && { dimensions }) }
	const out = await call(c, ch, openaiUrl(ch, upstream, '/embeddings'), chatAdapterFor(ch.type)!.headers(ch), body)
	const data = Array.isArray(out.data) ? (out.data as Array<{ index?: number; embedding?: unknown }>) : []
	const vectors = [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0)).map((d) => d.embedding)
	if (vectors.length !== input.length || !vectors.every(Array.isArray))
		throw new GatewayError('upstream', 'upstream sent a malformed embeddings response', { retryable: true, code: 'upstream_malformed' })
	const embeddings = vectors.map((values) => ({ values }))
	const usage = out.usage as { prompt_tokens?: unknown } | undefined
	const reported = typeof usage?.prompt_tokens === 'number' ? usage.prompt_tokens : undefined
	return { body: method === 'embedContent' ? { embedding: embeddings[0] } : { embeddings }, input: reported }
}

/** Vertex's `:predict`: each request an instance (its `taskType` as Vertex's `task_type`), in as many calls as its limits need. */
async function viaVertex(c: ModelCall, ch: Channel, upstream: string, method: Method, requests: GeminiEmbedContentRequest[], spent: Spent): Promise<Answer> {
	const instances = requests.map((r, i) => ({
		content: textOf(r, where(method, i), true),
		...(r.taskType !== undefined && { task_type: r.taskType }),
		...(r.title !== undefined && { title: r.title }),
	}))
	const a = await vertexEmbedAll(ch, upstream, vertexBatches(instances, upstream), { outputDimensionality: oneDimensionality(requests) }, c.request.signal, spent)
	const embeddings = a.vectors.map((values) => ({ values }))
	return { body: method === 'embedContent' ? { embedding: embeddings[0] } : { embeddings }, input: a.tokens }
}

/**
 * What Gemini refuses (400) before any call, in the gateway's words: content with no parts (another vendor would be
 * sent an empty input and answer in its own words), and a batch request naming a model other than the URL's, which
 * Gemini requires each to be (it would be served by the URL's model here).
 */
function checkRequests(model: string, method: Method, requests: GeminiEmbedContentRequest[]): void {
	requests.forEach((r, i) => {
		const at = method === 'embedContent' ? '' : `requests[${i}].`
		if (!r.content.parts.length) throw badRequest(`${at}content.parts must contain at least one part to embed`, `${at}content.parts`)
		if (method === 'batchEmbedContents' && r.model !== undefined && r.model !== model && r.model !== `models/${model}`)
			throw badRequest(`${at}model "${r.model}" must be the model of the request URL, "models/${model}"`, `${at}model`)
	})
}

/** Serves one embed call; always answers (errors in Gemini's shape). */
export async function embed(c: ModelCall, method: Method, raw: unknown): Promise<Response> {
	const body = (method === 'embedContent' ? checkBody(EmbedSchema, raw) : checkBody(GeminiBatchEmbedRequest, raw)) as Json
	const requests = method === 'embedContent' ? [body as GeminiEmbedContentRequest] : (body.requests as GeminiEmbedContentRequest[])
	checkRequests(c.model, method, requests)
	const route = resolveModel(c.svc, c.token, c.model)
	const channels = route.channels.filter((ch) => ch.type === 'gemini' || ch.type === 'vertex' || OPENAI_TYPES.includes(ch.type))
	if (!channels.length) throw new GatewayError('not_found', `The model "${c.model}" is not served for embeddings`, { code: 'model_not_found', param: 'model' })
	const counted = requests.reduce((n, r, i) => n + countText(textOf(r, `requests[${i}]`, false)), 0)
	const info: CallInfo = { svc: c.svc, token: c.token, requestId: c.requestId, endpoint: `${c.version}/models/{model}:${method}`, model: c.model, stream: false, startedAt: c.startedAt }
	const budget: Budget = await reserveBudget(c.svc, c.token, c.requestId, route.price, counted, 0)
	let lastErr: GatewayError
	let lastChannel: Channel | undefined
	const spent = new Spent()
	try {
		const r = await tryChannels<{ a: Answer; upstream: string }>(c.svc, channels, c.request.signal, async (ch) => {
			const upstream = ch.modelMap[c.model] ?? c.model
			try {
				const a =
					ch.type === 'gemini'
						? await viaGemini(c, ch, upstream, method, body)
						: ch.type === 'vertex'
							? await viaVertex(c, ch, upstream, method, requests, spent)
							: await viaOpenAI(c, ch, upstream, method, requests)
				return { ok: { a, upstream } }
			} catch (e) {
				if (e instanceof GatewayError) return { error: e }
				throw e
			}
		}, c.model)
		if ('ok' in r) {
			const { a, upstream } = r.ok
			await settle(info, budget, { usage: a.input !== undefined ? { input: a.input, output: 0 } : undefined, estimateOutput: () => 0, status: 200, endReason: 'ok', channel: r.channel, upstreamModel: upstream })
			return Response.json(a.body, { headers: { 'x-request-id': c.requestId } })
		}
		lastErr = r.error
		lastChannel = r.channel
	} catch (e) {
		if (budget.hold.done) throw e
		lastErr = new GatewayError('api_error', 'Internal error')
		c.svc.log.error('embed failed', { request_id: c.requestId, error: String(e) })
	}
	const failed = failedRow(lastErr.status, c.request.signal.aborted)
	// Vertex's calls answered before the failure embedded (and billed) their texts: those are charged.
	if (spent.tokens > 0)
		await settle(info, budget, {
			usage: { input: spent.tokens, output: 0 },
			estimated: spent.estimated,
			estimateOutput: () => 0,
			status: failed.status,
			endReason: failed.endReason,
			channel: lastChannel,
			upstreamModel: lastChannel && (lastChannel.modelMap[c.model] ?? c.model),
		})
	else await release(info, budget, failed.status, failed.endReason, lastChannel)
	return errorResponse(lastErr, 'gemini', c.requestId)
}
