/**
 * Gemini's model methods for every model: `POST /v1beta/models/{model}:{method}` with generateContent,
 * streamGenerateContent (`alt=sse` → SSE, else a JSON array), countTokens, embedContent and batchEmbedContents, and
 * Imagen's predict and Veo's predictLongRunning (predict.ts, veo.ts; their operations in operations.ts); also
 * under `/v1/models/…`, which @google/genai 3.x calls by default, so the SDK works with only its base URL set.
 * Keys: `x-goog-api-key`, `?key=`, Bearer or `x-api-key`. Errors answer in Gemini's shape.
 * The `{model}:{method}` segment is split at its last colon; a model name with slashes is served by a wildcard twin.
 * @module
 */
import { Elysia, t } from 'elysia'
import { modelAuth } from '../../http/model-auth'
import { GeminiErrorBody } from '../../protocols/gemini'
import type { Services } from '../../services'
import { count } from './count'
import { embed } from './embed'
import { generate, type ModelCall } from './generate'
import { publicBase } from '../video/view'
import { createGeminiBatch } from '../gemini-batches'
import { GeminiMethodBody as ChatMethodBody, GeminiMethodResponse as ChatMethodResponse } from './model'
import { predictImages } from './predict'
import { GeminiOperation, PredictRequest, PredictResponse } from './predict-model'
import { parseTarget } from './target'
import { submitVeo } from './veo'

const GeminiMethodBody = t.Union([ChatMethodBody, PredictRequest])
const GeminiMethodResponse = t.Union([ChatMethodResponse, PredictResponse, GeminiOperation])

const errors = { 400: GeminiErrorBody, 401: GeminiErrorBody, 402: GeminiErrorBody, 403: GeminiErrorBody, 404: GeminiErrorBody, 429: GeminiErrorBody, 500: GeminiErrorBody, 503: GeminiErrorBody }

const description =
	'`{model}:{method}` with method generateContent, streamGenerateContent (`?alt=sse` for server-sent events, else a streamed JSON array), countTokens, embedContent, batchEmbedContents, predict (Imagen, priced per image returned) or predictLongRunning (Veo: an operation to poll at `GET /v1beta/{name}`, charged on acceptance, refunded if it fails), or batchGenerateContent (/v1beta, Gemini channels: Batch Mode with inline requests, held at batch prices, settled from the responses when it ends; see `/v1beta/batches`). Gemini models are served verbatim; OpenAI and Anthropic models are converted (embeddings: OpenAI models, and Vertex AI models over `:predict`); on Vertex AI channels countTokens asks Vertex. countTokens is not billed.'

export const geminiModule = (svc: Services) => {
	const handler = (version: string) => async ({ params, body, token, requestId, startedAt, request }: { params: { model?: string; '*'?: string }; body: unknown; token: ModelCall['token']; requestId: string; startedAt: number; request: Request }) => {
		const { model, method } = parseTarget(params.model ?? params['*'] ?? '')
		const c: ModelCall = { svc, token, requestId, startedAt, request, model, version }
		switch (method) {
			case 'generateContent':
				return generate(c, body, false)
			case 'streamGenerateContent':
				return generate(c, body, true)
			case 'countTokens':
				return count(c, body)
			case 'embedContent':
			case 'batchEmbedContents':
				return embed(c, method, body)
			case 'predict':
				return predictImages(c, body)
			case 'predictLongRunning':
				return submitVeo(c, body, publicBase(svc.env.publicUrl, request))
			case 'batchGenerateContent':
				return createGeminiBatch(c, body)
		}
	}
	const hook = (version: string) => ({
		params: t.Object({ model: t.String({ description: 'The model and the method, `{model}:{method}`, e.g. `gemini-2.5-flash:generateContent`' }) }),
		body: GeminiMethodBody,
		response: { 200: GeminiMethodResponse, ...errors },
		detail: { summary: `Call a model method (${version})`, description },
	})
	// The same method for model names with slashes (`vendor/model:method`); undocumented duplicate of the route above.
	const slashed = { body: GeminiMethodBody, detail: { hide: true } }
	return new Elysia({ detail: { tags: ['Gemini'] } })
		.use(modelAuth(svc, { gemini: true }))
		.post('/v1beta/models/:model', handler('/v1beta'), hook('/v1beta'))
		.post('/v1beta/models/*', handler('/v1beta'), slashed)
		.post('/v1/models/:model', handler('/v1'), hook('/v1'))
		.post('/v1/models/*', handler('/v1'), slashed)
}
