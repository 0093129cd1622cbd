/**
 * The canonical model of a chat request and response. Every wire protocol decodes into these types
 * and encodes out of them, so N protocols need N codecs rather than N² converters.
 *
 * Conventions:
 * - Roles are only `user` and `assistant`; tool results are `tool_result` parts in a user message
 *   (OpenAI `role:"tool"` messages are merged into one user turn on decode and split out on encode).
 * - The system prompt is top level, as in Anthropic and Gemini.
 * - Tool-call `input` is always a parsed JSON object (OpenAI's string `arguments` is parsed defensively).
 * - Vendor-only fields that have no canonical slot ride in `extra` so nothing is silently dropped.
 * @module
 */

/** Anthropic-style prompt caching marker; carried through where a vendor understands it. */
export type CacheControl = { type: 'ephemeral'; ttl?: string }

export type TextPart = { type: 'text'; text: string; cacheControl?: CacheControl }

export type ImageSource =
	| { kind: 'url'; url: string }
	| { kind: 'base64'; mediaType: string; data: string }

export type ImagePart = { type: 'image'; source: ImageSource; detail?: string; cacheControl?: CacheControl }

/** A call the model made. `signature` carries an opaque vendor token tied to the call (Gemini `thoughtSignature`). */
export type ToolCallPart = {
	type: 'tool_call'
	id: string
	name: string
	input: Record<string, unknown>
	signature?: string
	cacheControl?: CacheControl
}

export type ToolResultPart = {
	type: 'tool_result'
	toolCallId: string
	/** The tool's name when the protocol carries it (Gemini `functionResponse.name` needs it). */
	name?: string
	content: Array<TextPart | ImagePart>
	isError?: boolean
	cacheControl?: CacheControl
}

/** Model reasoning. `signature` must be replayed verbatim to the vendor that produced it. Text may be empty. */
export type ThinkingPart = { type: 'thinking'; text: string; signature?: string }

/** Encrypted reasoning (Anthropic `redacted_thinking.data`, OpenAI `reasoning.encrypted`). */
export type RedactedThinkingPart = { type: 'redacted_thinking'; data: string }

/**
 * A call to a tool of a remote MCP server, run by the MCP client (Anthropic's MCP connector, or the gateway's own
 * agent loop for other vendors: src/mcp), not by the caller. Answers only; Anthropic `mcp_tool_use`.
 */
export type McpToolUsePart = { type: 'mcp_tool_use'; id: string; serverName: string; name: string; input: Record<string, unknown> }

/** The MCP server's answer to an `mcp_tool_use` (Anthropic `mcp_tool_result`); `isError` when the call failed. */
export type McpToolResultPart = { type: 'mcp_tool_result'; toolUseId: string; isError: boolean; content: TextPart[] }

export type Part = TextPart | ImagePart | ToolCallPart | ToolResultPart | ThinkingPart | RedactedThinkingPart

export type Role = 'user' | 'assistant'

export type Message = { role: Role; content: Part[] }

export type Tool = {
	name: string
	description?: string
	/** JSON Schema of the arguments object. */
	parameters: Record<string, unknown>
	/** OpenAI `strict`. */
	strict?: boolean
	cacheControl?: CacheControl
}

export type ToolChoice = { type: 'auto' } | { type: 'none' } | { type: 'required' } | { type: 'tool'; name: string }

export type ResponseFormat =
	| { type: 'text' }
	| { type: 'json_object' }
	| { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean; description?: string }

export type ReasoningEffort = 'minimal' | 'low' | 'medium' | 'high'

/**
 * Reasoning settings. A codec fills what its protocol says; the encoder of another protocol derives the
 * rest with `effortToBudget` / `budgetToEffort` (core/reasoning.ts).
 */
export type Reasoning = { enabled: boolean; effort?: ReasoningEffort; budgetTokens?: number; includeThoughts?: boolean }

export type ChatRequest = {
	/** The model as the client named it. */
	model: string
	system?: TextPart[]
	messages: Message[]
	tools?: Tool[]
	toolChoice?: ToolChoice
	parallelToolCalls?: boolean
	maxTokens?: number
	temperature?: number
	topP?: number
	topK?: number
	stop?: string[]
	responseFormat?: ResponseFormat
	reasoning?: Reasoning
	stream: boolean
	/**
	 * How many alternative answers (OpenAI `n`), when more than one. The canonical answer has one, so only a channel
	 * that speaks the client's protocol can give them (src/relay/chat.ts); the reservation covers all of them.
	 */
	choices?: number
	/** End-user id for abuse tracking (OpenAI `user`, Anthropic `metadata.user_id`). */
	user?: string
	/** Fields of the source protocol with no canonical slot; only re-emitted to the same protocol. */
	extra?: Record<string, unknown>
}

/**
 * Why generation stopped, in Anthropic's vocabulary (the richest of the three).
 * Mapping to OpenAI: end_turn|stop_sequence|pause_turn → stop, max_tokens → length, tool_use → tool_calls,
 * refusal|content_filter → content_filter.
 */
export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | 'content_filter'

/**
 * Token usage, normalised. `input` EXCLUDES cache reads and writes (Anthropic semantics), so the total prompt is
 * input + cacheRead + cacheWrite. OpenAI `prompt_tokens` and Gemini `promptTokenCount` include cached tokens:
 * their decoders subtract. `output` INCLUDES reasoning tokens; `reasoning` is the part of `output` spent thinking.
 */
export type Usage = {
	input: number
	output: number
	cacheRead: number
	cacheWrite: number
	reasoning: number
}

export const emptyUsage = (): Usage => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 })

/** Total prompt tokens as OpenAI and Gemini count them. */
export const promptTokens = (u: Usage): number => u.input + u.cacheRead + u.cacheWrite

export type ChatResponse = {
	id: string
	model: string
	/** Unix seconds. */
	created?: number
	content: Array<TextPart | ToolCallPart | ThinkingPart | RedactedThinkingPart | McpToolUsePart | McpToolResultPart>
	stopReason: StopReason
	stopSequence?: string
	usage: Usage
}
