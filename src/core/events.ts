/**
 * Canonical stream events. Block-structured like Anthropic's stream (the most explicit of the three): every
 * content block opens, receives deltas and closes before the next block opens, with indexes increasing from 0.
 * Gemini and OpenAI decoders synthesise the block lifecycle; encoders that have no blocks (OpenAI) ignore it.
 * @module
 */
import type { GatewayError } from './errors'
import type { Citation, StopReason, TextPart, TokenLogprob, Usage, WebSource } from './ir'

export type BlockStart =
	/** `refusal`: the upstream marked this text as the model's refusal (OpenAI `refusal`), not ordinary output. */
	| { kind: 'text'; refusal?: true }
	| { kind: 'thinking' }
	| { kind: 'redacted_thinking'; data: string }
	| { kind: 'tool_call'; id: string; name: string; signature?: string }
	/** A call run by an MCP client (src/mcp); its input arrives as `json_delta`s like a tool call's. */
	| { kind: 'mcp_tool_use'; id: string; name: string; serverName: string }
	/** The MCP server's answer, whole at block start (no deltas), as Anthropic streams `mcp_tool_result`. */
	| { kind: 'mcp_tool_result'; toolUseId: string; isError: boolean; content: TextPart[] }
	/** A web search the vendor ran (core/ir.ts `WebSearchPart`), whole at block start: decoders hold it until its results came. */
	| { kind: 'web_search'; id: string; queries: string[]; sources: WebSource[] }

export type StreamEvent =
	/** Exactly once, first. `usage` may carry input/cache counts known up front (Anthropic `message_start`). */
	| { type: 'start'; id: string; model: string; created?: number; usage?: Partial<Usage> }
	| { type: 'block_start'; index: number; block: BlockStart }
	/** `logprobs`: the log probabilities of this delta's tokens, when the request asked for them (OpenAI, Gemini). */
	| { type: 'text_delta'; index: number; text: string; logprobs?: TokenLogprob[] }
	| { type: 'thinking_delta'; index: number; text: string }
	| { type: 'signature_delta'; index: number; signature: string }
	/** A fragment of a tool call's JSON arguments. Concatenated fragments form the whole object. */
	| { type: 'json_delta'; index: number; json: string }
	/** A source the open text block `index` quotes (its span, when given, in that block's text). */
	| { type: 'citation'; index: number; citation: Citation }
	| { type: 'block_stop'; index: number }
	/** May repeat; each field given is the cumulative value so far (later values replace earlier ones). */
	| { type: 'usage'; usage: Partial<Usage> }
	/** Once, after the last block_stop. */
	/** `refusal`: why the model refused, when the upstream said (Anthropic `stop_details.explanation`). */
	| { type: 'finish'; reason: StopReason; stopSequence?: string; refusal?: string }
	/** Terminal: the upstream failed mid-stream. Encoders emit their protocol's error frame. */
	| { type: 'error'; error: GatewayError }
	/** Keepalive; encoders emit a ping event or an SSE comment. */
	| { type: 'ping' }
