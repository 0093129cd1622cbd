/**
 * Thinking a Gemini client did not ask to see, carried in a `thoughtSignature` of the answer.
 *
 * Gemini shows thought summaries only when the request sets `thinkingConfig.includeThoughts: true`
 * (https://ai.google.dev/gemini-api/docs/thinking); without it the model still thinks (billed as `thoughtsTokenCount`)
 * and the client gets only signatures, on the first function call of a step or else on text, which it sends back as it
 * got them (https://ai.google.dev/gemini-api/docs/thought-signatures). Another vendor's thinking needs more than a
 * signature on the next turn: Claude its thinking blocks, text and signature verbatim or redacted data, at the start of
 * the assistant turn whose tool calls are answered; OpenAI-compatible reasoners such as DeepSeek their
 * `reasoning_content`. So such a client gets no thought part, and the thinking rides whole in the `thoughtSignature` of
 * a part it does get (gemini/parts.ts, gemini/stream-encode.ts); when the history comes back, `restoreCarried` puts it
 * into the canonical model where it stood. A client that shows thoughts gets the same carried copy on the function call
 * after them, since some (Gemini CLI) keep no thought part in their history; one kept both ways is restored once.
 *
 * Format: `CARRIED_THINKING_TAG` (core/signatures.ts) + base64 of the JSON `[{at, text, signature?} | {at, data}]`,
 * where `at` counts the parts the client was shown before that thinking (a run of text counting once, as the decoder
 * joins it). Base64 throughout, as every signature the gateway tags: SDKs that keep signatures as bytes re-encode it
 * unchanged (standard or URL-safe). It never reaches Gemini: the fast path takes it off (`ownSignaturesOnly`,
 * gemini/signatures.ts) and the converted path reads it here.
 *
 * Bounded and tamper-safe: it is not compressed, so what it decodes to is never larger than the request that carries
 * it (capped by MAX_JSON_BYTES); it is read strictly, and anything else after the tag is a 400 naming the part. It lets
 * a client say nothing its history cannot already say on thought parts: a signature in it is checked by the vendor
 * that made it (Anthropic refuses thinking whose text or signature was changed).
 * @module
 */
import { badRequest } from '../../core/errors'
import type { Part, RedactedThinkingPart, ThinkingPart } from '../../core/ir'
import { CARRIED_THINKING_TAG, untagSignature } from '../../core/signatures'
import { isObj } from './read'

export type HiddenPart = ThinkingPart | RedactedThinkingPart

/** A thinking part hidden from the client, and how many shown parts came before it in its answer. */
export type Carried = { at: number; part: HiddenPart }

/** Whether a `thoughtSignature` is thinking this gateway carried. */
export const isCarried = (signature: string): boolean => signature.startsWith(CARRIED_THINKING_TAG)

/**
 * Whether a thinking part goes hidden, carried, rather than as Gemini shows a signature without thoughts: all of them
 * but Gemini's own signature of a text part (whose thought text, if any, is simply not shown).
 * @example isHidden({ type: 'thinking', text: 'T', signature: 'EqQB' }) === true
 */
export const isHidden = (p: HiddenPart): boolean => p.type === 'redacted_thinking' || untagSignature(p.signature ?? '')?.origin !== 'gemini-text'

/**
 * Counts the parts a client is shown, as the request decoder will read them back: consecutive text as one part,
 * empty text as none (the decoder keeps neither apart).
 */
export function shownCounter() {
	let n = 0
	let afterText = false
	return {
		text(text: string) {
			if (!text) return
			if (!afterText) n++
			afterText = true
		},
		other() {
			n++
			afterText = false
		},
		get at() {
			return n
		},
	}
}

/**
 * Answer content → what a client that hides thoughts is shown, and the thinking to carry. Gemini's text-part signatures
 * stay (without their thought text), as Gemini gives them with thoughts hidden.
 */
export function splitHidden(content: ReadonlyArray<Part>): { shown: Part[]; carried: Carried[] } {
	const shown: Part[] = []
	const carried: Carried[] = []
	const count = shownCounter()
	for (const p of content) {
		if (p.type === 'thinking' || p.type === 'redacted_thinking') {
			if (!isHidden(p)) shown.push(p.type === 'thinking' && p.text ? { ...p, text: '' } : p)
			else if (worthCarrying(p)) carried.push({ at: count.at, part: p })
			continue
		}
		shown.push(p)
		if (p.type === 'text') count.text(p.text)
		else if (p.type === 'tool_call' || p.type === 'image') count.other()
	}
	return { shown, carried }
}

/** Thinking with nothing in it needs nothing back. */
export const worthCarrying = (p: HiddenPart): boolean => (p.type === 'redacted_thinking' ? p.data !== '' : p.text !== '' || !!p.signature)

/**
 * Hidden thinking → the `thoughtSignature` that carries it.
 * @example carryThinking([{ at: 0, part: { type: 'thinking', text: 'T', signature: 'S' } }]) // 'c2JzaWc6aGQtdGgx' + base64('[{"at":0,"text":"T","signature":"S"}]')
 */
export function carryThinking(carried: ReadonlyArray<Carried>): string {
	const items = carried.map(({ at, part }) =>
		part.type === 'redacted_thinking' ? { at, data: part.data } : part.signature ? { at, text: part.text, signature: part.signature } : { at, text: part.text },
	)
	return CARRIED_THINKING_TAG + Buffer.from(JSON.stringify(items), 'utf8').toString('base64')
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/

/**
 * A carried `thoughtSignature` from a client's history → its thinking. Anything but what `carryThinking` makes is a 400
 * naming `path` when one is given (the strict read of a request), else undefined.
 */
export function readCarried(signature: string, path?: string): Carried[] | undefined {
	const body = signature.slice(CARRIED_THINKING_TAG.length)
	const items = BASE64.test(body) ? parseItems(Buffer.from(body, 'base64').toString('utf8')) : undefined
	if (items) return items
	if (path) throw badRequest(`${path}: a thought signature this gateway issued, but altered (thinking carried for a later turn must come back as it was given)`, path)
	return undefined
}

function parseItems(json: string): Carried[] | undefined {
	let v: unknown
	try {
		v = JSON.parse(json)
	} catch {
		return undefined
	}
	if (!Array.isArray(v) || v.length === 0) return undefined
	const out: Carried[] = []
	for (const item of v) {
		if (!isObj(item) || !Number.isSafeInteger(item.at) || (item.at as number) < 0) return undefined
		const at = item.at as number
		const keys = Object.keys(item).sort().join(',')
		if (keys === 'at,data' && typeof item.data === 'string') out.push({ at, part: { type: 'redacted_thinking', data: item.data } })
		else if (keys === 'at,text' && typeof item.text === 'string') out.push({ at, part: { type: 'thinking', text: item.text } })
		else if (keys === 'at,signature,text' && typeof item.text === 'string' && typeof item.signature === 'string' && item.signature)
			out.push({ at, part: { type: 'thinking', text: item.text, signature: item.signature } })
		else return undefined
	}
	return out
}

/** What makes two thinking parts the same thinking. */
const thinkingKey = (p: HiddenPart): string => JSON.stringify(p.type === 'redacted_thinking' ? [p.data] : [p.text, p.signature ?? ''])

/**
 * Decoded model-turn content with carried thinking put back, in order, each before the shown part it preceded (or at
 * the end when the client kept fewer parts). Thinking parts already there do not count as shown, and carried thinking
 * the client kept as thought parts too (shown thinking is also carried on calls: `encodeResponseParts`) is not put
 * back twice. One pass, however many parts a request carries.
 */
export function restoreCarried<P extends Part>(content: ReadonlyArray<P>, carried: ReadonlyArray<Carried>): Array<P | HiddenPart> {
	const kept = new Set(content.flatMap((p) => (p.type === 'thinking' || p.type === 'redacted_thinking' ? [thinkingKey(p as HiddenPart)] : [])))
	const byPlace = carried.filter((c) => !kept.has(thinkingKey(c.part))).sort((a, b) => a.at - b.at) // stable: the order within a place is kept
	const out: Array<P | HiddenPart> = []
	let next = 0
	let seen = 0
	for (const p of content) {
		if (p.type !== 'thinking' && p.type !== 'redacted_thinking') {
			while (next < byPlace.length && byPlace[next]!.at <= seen) out.push(byPlace[next++]!.part)
			seen++
		}
		out.push(p)
	}
	while (next < byPlace.length) out.push(byPlace[next++]!.part)
	return out
}
