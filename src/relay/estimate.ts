/**
 * Local token counts, for the reservation's upper bound, for Anthropic's `message_start.input_tokens` when the
 * upstream reports usage only at the end, and for usage the upstream never sent (a cut stream). Counted with the
 * o200k tokenizer (gpt-tokenizer); beyond a size where exact counting would cost real CPU, by bytes.
 * @module
 */
import { countTokens } from 'gpt-tokenizer'
import type { ChatRequest, Part } from '../core/ir'

/** Per image, a generous bound across vendors (Anthropic ≈ 1,600 for the largest; OpenAI high detail ≈ 1,100). */
const IMAGE_TOKENS = 1_600
/** Per message and per tool, for role markers and formatting the vendors add. */
const OVERHEAD = 4
const EXACT_LIMIT = 64 * 1024

/** @example countText('hello world') === 2 */
export function countText(text: string): number {
	if (!text) return 0
	if (text.length > EXACT_LIMIT) return Math.ceil(text.length / 3)
	return countTokens(text)
}

function partText(p: Part): string {
	switch (p.type) {
		case 'text':
			return p.text
		case 'thinking':
			return p.text
		case 'redacted_thinking':
			return p.data
		case 'tool_call':
			return p.name + JSON.stringify(p.input)
		case 'tool_result':
			return p.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n')
		case 'image':
			return ''
	}
}

const imagesIn = (p: Part): number => (p.type === 'image' ? 1 : p.type === 'tool_result' ? p.content.filter((c) => c.type === 'image').length : 0)

/** Prompt tokens of a canonical request (system, messages, tools). */
export function estimateInputTokens(req: ChatRequest): number {
	let text = ''
	let images = 0
	let n = 0
	for (const s of req.system ?? []) text += s.text + '\n'
	for (const m of req.messages) {
		n += OVERHEAD
		for (const p of m.content) {
			text += partText(p) + '\n'
			images += imagesIn(p)
		}
	}
	for (const t of req.tools ?? []) {
		n += OVERHEAD
		text += t.name + (t.description ?? '') + JSON.stringify(t.parameters) + '\n'
	}
	return countText(text) + n + images * IMAGE_TOKENS
}
