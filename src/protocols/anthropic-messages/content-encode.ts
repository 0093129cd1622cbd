/**
 * Canonical parts → Anthropic content blocks (request side), and the tool-call id rules shared with the
 * response and stream encoders.
 * @module
 */
import type { ImageSource, Part } from '../../core/ir'
import { isForeignSignature } from '../../core/signatures'
import { packToolCallId } from '../../core/tool-ids'
import type { Json } from './check'
import { cache, encodeFile, refuseAudio } from './document'
import { notNull, reinsert } from './extra'
import { parseDataUrl } from '../files'

/**
 * The id a client or upstream sees for a tool call. Anthropic requires tool_use ids to match ^[a-zA-Z0-9_-]+$,
 * so other characters (some vendors use `:` or `.`) become `_`; a Gemini thought signature rides inside the id.
 * @example wireToolId('call:1', 'c2ln') === 'call_1__ts_c2ln'
 */
export const wireToolId = (id: string, signature?: string): string => packToolCallId(id.replace(/[^a-zA-Z0-9_-]/g, '_'), signature)

/** `data:` URIs are parsed, never fetched (WIRE-NOTES wire §19); other URLs pass through as url sources. */
export function encodeImageSource(src: ImageSource): Json {
	if (src.kind === 'base64') return { type: 'base64', media_type: src.mediaType, data: src.data }
	const d = parseDataUrl(src.url)
	if (d) return { type: 'base64', media_type: d.mediaType, data: d.data }
	return { type: 'url', url: src.url }
}

/** Maps every tool-call id of the request to its wire id, so tool_result ids match their (packed) tool_use. */
export function toolIdMap(messages: Array<{ content: Part[] }>): (id: string) => string {
	const ids = new Map<string, string>()
	for (const m of messages) for (const p of m.content) if (p.type === 'tool_call') ids.set(p.id, wireToolId(p.id, p.signature))
	return (id) => ids.get(id) ?? wireToolId(id)
}

/**
 * One part → one block, or null when Anthropic would reject it: empty or whitespace-only text ("text content blocks
 * must be non-empty", "text content blocks must contain non-whitespace text"; OpenAI takes both, and clients send an
 * assistant's `"\n\n"` beside its tool calls or a tool's `"\n"`) and thinking without a signature (only Anthropic-issued signatures verify; unsigned reasoning
 * from other vendors cannot be replayed). Audio, and files Anthropic cannot read, are refused (document.ts).
 * @param innerStored unknown blocks recorded inside this tool_result (same-protocol requests only)
 * @param where the part's position, for a refusal when its decoder recorded none
 */
export function encodePart(p: Part, toolId: (id: string) => string, innerStored: Array<{ at: number; block: Json }> = [], where = 'messages'): Json | null {
	switch (p.type) {
		case 'text':
			return p.text.trim() === '' ? null : { type: 'text', text: p.text, ...cache(p.cacheControl) }
		case 'image':
			return { type: 'image', source: encodeImageSource(p.source), ...cache(p.cacheControl) }
		case 'file':
			return encodeFile(p, (c) => encodePart(c, toolId), where)
		case 'audio':
			throw refuseAudio(p, where)
		case 'tool_call':
			return { type: 'tool_use', id: toolId(p.id), name: p.name, input: p.input, ...cache(p.cacheControl) }
		case 'tool_result': {
			const inner: Array<Json | null> = p.content.map((c, i) => encodePart(c, toolId, [], `${where}.content[${i}]`))
			const content = reinsert(inner, innerStored).filter(notNull)
			const block: Json = { type: 'tool_result', tool_use_id: toolId(p.toolCallId) }
			if (content.length) block.content = content
			if (p.isError) block.is_error = true
			return { ...block, ...cache(p.cacheControl) }
		}
		case 'thinking':
			// Another vendor's signature (origin-tagged, core/signatures.ts) verifies no better than none.
			return p.signature && !isForeignSignature(p.signature) ? { type: 'thinking', thinking: p.text, signature: p.signature } : null
		case 'redacted_thinking':
			// Another vendor's redacted reasoning (Converse's, origin-tagged) is no Anthropic ciphertext: Anthropic would refuse it.
			return isForeignSignature(p.data) ? null : { type: 'redacted_thinking', data: p.data }
	}
}
