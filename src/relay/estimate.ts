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

/**
 * Counts of longer texts, remembered: agents resend the same system prompt, tools and history on every turn, and
 * tokenising 50 KB costs about a millisecond. Bounded; the oldest entries go first.
 */
const memo = new Map<string, number>()
const MEMO_MIN = 256
const MEMO_MAX = 4096

/** @example countText('hello world') === 2 */
export function countText(text: string): number {
	if (!text) return 0
	if (text.length > EXACT_LIMIT) return Math.ceil(text.length / 3)
	if (text.length < MEMO_MIN) return countTokens(text)
	const hit = memo.get(text)
	if (hit !== undefined) return hit
	const n = countTokens(text)
	if (memo.size >= MEMO_MAX) memo.delete(memo.keys().next().value!)
	memo.set(text, n)
	return n
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

/** Prompt tokens of a canonical request (system, messages, tools), counted part by part so repeats hit the memo. */
export function estimateInputTokens(req: ChatRequest): number {
	let n = 0
	let images = 0
	for (const s of req.system ?? []) n += countText(s.text)
	for (const m of req.messages) {
		n += OVERHEAD
		for (const p of m.content) {
			n += countText(partText(p))
			images += imagesIn(p)
		}
	}
	for (const t of req.tools ?? []) n += OVERHEAD + countText(t.name + (t.description ?? '') + JSON.stringify(t.parameters))
	return n + images * IMAGE_TOKENS
}
