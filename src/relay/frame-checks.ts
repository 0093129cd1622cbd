/**
 * Cheap checks on upstream SSE frames for the fast path, which relays frames without decoding them: whether a frame
 * is only preamble (nothing the client could act on yet, so failover is still possible) and whether it is broken.
 * @module
 */
import type { SseFrame } from '../core/sse'
import type { ProtocolName } from '../protocols/codec'

/**
 * Frames that carry no content: Anthropic `ping`/`message_start` and an empty text or thinking block's start, and OpenAI's first chunk, which only names the role
 * (`delta: {role: "assistant", content: ""}`, https://platform.openai.com/docs/api-reference/chat-streaming). Only the
 * first few frames are asked. A frame whose `"content":` is a non-empty string carries content and is told without
 * parsing (an unescaped `"content":"` is a key, never text inside a string), as is the first content chunk of most
 * streams.
 */
export function isPreambleFrame(p: ProtocolName, f: SseFrame): boolean {
	if (p === 'anthropic-messages') return f.event === 'ping' || f.event === 'message_start' || (f.event === 'content_block_start' && EMPTY_BLOCKS.some((b) => f.data.includes(b)))
	if (p !== 'openai-chat' || isBrokenFrame(f) || f.data === '[DONE]') return false
	const at = f.data.indexOf('"content":"')
	if (at !== -1 && f.data.charCodeAt(at + 11) !== 34 /* " */) return false
	if (isRoleChunk(f.data)) return true
	try {
		const c = JSON.parse(f.data) as { choices?: Array<{ delta?: Record<string, unknown>; finish_reason?: unknown }>; usage?: unknown; error?: unknown }
		if (c.error || c.usage || !Array.isArray(c.choices)) return false
		return c.choices.every((ch) => !ch.finish_reason && onlyRole(ch.delta))
	} catch {
		return false
	}
}

/**
 * Anthropic's text and thinking blocks open empty (`content_block_start` with `"text":""`), their content following in
 * deltas: an overload right after one is still before content, and may fail over (QA: it reached the client, billed).
 */
const EMPTY_BLOCKS = ['"content_block":{"type":"text","text":""', '"content_block":{"type":"thinking","thinking":""']

/** The role-only deltas OpenAI and most compatibles open a stream with, as they appear on the wire. */
const ROLE_DELTAS = ['"delta":{"role":"assistant","content":""}', '"delta":{"role":"assistant","content":"","refusal":null}', '"delta":{"role":"assistant","content":null}', '"delta":{"role":"assistant"}']

/**
 * The usual first chunk, told without parsing it (a JSON.parse was 1.5% of the gateway's samples at 64 streamed
 * connections): one choice whose delta is exactly a role-only form, one `finish_reason`, null, and no usage or error
 * member. Keys cannot occur inside string values unescaped, so these substrings are structure. Anything else is parsed.
 */
function isRoleChunk(d: string): boolean {
	const delta = d.indexOf('"delta":')
	if (delta === -1 || d.indexOf('"delta":', delta + 8) !== -1 || !ROLE_DELTAS.some((r) => d.startsWith(r, delta))) return false
	const finish = d.indexOf('"finish_reason":')
	if (finish === -1 || d.indexOf('"finish_reason":', finish + 16) !== -1 || !d.startsWith('null', finish + 16)) return false
	return d.includes('"choices":[') && !d.includes('"usage":{') && !d.includes('"error":')
}

/** A delta that names the role and nothing else (other members null or empty). */
function onlyRole(delta: Record<string, unknown> | undefined): boolean {
	for (const k in delta) {
		const v = delta[k]
		if (k !== 'role' && v !== null && v !== '') return false
	}
	return true
}

/**
 * A data frame that cannot be a JSON object (truncated, or an HTML/text error page spliced into the stream). Relaying
 * it would break the client's SDK mid-answer, so the relay ends the stream with a protocol error instead. A structural
 * check, not a parse: the fast path does not decode the frames it forwards.
 */
export function isBrokenFrame(f: SseFrame): boolean {
	const d = f.data
	// The first and last characters that are not white space, found without copying the frame (it runs on every one).
	let i = 0
	let j = d.length - 1
	while (i <= j && isSpace(d.charCodeAt(i))) i++
	while (j >= i && isSpace(d.charCodeAt(j))) j--
	if (i > j) return false
	if (d.charCodeAt(i) === 123 /* { */) return d.charCodeAt(j) !== 125 /* } */
	return d.slice(i, j + 1) !== '[DONE]'
}

const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13
