/**
 * Wire schemas of OpenAI chat completions (https://platform.openai.com/docs/api-reference/chat).
 * Requests are validated permissively: unknown properties pass (vendors add fields every month), but the
 * types, required fields and enum values the vendor checks are checked here too. Responses and chunks are
 * described for the OpenAPI document only.
 * @module
 */
import { t } from 'elysia'
import { Integer } from '../json-types'

const open = { additionalProperties: true } as const

// ── Request ────────────────────────────────────────────────────────────────────────────────────────────

export const OpenAITextPart = t.Object({ type: t.Literal('text'), text: t.String() }, open)

export const OpenAIImagePart = t.Object(
	{
		type: t.Literal('image_url'),
		image_url: t.Object({ url: t.String(), detail: t.Optional(t.String()) }, open),
	},
	open,
)

/**
 * A file (https://platform.openai.com/docs/guides/pdf-files): `file_data` as a base64 data URL with `filename`, or
 * `file_id` of a file uploaded to OpenAI. Other vendors' models get it as their document input (Anthropic `document`,
 * Gemini `inlineData`); a `file_id` reaches OpenAI models only, and is refused with a 400 naming the part elsewhere.
 */
export const OpenAIFilePart = t.Object(
	{
		type: t.Literal('file'),
		file: t.Object(
			{
				file_data: t.Optional(t.String({ description: 'The file as a base64 data URL: data:application/pdf;base64,…' })),
				file_id: t.Optional(t.String({ description: 'A file uploaded to OpenAI (OpenAI models only).' })),
				filename: t.Optional(t.String({ description: 'The file name, sent with file_data.' })),
			},
			open,
		),
	},
	open,
)

/**
 * Audio input (https://platform.openai.com/docs/guides/audio): base64 `data` in `format` wav or mp3. Gemini models get
 * it as audio `inlineData`; Anthropic models take no audio, and refuse it with a 400 naming the part.
 */
export const OpenAIInputAudioPart = t.Object(
	{
		type: t.Literal('input_audio'),
		input_audio: t.Object({ data: t.String({ description: 'The audio, base64-encoded.' }), format: t.String({ description: "'wav' or 'mp3'" }) }, open),
	},
	open,
)

export const OpenAIRefusalPart = t.Object({ type: t.Literal('refusal'), refusal: t.String() }, open)

export const OpenAIFunctionToolCall = t.Object(
	{
		id: t.String(),
		type: t.Optional(t.Literal('function')),
		function: t.Object({ name: t.String(), arguments: t.Optional(t.String()) }, open),
	},
	open,
)

/** A call of a custom (freeform) tool: its input is text, not JSON arguments. */
export const OpenAICustomToolCall = t.Object({ id: t.String(), type: t.Literal('custom'), custom: t.Object({ name: t.String(), input: t.String() }, open) }, open)

export const OpenAIToolCall = t.Union([OpenAIFunctionToolCall, OpenAICustomToolCall])

/** OpenRouter-style reasoning detail; carries Anthropic thinking signatures and encrypted reasoning. */
export const OpenAIReasoningDetail = t.Object(
	{
		type: t.String(),
		text: t.Optional(t.Nullable(t.String())),
		summary: t.Optional(t.Nullable(t.String())),
		signature: t.Optional(t.Nullable(t.String())),
		data: t.Optional(t.Nullable(t.String())),
	},
	open,
)

const systemContent = t.Union([t.String(), t.Array(OpenAITextPart)])

export const OpenAISystemMessage = t.Object(
	{ role: t.Union([t.Literal('system'), t.Literal('developer')]), content: systemContent, name: t.Optional(t.String()) },
	open,
)

export const OpenAIUserMessage = t.Object(
	{
		role: t.Literal('user'),
		content: t.Union([t.String(), t.Array(t.Union([OpenAITextPart, OpenAIImagePart, OpenAIInputAudioPart, OpenAIFilePart]))]),
		name: t.Optional(t.String()),
	},
	open,
)

export const OpenAIAssistantMessage = t.Object(
	{
		role: t.Literal('assistant'),
		content: t.Optional(t.Nullable(t.Union([t.String(), t.Array(t.Union([OpenAITextPart, OpenAIRefusalPart]))]))),
		refusal: t.Optional(t.Nullable(t.String())),
		tool_calls: t.Optional(t.Nullable(t.Array(OpenAIToolCall))),
		reasoning_content: t.Optional(t.Nullable(t.String())),
		reasoning: t.Optional(t.Nullable(t.String())),
		reasoning_details: t.Optional(t.Nullable(t.Array(OpenAIReasoningDetail))),
		name: t.Optional(t.String()),
		/** Deprecated (legacy function calling): the call `functions` asked for. */
		function_call: t.Optional(t.Nullable(t.Object({ name: t.String(), arguments: t.String() }, open))),
	},
	open,
)

export const OpenAIToolMessage = t.Object(
	{ role: t.Literal('tool'), tool_call_id: t.String(), content: t.Union([t.String(), t.Array(OpenAITextPart)]) },
	open,
)

/** Deprecated (legacy function calling): a function's result, answering an assistant `function_call`. */
export const OpenAIFunctionMessage = t.Object({ role: t.Literal('function'), name: t.String(), content: t.Nullable(t.String()) }, open)

export const OpenAIMessage = t.Union([OpenAISystemMessage, OpenAIUserMessage, OpenAIAssistantMessage, OpenAIToolMessage, OpenAIFunctionMessage])

export const OpenAITool = t.Object(
	{
		type: t.Literal('function'),
		function: t.Object(
			{
				name: t.String({ minLength: 1 }),
				description: t.Optional(t.String()),
				parameters: t.Optional(t.Record(t.String(), t.Unknown())),
				strict: t.Optional(t.Nullable(t.Boolean())),
			},
			open,
		),
	},
	open,
)

/** A custom (freeform) tool: the model writes text for it, optionally held to a grammar (`format`). */
export const OpenAICustomTool = t.Object(
	{
		type: t.Literal('custom'),
		custom: t.Object({ name: t.String({ minLength: 1 }), description: t.Optional(t.String()), format: t.Optional(t.Object({ type: t.String() }, open)) }, open),
	},
	open,
)

export const OpenAIToolChoice = t.Union([
	t.Literal('auto'),
	t.Literal('none'),
	t.Literal('required'),
	/** Gemini's VALIDATED mode (GitHub Copilot CLI's for `gemini-…` models): VALIDATED to Gemini, `auto` to other vendors. */
	t.Literal('validated'),
	t.Object({ type: t.Literal('function'), function: t.Object({ name: t.String() }, open) }, open),
	t.Object({ type: t.Literal('custom'), custom: t.Object({ name: t.String() }, open) }, open),
	/** Only these of `tools` may be called (`mode` as `auto` or `required`); the list itself stays whole for caching. */
	t.Object(
		{
			type: t.Literal('allowed_tools'),
			allowed_tools: t.Object({ mode: t.Union([t.Literal('auto'), t.Literal('required')]), tools: t.Array(t.Object({ type: t.String() }, open)) }, open),
		},
		open,
	),
])

export const OpenAIResponseFormat = t.Union([
	t.Object({ type: t.Literal('text') }, open),
	t.Object({ type: t.Literal('json_object') }, open),
	t.Object(
		{
			type: t.Literal('json_schema'),
			json_schema: t.Object(
				{
					name: t.String(),
					description: t.Optional(t.String()),
					schema: t.Optional(t.Record(t.String(), t.Unknown())),
					strict: t.Optional(t.Nullable(t.Boolean())),
				},
				open,
			),
		},
		open,
	),
])

/** `none`, `xhigh` and `max` are accepted by newer OpenAI models; the canonical model has no slot for them (see request.ts). */
export const OpenAIReasoningEffort = t.Union([
	t.Literal('none'),
	t.Literal('minimal'),
	t.Literal('low'),
	t.Literal('medium'),
	t.Literal('high'),
	t.Literal('xhigh'),
	t.Literal('max'),
])

/** The body of `POST /v1/chat/completions`. Use as the Elysia route `body` schema. */
export const OpenAIChatRequest = t.Object(
	{
		model: t.String({ minLength: 1 }),
		messages: t.Array(OpenAIMessage, { minItems: 1 }),
		max_tokens: t.Optional(t.Nullable(Integer({ minimum: 1 }))),
		max_completion_tokens: t.Optional(t.Nullable(Integer({ minimum: 1 }))),
		temperature: t.Optional(t.Nullable(t.Number({ minimum: 0, maximum: 2 }))),
		top_p: t.Optional(t.Nullable(t.Number({ minimum: 0, maximum: 1 }))),
		seed: t.Optional(t.Nullable(Integer())),
		presence_penalty: t.Optional(t.Nullable(t.Number({ minimum: -2, maximum: 2 }))),
		frequency_penalty: t.Optional(t.Nullable(t.Number({ minimum: -2, maximum: 2 }))),
		logprobs: t.Optional(t.Nullable(t.Boolean())),
		top_logprobs: t.Optional(t.Nullable(Integer({ minimum: 0, maximum: 20 }))),
		stop: t.Optional(t.Nullable(t.Union([t.String(), t.Array(t.String())]))),
		tools: t.Optional(t.Nullable(t.Array(t.Union([OpenAITool, OpenAICustomTool])))),
		tool_choice: t.Optional(t.Nullable(OpenAIToolChoice)),
		parallel_tool_calls: t.Optional(t.Nullable(t.Boolean())),
		response_format: t.Optional(t.Nullable(OpenAIResponseFormat)),
		reasoning_effort: t.Optional(t.Nullable(OpenAIReasoningEffort)),
		stream: t.Optional(t.Nullable(t.Boolean())),
		stream_options: t.Optional(t.Nullable(t.Object({ include_usage: t.Optional(t.Boolean()) }, open))),
		user: t.Optional(t.String()),
		n: t.Optional(t.Nullable(Integer({ minimum: 1 }))),
	},
	open,
)

export type OpenAIChatRequest = typeof OpenAIChatRequest.static
/** A request body as sent upstream: the schema's fields plus the pass-through extras it allows. */
export type OpenAIChatBody = OpenAIChatRequest & Record<string, unknown>
export type OpenAIMessage = typeof OpenAIMessage.static
export type OpenAIToolCall = typeof OpenAIToolCall.static
export type OpenAIReasoningDetail = typeof OpenAIReasoningDetail.static

// ── Response ───────────────────────────────────────────────────────────────────────────────────────────

export const OpenAIUsage = t.Object(
	{
		prompt_tokens: Integer(),
		completion_tokens: Integer(),
		total_tokens: Integer(),
		prompt_tokens_details: t.Optional(
			t.Object({ cached_tokens: t.Optional(Integer()), audio_tokens: t.Optional(Integer()), cache_write_tokens: t.Optional(Integer()) }, open),
		),
		completion_tokens_details: t.Optional(
			t.Object(
				{
					reasoning_tokens: t.Optional(Integer()),
					audio_tokens: t.Optional(Integer()),
					accepted_prediction_tokens: t.Optional(Integer()),
					rejected_prediction_tokens: t.Optional(Integer()),
				},
				open,
			),
		),
	},
	open,
)

const TopLogprob = t.Object({ token: t.String(), logprob: t.Number(), bytes: t.Nullable(t.Array(Integer())) }, open)

/** `choices[].logprobs` when the request asked for `logprobs` (in a stream, each chunk's for its own tokens, else null). */
export const OpenAIChoiceLogprobs = t.Object(
	{
		content: t.Nullable(t.Array(t.Object({ token: t.String(), logprob: t.Number(), bytes: t.Nullable(t.Array(Integer())), top_logprobs: t.Array(TopLogprob) }, open))),
		refusal: t.Nullable(t.Array(t.Unknown())),
	},
	open,
)

const FinishReason = t.Union([
	t.Literal('stop'),
	t.Literal('length'),
	t.Literal('tool_calls'),
	t.Literal('content_filter'),
	t.Literal('function_call'),
])

/** The answer's `service_tier`: OpenAI sends the tier that served the request (a converted answer: one priced apart). */
export const ServedTier = t.Optional(t.Nullable(t.String({ description: 'The processing tier that served the request: priority, flex or ultrafast when one priced apart did' })))

export const OpenAIChatCompletion = t.Object(
	{
		id: t.String(),
		object: t.Literal('chat.completion'),
		created: Integer(),
		model: t.String(),
		choices: t.Array(
			t.Object({
				index: Integer(),
				message: t.Object(
					{
						role: t.Literal('assistant'),
						content: t.Nullable(t.String()),
						refusal: t.Nullable(t.String()),
						tool_calls: t.Optional(t.Array(OpenAIToolCall)),
						reasoning_content: t.Optional(t.String()),
						reasoning_details: t.Optional(t.Array(OpenAIReasoningDetail)),
					},
					open,
				),
				logprobs: t.Nullable(OpenAIChoiceLogprobs),
				finish_reason: FinishReason,
			}),
		),
		usage: OpenAIUsage,
		service_tier: ServedTier,
	},
	open,
)

export type OpenAIChatCompletion = typeof OpenAIChatCompletion.static
export type OpenAIUsage = typeof OpenAIUsage.static

const ToolCallDelta = t.Object({
	index: Integer(),
	id: t.Optional(t.String()),
	type: t.Optional(t.Literal('function')),
	function: t.Object({ name: t.Optional(t.String()), arguments: t.Optional(t.String()) }),
})

/** One `data:` payload of a streamed completion. */
export const OpenAIChatCompletionChunk = t.Object(
	{
		id: t.String(),
		object: t.Literal('chat.completion.chunk'),
		created: Integer(),
		model: t.String(),
		choices: t.Array(
			t.Object({
				index: Integer(),
				delta: t.Object(
					{
						role: t.Optional(t.Literal('assistant')),
						content: t.Optional(t.Nullable(t.String())),
						refusal: t.Optional(t.Nullable(t.String())),
						reasoning_content: t.Optional(t.String()),
						reasoning_details: t.Optional(t.Array(OpenAIReasoningDetail)),
						tool_calls: t.Optional(t.Array(ToolCallDelta)),
					},
					open,
				),
				logprobs: t.Nullable(OpenAIChoiceLogprobs),
				finish_reason: t.Nullable(FinishReason),
			}),
		),
		usage: t.Optional(t.Nullable(OpenAIUsage)),
		service_tier: ServedTier,
	},
	open,
)

export type OpenAIChatCompletionChunk = typeof OpenAIChatCompletionChunk.static

export const OpenAIErrorBody = t.Object({
	error: t.Object({
		message: t.String(),
		type: t.String(),
		param: t.Nullable(t.String()),
		code: t.Nullable(t.String()),
	}),
})

export type OpenAIErrorBody = typeof OpenAIErrorBody.static
