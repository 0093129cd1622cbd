/**
 * Canonical messages → Converse `messages` (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ContentBlock.html):
 * text, images and documents as bytes (base64 in JSON), tool calls as `toolUse`, their results as `toolResult`, and
 * the model's own reasoning as `reasoningContent`. Parts Converse cannot carry are refused with a 400 naming them
 * (WIRE-NOTES #8), never dropped silently.
 * @module
 */
import { unsupportedForModel } from '../../core/errors'
import type { FilePart, ImagePart, Message, Part, TextPart, ToolResultPart } from '../../core/ir'
import { untagSignature } from '../../core/signatures'
import { plainToolCallId } from '../../core/tool-ids'
import { asPlainParts, cannotSend, filenameFor } from '../files'
import type { ConverseCachePoint, ConverseContentBlock, ConverseDocumentFormat, ConverseImage, ConverseImageFormat, ConverseMessage, ConverseToolResultContent } from './model'

const VENDOR = 'Bedrock Converse'

const IMAGE_FORMAT: Record<string, ConverseImageFormat> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' }

const DOCUMENT_FORMAT: Record<string, ConverseDocumentFormat> = {
	'application/pdf': 'pdf',
	'text/csv': 'csv',
	'application/msword': 'doc',
	'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
	'application/vnd.ms-excel': 'xls',
	'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
	'text/html': 'html',
	'text/plain': 'txt',
	'text/markdown': 'md',
}

/** `toolUseId`: "Pattern: ^[a-zA-Z0-9_-]+$", 1 to 64 characters; other ids go as one made from them, the same for the call and its result. */
const TOOL_USE_ID = /^[a-zA-Z0-9_-]{1,64}$/

/** @example toolUseId('call_1') === 'call_1' */
export function toolUseId(id: string): string {
	const plain = plainToolCallId(id)
	return TOOL_USE_ID.test(plain) ? plain : `tooluse_${Bun.hash(plain).toString(36)}`
}

/**
 * `DocumentBlock.name`: "alphanumeric characters, whitespace characters (no more than one in a row), hyphens,
 * parentheses, and square brackets", 1 to 200 characters, so a file name's dot and extension are spelled out of it.
 * @example documentName('Q3 report.pdf') === 'Q3 report-pdf'
 */
export function documentName(name: string): string {
	const cleaned = name
		.replace(/[^A-Za-z0-9\s\-()[\]]/g, '-')
		.replace(/\s+/g, ' ')
		.trim()
	// "Length Constraints: Minimum length of 1. Maximum length of 200."
	return cleaned.slice(0, 200).trimEnd() || 'document'
}

function image(p: ImagePart, at: string): ConverseImage {
	const s = p.source
	if (s.kind !== 'base64')
		// The relay fetches web image URLs for Converse before encoding (relay/images.ts): one still here was not fetched.
		throw unsupportedForModel(`${at}: an image given by URL (${s.url}) cannot be sent to this model (${VENDOR}): it takes image bytes only`, true, at)
	const format = IMAGE_FORMAT[s.mediaType.toLowerCase()]
	if (!format) throw unsupportedForModel(`${at}: an image of type ${s.mediaType} cannot be sent to this model (${VENDOR}): it takes png, jpeg, gif and webp`, true, at)
	return { format, source: { bytes: s.data } }
}

/** A file part as a document block, or as text and image blocks when it is text (a plain-text or custom-content document). */
function file(p: FilePart, at: string): ConverseContentBlock[] {
	const plain = asPlainParts(p)
	if (plain) return plain.flatMap((q, i) => (q.type === 'text' ? textBlock(q) : [{ image: image(q, `${at}.content[${i}]`) }]))
	const s = p.source
	if (s.kind !== 'base64') throw cannotSend(p, VENDOR, 'it takes documents as bytes only', at)
	const format = DOCUMENT_FORMAT[s.mediaType.toLowerCase()]
	if (!format) throw cannotSend(p, VENDOR, 'it takes pdf, csv, doc, docx, xls, xlsx, html, txt and md documents', at)
	return [{ document: { format, name: documentName(p.title ?? filenameFor(p, s.mediaType)), source: { bytes: s.data }, ...(p.context && { context: p.context }) } }]
}

/** Converse refuses a blank text block ("The text field in the ContentBlock object … is blank"): an empty one is left out. */
const textBlock = (p: TextPart): ConverseContentBlock[] => (p.text.trim() ? [{ text: p.text }] : [])

/**
 * What a tool result with nothing in it says: Converse refuses a blank text block in a `toolResult` as anywhere else
 * ("The text field in the ToolResultContentBlock object … is blank"), so a tool that returned "" (or spaces) would make
 * every later turn of the conversation fail (hermes-agent#55092), and `content` is required.
 */
export const EMPTY_TOOL_RESULT = '(empty)'

function toolResult(p: ToolResultPart, at: string): ConverseContentBlock {
	const content: ConverseToolResultContent[] = p.content.flatMap((q, i): ConverseToolResultContent[] => {
		const here = `${at}.content[${i}]`
		if (q.type === 'text') return q.text.trim() ? [{ text: q.text }] : []
		if (q.type === 'image') return [{ image: image(q, here) }]
		if (q.type === 'audio') throw cannotSend(q, VENDOR, 'it takes no audio input', here)
		return file(q, here).flatMap((b): ConverseToolResultContent[] => ('text' in b ? [{ text: b.text }] : 'image' in b ? [{ image: b.image }] : 'document' in b ? [{ document: b.document }] : []))
	})
	return { toolResult: { toolUseId: toolUseId(p.toolCallId), content: content.length ? content : [{ text: EMPTY_TOOL_RESULT }], ...(p.isError && { status: 'error' as const }) } }
}

/**
 * One canonical part as Converse content blocks. Thinking goes back only when Converse made it (its signature carries
 * Converse's tag, core/signatures.ts): reasoning from another vendor, or unsigned, means nothing to this model. So
 * for redacted reasoning, tagged as Converse's when it came from Converse (response.ts): Anthropic's
 * `redacted_thinking` data, from a conversation begun with Claude, is encrypted for Anthropic alone.
 */
function blocks(p: Part, at: string): ConverseContentBlock[] {
	switch (p.type) {
		case 'text':
			return textBlock(p)
		case 'image':
			return [{ image: image(p, at) }]
		case 'file':
			return file(p, at)
		case 'audio':
			throw cannotSend(p, VENDOR, 'it takes no audio input', at)
		case 'tool_call':
			return [{ toolUse: { toolUseId: toolUseId(p.id), name: p.name, input: p.input } }]
		case 'tool_result':
			return [toolResult(p, at)]
		case 'thinking': {
			const own = p.signature ? untagSignature(p.signature) : undefined
			if (own?.origin !== 'converse') return []
			return [{ reasoningContent: { reasoningText: { text: p.text, ...(own.signature && { signature: own.signature }) } } }]
		}
		case 'redacted_thinking': {
			const own = untagSignature(p.data)
			return own?.origin === 'converse' ? [{ reasoningContent: { redactedContent: own.signature } }] : []
		}
	}
}

/** A client's cache breakpoint (Anthropic `cache_control`) as the `cachePoint` block that follows the marked content. */
export const CACHE_POINT: ConverseCachePoint = { cachePoint: { type: 'default' } }

/** The part's blocks, followed by a cache point when the client marked it and the model takes them (`cache`). */
function withCachePoint(p: Part, at: string, cache: boolean): ConverseContentBlock[] {
	const out = blocks(p, at)
	// A mark on content that sends nothing (blank text) has nothing to follow.
	if (cache && 'cacheControl' in p && p.cacheControl && out.length) out.push(CACHE_POINT)
	return out
}

/**
 * Canonical messages → Converse messages, consecutive turns of one role merged (Converse wants them alternating) and
 * turns left empty dropped; the client's cache breakpoints as `cachePoint` blocks where the model takes them.
 */
export function encodeMessages(messages: Message[], cache = false): ConverseMessage[] {
	const out: ConverseMessage[] = []
	messages.forEach((m, mi) => {
		const content = m.content.flatMap((p, pi) => withCachePoint(p, `messages[${mi}].content[${pi}]`, cache))
		if (!content.length) return
		const last = out[out.length - 1]
		if (last?.role === m.role) last.content.push(...content)
		else out.push({ role: m.role, content })
	})
	return out
}
