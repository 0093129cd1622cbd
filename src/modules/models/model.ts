/**
 * Model-list shapes of the three protocols: OpenAI (https://platform.openai.com/docs/api-reference/models/list),
 * Anthropic (https://docs.anthropic.com/en/api/models-list, cursor-paged) and Gemini
 * (https://ai.google.dev/api/models#method:-models.list, token-paged).
 * @module
 */
import { t } from 'elysia'
import { Integer } from '../../protocols/json-types'

const open = { additionalProperties: true } as const

/**
 * OpenAI's Model has no limits; the two extra members (left out when unknown) are the gateway's, for clients that
 * size prompts by them: the `openai` SDKs hand unknown members through untouched.
 */
export const OpenAIModel = t.Object({
	id: t.String(),
	object: t.Literal('model'),
	created: Integer(),
	owned_by: t.String(),
	context_window: t.Optional(Integer({ description: "Tokens of input the model reads (the model entry's `context_window`, else the vendor's documented one)" })),
	max_output_tokens: t.Optional(Integer({ description: "Largest output cap a request may name (the model entry's `max_output_tokens`, else the vendor's documented one)" })),
})
export const OpenAIModelList = t.Object({ object: t.Literal('list'), data: t.Array(OpenAIModel) })

/** Anthropic's ModelInfo (https://docs.anthropic.com/en/api/models): `max_input_tokens` and `max_tokens` are null when unknown. */
export const AnthropicModel = t.Object({
	type: t.Literal('model'),
	id: t.String(),
	display_name: t.String(),
	created_at: t.String(),
	max_input_tokens: t.Nullable(Integer({ description: 'Maximum input context window size in tokens' })),
	max_tokens: t.Nullable(Integer({ description: 'Maximum value for the `max_tokens` parameter when using this model' })),
})
export const AnthropicModelList = t.Object({
	data: t.Array(AnthropicModel),
	has_more: t.Boolean(),
	first_id: t.Nullable(t.String()),
	last_id: t.Nullable(t.String()),
})

export const GeminiModel = t.Object(
	{
		name: t.String(),
		baseModelId: t.String(),
		version: t.String(),
		displayName: t.String(),
		description: t.String(),
		// Left out when unknown: a made-up limit would mislead a client sizing its prompt.
		inputTokenLimit: t.Optional(Integer({ description: "The model's context window (its entry's `context_window`, else the vendor's documented one), when known" })),
		outputTokenLimit: t.Optional(Integer({ description: "The model's maximum output (its entry's `max_output_tokens`, else the vendor's documented one), when known" })),
		supportedGenerationMethods: t.Array(t.String()),
	},
	open,
)
export const GeminiModelList = t.Object({ models: t.Array(GeminiModel), nextPageToken: t.Optional(t.String()) })

/** Google's way to pass the API key in the URL (https://ai.google.dev/api#api-keys), which every Gemini route with a query schema names. */
export const GoogleKeyQuery = t.Optional(t.String({ description: 'The API key, as Google\'s clients may pass it (else `x-goog-api-key`)' }))

/** Gemini's paging (https://ai.google.dev/api/models#method:-models.list). */
export const GeminiListQuery = t.Object({ pageSize: t.Optional(t.Numeric({ minimum: 1 })), pageToken: t.Optional(t.String()), key: GoogleKeyQuery }, open)

/** `/v1/models` serves all three shapes: Anthropic's cursor paging and Gemini's token paging both apply. */
export const ModelListQuery = t.Composite([
	t.Object({ limit: t.Optional(t.Numeric({ minimum: 1, maximum: 1000, multipleOf: 1 })), after_id: t.Optional(t.String()), before_id: t.Optional(t.String()) }),
	GeminiListQuery,
], open)

export type OpenAIModel = typeof OpenAIModel.static
export type AnthropicModel = typeof AnthropicModel.static
export type AnthropicModelList = typeof AnthropicModelList.static
export type GeminiModel = typeof GeminiModel.static
export type GeminiModelList = typeof GeminiModelList.static
export type ModelListQuery = typeof ModelListQuery.static
export type GeminiListQuery = typeof GeminiListQuery.static
