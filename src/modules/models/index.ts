/**
 * Model lists for API keys: `GET /v1/models` (OpenAI's shape; Anthropic's with an `anthropic-version` header;
 * Gemini's for Google's SDK), `GET /v1/models/{model}`, and `GET /v1beta/models[/{model}]` in Gemini's shape.
 * Only the models the key may use are listed.
 * @module
 */
import { Elysia, t } from 'elysia'
import type { AuthToken } from '../../auth/api-key'
import { errorResponse } from '../../http/error-shapes'
import { modelAuth } from '../../http/model-auth'
import { OpenAIErrorBody } from '../../protocols/openai-chat'
import type { Services } from '../../services'
import { AnthropicModel, AnthropicModelList, GeminiListQuery, GeminiModel, GeminiModelList, ModelListQuery, OpenAIModel, OpenAIModelList } from './model'
import { anthropicModel, anthropicPage, geminiModel, geminiPage, listedFor, modelNotFound, openaiModel, shapeOf, visibleModels } from './shapes'

const errors = { 401: OpenAIErrorBody, 403: OpenAIErrorBody, 404: OpenAIErrorBody }

export const modelListModule = (svc: Services) => {
	const retrieve = (token: AuthToken, request: Request, raw: string, requestId: string) => {
		const id = decodeURIComponent(raw)
		const shape = shapeOf(request)
		const bare = id.replace(/^models\//, '')
		const name = shape === 'gemini' ? bare : id
		if (!visibleModels(svc, token).includes(name) || !listedFor(svc, shape, [name]).length) return errorResponse(modelNotFound(id), shape, requestId)
		if (shape === 'anthropic') return anthropicModel(svc, id)
		return shape === 'gemini' ? geminiModel(svc, bare) : openaiModel(svc, id)
	}
	const retrieveGemini = (token: AuthToken, raw: string, requestId: string) => {
		const id = decodeURIComponent(raw).replace(/^models\//, '')
		if (!visibleModels(svc, token).includes(id) || !listedFor(svc, 'gemini', [id]).length) return errorResponse(modelNotFound(`models/${id}`), 'gemini', requestId)
		return geminiModel(svc, id)
	}
	return new Elysia({ detail: { tags: ['OpenAI'] } })
		.use(modelAuth(svc, { gemini: true, counted: false }))
		.get(
			'/v1/models',
			({ token, request, query }) => {
				const shape = shapeOf(request)
				const ids = listedFor(svc, shape, visibleModels(svc, token))
				if (shape === 'anthropic') return anthropicPage(svc, ids, query)
				if (shape === 'gemini') return geminiPage(svc, ids, query)
				return { object: 'list' as const, data: ids.map((id) => openaiModel(svc, id)) }
			},
			{
				query: ModelListQuery,
				response: { 200: t.Union([OpenAIModelList, AnthropicModelList, GeminiModelList]), ...errors },
				detail: {
					summary: 'List models',
					description: "The models this key may use. OpenAI's list shape (every model); Anthropic's (paged by `limit`, `after_id`, `before_id`) when `anthropic-version` is sent, listing the models `/v1/messages` reaches (chat models of every vendor, not speech, transcription, image, embedding or moderation models); Gemini's when the key comes as `x-goog-api-key` or `?key=`, listing the models with a method in Gemini's protocol.",
				},
			},
		)
		.get('/v1/models/:model', ({ token, request, params, requestId }) => retrieve(token, request, params.model, requestId), {
			params: t.Object({ model: t.String() }),
			response: { 200: t.Union([OpenAIModel, AnthropicModel, GeminiModel]), ...errors },
			detail: { summary: 'Retrieve a model', description: 'One model this key may use, in the caller’s shape (as for the list).' },
		})
		// Model names with slashes (`vendor/model`), which OpenAI SDKs put in the path as they are.
		.get('/v1/models/*', ({ token, request, params, requestId }) => retrieve(token, request, params['*'], requestId), { detail: { hide: true } })
		.get('/v1beta/models', ({ token, query }) => geminiPage(svc, listedFor(svc, 'gemini', visibleModels(svc, token)), query), {
			query: GeminiListQuery,
			response: { 200: GeminiModelList, ...errors },
			detail: {
				tags: ['Gemini'],
				summary: 'List models (Gemini)',
				description:
					'The models this key may use that Gemini’s protocol reaches, in Gemini’s shape, paged by `pageSize` and `pageToken`; each names its methods (`supportedGenerationMethods`): chat models `generateContent`, embedding models `embedContent`, Imagen `predict`, Veo `predictLongRunning`.',
			},
		})
		.get('/v1beta/models/:model', ({ token, params, requestId }) => retrieveGemini(token, params.model, requestId), {
			params: t.Object({ model: t.String() }),
			response: { 200: GeminiModel, ...errors },
			detail: { tags: ['Gemini'], summary: 'Retrieve a model (Gemini)', description: 'One model this key may use, in Gemini’s shape.' },
		})
		.get('/v1beta/models/*', ({ token, params, requestId }) => retrieveGemini(token, params['*'], requestId), { detail: { hide: true } })
}
