/**
 * The answer of Bedrock's Converse API → canonical response
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_ResponseSyntax):
 * `output.message.content` (text, toolUse, reasoningContent), `stopReason`, `usage`. Also the pieces the stream
 * decoder shares: the stop reason and usage mappings, and a content block's reasoning signature.
 * @module
 */
import type { ChatResponse, StopReason, Usage } from '../../core/ir'
import { emptyUsage } from '../../core/ir'
import { tagSignature } from '../../core/signatures'
import { newId } from '../../lib/ids'
import type { ConverseResponse } from './model'
import { isObject as isObj } from '../../core/json'

type Obj = Record<string, unknown>
export { isObj }
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)
const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0)

/**
 * Converse's `stopReason` → canonical. Guardrails and content filters are a content filter; a prompt that filled the
 * context window stopped for length; a malformed output or tool call ends the turn. Any tool call in the answer makes
 * it `tool_use`, whatever the reason said (WIRE-NOTES #1).
 * @example decodeStopReason('guardrail_intervened', false) === 'content_filter'
 */
export function decodeStopReason(reason: string | undefined, toolSeen: boolean): StopReason {
	if (toolSeen) return 'tool_use'
	switch (reason) {
		case 'max_tokens':
		case 'model_context_window_exceeded':
			return 'max_tokens'
		case 'stop_sequence':
			return 'stop_sequence'
		case 'tool_use':
			return 'tool_use'
		case 'guardrail_intervened':
		case 'content_filtered':
			return 'content_filter'
		default:
			return 'end_turn'
	}
}

/**
 * `TokenUsage` → canonical usage: `inputTokens` excludes the cache reads and writes, which Converse gives apart
 * (`cacheReadInputTokens`, `cacheWriteInputTokens`), as the canonical `input` does. Undefined when there is none.
 * @example decodeUsage({ inputTokens: 7, outputTokens: 3, cacheReadInputTokens: 2 }) // { input: 7, output: 3, cacheRead: 2, cacheWrite: 0, reasoning: 0 }
 */
export function decodeUsage(u: unknown): Usage | undefined {
	if (!isObj(u)) return undefined
	return { input: count(u.inputTokens), output: count(u.outputTokens), cacheRead: count(u.cacheReadInputTokens), cacheWrite: count(u.cacheWriteInputTokens), reasoning: 0 }
}

/**
 * A Converse reasoning signature (or redacted reasoning's `redactedContent`) as the canonical model carries it: tagged,
 * so it goes back to Converse only (core/signatures.ts), never to Anthropic as a `redacted_thinking` of its own.
 */
export const converseSignature = (signature: string): string => tagSignature('converse', signature)

/** `output.message.content` → canonical parts; block kinds the gateway has no place for (citations, images) are skipped. */
function decodeContent(blocks: unknown[]): ChatResponse['content'] {
	const out: ChatResponse['content'] = []
	for (const b of blocks) {
		if (!isObj(b)) continue
		if (typeof b.text === 'string') {
			if (b.text) out.push({ type: 'text', text: b.text })
		} else if (isObj(b.toolUse)) {
			const t = b.toolUse
			out.push({ type: 'tool_call', id: str(t.toolUseId) ?? newId('tooluse_'), name: str(t.name) ?? '', input: isObj(t.input) ? t.input : {} })
		} else if (isObj(b.reasoningContent)) {
			const r = b.reasoningContent
			if (isObj(r.reasoningText)) {
				const signature = str(r.reasoningText.signature)
				out.push({ type: 'thinking', text: str(r.reasoningText.text) ?? '', ...(signature && { signature: converseSignature(signature) }) })
			} else if (typeof r.redactedContent === 'string') out.push({ type: 'redacted_thinking', data: converseSignature(r.redactedContent) })
		}
	}
	return out
}

/** Converse answer → canonical response. Converse gives no answer id: one is made. */
export function decodeResponse(body: ConverseResponse): ChatResponse {
	const b: unknown = body
	const o = isObj(b) ? b : {}
	const message = isObj(o.output) && isObj(o.output.message) ? o.output.message : {}
	const content = decodeContent(Array.isArray(message.content) ? message.content : [])
	const stopReason = decodeStopReason(str(o.stopReason), content.some((p) => p.type === 'tool_call'))
	return { id: newId('msg_'), model: '', content, stopReason, usage: decodeUsage(o.usage) ?? emptyUsage() }
}

/** The usage of a Converse answer without decoding the rest. */
export const usageOf = (body: ConverseResponse): Usage | undefined => (isObj(body) ? decodeUsage(body.usage) : undefined)
