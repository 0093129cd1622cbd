/**
 * Content blocks ⇄ canonical parts, one block to one part, so positions recorded for unknown blocks (extra.ts)
 * stay valid on the way back.
 * @module
 */
import type { CacheControl, FilePart, FileSource, ImagePart, ImageSource, Part, Role, TextPart, VendorOnly } from '../../core/ir'
import { UNSIGNED_THINKING_TAG } from '../../core/signatures'
import { plainToolCallId, unpackToolCallId } from '../../core/tool-ids'
import { isBlankData } from '../files'
import { at, invalid, isObject, type Json, optBoolean, optObject, optString, reqObject, reqString } from './check'
import { PROTOCOL, type StoredBlock } from './extra'

/** The image media types Anthropic accepts. */
export const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp']

/**
 * What decoding one request collects: blocks with no canonical part (extra.ts), tool names by call id, and what only
 * Anthropic can take (core/ir.ts `vendorOnly`): a user-side block stored verbatim is input the model must read (a
 * `search_result`, a newer source type), which another vendor would never see.
 */
export type DecodeState = { blocks: StoredBlock[]; toolNames: Map<string, string>; vendorOnly: VendorOnly[]; loaded: Set<string> }

/** Keeps a block with no canonical part; on the user side it is also input only Anthropic can read. */
function store(st: DecodeState, at: number[], block: Json, path: string, user: boolean): void {
	st.blocks.push({ path: at, block })
	if (user) st.vendorOnly.push({ protocol: PROTOCOL, what: `a ${String(block.type)} block`, path })
}

/** `cache_control` → canonical marker. Anthropic only defines `ephemeral` (with an optional `ttl`). */
export function decodeCacheControl(o: Json, path: string): CacheControl | undefined {
	const cc = optObject(o, 'cache_control', path)
	if (!cc) return undefined
	if (cc.type !== 'ephemeral') throw invalid(at(at(path, 'cache_control'), 'type'), "Input should be 'ephemeral'")
	const ttl = optString(cc, 'ttl', at(path, 'cache_control'))
	return ttl === undefined ? { type: 'ephemeral' } : { type: 'ephemeral', ttl }
}

const withCache = <T extends object>(part: T, cc: CacheControl | undefined): T => (cc ? { ...part, cacheControl: cc } : part)

export function decodeText(b: Json, path: string): TextPart {
	return withCache<TextPart>({ type: 'text', text: reqString(b, 'text', path) }, decodeCacheControl(b, path))
}

/** Image block → part; `undefined` for sources the canonical model cannot hold (`file`), kept verbatim instead. */
function decodeImage(b: Json, path: string): ImagePart | undefined {
	const src = reqObject(b, 'source', path)
	const sp = at(path, 'source')
	let source: ImageSource
	if (src.type === 'base64') {
		const mediaType = reqString(src, 'media_type', sp)
		if (!IMAGE_TYPES.includes(mediaType))
			throw invalid(at(sp, 'media_type'), "Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'")
		source = { kind: 'base64', mediaType, data: reqString(src, 'data', sp) }
		// As Anthropic words it, before another vendor's refusal could name its own fields.
		if (isBlankData(source.data)) throw invalid(`${path}.image.source.base64`, 'image cannot be empty')
	} else if (src.type === 'url') source = { kind: 'url', url: reqString(src, 'url', sp) }
	else if (typeof src.type === 'string') return undefined
	else throw invalid(at(sp, 'type'), 'Field required')
	return withCache<ImagePart>({ type: 'image', source }, decodeCacheControl(b, path))
}

/** Text and image blocks of a custom-content document (`source.type: "content"`); undefined when one has no canonical part. */
function decodeContentSource(src: Json, sp: string): Array<TextPart | ImagePart> | undefined {
	const c = src.content
	if (typeof c === 'string') return c === '' ? [] : [{ type: 'text', text: c }]
	if (!Array.isArray(c)) throw invalid(at(sp, 'content'), 'Input should be a valid string or list')
	const out: Array<TextPart | ImagePart> = []
	for (let i = 0; i < c.length; i++) {
		const inner: unknown = c[i]
		const ip = at(at(sp, 'content'), i)
		if (!isObject(inner)) throw invalid(ip, 'Input should be a valid dictionary')
		const type = reqString(inner, 'type', ip)
		const part = type === 'text' ? decodeText(inner, ip) : type === 'image' ? decodeImage(inner, ip) : undefined
		if (!part) return undefined
		out.push(part)
	}
	return out
}

/**
 * Document block → file part (https://docs.anthropic.com/en/docs/build-with-claude/pdf-support and /citations):
 * `base64` (a PDF), `text` (text/plain), `url` (a PDF), `file` (Files API) and `content` (custom content) sources, with
 * `title`, `context`, `citations` and `cache_control`. `undefined` for a source the canonical model cannot hold (a
 * newer source type), kept verbatim instead (extra.ts).
 */
function decodeDocument(b: Json, path: string): FilePart | undefined {
	const src = reqObject(b, 'source', path)
	const sp = at(path, 'source')
	let source: FileSource
	switch (src.type) {
		case 'base64':
			source = { kind: 'base64', mediaType: reqString(src, 'media_type', sp), data: reqString(src, 'data', sp) }
			break
		case 'text':
			source = { kind: 'text', text: reqString(src, 'data', sp) }
			break
		case 'url':
			source = { kind: 'url', url: reqString(src, 'url', sp), mediaType: 'application/pdf' }
			break
		case 'file':
			source = { kind: 'file_id', id: reqString(src, 'file_id', sp), store: 'anthropic' }
			break
		case 'content': {
			const content = decodeContentSource(src, sp)
			if (!content) return undefined
			source = { kind: 'content', content }
			break
		}
		default:
			if (typeof src.type === 'string') return undefined
			throw invalid(at(sp, 'type'), 'Field required')
	}
	const part: FilePart = { type: 'file', source, path }
	const title = optString(b, 'title', path)
	if (title !== undefined) part.title = title
	const context = optString(b, 'context', path)
	if (context !== undefined) part.context = context
	const citations = optObject(b, 'citations', path)
	if (citations) part.citations = optBoolean(citations, 'enabled', at(path, 'citations')) === true
	return withCache(part, decodeCacheControl(b, path))
}

function decodeToolResultContent(b: Json, path: string, prefix: number[], st: DecodeState): Array<TextPart | ImagePart | FilePart> {
	const c = b.content
	if (c === undefined || c === null) return []
	if (typeof c === 'string') return c === '' ? [] : [{ type: 'text', text: c }]
	if (!Array.isArray(c)) throw invalid(at(path, 'content'), 'Input should be a valid string or list')
	const out: Array<TextPart | ImagePart | FilePart> = []
	for (let i = 0; i < c.length; i++) {
		const inner: unknown = c[i]
		const ip = at(at(path, 'content'), i)
		if (!isObject(inner)) throw invalid(ip, 'Input should be a valid dictionary')
		const type = reqString(inner, 'type', ip)
		const part =
			type === 'text' ? decodeText(inner, ip) : type === 'image' ? decodeImage(inner, ip) : type === 'document' ? decodeDocument(inner, ip) : undefined
		if (part) out.push(part)
		else if (type === 'tool_reference' && typeof inner.tool_name === 'string') {
			// Tool search (https://docs.claude.com/en/docs/agents-and-tools/tool-use/tool-search-tool): the reference loads a
			// deferred tool, which Anthropic expands in place. Kept for Anthropic; for another vendor the tool is offered
			// from here on (request.ts decodeTools), which is all the reference says.
			store(st, [...prefix, i], inner, ip, false)
			st.loaded.add(inner.tool_name)
		} else store(st, [...prefix, i], inner, ip, true)
	}
	return out
}

const onlyIn = (role: Role, expected: Role, path: string, type: string) => {
	if (role !== expected) throw invalid(path, `\`${type}\` blocks are only allowed in \`${expected}\` messages`)
}

/**
 * Decodes one message's `content` (string or blocks) into parts. Tool-call and tool-result ids are unpacked so a
 * Gemini thought signature that travelled inside an id is restored (core/tool-ids.ts).
 * @param mi index of the message in `ChatRequest.messages` (recorded with unknown blocks)
 */
export function decodeContent(content: unknown, role: Role, mi: number, path: string, st: DecodeState): Part[] {
	if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }]
	if (!Array.isArray(content)) throw invalid(path, 'Input should be a valid string or list')
	const parts: Part[] = []
	// A loop with no closure per block: agents resend their whole history on every turn, and this runs per request.
	for (let bi = 0; bi < content.length; bi++) {
		const b: unknown = content[bi]
		const bp = at(path, bi)
		if (!isObject(b)) throw invalid(bp, 'Input should be a valid dictionary')
		const type = reqString(b, 'type', bp)
		switch (type) {
			case 'text':
				parts.push(decodeText(b, bp))
				continue
			case 'image': {
				const img = decodeImage(b, bp)
				if (img) parts.push(img)
				else store(st, [mi, bi], b, bp, role === 'user')
				continue
			}
			case 'document': {
				const doc = decodeDocument(b, bp)
				if (doc) parts.push(doc)
				else store(st, [mi, bi], b, bp, role === 'user')
				continue
			}
			case 'tool_use': {
				onlyIn(role, 'assistant', bp, type)
				const packed = reqString(b, 'id', bp)
				const id = plainToolCallId(packed)
				if (!id) throw invalid(at(bp, 'id'), 'String should have at least 1 character')
				const name = reqString(b, 'name', bp)
				const input = reqObject(b, 'input', bp)
				st.toolNames.set(id, name)
				const part: Part = { type: 'tool_call', id, name, input }
				const signature = id === packed ? undefined : unpackToolCallId(packed).signature
				if (signature) part.signature = signature
				parts.push(withCache(part, decodeCacheControl(b, bp)))
				continue
			}
			case 'tool_result': {
				onlyIn(role, 'user', bp, type)
				const id = plainToolCallId(reqString(b, 'tool_use_id', bp))
				if (!id) throw invalid(at(bp, 'tool_use_id'), 'String should have at least 1 character')
				const part: Part = { type: 'tool_result', toolCallId: id, content: decodeToolResultContent(b, bp, [mi, bi], st) }
				const name = st.toolNames.get(id)
				if (name) part.name = name
				if (optBoolean(b, 'is_error', bp)) part.isError = true
				parts.push(withCache(part, decodeCacheControl(b, bp)))
				continue
			}
			case 'thinking': {
				onlyIn(role, 'assistant', bp, type)
				// The gateway's mark on thinking no vendor signed comes off: it is unsigned again (core/signatures.ts).
				const signature = optString(b, 'signature', bp)
				parts.push(
					signature && signature !== UNSIGNED_THINKING_TAG
						? { type: 'thinking', text: reqString(b, 'thinking', bp), signature }
						: { type: 'thinking', text: reqString(b, 'thinking', bp) },
				)
				continue
			}
			case 'redacted_thinking':
				onlyIn(role, 'assistant', bp, type)
				parts.push({ type: 'redacted_thinking', data: reqString(b, 'data', bp) })
				continue
			default:
				// Assistant-side blocks (server_tool_use, web_search_tool_result, …) record what Anthropic did in an earlier
				// turn; another vendor continues from the turn's text without them.
				store(st, [mi, bi], b, bp, role === 'user')
		}
	}
	return parts
}
