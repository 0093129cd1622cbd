/**
 * Content conversions shared by requests, responses and streams: images, tool arguments and reasoning.
 * @module
 */
import { badRequest, GatewayError } from '../../core/errors'
import type { ImageSource, RedactedThinkingPart, ThinkingPart } from '../../core/ir'
import { isBase64, isBlankData, parseDataUrl } from '../files'
import { isObject, str } from './guards'

/**
 * Parses an `image_url.url`: `data:` URIs become base64 sources (parsed, never fetched: WIRE-NOTES §19 and the
 * SSRF row #16), http(s) URLs stay URLs for vendors that accept them. Anything else is a 400.
 * @example decodeImageUrl('data:image/png;base64,iVBO', 'x') // { kind: 'base64', mediaType: 'image/png', data: 'iVBO' }
 */
export function decodeImageUrl(url: string, param: string, api: 'chat' | 'responses' = 'chat'): ImageSource {
	if (url.startsWith('data:')) {
		const d = parseDataUrl(url)
		if (!d) throw badRequest(`${param} must be a base64 data URI (data:<media-type>;base64,<data>)`, param)
		if (isBlankData(d.data)) throw emptyImage(param, api)
		// Bytes a vendor cannot decode come back as its own error naming its fields (Anthropic's
		// `messages.0.content.0.image.source.base64`, Gemini's `inline_data.data`): refused here, naming the client's.
		if (!isBase64(d.data)) throw badImage(param, api, 'invalid base64-encoded bytes')
		return { kind: 'base64', ...d }
	}
	if (/^https?:\/\//i.test(url)) return { kind: 'url', url }
	throw badRequest(`${param} must be an http(s) URL or a data: URI`, param)
}

/**
 * An image with no bytes, refused in OpenAI's words (`code: invalid_value` at the `image_url`), before any vendor sees
 * it: a known shape of a thread an agent cannot get past, which Codex recognises by that code and param and recovers
 * from by rolling the turn back (openai/codex#23494); another vendor's refusal would name its own fields.
 * Responses says `Invalid '<param>'.`, Chat Completions `Invalid image URL: '<param>'.`.
 */
const emptyImage = (param: string, api: 'chat' | 'responses') => badImage(param, api, 'empty base64-encoded bytes')

/** An image data URL refused in OpenAI's words, naming the client's own field (`param`). */
const badImage = (param: string, api: 'chat' | 'responses', got: string) =>
	new GatewayError(
		'invalid_request',
		`${api === 'chat' ? 'Invalid image URL: ' : 'Invalid '}'${param}'. Expected a base64-encoded data URL with an image MIME type (e.g. 'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got ${got}.`,
		{ param, code: 'invalid_value' },
	)

/** The `image_url.url` for a source: the URL itself, or a data URI rebuilt from base64. */
export const imageUrlOf = (source: ImageSource): string =>
	source.kind === 'url' ? source.url : `data:${source.mediaType};base64,${source.data}`

/**
 * OpenAI `function.arguments` is a JSON string that models sometimes leave empty or truncate
 * (WIRE-NOTES wire §8): anything that is not a JSON object becomes `{}` instead of an error.
 * @example parseArguments('{"a":1}') // { a: 1 }
 * @example parseArguments('{"a":') // {}
 */
export function parseArguments(args: unknown): Record<string, unknown> {
	if (isObject(args)) return args // some compatibles send an object instead of a string
	if (typeof args !== 'string' || args.trim() === '') return {}
	try {
		const v: unknown = JSON.parse(args)
		return isObject(v) ? v : {}
	} catch {
		return {}
	}
}

/** OpenRouter `reasoning_details` entry as we emit it. */
export type ReasoningDetailOut =
	| { type: 'reasoning.text'; text: string; signature?: string }
	| { type: 'reasoning.encrypted'; data: string }

type ReasoningPart = ThinkingPart | RedactedThinkingPart

/**
 * Reasoning of one assistant message. `reasoning_content` (DeepSeek) or `reasoning` (OpenRouter, vLLM) carries
 * the text; OpenRouter-style `reasoning_details` carries it per block with signatures and encrypted data
 * (https://openrouter.ai/docs/use-cases/reasoning-tokens). When details carry text they win, since the plain
 * string is their concatenation; otherwise the string is the text and details add signatures / redacted blocks.
 */
export function decodeReasoning(text: unknown, details: unknown): ReasoningPart[] {
	const plain = str(text) ?? ''
	const parts: ReasoningPart[] = []
	for (const d of Array.isArray(details) ? details : []) {
		if (!isObject(d)) continue
		if (d.type === 'reasoning.encrypted') {
			const data = str(d.data)
			if (data) parts.push({ type: 'redacted_thinking', data })
		} else if (d.type === 'reasoning.text' || d.type === 'reasoning.summary') {
			const part: ThinkingPart = { type: 'thinking', text: str(d.text) ?? str(d.summary) ?? '' }
			const signature = str(d.signature)
			if (signature) part.signature = signature
			parts.push(part)
		}
	}
	const thinking = parts.filter((p): p is ThinkingPart => p.type === 'thinking')
	if (plain && thinking.every((p) => p.text === '')) {
		// Signature-only details (WIRE-NOTES wire §14): the text lives in the plain string.
		if (thinking.length) thinking[0].text = plain
		else parts.unshift({ type: 'thinking', text: plain })
	}
	return parts
}

/**
 * The wire fields for reasoning parts. `reasoning_content` always (DeepSeek requires it back on tool turns,
 * new-api#4543); `reasoning_details` only when a signature or encrypted block must survive (new-api PR #6998),
 * so plain compatibles are not sent a field they do not know.
 */
export function encodeReasoning(parts: ReadonlyArray<{ type: string }>): {
	reasoning_content?: string
	reasoning_details?: ReasoningDetailOut[]
} {
	const reasoning = parts.filter((p): p is ReasoningPart => p.type === 'thinking' || p.type === 'redacted_thinking')
	if (!reasoning.length) return {}
	const out: { reasoning_content?: string; reasoning_details?: ReasoningDetailOut[] } = {}
	const thinking = reasoning.filter((p): p is ThinkingPart => p.type === 'thinking')
	if (thinking.length) out.reasoning_content = thinking.map((p) => p.text).join('')
	if (reasoning.some((p) => p.type === 'redacted_thinking' || p.signature)) {
		out.reasoning_details = reasoning.map((p): ReasoningDetailOut =>
			p.type === 'redacted_thinking'
				? { type: 'reasoning.encrypted', data: p.data }
				: p.signature
					? { type: 'reasoning.text', text: p.text, signature: p.signature }
					: { type: 'reasoning.text', text: p.text },
		)
	}
	return out
}
