/**
 * Anthropic's checks on content blocks, in its `path: reason` wording: the block types the Messages API knows (an
 * OpenAI or Gemini part that leaked through is refused), image sources (the four image types, http(s) URLs) and
 * document sources (https://docs.anthropic.com/en/docs/build-with-claude/pdf-support: base64 PDFs, text/plain text,
 * http(s) URLs, Files API ids, custom content), also inside tool results (which may also hold tool search's
 * `tool_reference` blocks); and its rules on text: no empty text block, no
 * message whose text is only whitespace, no prefill ending in whitespace (checkTexts).
 * @module
 */

import { asArr, asObj, type Obj } from '../shared/json'
import type { JsonReply } from '../shared/reply'
import { invalid } from './errors'

const BLOCK_TYPES = [
	'text',
	'image',
	'document',
	'search_result',
	'tool_use',
	'tool_result',
	'thinking',
	'redacted_thinking',
	'server_tool_use',
	'web_search_tool_result',
	'web_fetch_tool_result',
	'code_execution_tool_result',
	'bash_code_execution_tool_result',
	'text_editor_code_execution_tool_result',
	'mcp_tool_use',
	'mcp_tool_result',
	'container_upload',
]
const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp']
const STANDARD_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/
const isHttp = (u: unknown) => typeof u === 'string' && /^https?:\/\//.test(u)

function checkSource(kind: 'image' | 'document', src: Obj | undefined, at: string): JsonReply | undefined {
	if (!src) return invalid(`${at}.${kind}.source: Field required`)
	const p = `${at}.${kind}.source.${String(src.type)}`
	switch (src.type) {
		case 'base64':
			if (kind === 'image' && !IMAGE_TYPES.includes(String(src.media_type))) return invalid(`${p}.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`)
			if (kind === 'document' && src.media_type !== 'application/pdf') return invalid(`${p}.media_type: Input should be 'application/pdf'`)
			if (typeof src.data !== 'string') return invalid(`${p}.data: Field required`)
			// Standard (RFC 4648 §4) base64 only: URL-safe `-`/`_` are refused as Anthropic refuses them, with this text
			// (anthropics/anthropic-sdk-typescript#603: "messages.2.content.0.tool_result.content.0.image.source.base64: invalid base64 data").
			return STANDARD_BASE64.test(src.data) ? undefined : invalid(`${p}: invalid base64 data`)
		case 'url':
			return isHttp(src.url) ? undefined : invalid(`${p}.url: Only http and https URLs are supported`)
		case 'file':
			return typeof src.file_id === 'string' ? undefined : invalid(`${p}.file_id: Field required`)
		case 'text':
			if (kind !== 'document') break
			if (src.media_type !== 'text/plain') return invalid(`${p}.media_type: Input should be 'text/plain'`)
			return typeof src.data === 'string' ? undefined : invalid(`${p}.data: Field required`)
		case 'content':
			if (kind !== 'document') break
			return typeof src.content === 'string' || Array.isArray(src.content) ? undefined : invalid(`${p}.content: Field required`)
	}
	const tags = kind === 'image' ? "'base64', 'url', 'file'" : "'base64', 'text', 'content', 'url', 'file'"
	return invalid(`${at}.${kind}.source: Input tag '${String(src.type)}' found using 'type' does not match any of the expected tags: ${tags}`)
}

function checkBlock(b: Obj, at: string): JsonReply | undefined {
	if (!BLOCK_TYPES.includes(String(b.type)))
		return invalid(`${at}: Input tag '${String(b.type)}' found using 'type' does not match any of the expected tags: ${BLOCK_TYPES.map((t) => `'${t}'`).join(', ')}`)
	if (b.type === 'image' || b.type === 'document') return checkSource(b.type, asObj(b.source), at)
	if (b.type === 'tool_result' && Array.isArray(b.content)) {
		for (let k = 0; k < b.content.length; k++) {
			const inner = asObj(b.content[k]) ?? {}
			// Tool search's answer (https://docs.claude.com/en/docs/agents-and-tools/tool-use/tool-search-tool), only inside a tool result.
			if (inner.type === 'tool_reference' && typeof inner.tool_name === 'string') continue
			const bad = checkBlock(inner, `${at}.tool_result.content.${k}`)
			if (bad) return bad
		}
	}
}

/** Every block of every message. */
export function checkBlocks(messages: Obj[]): JsonReply | undefined {
	for (let i = 0; i < messages.length; i++) {
		const content = messages[i]!.content
		if (typeof content === 'string') continue
		const blocks = asArr(content)
		for (let j = 0; j < blocks.length; j++) {
			const bad = checkBlock(asObj(blocks[j]) ?? {}, `messages.${i}.content.${j}`)
			if (bad) return bad
		}
	}
}

const isBlank = (t: string) => t.trim() === ''

/**
 * Anthropic's rules on message text, in its words (as users met them: anthropics/claude-code#59812, #23369,
 * home-assistant/core#175637, LibreChat-AI/agents#124 which tried the shapes against the API, aaif-goose/goose#5967):
 * an empty text block is refused ("text content blocks must be non-empty"); whitespace-only text is refused when the
 * message has no other text with something in it (`[' ']` is refused, `[' ', 'real']` taken); a final assistant
 * message (a prefill) must not end with whitespace.
 */
export function checkTexts(messages: Obj[]): JsonReply | undefined {
	for (const [i, m] of messages.entries()) {
		const finalAssistant = i === messages.length - 1 && m.role === 'assistant'
		const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : asArr(m.content).map((b) => asObj(b) ?? {})
		const texts = blocks.flatMap((b) => (b.type === 'text' ? [String(b.text ?? '')] : []))
		if (!finalAssistant && (blocks.length === 0 || (typeof m.content === 'string' && m.content === '')))
			return invalid(`messages.${i}: all messages must have non-empty content except for the optional final assistant message`)
		if (typeof m.content !== 'string' && texts.some((t) => t === '')) return invalid('messages: text content blocks must be non-empty')
		if (texts.some((t) => t !== '') && texts.every(isBlank)) return invalid('messages: text content blocks must contain non-whitespace text')
	}
	const last = messages[messages.length - 1]
	if (last?.role !== 'assistant') return undefined
	const end = typeof last.content === 'string' ? last.content : asObj(asArr(last.content).at(-1))
	const text = typeof end === 'string' ? end : end?.type === 'text' ? String(end.text ?? '') : ''
	if (text !== '' && /\s$/.test(text)) return invalid('messages: final assistant content cannot end with trailing whitespace')
}

/** Claude takes at most four cache breakpoints per request, over tools, system and messages (tool results' blocks included). */
export function checkCacheBreakpoints(b: Obj): JsonReply | undefined {
	let found = 0
	const count = (blocks: unknown[]) => {
		for (const x of blocks) {
			const block = asObj(x)
			if (!block) continue
			if (block.cache_control !== undefined) found++
			if (Array.isArray(block.content)) count(block.content)
		}
	}
	count(asArr(b.tools))
	if (Array.isArray(b.system)) count(b.system)
	for (const m of asArr(b.messages)) if (Array.isArray(asObj(m)?.content)) count(asObj(m)!.content as unknown[])
	// Automatic caching (a top-level cache_control) takes one of the four slots.
	if (b.cache_control !== undefined) found++
	if (found > 4) return invalid(`A maximum of 4 blocks with cache_control may be provided. Found ${found}.`)
}
