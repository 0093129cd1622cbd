/**
 * Model-list shapes of the three protocols: OpenAI (https://platform.openai.com/docs/api-reference/models/list),
 * Anthropic (https://docs.anthropic.com/en/api/models-list, cursor-paged) and Gemini
 * (https://ai.google.dev/api/models#method:-models.list, token-paged).
 * @module
 */
import { t } from 'elysia'
import { Integer } from '../../protocols/json-types'

const open = { additionalProperties: true } as const

export const OpenAIModel = t.Object({ id: t.String(), object: t.Literal('model'), created: Integer(), owned_by: t.String() })
export const OpenAIModelList = t.Object({ object: t.Literal('list'), data: t.Array(OpenAIModel) })

export const AnthropicModel = t.Object({ type: t.Literal('model'), id: t.String(), display_name: t.String(), created_at: t.String() })
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
		// No inputTokenLimit: the catalog keeps no context window, and a made-up one would mislead a client sizing its prompt.
		outputTokenLimit: t.Optional(Integer({ description: "The model's `max_output_tokens` price field, when set" })),
		supportedGenerationMethods: t.Array(t.String()),
	},
	open,
)
export const GeminiModelList = t.Object({ models: t.Array(GeminiModel), nextPageToken: t.Optional(t.String()) })

/** Gemini's paging (https://ai.google.dev/api/models#method:-models.list); `key` is Google's way to pass the API key. */
export const GeminiListQuery = t.Object({ pageSize: t.Optional(t.Numeric({ minimum: 1 })), pageToken: t.Optional(t.String()), key: t.Optional(t.String()) }, open)

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
