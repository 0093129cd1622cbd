/**
 * Gemini parts ⇄ canonical parts, shared by the request, response and stream codecs.
 *
 * Thought signatures (https://ai.google.dev/gemini-api/docs/thought-signatures): Gemini puts `thoughtSignature` on
 * a functionCall part (the first of a parallel batch), and otherwise on a text part, often the part right after the
 * thoughts or an empty text part at the end. The canonical model keeps signatures only on thinking and tool-call
 * parts, so a signature on a text part is moved onto the thinking part that precedes it, or, when there is none,
 * onto a signature-only thinking part after the text (WIRE-NOTES §14). Such a signature gets the origin tag that
 * names the kind of part it was on (core/signatures.ts): in an upstream answer always, in a client's history when it is
 * untagged there (Gemini's own: gemini/signatures.ts); `encodeModelTurn` (request side) and `encodeResponseParts`
 * (Gemini clients) put it back there.
 * @module
 */
import { badRequest } from '../../core/errors'
import type { ImagePart, ImageSource, Part, RedactedThinkingPart, TextPart, ThinkingPart, ToolCallPart } from '../../core/ir'
import { type GeminiOrigin, tagSignature } from '../../core/signatures'
import type { GeminiPart } from './model'
import { codePartText, get, isObj, type Obj, REDACTED_PREFIX, standardBase64, str } from './read'
import { type Carried, carryThinking, isCarried, readCarried, restoreCarried, splitHidden } from './carried-thinking'
import { callSignatureFromClient, SKIP_SIGNATURE, signatureForClient, signatureFromClient } from './signatures'

export type ModelPart = TextPart | ToolCallPart | ThinkingPart | RedactedThinkingPart | ImagePart

/** Assigns a tool-call id: `given` when Gemini sent one, else a synthetic one from the call's position. */
export type CallIdFn = (n: number, name: string, given: string | undefined) => string

/** Inline or file data → a canonical image part (the canonical model has one media part kind). */
export function decodeMedia(part: Obj): ImagePart | undefined {
	const inline = get(part, 'inlineData')
	if (isObj(inline)) {
		const mediaType = str(get(inline, 'mimeType'))
		const raw = str(inline.data)
		const data = raw === undefined ? undefined : standardBase64(raw)
		if (mediaType && data !== undefined) return { type: 'image', source: { kind: 'base64', mediaType, data } }
	}
	const file = get(part, 'fileData')
	if (isObj(file)) {
		const url = str(get(file, 'fileUri'))
		if (url) return { type: 'image', source: { kind: 'url', url } }
	}
	return undefined
}

/**
 * Decodes the parts of a model turn (a response candidate or a `model` content of client history).
 * Consecutive thought parts form one thinking part, consecutive text parts one text part.
 * @param strictAt when set (request decoding), a malformed part is a 400 naming `${strictAt}[j]`; otherwise skipped
 * @param upstream an answer from Gemini: every thinking signature is Gemini's and gets its origin tag; otherwise a
 * client's history, where an untagged one is Gemini's and an `anthropic`-tagged one Claude's (gemini/signatures.ts).
 * Function-call signatures stay raw: only Gemini signs calls (other clients carry them in ids, core/tool-ids.ts).
 * In a client's history, a signature that carries thinking hidden from the client (carried-thinking.ts) is no part's
 * signature: its thinking goes back where it stood.
 */
export function decodeModelParts(parts: unknown[], callId: CallIdFn, strictAt?: string, upstream = false): ModelPart[] {
	const out: ModelPart[] = []
	const own = (origin: GeminiOrigin, sig: string) => (upstream ? tagSignature(origin, sig) : signatureFromClient(origin, sig))
	let thinking: ThinkingPart | undefined // the open, still unsigned thinking part
	let calls = 0
	const carried: Carried[] = []
	const fail = (j: number, what: string) => {
		if (strictAt) throw badRequest(`${strictAt}[${j}]: ${what}`, `${strictAt}[${j}]`)
	}
	parts.forEach((p, j) => {
		if (!isObj(p)) return fail(j, 'each part must be an object')
		let sig = str(get(p, 'thoughtSignature')) || undefined
		if (sig && !upstream && isCarried(sig)) {
			carried.push(...(readCarried(sig, strictAt && `${strictAt}[${j}].thoughtSignature`) ?? []))
			sig = undefined
		}
		if (p.thought === true) {
			if (sig?.startsWith(REDACTED_PREFIX)) {
				thinking = undefined
				// Claude's data is standard base64; a client keeping signatures as bytes may send it back URL-safe (google-genai for Python).
				out.push({ type: 'redacted_thinking', data: sig.slice(REDACTED_PREFIX.length).replace(/-/g, '+').replace(/_/g, '/') })
				return
			}
			if (!thinking) out.push((thinking = { type: 'thinking', text: '' }))
			thinking.text += str(p.text) ?? ''
			if (sig) {
				thinking.signature = own('gemini-thought', sig)
				thinking = undefined
			}
			return
		}
		const fc = get(p, 'functionCall')
		if (fc !== undefined) {
			if (!isObj(fc) || typeof fc.name !== 'string' || !fc.name) return fail(j, 'functionCall.name is required')
			if (fc.args !== undefined && fc.args !== null && !isObj(fc.args)) return fail(j, 'functionCall.args must be an object')
			thinking = undefined
			const call: ToolCallPart = {
				type: 'tool_call',
				id: callId(calls++, fc.name, str(fc.id) || undefined),
				name: fc.name,
				input: isObj(fc.args) ? fc.args : {},
			}
			const callSig = upstream ? sig : callSignatureFromClient(sig)
			if (callSig) call.signature = callSig
			out.push(call)
			return
		}
		const text = typeof p.text === 'string' ? p.text : codePartText(p)
		if (text !== undefined) {
			let sigLeft = sig && own('gemini-text', sig)
			if (sigLeft && thinking) {
				thinking.signature = sigLeft
				sigLeft = undefined
			}
			thinking = undefined
			const last = out[out.length - 1]
			if (text && last?.type === 'text') last.text += text
			else if (text) out.push({ type: 'text', text })
			if (sigLeft) out.push({ type: 'thinking', text: '', signature: sigLeft })
			return
		}
		const media = decodeMedia(p)
		if (media) {
			thinking = undefined
			out.push(media)
			return
		}
		if (get(p, 'functionResponse') !== undefined) return fail(j, 'functionResponse is only allowed in user turns')
		return fail(j, 'unsupported part: expected text, inlineData, fileData or functionCall')
	})
	return carried.length ? restoreCarried(out, carried) : out
}

const MIME_BY_EXT: Record<string, string> = {
	png: 'image/png',
	jpg: 'image/jpeg',
	jpeg: 'image/jpeg',
	gif: 'image/gif',
	webp: 'image/webp',
	heic: 'image/heic',
	heif: 'image/heif',
	pdf: 'application/pdf',
}

/**
 * A canonical image → `inlineData` (base64, or a parsed `data:` URI: WIRE-NOTES §19) or, as a fallback for a web
 * URL the relay did not fetch, `fileData{fileUri}` (Gemini reads only uploaded/GCS files there reliably).
 */
export function encodeImage(src: ImageSource): GeminiPart {
	if (src.kind === 'base64') return { inlineData: { mimeType: src.mediaType, data: src.data } }
	const m = /^data:([^;,]*)((?:;[^;,]*)*?),(.*)$/s.exec(src.url)
	if (m) {
		const mimeType = m[1] || 'application/octet-stream'
		const isBase64 = m[2].split(';').includes('base64')
		const data = isBase64 ? m[3] : Buffer.from(decodeURIComponent(m[3]), 'utf8').toString('base64')
		return { inlineData: { mimeType, data } }
	}
	const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(src.url)?.[1]?.toLowerCase()
	const mimeType = ext ? MIME_BY_EXT[ext] : undefined
	return { fileData: mimeType ? { fileUri: src.url, mimeType } : { fileUri: src.url } }
}

/**
 * Canonical response content → Gemini parts, for Gemini-native clients: thinking becomes `thought: true` parts
 * (with its signature), tool calls `functionCall` parts (with id and signature), and Anthropic redacted thinking a
 * thought part whose signature carries the data behind `REDACTED_PREFIX`, so it can be replayed.
 * Signatures are shown as Google would show them (gemini/signatures.ts): Gemini's raw and back on the kind of part it
 * came on (one of a text part on that text part, or on an empty text part after it, as `encodeModelTurn` does),
 * Anthropic's with its origin tag on the thought part. The first function call of an answer Gemini did not make
 * carries the documented placeholder signature, so the client's history can go to a Gemini 3 model as it is.
 *
 * A client that did not ask for thoughts (`includeThoughts`) gets no thought part: Gemini's own text-part signatures
 * stay, and any other thinking is carried whole in one `thoughtSignature` (carried-thinking.ts), where Gemini 3 signs a
 * step: on the first function call, else on the first text part (else on an empty text part at the end).
 */
export function encodeResponseParts(content: ReadonlyArray<Part>, showThoughts = true): GeminiPart[] {
	const { shown, carried } = splitHidden(content)
	const out = encodeShown(showThoughts ? content : shown)
	if (!carried.length) return out
	const signature = carryThinking(carried)
	const call = out.find((p) => p.functionCall && (!p.thoughtSignature || p.thoughtSignature === SKIP_SIGNATURE))
	// Shown thinking is carried too, on a function call only: clients such as Gemini CLI keep no thought part in their
	// history (Gemini signs the call), and a final answer's thinking is not needed back.
	if (showThoughts) {
		if (call) call.thoughtSignature = signature
		return out
	}
	const carrier = call ?? out.find((p) => p.text !== undefined && !p.thought && !p.thoughtSignature)
	if (carrier) carrier.thoughtSignature = signature
	else out.push({ text: '', thoughtSignature: signature })
	return out
}

function encodeShown(content: ReadonlyArray<Part>): GeminiPart[] {
	const out: GeminiPart[] = []
	let pending: string | undefined // a text part's signature, for the next text part
	let calls = 0
	const flush = () => {
		if (pending) out.push({ text: '', thoughtSignature: pending })
		pending = undefined
	}
	for (const p of content) {
		if (p.type === 'text') {
			out.push(pending ? { text: p.text, thoughtSignature: pending } : { text: p.text })
			pending = undefined
		} else if (p.type === 'thinking') {
			const shown = p.signature ? signatureForClient(p.signature) : undefined
			if (!shown?.onText) {
				flush()
				out.push(shown ? { text: p.text, thought: true, thoughtSignature: shown.signature } : { text: p.text, thought: true })
				continue
			}
			if (p.text) out.push({ text: p.text, thought: true })
			const last = out[out.length - 1]
			if (!p.text && !pending && last && last.text !== undefined && !last.thought && !last.thoughtSignature) last.thoughtSignature = shown.signature
			else {
				flush()
				pending = shown.signature
			}
		} else if (p.type === 'redacted_thinking') {
			flush()
			out.push({ text: '', thought: true, thoughtSignature: REDACTED_PREFIX + p.data })
		} else if (p.type === 'tool_call') {
			flush()
			const part: GeminiPart = { functionCall: { id: p.id, name: p.name, args: p.input } }
			const sig = p.signature ?? (calls === 0 ? SKIP_SIGNATURE : undefined)
			if (sig) part.thoughtSignature = sig
			calls++
			out.push(part)
		} else if (p.type === 'image') {
			flush()
			out.push(encodeImage(p.source))
		}
	}
	flush()
	return out
}
