/**
 * Gemini `contents` ⇄ canonical messages.
 *
 * Tool-call ids: Gemini often omits `functionCall.id`, so a missing id is synthesised from the call's position
 * (`call_<content index>_<n>_<name>`), and a `functionResponse` is matched to a call of the nearest preceding model
 * turn by id, else by name in order (https://ai.google.dev/gemini-api/docs/function-calling). On the way out, ids are
 * not sent: Gemini pairs responses by name and order, and some endpoints reject `id` with 400 "Unknown name \"id\" at
 * 'contents[…].function_call'" (JetBrains/koog#735, google-gemini/gemini-cli#13972).
 * @module
 */
import { badRequest } from '../../core/errors'
import type { FilePart, ImagePart, Message, Part, TextPart, ToolCallPart, ToolResultPart } from '../../core/ir'
import { isGeminiOrigin, untagSignature } from '../../core/signatures'
import { unpackToolCallId } from '../../core/tool-ids'
import { emptyFinalUserMessage } from '../final-turn'
import type { GeminiContent, GeminiFunctionResponse, GeminiPart, GeminiRole } from './model'
import { decodeUserMedia, encodeAudio, encodeFile, multimodalResults } from './files'
import { decodeModelParts, encodeImage } from './parts'
import { get, isObj, type Obj, str, syntheticCallId } from './read'
import { SKIP_SIGNATURE } from './signatures'

export { SKIP_SIGNATURE }

// ── Decode ─────────────────────────────────────────────────────────────────────────────────────────────

/**
 * Client `contents` → canonical messages. Throws 400 on what Gemini would reject. A run of contents of one role is one
 * turn, as Gemini reads it: `@google/genai`'s streamed chat (`sendMessageStream`) keeps each chunk it received as a model
 * content of its own, so its history has the thought pieces, their signature and the calls of one answer in
 * consecutive model contents, and the function responses answer the calls of the whole run.
 */
export function decodeContents(contents: unknown[], counting = false): Message[] {
	const messages: Message[] = []
	let lastCalls: ToolCallPart[] = []
	let answered = new Set<ToolCallPart>()
	const roles = contents.map((c, i) => roleOf(c, `contents[${i}]`))
	for (let i = 0; i < contents.length; ) {
		const role = roles[i]
		let end = i + 1
		while (end < contents.length && roles[end] === role) end++
		if (role === 'model') {
			// Read whole, so that thought pieces join into one thinking part with its signature; each content is checked
			// on its own first, so that an error names the part where it stood.
			const run = contents.slice(i, end) as Obj[]
			if (run.length > 1) run.forEach((c, k) => decodeModelParts(c.parts as unknown[], (n, name) => syntheticCallId(i + k, n, name), `contents[${i + k}].parts`))
			const first = i
			const content = decodeModelParts(
				run.flatMap((c) => c.parts as unknown[]),
				(n, name, given) => given ?? syntheticCallId(first, n, name),
				run.length > 1 ? undefined : `contents[${i}].parts`,
			)
			lastCalls = content.filter((p): p is ToolCallPart => p.type === 'tool_call')
			answered = new Set()
			messages.push({ role: 'assistant', content })
		} else {
			const content: Part[] = []
			for (let k = i; k < end; k++) content.push(...decodeUserParts((contents[k] as Obj).parts as unknown[], `contents[${k}].parts`, lastCalls, answered, counting))
			messages.push({ role: 'user', content })
		}
		i = end
	}
	return messages
}

/** A content's role ('function', the legacy role of function-response turns in older Gemini docs, is a user turn). */
function roleOf(c: unknown, at: string): 'user' | 'model' {
	if (!isObj(c)) throw badRequest(`${at} must be an object`, at)
	const role = c.role === undefined || c.role === null || c.role === 'function' ? 'user' : c.role
	if (role !== 'user' && role !== 'model') throw badRequest(`${at}.role must be 'user' or 'model', got ${JSON.stringify(role)}`, `${at}.role`)
	if (!Array.isArray(c.parts) || c.parts.length === 0) throw badRequest(`${at}.parts must be a non-empty array`, `${at}.parts`)
	return role
}

function decodeUserParts(parts: unknown[], at: string, calls: ToolCallPart[], answered: Set<ToolCallPart>, counting: boolean): Part[] {
	const out: Part[] = []
	parts.forEach((p, j) => {
		const here = `${at}[${j}]`
		if (!isObj(p)) throw badRequest(`${here} must be an object`, here)
		if (p.thought === true) return // thoughts are model output; Gemini ignores them in user turns too
		if (typeof p.text === 'string') {
			if (p.text) out.push({ type: 'text', text: p.text })
			return
		}
		const media = decodeUserMedia(p, here)
		if (media) return void out.push(media)
		const fr = get(p, 'functionResponse')
		if (fr !== undefined) return void out.push(...decodeFunctionResponse(fr, here, calls, answered, counting))
		if (get(p, 'functionCall') !== undefined)
			throw badRequest(`${here}: functionCall is only allowed in model turns`, here)
		throw badRequest(`${here}: unsupported part, expected text, inlineData, fileData or functionResponse`, here)
	})
	return out
}

/**
 * A `functionResponse` → the tool result of the call it answers. One that answers none is a 400, except when counting:
 * Gemini counts any content, and Gemini CLI asks `:countTokens` for a tool result with media alone (its
 * `calculateRequestTokenCount`), so there it counts as the text and media it holds.
 */
function decodeFunctionResponse(fr: unknown, at: string, calls: ToolCallPart[], answered: Set<ToolCallPart>, counting: boolean): Part[] {
	if (!isObj(fr) || typeof fr.name !== 'string' || !fr.name)
		throw badRequest(`${at}.functionResponse.name is required`, `${at}.functionResponse.name`)
	const name = fr.name
	const id = str(fr.id)
	const open = calls.filter((c) => !answered.has(c))
	const call = (id && open.find((c) => c.id === id)) || open.find((c) => c.name === name)
	if (!call && !counting)
		throw badRequest(
			`${at}.functionResponse '${name}' does not answer any functionCall of the preceding model turn`,
			`${at}.functionResponse`,
		)
	if (call) answered.add(call)
	const response = get(fr, 'response')
	if (response !== undefined && !isObj(response))
		throw badRequest(`${at}.functionResponse.response must be an object`, `${at}.functionResponse.response`)
	const { text, isError } = resultText(isObj(response) ? response : {}, name)
	const content: Array<TextPart | ImagePart | FilePart> = [{ type: 'text', text }]
	// Multimodal function responses (Gemini 3) carry media in functionResponse.parts.
	const subParts = Array.isArray(fr.parts) ? fr.parts : []
	subParts.forEach((sub, k) => {
		const media = isObj(sub) ? decodeUserMedia(sub, `${at}.functionResponse.parts[${k}]`) : undefined
		// A tool result holds no audio part: audio a function returned is a file of its media type.
		if (media?.type === 'audio') content.push({ type: 'file', source: { kind: 'base64', mediaType: media.mediaType, data: media.data }, path: media.path })
		else if (media) content.push(media)
	})
	if (!call) return content
	const part: ToolResultPart = { type: 'tool_result', toolCallId: call.id, name, content }
	if (isError) part.isError = true
	return [part]
}

/**
 * `{result|output|content: "text"}` → that text; `{error: …}` → an error result; any other object → its JSON.
 * A `name` key repeating the function's name is not content: `@ai-sdk/google` sends every tool result as
 * `{name: <tool>, content: "text"}`, and a converted upstream should read the text, not that wrapper.
 */
function resultText(r: Obj, name: string): { text: string; isError: boolean } {
	const keys = Object.keys(r).filter((k) => !(k === 'name' && r[k] === name))
	if (keys.length === 1) {
		const v = r[keys[0]]
		if (keys[0] === 'error') return { text: typeof v === 'string' ? v : JSON.stringify(v), isError: true }
		if (['result', 'output', 'content'].includes(keys[0]) && typeof v === 'string') return { text: v, isError: false }
	}
	return { text: JSON.stringify(r), isError: false }
}

// ── Encode ─────────────────────────────────────────────────────────────────────────────────────────────

/**
 * Canonical messages → `contents`. Consecutive same-role messages are merged; empty turns are skipped.
 * @param model the upstream model: Gemini 3 models get a tool result's media inside its functionResponse (files.ts)
 * @param at where the client put the messages, for a refusal to name (final-turn.ts `conversationField`)
 */
export function encodeMessages(messages: Message[], model = '', at = 'messages'): Array<GeminiContent & { role: GeminiRole }> {
	const names = new Map<string, string>()
	const contents: Array<GeminiContent & { role: GeminiRole }> = []
	const multimodal = multimodalResults(model)
	for (const [mi, m] of messages.entries()) {
		const role: GeminiRole = m.role === 'assistant' ? 'model' : 'user'
		const parts = role === 'model' ? encodeModelTurn(m.content, names) : encodeUserTurn(m.content, names, multimodal, mi)
		const last = contents[contents.length - 1]
		if (!parts.length) {
			// Gemini has no empty part (an empty text is "required oneof field 'data' must have one initialized field").
			// Left out at the end, the model turn before it would be continued rather than answered (final-turn.ts).
			if (role === 'user' && mi === messages.length - 1 && last?.role === 'model') throw emptyFinalUserMessage('Gemini', 'a part must hold data, and an empty text holds none', at)
			continue
		}
		if (last?.role === role) last.parts.push(...parts)
		else contents.push({ role, parts })
	}
	for (const c of contents) {
		const first = c.role === 'model' ? c.parts.find((p) => p.functionCall) : undefined
		if (first && !first.thoughtSignature) first.thoughtSignature = SKIP_SIGNATURE
	}
	return contents
}

/**
 * An assistant turn → model parts. Thinking text is not sent back (Gemini reads only the signature); a thinking
 * signature goes on the next text part, or back onto the text part it was split from, or on an empty text part (the
 * shape Gemini itself streams). Gemini's own signatures carry an origin tag in the canonical model
 * (core/signatures.ts): it comes off here, and one that came on a `thought: true` part goes back on that thought
 * part, with its text. Any other signature is another vendor's (Anthropic's are untagged there) and is left out, with
 * its thinking: Gemini would take it for its own and find it corrupted. Redacted thinking is another vendor's
 * ciphertext: Gemini cannot use it.
 */
function encodeModelTurn(content: Part[], names: Map<string, string>): GeminiPart[] {
	const out: GeminiPart[] = []
	let pending: string | undefined
	const take = () => {
		const s = pending
		pending = undefined
		return s
	}
	for (const p of content) {
		if (p.type === 'text') {
			if (!p.text && !pending) continue
			const sig = take()
			out.push(sig ? { text: p.text, thoughtSignature: sig } : { text: p.text })
		} else if (p.type === 'thinking') {
			const tagged = p.signature ? untagSignature(p.signature) : undefined
			if (!tagged || !isGeminiOrigin(tagged.origin)) continue
			const sig = tagged.signature
			if (tagged.origin === 'gemini-thought') {
				if (pending) out.push({ text: '', thoughtSignature: take() })
				out.push({ text: p.text, thought: true, thoughtSignature: sig })
				continue
			}
			const last = out[out.length - 1]
			if (!p.text && !pending && last && last.text !== undefined && !last.thoughtSignature) last.thoughtSignature = sig
			else {
				if (pending) out.push({ text: '', thoughtSignature: take() })
				pending = sig
			}
		} else if (p.type === 'tool_call') {
			const unpacked = unpackToolCallId(p.id)
			names.set(p.id, p.name).set(unpacked.id, p.name)
			// A function call keeps only its own signature (Gemini validates those strictly); a thinking signature of a
			// text part stays on a text part.
			const sig = p.signature ?? unpacked.signature
			if (pending) out.push({ text: '', thoughtSignature: take() })
			const part: GeminiPart = { functionCall: { name: p.name, args: p.input } }
			if (sig) part.thoughtSignature = sig
			out.push(part)
		} else if (p.type === 'image') out.push(encodeImage(p.source))
		else if (p.type === 'file') out.push(...encodeFile(p, 'messages'))
		else if (p.type === 'audio') out.push(encodeAudio(p))
	}
	if (pending) {
		const last = out[out.length - 1]
		if (last && last.text !== undefined && !last.thoughtSignature) last.thoughtSignature = pending
		else out.push({ text: '', thoughtSignature: pending })
	}
	return out
}

/**
 * A user turn → user parts; a tool result → `functionResponse{name, response: object}` (WIRE-NOTES §9), its texts
 * joined by a newline so their boundary survives in the one string. Images and files the tool returned go in
 * `functionResponse.parts` when inline and the model takes a multimodal function response (`multimodal`), else as
 * parts right after the functionResponse, which every model accepts; audio always goes after.
 */
function encodeUserTurn(content: Part[], names: Map<string, string>, multimodal: boolean, mi: number): GeminiPart[] {
	const out: GeminiPart[] = []
	content.forEach((p, pi) => {
		if (p.type === 'text') {
			if (p.text) out.push({ text: p.text })
		} else if (p.type === 'image') out.push(encodeImage(p.source))
		else if (p.type === 'file') out.push(...encodeFile(p, `messages[${mi}].content[${pi}]`))
		else if (p.type === 'audio') out.push(encodeAudio(p))
		else if (p.type === 'tool_result') {
			const name = p.name ?? names.get(p.toolCallId) ?? names.get(unpackToolCallId(p.toolCallId).id)
			if (!name)
				throw badRequest(`tool result ${p.toolCallId} has no matching tool call: Gemini needs the function name`, 'messages')
			const texts: string[] = []
			const media: GeminiPart[] = []
			const after: GeminiPart[] = []
			p.content.forEach((c, ci) => {
				if (c.type === 'text') return void texts.push(c.text)
				// Audio goes as a part after the functionResponse: a multimodal function response takes images and documents only.
				if (c.type === 'audio') return void after.push(encodeAudio(c))
				const parts = c.type === 'image' ? [encodeImage(c.source)] : encodeFile(c, `messages[${mi}].content[${pi}].content[${ci}]`)
				// A plain-text document a tool returned is more of its text.
				for (const g of parts) if (g.text !== undefined) texts.push(g.text)
				else media.push(g)
			})
			const response: GeminiFunctionResponse = { name, response: resultObject(texts.join('\n'), p.isError === true) }
			const inline = multimodal ? media.filter((g) => g.inlineData) : []
			if (inline.length) response.parts = inline.map((g) => ({ inlineData: g.inlineData }))
			out.push({ functionResponse: response }, ...media.filter((g) => !inline.includes(g)), ...after)
		}
	})
	return out
}

/**
 * Tool result text → `functionResponse.response`, which must be an object: a JSON object is sent as is (the model
 * reads its fields), other text is wrapped as `{result}` or, for a failed call, `{error}`.
 */
function resultObject(text: string, isError: boolean): Obj {
	if (isError) return { error: text }
	if (text.startsWith('{')) {
		try {
			const v: unknown = JSON.parse(text)
			if (isObj(v)) return v
		} catch {
			// not JSON: wrap it
		}
	}
	return { result: text }
}
