/**
 * POST /v1/embeddings: OpenAI-type channels by passthrough (the body forwarded with only `model` renamed and the answer
 * relayed with its vectors untouched, so `encoding_format: base64`, which the OpenAI SDK asks for by default, stays
 * exact); Gemini channels through embedContent / batchEmbedContents, in batches of at most 100 (gemini.ts); Vertex
 * channels through `:predict`, in batches of at most 250 (one for gemini-embedding models) (vertex.ts). Billed on input
 * tokens: the upstream's `usage.prompt_tokens` or Vertex's token counts, else counted locally (Gemini reports none).
 * A request that fails (or is abandoned) after some of its Gemini or Vertex calls were answered is charged for their
 * tokens (batch-pool.ts `Spent`): they were embedded, and billed, upstream.
 * @module
 */
import { Elysia } from 'elysia'
import { upperBound } from '../../billing/pricing'
import { modelAuth } from '../../http/model-auth'
import { readJson, jsonResponse, relayPassthrough } from '../../passthrough/relay'
import { openaiErrors } from '../../passthrough/schemas'
import { OPENAI_TYPES, channelUrl, jsonHeaders, openaiUrl, withModel } from '../../passthrough/upstream'
import { tokensCost, requestFee } from '../../passthrough/pricing'
import type { Services } from '../../services'
import { Spent } from './batch-pool'
import { countInput } from './count'
import { embedRest, geminiBatches, geminiEmbedCall, geminiTexts, geminiVectors, spendTexts, toOpenAIList } from './gemini'
import { EmbeddingList, EmbeddingsRequest } from './model'
import { type VertexInstance, joinAnswers, spendBatch, vertexBatches, vertexEmbedRest, vertexFirstRequest, vertexPredictions } from './vertex'

export const embeddingsModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['OpenAI'] } }).use(modelAuth(svc)).post(
		'/v1/embeddings',
		({ body, token, requestId, startedAt, request }) => {
			const counted = countInput(body.input)
			// Vertex's batches depend on the upstream model (gemini-embedding takes one text a call); cut once per model.
			const cut = new Map<string, VertexInstance[][]>()
			const vertexBatchesOf = (upstreamModel: string) => {
				let b = cut.get(upstreamModel)
				if (!b) cut.set(upstreamModel, (b = vertexBatches(geminiTexts(body.input).map((content): VertexInstance => ({ content })), upstreamModel)))
				return b
			}
			const params = { outputDimensionality: body.dimensions }
			const spent = new Spent()
			return relayPassthrough({
				svc,
				token,
				requestId,
				startedAt,
				signal: request.signal,
				endpoint: '/v1/embeddings',
				model: body.model,
				types: [...OPENAI_TYPES, 'gemini', 'vertex'],
				hold: (price) => ({ want: upperBound(counted, 0, price), min: upperBound(counted, 0, price) }),
				spent: (price) => ({ cost: tokensCost(price, spent.tokens), input: spent.tokens, estimated: spent.estimated }),
				request(ch, upstreamModel) {
					if (ch.type === 'vertex') return vertexFirstRequest(ch, upstreamModel, vertexBatchesOf(upstreamModel), params)
					if (ch.type === 'gemini') {
						// The first batch of at most 100 (Gemini's limit); `respond` sends the others once it succeeded.
						const call = geminiEmbedCall(upstreamModel, geminiBatches(geminiTexts(body.input))[0]!, body.dimensions)
						return { url: channelUrl(ch, call.path), headers: jsonHeaders(ch), body: JSON.stringify(call.body) }
					}
					return { url: openaiUrl(ch, upstreamModel, '/embeddings'), headers: jsonHeaders(ch), body: JSON.stringify(withModel(body, upstreamModel)) }
				},
				async respond(res, ch, upstreamModel, price) {
					if (ch.type === 'vertex') {
						const batches = vertexBatchesOf(upstreamModel)
						const first = vertexPredictions(await readJson(res), batches[0]!.length)
						spendBatch(spent, batches[0]!, first)
						const rest = batches.length > 1 ? await vertexEmbedRest(ch, upstreamModel, batches, params, request.signal, spent) : []
						const { vectors, tokens } = joinAnswers([first, ...rest])
						// Vertex counts every text's tokens; the local count only when an answer lacks them.
						const input = tokens ?? counted
						const out = toOpenAIList(vectors, body.model, input, body.encoding_format === 'base64')
						return { response: jsonResponse(out, requestId), cost: tokensCost(price, input) + requestFee(price), input, estimated: tokens === undefined }
					}
					if (ch.type === 'gemini') {
						const batches = geminiBatches(geminiTexts(body.input))
						const first = geminiVectors(await readJson(res), batches[0]!.length)
						spendTexts(spent, batches[0]!)
						const rest = batches.length > 1 ? await embedRest(ch, upstreamModel, batches, body.dimensions, request.signal, spent) : []
						// Gemini reports no token usage: the charge is the local count of all the texts (every batch), estimated.
						const out = toOpenAIList([first, ...rest].flat(), body.model, counted, body.encoding_format === 'base64')
						return { response: jsonResponse(out, requestId), cost: tokensCost(price, counted) + requestFee(price), input: counted, estimated: true }
					}
					const json = await readJson<{ usage?: { prompt_tokens?: unknown }; model?: unknown }>(res)
					const reported = json.usage?.prompt_tokens
					const input = typeof reported === 'number' && reported >= 0 ? reported : counted
					// The client named the model it asked for; a model_map rename stays invisible.
					if (upstreamModel !== body.model && typeof json.model === 'string') json.model = body.model
					return { response: jsonResponse(json, requestId), cost: tokensCost(price, input) + requestFee(price), input, estimated: input !== reported }
				},
			})
		},
		{
			body: EmbeddingsRequest,
			response: { 200: EmbeddingList, ...openaiErrors },
			detail: {
				summary: 'Create embeddings',
				description:
					'OpenAI embeddings for OpenAI-type, Gemini and Vertex AI models (`:predict` on `vertex` channels). `encoding_format: base64` gives float32 little-endian vectors. Billed on input tokens.',
			},
		},
	)
