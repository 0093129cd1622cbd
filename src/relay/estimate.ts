/**
 * Local token counts, for the reservation's upper bound, for Anthropic's `message_start.input_tokens` when the
 * upstream reports usage only at the end, and for usage the upstream never sent (a cut stream). Counted with the
 * o200k tokenizer (./o200k); beyond a size where exact counting would cost real CPU, by bytes. Images and PDF pages
 * count as the vendor of the model serving them does (./image-tokens.ts, by the caller's MediaRule).
 * @module
 */
import type { ChatRequest, Part } from '../core/ir'
import { ownExtra } from '../protocols/anthropic-messages/extra'
import { audioTokens, fileTokens } from './file-tokens'
import { type MediaRule, mediaRuleFor } from './image-tokens'
// Its ranks (2 MB) load on the first count, which the fast path never makes.
import { countTokens } from './o200k'

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

/**
 * A part's tokens, text by text: a tool result's texts are counted one by one (plus a token per separator) rather than
 * joined first, so an agent's resent results hit the memo and a long history is not copied into one string per turn.
 */
function countPart(p: Part, count: (text: string) => number, media: MediaRule): number {
	switch (p.type) {
		case 'text':
			return count(p.text)
		case 'thinking':
			return count(p.text)
		case 'redacted_thinking':
			return count(p.data)
		case 'tool_call':
			return count(p.name) + count(JSON.stringify(p.input))
		case 'tool_result': {
			let n = 0
			let files = 0
			for (const c of p.content)
				if (c.type === 'text') n += count(c.text) + 1
				else if (c.type === 'file') files += fileTokens(c, count, media)
				else if (c.type === 'audio') files += audioTokens(c)
				else files += media.image(c)
			return Math.max(0, n - 1) + files
		}
		case 'image':
			return media.image(p)
		case 'file':
			// Counted by pages or length, not by the size of its data (see file-tokens.ts).
			return fileTokens(p, count, media)
		case 'audio':
			return audioTokens(p)
	}
}

/** Whether a part carries data the body's text would miscount (an image, a file, audio), in itself or a tool result. */
const isData = (p: Part): boolean =>
	p.type === 'image' || p.type === 'file' || p.type === 'audio' || (p.type === 'tool_result' && p.content.some((c) => c.type !== 'text'))

/**
 * A cheap, generous bound on a text's tokens without the tokenizer: BPE vocabularies average 3–4 ASCII characters
 * per token, while CJK and other non-ASCII characters can be a token each. Used for reservations (an upper bound).
 * @example boundText('hello world') === 4
 */
export function boundText(text: string): number {
	// Most prompts are ASCII, told by their UTF-8 length (counted natively by Bun's Buffer, with no copy: no web API
	// measures it without encoding; ~20× faster than a loop or a regex here, and agents resend ~100 KB of history on
	// every turn); only other texts are counted character by character.
	if (Buffer.byteLength(text, 'utf8') === text.length) return Math.ceil(text.length / 3)
	let other = 0
	for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 128) other++
	return Math.ceil((text.length - other) / 3) + other
}

/** Media of a request whose serving model is not known here (batch lines): counted as by a model of no documented rule. */
const ANY_MODEL = mediaRuleFor([])

/** Bodies from this size on are bounded by their text when they can be (see boundInputTokens). */
const RAW_BOUND_MIN = 16 * 1024

/**
 * Prompt-token bound of a canonical request for the reservation (no tokenizer: see boundText).
 *
 * `raw`, the client's body text the request was decoded from: a large body whose text is all ASCII and that carries
 * no image or document is bounded by its length / 3 instead. Every text of the request is in it, quoted, and each
 * message and tool has more characters of JSON around it than the per-item overhead, so this bounds what counting
 * text by text would, with one native length count: 2 µs against 27–31 µs for a 90 KB agent turn, most of those
 * serialising the tools' schemas (bench/README, ninth VM). It reserves a little more (the JSON's own characters, ~20%
 * there); small bodies, where that share is large and counting cheap, are counted as before.
 */
export function boundInputTokens(req: ChatRequest, raw?: string, media: MediaRule = ANY_MODEL): number {
	if (raw !== undefined && raw.length >= RAW_BOUND_MIN && !carriesData(req) && Buffer.byteLength(raw) === raw.length) return Math.ceil(raw.length / 3)
	return sumParts(req, boundText, media)
}

/**
 * Images, files and audio (bounded per image, page or second, not by the size of their data, which the body's text
 * would count: a PDF's base64 would make the bound of its text hundreds of thousands of tokens), or content blocks the
 * decoder set aside for lack of a canonical part (Anthropic's search results…, kept in its `extra`).
 */
function carriesData(req: ChatRequest): boolean {
	if (ownExtra(req)?.__blocks) return true
	for (const m of req.messages) for (const p of m.content) if (isData(p)) return true
	return false
}

/** Prompt tokens of a canonical request (system, messages, tools), counted part by part so repeats hit the memo. */
export function estimateInputTokens(req: ChatRequest, media: MediaRule = ANY_MODEL): number {
	return sumParts(req, countText, media)
}

function sumParts(req: ChatRequest, count: (text: string) => number, media: MediaRule): number {
	let n = 0
	for (const s of req.system ?? []) n += count(s.text)
	for (const m of req.messages) {
		n += OVERHEAD
		for (const p of m.content) n += countPart(p, count, media)
	}
	// Field by field: a description resent every turn hits the memo, and nothing is joined into a new string.
	for (const t of req.tools ?? []) n += OVERHEAD + count(t.name) + count(t.description ?? '') + count(JSON.stringify(t.parameters))
	return n
}
