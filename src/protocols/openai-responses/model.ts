/**
 * Wire schemas of the OpenAI Responses API (https://platform.openai.com/docs/api-reference/responses).
 * Requests are validated permissively: unknown properties and item types pass (OpenAI adds built-in tools and item
 * kinds often; on the passthrough route they reach OpenAI untouched), while the types the API checks on the fields
 * the gateway reads are checked here too. Response and event schemas describe the OpenAPI document.
 * @module
 */
import { t } from 'elysia'
import { Integer } from '../json-types'

const open = { additionalProperties: true } as const

const JsonObject = t.Record(t.String(), t.Unknown())

// ── Request ────────────────────────────────────────────────────────────────────────────────────────────

export const ResponsesInputText = t.Object({ type: t.Literal('input_text'), text: t.String() }, open)

/** `image_url` is an http(s) URL or a data URI; `file_id` needs OpenAI's file store (passthrough only). */
export const ResponsesInputImage = t.Object(
	{
		type: t.Literal('input_image'),
		image_url: t.Optional(t.Nullable(t.String())),
		file_id: t.Optional(t.Nullable(t.String())),
		detail: t.Optional(t.String()),
	},
	open,
)

/** A message item. `type` is optional ("easy input message"); content is a string or typed parts. */
export const ResponsesMessageItem = t.Object(
	{
		type: t.Optional(t.Literal('message')),
		role: t.Union([t.Literal('user'), t.Literal('assistant'), t.Literal('system'), t.Literal('developer')]),
		content: t.Union([t.String(), t.Array(t.Union([ResponsesInputText, ResponsesInputImage, t.Object({ type: t.String() }, open)]))]),
	},
	open,
)

export const ResponsesFunctionCallItem = t.Object(
	{ type: t.Literal('function_call'), call_id: t.String(), name: t.String(), arguments: t.String(), id: t.Optional(t.String()) },
	open,
)

export const ResponsesFunctionCallOutputItem = t.Object(
	{
		type: t.Literal('function_call_output'),
		call_id: t.String(),
		output: t.Union([t.String(), t.Array(t.Object({ type: t.String() }, open))]),
	},
	open,
)

export const ResponsesSummaryText = t.Object({ type: t.Literal('summary_text'), text: t.String() }, open)

/** Reasoning from an earlier turn, replayed. `encrypted_content` carries what must come back verbatim. */
export const ResponsesReasoningItem = t.Object(
	{
		type: t.Literal('reasoning'),
		id: t.Optional(t.String()),
		summary: t.Array(ResponsesSummaryText),
		content: t.Optional(t.Nullable(t.Array(t.Object({ type: t.String(), text: t.String() }, open)))),
		encrypted_content: t.Optional(t.Nullable(t.String())),
	},
	open,
)

/** Any other input item (`item_reference`, built-in tool calls…): read by type only. */
const OtherInputItem = t.Object({ type: t.Optional(t.String()) }, open)

export const ResponsesInputItem = t.Union([
	ResponsesMessageItem,
	ResponsesFunctionCallItem,
	ResponsesFunctionCallOutputItem,
	ResponsesReasoningItem,
	OtherInputItem,
])

/** A function tool; built-in tools (`web_search`, `file_search`, `mcp`…) have other types and other fields. */
export const ResponsesTool = t.Object(
	{
		type: t.String(),
		name: t.Optional(t.String()),
		description: t.Optional(t.Nullable(t.String())),
		parameters: t.Optional(t.Nullable(JsonObject)),
		strict: t.Optional(t.Nullable(t.Boolean())),
	},
	open,
)

export const ResponsesToolChoice = t.Union([
	t.Literal('auto'),
	t.Literal('none'),
	t.Literal('required'),
	t.Object({ type: t.String() }, open),
])

/**
 * `text.format`: a JSON schema needs its `schema` (OpenAI: 400 "Missing required parameter: 'text.format.schema'."),
 * which another vendor would otherwise be asked to follow as `{}`.
 */
export const ResponsesTextFormat = t.Union([
	t.Object(
		{
			type: t.Literal('json_schema'),
			name: t.String(),
			schema: JsonObject,
			strict: t.Optional(t.Nullable(t.Boolean())),
			description: t.Optional(t.String()),
		},
		open,
	),
	t.Object({ type: t.Union([t.Literal('text'), t.Literal('json_object')]) }, open),
])

/** OpenAI's limits on `metadata`: at most 16 pairs, keys up to 64 characters (checked by the route), values up to 512. */
export const ResponsesMetadata = t.Record(t.String({ maxLength: 64 }), t.String({ maxLength: 512 }), { maxProperties: 16 })

/** `max` is the `openai` SDK's highest effort, which Codex CLI's catalog offers its models. */
export const ResponsesReasoningEffort = t.Union([
	t.Literal('none'),
	t.Literal('minimal'),
	t.Literal('low'),
	t.Literal('medium'),
	t.Literal('high'),
	t.Literal('xhigh'),
	t.Literal('max'),
])

/** The tiers `service_tier` may name (openai-node 7.59 `ServiceTier`; `fast` and `ultrafast` are the Responses API's). */
export const ResponsesServiceTier = t.Union(['auto', 'default', 'flex', 'scale', 'priority', 'fast', 'ultrafast'].map((v) => t.Literal(v)))

/** The body of `POST /v1/responses`. Use as the route's `body` schema. */
export const ResponsesRequest = t.Object(
	{
		model: t.String({ minLength: 1 }),
		input: t.Optional(t.Union([t.String(), t.Array(ResponsesInputItem)])),
		instructions: t.Optional(t.Nullable(t.String())),
		tools: t.Optional(t.Nullable(t.Array(ResponsesTool))),
		tool_choice: t.Optional(t.Nullable(ResponsesToolChoice)),
		parallel_tool_calls: t.Optional(t.Nullable(t.Boolean())),
		// OpenAI's least (400 `integer_below_min_value` below it), whichever vendor serves the model.
		max_output_tokens: t.Optional(t.Nullable(Integer({ minimum: 16 }))),
		// OpenAI's ranges (as on chat completions): out of them OpenAI answers 400, Claude would clamp and Gemini refuse.
		temperature: t.Optional(t.Nullable(t.Number({ minimum: 0, maximum: 2 }))),
		top_p: t.Optional(t.Nullable(t.Number({ minimum: 0, maximum: 1 }))),
		top_logprobs: t.Optional(t.Nullable(Integer({ minimum: 0, maximum: 20 }))),
		text: t.Optional(t.Nullable(t.Object({ format: t.Optional(ResponsesTextFormat) }, open))),
		reasoning: t.Optional(
			t.Nullable(t.Object({ effort: t.Optional(t.Nullable(ResponsesReasoningEffort)), summary: t.Optional(t.Nullable(t.String())) }, open)),
		),
		previous_response_id: t.Optional(t.Nullable(t.String())),
		/** A conversation (`/v1/conversations`): its id, or `{id}`. */
		conversation: t.Optional(t.Nullable(t.Union([t.String(), t.Object({ id: t.String() }, open)]))),
		store: t.Optional(t.Nullable(t.Boolean())),
		stream: t.Optional(t.Nullable(t.Boolean())),
		user: t.Optional(t.String()),
		metadata: t.Optional(t.Nullable(ResponsesMetadata)),
		truncation: t.Optional(t.Nullable(t.Union([t.Literal('auto'), t.Literal('disabled')]))),
		// OpenAI's values and least, whichever vendor serves the model: a converted answer would otherwise take (and bill)
		// what OpenAI refuses with 400. `include` is checked by the decoder (request.ts `decodeInclude`), naming the value.
		service_tier: t.Optional(t.Nullable(ResponsesServiceTier)),
		max_tool_calls: t.Optional(t.Nullable(Integer({ minimum: 1 }))),
	},
	open,
)

export type ResponsesRequest = typeof ResponsesRequest.static

// ── Response ───────────────────────────────────────────────────────────────────────────────────────────

/** `input_tokens` INCLUDES cached tokens; `output_tokens` INCLUDES reasoning tokens. */
export const ResponsesUsage = t.Object(
	{
		input_tokens: Integer(),
		input_tokens_details: t.Object({ cached_tokens: Integer(), cache_write_tokens: t.Optional(Integer()) }, open),
		output_tokens: Integer(),
		output_tokens_details: t.Object({ reasoning_tokens: Integer() }, open),
		total_tokens: Integer(),
	},
	open,
)

export const ResponsesOutputText = t.Object(
	{ type: t.Literal('output_text'), text: t.String(), annotations: t.Array(t.Unknown()), logprobs: t.Optional(t.Array(t.Unknown())) },
	open,
)

export const ResponsesOutputMessage = t.Object(
	{
		id: t.String(),
		type: t.Literal('message'),
		role: t.Literal('assistant'),
		status: t.String(),
		content: t.Array(t.Union([ResponsesOutputText, t.Object({ type: t.Literal('refusal'), refusal: t.String() }, open)])),
	},
	open,
)

export const ResponsesOutputFunctionCall = t.Object(
	{
		id: t.String(),
		type: t.Literal('function_call'),
		status: t.String(),
		call_id: t.String(),
		name: t.String(),
		arguments: t.String(),
	},
	open,
)

export const ResponsesOutputReasoning = t.Object(
	{
		id: t.String(),
		type: t.Literal('reasoning'),
		summary: t.Array(ResponsesSummaryText),
		encrypted_content: t.Optional(t.Nullable(t.String())),
	},
	open,
)

/** A web search the model ran (https://platform.openai.com/docs/guides/tools-web-search): its query and the pages found. */
export const ResponsesOutputWebSearch = t.Object(
	{
		id: t.String(),
		type: t.Literal('web_search_call'),
		status: t.String(),
		action: t.Optional(t.Object({ type: t.String(), query: t.Optional(t.String()), sources: t.Optional(t.Array(t.Object({ type: t.String(), url: t.String() }, open))) }, open)),
	},
	open,
)

export const ResponsesOutputItem = t.Union([ResponsesOutputMessage, ResponsesOutputFunctionCall, ResponsesOutputReasoning, ResponsesOutputWebSearch])

/** A `response` object: the non-stream body, and the `response` of lifecycle stream events. */
export const ResponsesResponse = t.Object(
	{
		id: t.String(),
		object: t.Literal('response'),
		created_at: Integer(),
		status: t.String(),
		error: t.Nullable(t.Object({ code: t.Nullable(t.String()), message: t.String() }, open)),
		incomplete_details: t.Nullable(t.Object({ reason: t.String() }, open)),
		model: t.String(),
		output: t.Array(ResponsesOutputItem),
		usage: t.Nullable(ResponsesUsage),
		service_tier: t.Optional(t.Nullable(t.String({ description: 'The processing tier that served the request: `default`, or priority, flex or ultrafast when one priced apart did' }))),
		// Echoes of the request's settings.
		background: t.Optional(t.Boolean()),
		instructions: t.Optional(t.Nullable(t.String())),
		max_output_tokens: t.Optional(t.Nullable(Integer())),
		max_tool_calls: t.Optional(t.Nullable(Integer())),
		parallel_tool_calls: t.Optional(t.Boolean()),
		previous_response_id: t.Optional(t.Nullable(t.String())),
		/** The conversation the response is a turn of (`POST /v1/responses` with `conversation`). */
		conversation: t.Optional(t.Nullable(t.Object({ id: t.String() }, open))),
		reasoning: t.Optional(t.Nullable(t.Object({ effort: t.Nullable(t.String()), summary: t.Nullable(t.String()) }, open))),
		store: t.Optional(t.Boolean()),
		temperature: t.Optional(t.Nullable(t.Number())),
		text: t.Optional(t.Object({ format: t.Object({ type: t.String() }, open) }, open)),
		tool_choice: t.Optional(t.Unknown()),
		tools: t.Optional(t.Array(t.Unknown())),
		top_p: t.Optional(t.Nullable(t.Number())),
		truncation: t.Optional(t.String()),
		user: t.Optional(t.Nullable(t.String())),
		metadata: t.Optional(t.Record(t.String(), t.String())),
	},
	open,
)

/** One `data:` payload of a stream (its SSE `event:` name equals `type`). */
export const ResponsesStreamEvent = t.Object({ type: t.String(), sequence_number: Integer() }, open)

export type ResponsesUsage = typeof ResponsesUsage.static
export type ResponsesOutputMessage = typeof ResponsesOutputMessage.static
export type ResponsesOutputFunctionCall = typeof ResponsesOutputFunctionCall.static
export type ResponsesOutputReasoning = typeof ResponsesOutputReasoning.static
export type ResponsesOutputItem = typeof ResponsesOutputItem.static
export type ResponsesResponse = typeof ResponsesResponse.static
export type ResponsesStreamEvent = typeof ResponsesStreamEvent.static
