/**
 * Wire schemas of Gemini's Interactions API (https://ai.google.dev/api/interactions-api; the step model of the API
 * revision @google/genai 3.x speaks). Requests are validated permissively, as the generateContent ones are
 * (gemini/model.ts): unknown fields pass, and the decoder checks what it reads with a 400 naming the field. The
 * Interaction schema describes the OpenAPI document.
 * @module
 */
import { t } from 'elysia'
import { Integer } from '../json-types'

const open = { additionalProperties: true } as const

const JsonObject = t.Record(t.String(), t.Unknown())

/** A piece of content: `text`, or media (`image`, `audio`, `document`, `video`) inline (`data`, base64) or by `uri`. */
export const InteractionContent = t.Object(
	{
		type: t.String({ description: 'text, image, audio, document or video' }),
		text: t.Optional(t.String()),
		data: t.Optional(t.String({ description: 'The bytes, base64-encoded.' })),
		uri: t.Optional(t.String()),
		mime_type: t.Optional(t.String()),
	},
	open,
)

/**
 * A step of an interaction: `user_input` and `model_output` (their `content`), `thought` (`signature`, `summary`),
 * `function_call` (`id`, `name`, `arguments`) and `function_result` (`call_id`, `name`, `result`, `is_error`).
 */
export const InteractionStep = t.Record(t.String(), t.Unknown(), { description: 'A step: its `type` and that type\'s fields.' })

export const InteractionRequest = t.Object(
	{
		model: t.String({ description: 'The model, as in `/v1beta/models`.' }),
		input: t.Optional(
			t.Union([t.String(), InteractionContent, t.Array(InteractionStep)], {
				description: 'A string, a piece of content, a list of content (one user turn), or a list of steps (a conversation).',
			}),
		),
		system_instruction: t.Optional(t.String()),
		tools: t.Optional(t.Array(JsonObject)),
		generation_config: t.Optional(JsonObject),
		response_format: t.Optional(t.Unknown()),
		response_mime_type: t.Optional(t.String()),
		service_tier: t.Optional(t.String({ description: 'standard, flex or priority (Gemini models: generateContent takes it as serviceTier)' })),
		previous_interaction_id: t.Optional(t.String()),
		store: t.Optional(t.Boolean({ description: 'Keep the interaction for `GET` and `previous_interaction_id` (default true).' })),
		background: t.Optional(t.Boolean()),
		stream: t.Optional(t.Boolean()),
	},
	open,
)

/** Tokens of one modality: `text`, `image`, `audio` (also `video`, `document` at Google). */
export const ModalityTokens = t.Object({ modality: t.String(), tokens: Integer() })

export const InteractionUsage = t.Object(
	{
		total_input_tokens: t.Optional(Integer()),
		input_tokens_by_modality: t.Optional(t.Array(ModalityTokens)),
		total_cached_tokens: t.Optional(Integer()),
		cached_tokens_by_modality: t.Optional(t.Array(ModalityTokens)),
		total_output_tokens: t.Optional(Integer()),
		output_tokens_by_modality: t.Optional(t.Array(ModalityTokens)),
		total_tool_use_tokens: t.Optional(Integer({ description: "Tokens built-in tools (Google Search…) fed back to the model, apart from total_input_tokens; billed as input" })),
		total_thought_tokens: t.Optional(Integer()),
		total_tokens: t.Optional(Integer()),
	},
	open,
)

export const InteractionStatus = t.String({ description: 'in_progress, requires_action, completed, incomplete, failed or cancelled' })

export const Interaction = t.Object(
	{
		id: t.String(),
		object: t.Optional(t.Literal('interaction')),
		model: t.Optional(t.String()),
		status: InteractionStatus,
		created: t.Optional(t.String()),
		updated: t.Optional(t.String()),
		steps: t.Optional(t.Array(InteractionStep)),
		usage: t.Optional(InteractionUsage),
		service_tier: t.Optional(t.String({ description: 'The tier that served the interaction when Gemini prices it apart: flex or priority' })),
		previous_interaction_id: t.Optional(t.String()),
	},
	open,
)

export type InteractionContent = typeof InteractionContent.static
export type InteractionStep = typeof InteractionStep.static
export type InteractionRequest = typeof InteractionRequest.static
export type InteractionUsage = typeof InteractionUsage.static
export type Interaction = typeof Interaction.static
