/**
 * The models a key may use, rendered in each protocol's list shape. The catalog keeps no creation time, so every
 * model shows one fixed date (lists stay stable across restarts).
 * @module
 */
import type { AuthToken } from '../../auth/api-key'
import { GatewayError } from '../../core/errors'
import { matchesModel } from '../../routing/catalog'
import { servedThrough } from '../console/endpoints'
import type { Services } from '../../services'
import type { AnthropicModel, AnthropicModelList, GeminiListQuery, GeminiModel, GeminiModelList, ModelListQuery, OpenAIModel } from './model'

const CREATED = 1735689600 // 2025-01-01T00:00:00Z
const CREATED_AT = new Date(CREATED * 1000).toISOString().replace('.000', '')

export type ListShape = 'openai' | 'anthropic' | 'gemini'

/**
 * Which shape a `/v1/models` caller reads: Anthropic SDKs send `anthropic-version`; Google's SDK sends
 * `x-goog-api-key` (or `?key=`); everyone else gets OpenAI's.
 */
export function shapeOf(request: Request): ListShape {
	const h = request.headers
	if (h.get('anthropic-version')) return 'anthropic'
	if (h.get('x-goog-api-key') || new URL(request.url).searchParams.has('key')) return 'gemini'
	return 'openai'
}

/** Models served here that the key may use (and that have a price, unless unpriced models are allowed). */
export function visibleModels(svc: Services, token: AuthToken): string[] {
	return svc.catalog.modelNames().filter((m) => (!token.allowedModels || matchesModel(token.allowedModels, m)) && (svc.env.allowUnpriced || svc.catalog.price(m) !== undefined))
}

/** A 404 for a model the key cannot see, worded as the vendors word it. */
export const modelNotFound = (id: string) => new GatewayError('not_found', `The model '${id}' does not exist or you do not have access to it`, { code: 'model_not_found', param: 'model' })

export function openaiModel(svc: Services, id: string): OpenAIModel {
	const { contextWindow, maxOutput } = svc.catalog.limits(id)
	return {
		id,
		object: 'model',
		created: CREATED,
		owned_by: svc.catalog.channelsFor(id)[0]?.type ?? 'switchboard',
		...(contextWindow ? { context_window: contextWindow } : {}),
		...(maxOutput ? { max_output_tokens: maxOutput } : {}),
	}
}

export function anthropicModel(svc: Services, id: string): AnthropicModel {
	const { contextWindow, maxOutput } = svc.catalog.limits(id)
	return { type: 'model', id, display_name: id, created_at: CREATED_AT, max_input_tokens: contextWindow ?? null, max_tokens: maxOutput ?? null }
}

/** Gemini's method names for the gateway's routes that serve a model (console/endpoints.ts says which do). */
const GEMINI_METHODS: Array<[string, string[]]> = [
	['POST /v1beta/models/{model}:generateContent', ['generateContent', 'streamGenerateContent', 'countTokens']],
	['POST /v1beta/models/{model}:embedContent', ['embedContent', 'batchEmbedContents', 'countTokens']],
	['POST /v1beta/models/{model}:predict', ['predict']],
	['POST /v1beta/models/{model}:predictLongRunning', ['predictLongRunning']],
]

/**
 * The methods Gemini's own list names for a model (`supportedGenerationMethods`, which @google/genai reads as
 * `supportedActions`): what the gateway serves of it in Gemini's protocol, by the families of the names its channels
 * send upstream (an alias is what it maps to). Chat models the chat methods, embedding models their two, Imagen
 * `predict`, Veo `predictLongRunning`; none for what Gemini's protocol does not reach (speech, transcription, OpenAI's
 * image models, moderation, video tasks…).
 * @example generationMethods(svc, 'imagen-4.0-generate-001') // ['predict'] on a Gemini channel
 */
export function generationMethods(svc: Services, id: string): string[] {
	const { endpoints } = servedThrough(id, svc.catalog.channelsFor(id))
	return [...new Set(GEMINI_METHODS.flatMap(([route, methods]) => (endpoints.includes(route) ? methods : [])))]
}

/** Whether `POST /v1/messages` reaches the model: what an Anthropic client's list offers (chat models, from any vendor). */
export const servesMessages = (svc: Services, id: string): boolean => servedThrough(id, svc.catalog.channelsFor(id)).endpoints.includes('POST /v1/messages')

/** The models of a list as the protocol's clients can call them: Anthropic's the chat models, Gemini's those with a method. */
export function listedFor(svc: Services, shape: ListShape, ids: string[]): string[] {
	if (shape === 'anthropic') return ids.filter((id) => servesMessages(svc, id))
	if (shape === 'gemini') return ids.filter((id) => generationMethods(svc, id).length > 0)
	return ids
}

export function geminiModel(svc: Services, id: string): GeminiModel {
	const { contextWindow, maxOutput } = svc.catalog.limits(id)
	return {
		name: `models/${id}`,
		baseModelId: id,
		version: '001',
		displayName: id,
		description: `${id}, served by Switchboard`,
		...(contextWindow ? { inputTokenLimit: contextWindow } : {}),
		...(maxOutput ? { outputTokenLimit: maxOutput } : {}),
		supportedGenerationMethods: generationMethods(svc, id),
	}
}

/** Anthropic's cursor paging: `limit` (default 20), then `after_id` or `before_id`. */
export function anthropicPage(svc: Services, ids: string[], q: ModelListQuery): AnthropicModelList {
	const limit = q.limit ?? 20
	let from = 0
	let to = ids.length
	if (q.after_id !== undefined) from = ids.indexOf(q.after_id) + 1
	else if (q.before_id !== undefined) {
		to = Math.max(0, ids.indexOf(q.before_id))
		from = Math.max(0, to - limit)
	}
	const page = ids.slice(from, Math.min(to, from + limit))
	return { data: page.map((id) => anthropicModel(svc, id)), has_more: from + page.length < to || (q.before_id !== undefined && from > 0), first_id: page[0] ?? null, last_id: page[page.length - 1] ?? null }
}

/** Gemini's token paging: `pageSize` (default 50, at most 1000) and an opaque `pageToken` (here an offset). */
export function geminiPage(svc: Services, ids: string[], q: GeminiListQuery): GeminiModelList {
	const size = Math.min(q.pageSize ?? 50, 1000)
	const from = q.pageToken && /^\d+$/.test(q.pageToken) ? Number(q.pageToken) : 0
	const page = ids.slice(from, from + size)
	const next = from + page.length
	return { models: page.map((id) => geminiModel(svc, id)), ...(next < ids.length ? { nextPageToken: String(next) } : {}) }
}
