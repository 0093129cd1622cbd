/**
 * Wire schemas of the Anthropic Messages API (https://docs.anthropic.com/en/api/messages), used as the Elysia
 * `body` schema of `POST /v1/messages` and for the OpenAPI document. Permissive on purpose: every object allows
 * additional properties (the API grows often and unknown fields ride in `ChatRequest.extra`), while types,
 * required fields and enum values (roles, block types) are validated.
 * @module
 */
import { t } from 'elysia'
import { Integer } from '../json-types'

/** Additional properties are allowed everywhere: Elysia keeps them only when the schema says so. */
const open = { additionalProperties: true } as const

export const AnthropicCacheControl = t.Object({ type: t.Literal('ephemeral'), ttl: t.Optional(t.String()) }, open)

const cacheControl = t.Optional(t.Nullable(AnthropicCacheControl))

/** Block types the codec maps onto the canonical model; any other type is carried verbatim (see extra.ts). */
export const KNOWN_BLOCK_TYPES = ['text', 'image', 'document', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking'] as const

export const AnthropicTextBlock = t.Object({ type: t.Literal('text'), text: t.String(), cache_control: cacheControl }, open)

export const AnthropicImageSource = t.Union([
	t.Object({ type: t.Literal('base64'), media_type: t.String(), data: t.String() }, open),
	t.Object({ type: t.Literal('url'), url: t.String() }, open),
	t.Object({ type: t.Literal('file'), file_id: t.String() }, open),
])

export const AnthropicImageBlock = t.Object({ type: t.Literal('image'), source: AnthropicImageSource, cache_control: cacheControl }, open)

/** Where a document's content is (https://docs.anthropic.com/en/docs/build-with-claude/pdf-support, /citations, /files). */
export const AnthropicDocumentSource = t.Union([
	t.Object(
		{ type: t.Literal('base64'), media_type: t.String({ description: "'application/pdf'" }), data: t.String({ description: 'The PDF, base64-encoded.' }) },
		{ ...open, description: 'A PDF given inline.' },
	),
	t.Object(
		{ type: t.Literal('text'), media_type: t.String({ description: "'text/plain'" }), data: t.String({ description: 'The document text.' }) },
		{ ...open, description: 'A plain-text document.' },
	),
	t.Object({ type: t.Literal('url'), url: t.String({ description: 'An http(s) URL of a PDF.' }) }, { ...open, description: 'A PDF at a URL.' }),
	t.Object({ type: t.Literal('file'), file_id: t.String() }, { ...open, description: 'A file uploaded with the Files API (Anthropic models only).' }),
	t.Object(
		{ type: t.Literal('content'), content: t.Union([t.String(), t.Array(t.Object({ type: t.String() }, open))]) },
		{ ...open, description: 'Custom content: text and image blocks, cited one by one.' },
	),
	t.Object({ type: t.String() }, { ...open, description: 'A newer source type, relayed to Anthropic models as written.' }),
])

/**
 * A document: a PDF, plain text or custom content. For models of other vendors it becomes their file input (OpenAI
 * `file`, Gemini `inlineData`/`fileData`) or, for plain text, a text part with its title; what a vendor cannot read
 * (a Files API id, a URL for OpenAI) is refused with a 400 naming the block.
 */
export const AnthropicDocumentBlock = t.Object(
	{
		type: t.Literal('document'),
		source: AnthropicDocumentSource,
		title: t.Optional(t.Nullable(t.String())),
		context: t.Optional(t.Nullable(t.String({ description: 'About the document; not cited from.' }))),
		citations: t.Optional(t.Nullable(t.Object({ enabled: t.Optional(t.Boolean()) }, open))),
		cache_control: cacheControl,
	},
	open,
)

export const AnthropicToolUseBlock = t.Object(
	{ type: t.Literal('tool_use'), id: t.String(), name: t.String(), input: t.Record(t.String(), t.Unknown()), cache_control: cacheControl },
	open,
)

export const AnthropicThinkingBlock = t.Object(
	// `signature` is required by Anthropic itself; we accept its absence so that clients replaying reasoning from
	// non-Anthropic upstreams through this gateway are not refused (the encoder drops unsigned thinking upstream).
	{ type: t.Literal('thinking'), thinking: t.String(), signature: t.Optional(t.String()) },
	open,
)

export const AnthropicRedactedThinkingBlock = t.Object({ type: t.Literal('redacted_thinking'), data: t.String() }, open)

/** search_result, server_tool_use, web_search_tool_result, mcp_tool_use, container_upload, … */
export const AnthropicOtherBlock = t.Object({ type: t.String({ pattern: `^(?!(?:${KNOWN_BLOCK_TYPES.join('|')})$)[A-Za-z0-9_]+$` }) }, open)

export const AnthropicToolResultBlock = t.Object(
	{
		type: t.Literal('tool_result'),
		tool_use_id: t.String(),
		content: t.Optional(t.Union([t.String(), t.Array(t.Union([AnthropicTextBlock, AnthropicImageBlock, AnthropicDocumentBlock, AnthropicOtherBlock]))])),
		is_error: t.Optional(t.Boolean()),
		cache_control: cacheControl,
	},
	open,
)

export const AnthropicContentBlock = t.Union([
	AnthropicTextBlock,
	AnthropicImageBlock,
	AnthropicDocumentBlock,
	AnthropicToolUseBlock,
	AnthropicToolResultBlock,
	AnthropicThinkingBlock,
	AnthropicRedactedThinkingBlock,
	AnthropicOtherBlock,
])

export const AnthropicMessageParam = t.Object(
	{
		// `system` messages are documented in the current SDK (SystemMessageParam); only leading ones are accepted.
		role: t.Union([t.Literal('user'), t.Literal('assistant'), t.Literal('system')]),
		content: t.Union([t.String(), t.Array(AnthropicContentBlock)]),
	},
	open,
)

export const AnthropicCustomTool = t.Object(
	{
		type: t.Optional(t.Nullable(t.Literal('custom'))),
		name: t.String({ minLength: 1 }),
		description: t.Optional(t.String()),
		input_schema: t.Object({ type: t.Literal('object') }, open),
		cache_control: cacheControl,
		strict: t.Optional(t.Boolean()),
	},
	open,
)

/** Anthropic-hosted tools (web_search_20250305, bash_20250124, …): a versioned `type` and a fixed name. */
export const AnthropicServerTool = t.Object({ type: t.String({ pattern: '^(?!custom$).+$' }), name: t.String() }, open)

/**
 * The tools of one `mcp_servers` entry (MCP connector, beta `mcp-client-2025-11-20`): it has no `name` of its own.
 * Checked in depth by src/mcp/request.ts.
 */
export const AnthropicMcpToolset = t.Object({ type: t.Literal('mcp_toolset'), mcp_server_name: t.String() }, open)

export const AnthropicToolChoice = t.Union([
	t.Object({ type: t.Literal('auto'), disable_parallel_tool_use: t.Optional(t.Boolean()) }, open),
	t.Object({ type: t.Literal('any'), disable_parallel_tool_use: t.Optional(t.Boolean()) }, open),
	t.Object({ type: t.Literal('tool'), name: t.String(), disable_parallel_tool_use: t.Optional(t.Boolean()) }, open),
	t.Object({ type: t.Literal('none') }, open),
])

/**
 * `updates` (beta `thinking-display-updates-2026-08-18`, which Claude Code 2.1.3xx sends by default): only the short
 * progress notes between tool calls carry text. Refusing it cost Claude Code two failed calls per request before it
 * retried without it.
 */
const thinkingDisplay = t.Optional(t.Nullable(t.Union([t.Literal('summarized'), t.Literal('omitted'), t.Literal('updates')])))

/**
 * At least 1024, Anthropic's minimum; or -1, Gemini's "dynamic" budget, which clients that speak this protocol to
 * every vendor send for Gemini and GPT models (opencode's `high` variant and its title requests, through
 * @ai-sdk/anthropic): another vendor's model thinks at its default depth, and Claude answers its own 400 as before.
 */
const thinkingBudget = t.Union([Integer({ minimum: 1024 }), t.Literal(-1)])

export const AnthropicThinkingConfig = t.Union([
	t.Object({ type: t.Literal('enabled'), budget_tokens: thinkingBudget, display: thinkingDisplay }, open),
	t.Object({ type: t.Literal('disabled') }, open),
	t.Object({ type: t.Literal('adaptive'), display: thinkingDisplay }, open),
	t.Object({ type: t.Literal('between_tools') }, open),
])

/** The `POST /v1/messages` body. Use as the route's `body` schema. */
export const AnthropicRequest = t.Object(
	{
		model: t.String({ minLength: 1 }),
		/** "max_tokens: Input should be greater than or equal to 1" (Anthropic refuses 0). */
		max_tokens: Integer({ minimum: 1 }),
		messages: t.Array(AnthropicMessageParam, { minItems: 1 }),
		system: t.Optional(t.Union([t.String(), t.Array(AnthropicTextBlock)])),
		tools: t.Optional(t.Array(t.Union([AnthropicCustomTool, AnthropicServerTool, AnthropicMcpToolset]))),
		tool_choice: t.Optional(AnthropicToolChoice),
		thinking: t.Optional(AnthropicThinkingConfig),
		stop_sequences: t.Optional(t.Array(t.String())),
		temperature: t.Optional(t.Number({ minimum: 0, maximum: 1 })),
		top_p: t.Optional(t.Number({ minimum: 0, maximum: 1 })),
		top_k: t.Optional(Integer({ minimum: 0 })),
		metadata: t.Optional(t.Object({ user_id: t.Optional(t.Nullable(t.String())) }, open)),
		output_config: t.Optional(t.Object({}, open)),
		stream: t.Optional(t.Boolean()),
	},
	open,
)

export type AnthropicRequest = typeof AnthropicRequest.static
export type AnthropicMessageParam = typeof AnthropicMessageParam.static
export type AnthropicContentBlock = typeof AnthropicContentBlock.static
export type AnthropicToolChoice = typeof AnthropicToolChoice.static

export const AnthropicUsage = t.Object(
	{
		input_tokens: Integer(),
		output_tokens: Integer(),
		cache_creation_input_tokens: t.Optional(t.Nullable(Integer())),
		cache_read_input_tokens: t.Optional(t.Nullable(Integer())),
		output_tokens_details: t.Optional(t.Nullable(t.Object({ thinking_tokens: Integer() }, open))),
		cache_creation: t.Optional(t.Nullable(t.Object({ ephemeral_5m_input_tokens: Integer(), ephemeral_1h_input_tokens: Integer() }, open))),
		server_tool_use: t.Optional(t.Nullable(t.Object({ web_search_requests: Integer(), web_fetch_requests: t.Optional(Integer()) }, open))),
		service_tier: t.Optional(t.Nullable(t.String())),
		speed: t.Optional(t.Nullable(t.String())),
		inference_geo: t.Optional(t.Nullable(t.String())),
	},
	open,
)

export const AnthropicResponseBlock = t.Union([
	t.Object({ type: t.Literal('text'), text: t.String() }, open),
	t.Object({ type: t.Literal('thinking'), thinking: t.String(), signature: t.String() }, open),
	t.Object({ type: t.Literal('redacted_thinking'), data: t.String() }, open),
	t.Object({ type: t.Literal('tool_use'), id: t.String(), name: t.String(), input: t.Record(t.String(), t.Unknown()) }, open),
])

export const AnthropicStopReason = t.Union([
	t.Literal('end_turn'),
	t.Literal('max_tokens'),
	t.Literal('stop_sequence'),
	t.Literal('tool_use'),
	t.Literal('pause_turn'),
	t.Literal('refusal'),
	t.Literal('model_context_window_exceeded'),
])

/** Why the model stopped, beyond `stop_reason`: a refusal's policy category and explanation (each null when it has none). */
export const AnthropicStopDetails = t.Object({ type: t.Literal('refusal'), category: t.Nullable(t.String()), explanation: t.Nullable(t.String()) }, open)

/** A non-streaming response body (the `Message` object). */
export const AnthropicResponse = t.Object(
	{
		id: t.String(),
		type: t.Literal('message'),
		role: t.Literal('assistant'),
		model: t.String(),
		content: t.Array(AnthropicResponseBlock),
		stop_reason: t.Nullable(AnthropicStopReason),
		stop_sequence: t.Nullable(t.String()),
		stop_details: t.Optional(t.Nullable(AnthropicStopDetails)),
		usage: AnthropicUsage,
	},
	open,
)

export type AnthropicUsage = typeof AnthropicUsage.static
export type AnthropicResponseBlock = typeof AnthropicResponseBlock.static
export type AnthropicStopReason = typeof AnthropicStopReason.static
export type AnthropicStopDetails = typeof AnthropicStopDetails.static
export type AnthropicResponse = typeof AnthropicResponse.static

export const AnthropicErrorBody = t.Object(
	{
		type: t.Literal('error'),
		error: t.Object(
			{
				type: t.String(),
				message: t.String(),
				details: t.Optional(t.Object({ error_code: t.String(), unsupported: t.Optional(t.Array(t.String())) }, { ...open, description: 'Machine-readable detail, e.g. `{"error_code": "thread_not_found"}`' })),
			},
			open,
		),
		request_id: t.Optional(t.Nullable(t.String())),
	},
	open,
)

export type AnthropicErrorBody = typeof AnthropicErrorBody.static

const deltaUsage = t.Object(
	{
		output_tokens: Integer(),
		input_tokens: t.Optional(t.Nullable(Integer())),
		cache_creation_input_tokens: t.Optional(t.Nullable(Integer())),
		cache_read_input_tokens: t.Optional(t.Nullable(Integer())),
	},
	open,
)

/** The `data` of each SSE event of a streamed response (https://docs.anthropic.com/en/api/messages-streaming). */
export const AnthropicStreamEvent = t.Union([
	t.Object({ type: t.Literal('message_start'), message: AnthropicResponse }, open),
	t.Object(
		{
			type: t.Literal('content_block_start'),
			index: Integer(),
			content_block: t.Union([
				t.Object({ type: t.Literal('text'), text: t.String() }, open),
				t.Object({ type: t.Literal('thinking'), thinking: t.String(), signature: t.String() }, open),
				t.Object({ type: t.Literal('redacted_thinking'), data: t.String() }, open),
				t.Object({ type: t.Literal('tool_use'), id: t.String(), name: t.String(), input: t.Object({}, open) }, open),
			]),
		},
		open,
	),
	t.Object(
		{
			type: t.Literal('content_block_delta'),
			index: Integer(),
			delta: t.Union([
				t.Object({ type: t.Literal('text_delta'), text: t.String() }),
				t.Object({ type: t.Literal('thinking_delta'), thinking: t.String() }),
				t.Object({ type: t.Literal('signature_delta'), signature: t.String() }),
				t.Object({ type: t.Literal('input_json_delta'), partial_json: t.String() }),
			]),
		},
		open,
	),
	t.Object({ type: t.Literal('content_block_stop'), index: Integer() }, open),
	t.Object(
		{
			type: t.Literal('message_delta'),
			delta: t.Object({ stop_reason: t.Nullable(AnthropicStopReason), stop_sequence: t.Nullable(t.String()), stop_details: t.Optional(t.Nullable(AnthropicStopDetails)) }, open),
			usage: deltaUsage,
		},
		open,
	),
	t.Object({ type: t.Literal('message_stop') }, open),
	t.Object({ type: t.Literal('ping') }, open),
	AnthropicErrorBody,
])

export type AnthropicStreamEvent = typeof AnthropicStreamEvent.static
