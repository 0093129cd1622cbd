/**
 * Thinking ⇄ Responses `reasoning` items. The item's summary carries the thinking text; `encrypted_content` carries
 * what the vendor needs back verbatim next turn (WIRE-NOTES #6, #8): an Anthropic thinking signature or Gemini thought
 * signature, or an Anthropic `redacted_thinking` payload. Clients replay reasoning items as they received them, with
 * `encrypted_content` opaque to them, so a short prefix tells the two kinds apart and tells ours from OpenAI's own
 * encrypted reasoning, which no other vendor could read (it is dropped when converting).
 * @module
 */
import type { RedactedThinkingPart, ThinkingPart } from '../../core/ir'
import { isObject, reqArray, str, type Json } from '../openai-chat/guards'
import type { ResponsesOutputReasoning } from './model'

/** `encrypted_content` prefix of a thinking signature produced by this gateway. */
export const SIGNATURE_MARK = 'sbsig:'
/** `encrypted_content` prefix of a redacted-thinking payload produced by this gateway. */
export const REDACTED_MARK = 'sbred:'

/** The text of a reasoning item: its summary parts, or (raw reasoning models) its `reasoning_text` content. */
export function reasoningText(item: Json): string {
	const summary = Array.isArray(item.summary) ? item.summary : []
	const texts = summary.filter(isObject).map((s) => str(s.text) ?? '').filter(Boolean)
	if (texts.length) return texts.join('\n\n')
	const content = Array.isArray(item.content) ? item.content : []
	return content.filter(isObject).map((c) => str(c.text) ?? '').join('')
}

/**
 * A reasoning item replayed by a client → a canonical part, or undefined when nothing in it could reach another vendor.
 * @example decodeReasoningItem({ type: 'reasoning', summary: [{ type: 'summary_text', text: 'Hm' }], encrypted_content: 'sbsig:abc' }, 'input[0]')
 * // { type: 'thinking', text: 'Hm', signature: 'abc' }
 */
export function decodeReasoningItem(item: Json, at: string): ThinkingPart | RedactedThinkingPart | undefined {
	if (item.summary !== undefined) reqArray(item.summary, `${at}.summary`)
	const enc = str(item.encrypted_content)
	if (enc?.startsWith(REDACTED_MARK)) return { type: 'redacted_thinking', data: enc.slice(REDACTED_MARK.length) }
	const text = reasoningText(item)
	const signature = enc?.startsWith(SIGNATURE_MARK) ? enc.slice(SIGNATURE_MARK.length) : undefined
	if (!text && !signature) return undefined
	return signature ? { type: 'thinking', text, signature } : { type: 'thinking', text }
}

/** A canonical thinking part → a completed reasoning output item with id `id`. */
export function encodeReasoningItem(p: ThinkingPart | RedactedThinkingPart, id: string): ResponsesOutputReasoning {
	if (p.type === 'redacted_thinking') return { id, type: 'reasoning', summary: [], encrypted_content: REDACTED_MARK + p.data }
	const item: ResponsesOutputReasoning = { id, type: 'reasoning', summary: p.text ? [{ type: 'summary_text', text: p.text }] : [] }
	// Unsigned thinking (Gemini's thoughts, OpenAI-compatible reasoning_content) still gets the mark alone: stateless
	// clients expect every reasoning item to carry encrypted_content (the Vercel AI SDK warned and dropped the item on
	// every step), and it decodes back to unsigned thinking.
	if (p.signature || p.text) item.encrypted_content = SIGNATURE_MARK + (p.signature ?? '')
	return item
}

/**
 * The input without the reasoning items this gateway made from another vendor's thinking (marked `encrypted_content`),
 * or undefined when it has none (nothing copied): on OpenAI's own Responses API, which the native route forwards the
 * body to, such an item is reasoning it cannot decrypt, as a conversation that moved from Claude or Gemini carries.
 */
export function withoutForeignReasoning(input: unknown): unknown[] | undefined {
	if (!Array.isArray(input) || !input.some(foreign)) return undefined
	return input.filter((item) => !foreign(item))
}

const foreign = (item: unknown): boolean => {
	if (!isObject(item) || item.type !== 'reasoning') return false
	const enc = str(item.encrypted_content)
	return enc !== undefined && (enc.startsWith(SIGNATURE_MARK) || enc.startsWith(REDACTED_MARK))
}
