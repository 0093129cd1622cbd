/**
 * Same protocol on both sides: the client's body goes upstream as it came, with only the model name, the output
 * cap (when the budget or the model's maximum lowered it, or an OpenAI reasoning model was sent `max_tokens`), a sampling temperature such a
 * model refuses, OpenRouter's `reasoning` object
 * for OpenAI's own models (as their `reasoning_effort`), a `tool_choice: 'validated'` (as `auto`) and, for OpenAI streams, `stream_options.include_usage`
 * (we bill from it) changed, and what another vendor's earlier turns left that this vendor refuses: thinking without
 * an Anthropic signature and whitespace-only text for Anthropic, Claude's signatures for Gemini, tool call ids over OpenAI's length limit; and tool results a client split over several
 * Gemini contents, joined as Gemini requires (and as every other path joins same-role turns); a Gemini 3 thinking level
 * sent to an earlier Gemini model, as the budget it takes. Unknown fields pass through untouched.
 * @module
 */
import { isForeignSignature } from '../core/signatures'
import { openaiToolCallId } from '../core/tool-ids'
import { MIN_THINKING_BUDGET } from '../protocols/anthropic-messages/request-encode'
import type { ProtocolName } from '../protocols/codec'
import { thinkingConfigFor } from '../protocols/gemini/config'
import { isObj, spelledAs } from '../protocols/gemini/read'
import { ownSignaturesOnly } from '../protocols/gemini/signatures'
import { joinedFunctionResponses } from '../protocols/gemini/tool-pairing'
import { reasoningObjectFor, usesCompletionTokens } from '../protocols/openai-chat/request'
import { fixedSampling, samplesAtEffort } from '../routing/reasoning-models'
import { topLevelMembers } from './json-members'
import { joinedWhenShort, type TextPieces } from './text-pieces'

type Body = Record<string, unknown>

/**
 * The body to send upstream on the fast path.
 * @returns `body` itself when nothing needs changing (the caller can then forward the client's own bytes), else a
 * shallow copy with the changes
 */
export function rewriteBody(protocol: ProtocolName, body: Body, upstreamModel: string, cap: number | undefined, stream: boolean): Body {
	let out: Body | undefined
	const set = (key: string, value: unknown) => {
		if (body[key] !== value) (out ??= { ...body })[key] = value
	}
	switch (protocol) {
		case 'openai-chat': {
			set('model', upstreamModel)
			const messages = shortToolCallIds(body.messages)
			if (messages) set('messages', messages)
			// Gemini's mode by name (GitHub Copilot CLI's for `gemini-…` models), taken as auto: OpenAI-compatible vendors know only OpenAI's values.
			if (body.tool_choice === 'validated') set('tool_choice', 'auto')
			const options = body.stream_options as Body | undefined
			if (stream && options?.include_usage !== true) set('stream_options', { ...options, include_usage: true })
			// Reasoning models refuse max_tokens ("Unsupported parameter: 'max_tokens' is not supported with this model. Use
			// 'max_completion_tokens' instead."), which clients written for older models or for no model in particular send to
			// every one (Qwen Code; opencode through @ai-sdk/openai-compatible): it goes in the field they take.
			if (body.max_tokens != null && usesCompletionTokens(upstreamModel)) {
				const { max_tokens: asked, ...rest } = out ?? body
				out = { ...rest, max_completion_tokens: body.max_completion_tokens ?? asked }
			}
			// OpenRouter's `reasoning` object (Qwen Code's `generationConfig.reasoning`), which OpenAI's own models refuse.
			const reasoning = reasoningObjectFor(out ?? body, upstreamModel)
			if (reasoning) out = reasoning
			// Reasoning models refuse a sampling temperature (400 "Unsupported parameter: 'temperature' is not supported with
			// this model."; gpt-5 takes only the default, 1), which clients written for any model send to every one (LlamaIndex's
			// OpenAI class: temperature 0.1 and top_p 1 unless the name starts o3 or o4, so also to a name of ours serving one):
			// the model's fixed sampling, as a converted request gets (protocols/openai-chat/request.ts `fixedSampling`).
			// GPT-5.1 and later take them at effort none, their default (samplesAtEffort).
			if ((body.temperature != null || body.top_p != null) && fixedSampling(upstreamModel) && !samplesAtEffort(upstreamModel, (out ?? body).reasoning_effort)) {
				const { temperature: _t, top_p: _p, ...rest } = out ?? body
				out = rest
			}
			if (cap !== undefined) {
				// Lower the field the client's cap is in; when it gave none, the one the model accepts.
				const sent = out ?? body
				const field = sent.max_completion_tokens !== undefined || (sent.max_tokens === undefined && usesCompletionTokens(upstreamModel)) ? 'max_completion_tokens' : 'max_tokens'
				set(field, cap)
			}
			break
		}
		case 'anthropic-messages': {
			set('model', upstreamModel)
			const messages = claudeTakes(body.messages)
			if (messages) {
				set('messages', messages)
				const off = thinkingOffFor(messages, body.thinking)
				if (off) set('thinking', off)
			}
			if (cap !== undefined) {
				set('max_tokens', cap)
				const thinking = fitThinking((out ?? body).thinking, cap)
				if (thinking) set('thinking', thinking)
			}
			break
		}
		case 'gemini': {
			// The model is in the URL; nothing in the body names it.
			if ('model' in body) delete (out ??= { ...body }).model
			// Answers converted from Claude gave the client Claude's signatures, tagged (protocols/gemini/signatures.ts).
			const own = ownSignaturesOnly(body.contents)
			const contents = joinedFunctionResponses(own ?? body.contents) ?? own
			if (contents) set('contents', contents)
			const key = spelledAs(body, 'generationConfig')
			const budgeted = levelAsBudget(body[key], upstreamModel)
			if (budgeted) set(key, budgeted)
			if (cap !== undefined) {
				// In the config Google reads, beside the caller's other settings: a `generationConfig` added next to the
				// caller's `generation_config` would replace it, or be replaced by it and leave the answer uncapped.
				const config: Body = { ...((out ?? body)[key] as Body | undefined) }
				delete config.max_output_tokens
				config.maxOutputTokens = cap
				set(key, config)
			}
			break
		}
	}
	return out ?? body
}

/**
 * A Gemini `generationConfig` with its `thinkingConfig` fitted to the upstream model (a Gemini 3 level as a budget for
 * an earlier model: protocols/gemini/config.ts `thinkingConfigFor`), or undefined to keep the client's.
 * @example levelAsBudget({ thinkingConfig: { thinkingLevel: 'HIGH' } }, 'gemini-2.5-flash') // { thinkingConfig: { thinkingBudget: 4096 } }
 */
export function levelAsBudget(config: unknown, upstreamModel: string): Body | undefined {
	if (!isObj(config)) return undefined
	const key = spelledAs(config, 'thinkingConfig')
	const thinking = thinkingConfigFor(config[key], upstreamModel)
	return thinking && { ...config, [key]: thinking }
}

/**
 * The client's body text with the fast path's changes spliced in: a member it replaced (the model renamed by
 * `model_map`, a lowered cap, `stream_options`) rewritten where it stands, one it added appended. Everything else
 * goes upstream as the client wrote it, and a large body (an agent's whole history, on every turn) is not serialised
 * again: for a 90 KB turn, finding the members costs less than a `JSON.stringify` (17–20 against 24–35 µs) and
 * makes no second copy of the body.
 * A large body comes as its pieces (text-pieces.ts), sent without joining them. Undefined (serialise instead) when a change removes a key, or replaces one the text holds twice at its top level
 * (parsers differ on which of two equal keys counts).
 * @example bodyText('{"model":"a","x":1}', { model: 'a', x: 1 }, { model: 'b', x: 1 }) === '{"model":"b","x":1}'
 */
export function bodyText(raw: string, body: Body, out: Body): string | TextPieces | undefined {
	if (out === body) return raw
	let added = ''
	let replaced: Set<string> | undefined
	for (const k in out) {
		if (out[k] === body[k]) continue
		if (k in body) (replaced ??= new Set()).add(k)
		else added += `,${JSON.stringify(k)}:${JSON.stringify(out[k])}`
	}
	for (const k in body) if (!(k in out)) return undefined
	// Stretches of the client's text between the members, in order, and the members rewritten (slicing a string the
	// first splice made would copy the whole body: it is a rope until then).
	const parts: string[] = []
	if (replaced) {
		const spans = topLevelMembers(raw, replaced, { unique: true })
		if (!spans || spans.size !== replaced.size) return undefined
		let from = 0
		for (const [k, at] of spans.size === 1 ? spans : [...spans].sort((x, y) => x[1].start - y[1].start)) {
			parts.push(raw.slice(from, at.start), JSON.stringify(out[k]))
			from = at.end
		}
		parts.push(raw.slice(from))
	} else parts.push(raw)
	if (added) {
		const tail = parts.pop()!
		const end = tail.lastIndexOf('}')
		if (end === -1 || tail.slice(end + 1).trim() !== '') return undefined
		// An empty object has no member for the new ones to follow (one replaced means it has one).
		let before = end - 1
		while (!replaced && before >= 0 && /\s/.test(tail[before]!)) before--
		const empty = !replaced && tail[before] === '{'
		parts.push(tail.slice(0, end), empty ? added.slice(1) : added, tail.slice(end))
	}
	return joinedWhenShort(parts, raw.length)
}

/**
 * The messages without what Anthropic refuses in a history another vendor's answers made, or undefined when there is
 * none (the common case: nothing is copied, and the client's bytes go up as they came; one walk over blocks the body
 * parse already made, no scan of the text). Left out, as the converted path leaves them out
 * (anthropic-messages/content-encode.ts `encodePart`):
 * - thinking no Anthropic signature vouches for. An answer the gateway converted from a vendor that does not sign
 *   (OpenAI-compatible) carries `signature: ""`, one from a vendor that signs in its own way (Gemini) a signature with
 *   an origin tag (core/signatures.ts); Anthropic refuses the whole request over it ("Invalid `signature` in
 *   `thinking` block").
 * - empty or whitespace-only text blocks ("text content blocks must contain non-whitespace text"): an
 *   OpenAI-compatible model often writes `"\n\n"` before its tool calls, which reaches an Anthropic client as a text
 *   block of its own beside the `tool_use`.
 * A message left with nothing is left out too (the turns around it merge, as Anthropic merges consecutive turns of
 * one role), except the last: a final assistant message may be empty, and a final user message is sent as written
 * (without it the answer before it would become a prefill), for Anthropic to refuse as it would.
 * @example claudeTakes([{ role: 'assistant', content: [{ type: 'text', text: '\n\n' }, { type: 'tool_use' }] }]) // [{ role: 'assistant', content: [{ type: 'tool_use' }] }]
 */
export function claudeTakes(messages: unknown): unknown[] | undefined {
	if (!Array.isArray(messages)) return undefined
	let out: unknown[] | undefined
	const end = messages.length - 1
	for (let i = 0; i <= end; i++) {
		const m = messages[i] as Body | null
		const content = m?.content
		// Nearly always: nothing refused, told without copying or calling anything more.
		if (Array.isArray(content) ? !content.some(refused) : typeof content !== 'string' || i === end || !blank(content)) {
			out?.push(m)
			continue
		}
		const next = takenMessage(m!, content as unknown[] | string, i === end)
		if (next === m) {
			out?.push(m)
			continue
		}
		out ??= messages.slice(0, i)
		if (next) out.push(next)
	}
	return out
}

/**
 * The message holding something Claude refuses as Claude takes it, or null to leave it out, or `m` itself to send it
 * as written (claudeTakes).
 */
function takenMessage(m: Body, content: unknown[] | string, last: boolean): Body | null {
	if (typeof content === 'string') return null
	const kept = content.filter((b) => !refused(b))
	if (kept.length > 0 || (last && m.role === 'assistant')) return { ...m, content: kept }
	return last ? m : null
}

/**
 * No character but whitespace (`String.prototype.trim`'s, which the converted path uses), or none at all. Told by
 * the first character for nearly every text (printable ASCII), on every block of every request of the fast path.
 */
const blank = (text: string): boolean => {
	const c = text.charCodeAt(0)
	if (c > 32 && c < 127) return false
	return !NON_BLANK.test(text)
}
// Hoisted: a regex literal in the function would be a new object at each call (stripUsage below).
const NON_BLANK = /\S/

/** A block Anthropic refuses in a replayed history: unverifiable thinking, or text with nothing but whitespace. */
const refused = (b: unknown): boolean => {
	const type = (b as Body | null)?.type
	if (type === 'text') {
		const text = (b as Body).text
		return typeof text === 'string' && blank(text)
	}
	return (type === 'thinking' || type === 'redacted_thinking') && unverifiable(b)
}

/**
 * The thinking config for messages `claudeTakes` repaired: thinking off when it is on and the assistant turn
 * being continued used tools but no longer starts with a thinking block (Anthropic: "a final `assistant` message must
 * start with a thinking block"), as the converted path decides (anthropic-messages/request-encode.ts `canThink`);
 * undefined to keep the client's.
 * @example thinkingOffFor([{ role: 'assistant', content: [{ type: 'tool_use' }] }], { type: 'enabled', budget_tokens: 1024 }) // { type: 'disabled' }
 */
export function thinkingOffFor(messages: unknown[], thinking: unknown): Body | undefined {
	const type = (thinking as Body | null | undefined)?.type
	if (type !== 'enabled' && type !== 'adaptive') return undefined
	const last = messages.findLast((m) => (m as Body | null)?.role === 'assistant') as Body | undefined
	const content = last?.content
	if (!Array.isArray(content) || !content.some((b) => (b as Body | null)?.type === 'tool_use')) return undefined
	const first = (content[0] as Body | null)?.type
	return first === 'thinking' || first === 'redacted_thinking' ? undefined : { type: 'disabled' }
}

/**
 * The messages with every tool call id OpenAI would refuse as too long replaced by a short one made from it, or
 * undefined when there is none (nothing copied). Such ids come from another vendor earlier in the conversation (a
 * Gemini call's id carries its thought signature); the client keeps them, so the conversation can go back there.
 */
function shortToolCallIds(messages: unknown): unknown[] | undefined {
	if (!Array.isArray(messages)) return undefined
	let out: unknown[] | undefined
	for (let i = 0; i < messages.length; i++) {
		const m = messages[i] as Body | null
		const calls = m?.tool_calls
		const longCall = Array.isArray(calls) && calls.some((c) => tooLongId((c as Body | null)?.id))
		const longResult = tooLongId(m?.tool_call_id)
		if (!longCall && !longResult) continue
		out ??= messages.slice()
		const next: Body = { ...m }
		if (longCall) next.tool_calls = (calls as Body[]).map((c) => (typeof c?.id === 'string' ? { ...c, id: openaiToolCallId(c.id) } : c))
		if (longResult) next.tool_call_id = openaiToolCallId(m!.tool_call_id as string)
		out[i] = next
	}
	return out
}

const tooLongId = (id: unknown): boolean => typeof id === 'string' && openaiToolCallId(id) !== id

/** Thinking with no signature, or with another vendor's (origin-tagged). */
const unverifiable = (b: unknown): boolean => {
	const type = (b as Body | null)?.type
	// Redacted reasoning another vendor made (Converse's, origin-tagged) is no Anthropic ciphertext either.
	if (type === 'redacted_thinking') return typeof (b as Body).data === 'string' && isForeignSignature((b as Body).data as string)
	if (type !== 'thinking') return false
	const signature = (b as Body).signature
	return !signature || (typeof signature === 'string' && isForeignSignature(signature))
}

/**
 * A lowered `max_tokens` must stay above the thinking budget ("`max_tokens` must be greater than
 * `thinking.budget_tokens`", https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size),
 * as when Claude Code asks for 32000 with a 31999 budget. The budget keeps half the new cap, as the converted path
 * does, never under the 1024 minimum; a cap too small for that turns thinking off.
 * @returns the thinking config to send instead, or undefined when the client's still fits
 */
function fitThinking(thinking: unknown, cap: number): Body | undefined {
	const t = thinking as Body | undefined
	if (t?.type !== 'enabled' || typeof t.budget_tokens !== 'number' || t.budget_tokens < cap) return undefined
	if (cap <= MIN_THINKING_BUDGET) return { type: 'disabled' }
	return { ...t, budget_tokens: Math.max(MIN_THINKING_BUDGET, Math.floor(cap / 2)) }
}

/**
 * OpenAI streams: the client did not ask for usage, but we did. Drop the usage-only chunk and the `"usage":null`
 * the others then carry, so the client sees the stream it asked for (WIRE-NOTES §12).
 * @returns the frame data to send, or undefined to drop the frame
 */
export function stripUsage(data: string): string | undefined {
	if (data.includes('"choices":[]') && data.includes('"usage":{')) return undefined
	// Cut with indexOf and slices rather than a regex replace: this runs on every chunk of such streams, and a regex
	// literal is a new RegExp object at each call (about 3× the time here).
	const at = data.indexOf(USAGE_NULL)
	if (at === -1) return data
	const end = at + USAGE_NULL.length
	// The member with its comma: the one before it (usage is usually the last key), else the one after it.
	if (data.charCodeAt(at - 1) === 44 /* , */) return data.slice(0, at - 1) + data.slice(end)
	return data.slice(0, at) + data.slice(data.charCodeAt(end) === 44 ? end + 1 : end)
}

const USAGE_NULL = '"usage":null'

const MODEL_KEY = /"model":\s*"(?:[^"\\]|\\.)*"/
const MODEL_VERSION_KEY = /"modelVersion":\s*"(?:[^"\\]|\\.)*"/

/**
 * The fast path relays the vendor's bytes, which name the upstream model. When `model_map` renamed the model, the
 * client sees the name it asked for, as on the converted path (a mapped name is often an alias that hides the vendor).
 * Only the first `"model":` key of a frame is rewritten: OpenAI chunks carry it at the top level before `choices`,
 * Anthropic's message_start before `content`, and keys inside string values are escaped so they cannot match.
 * @example renameModel('{"id":"c","model":"gpt-4o-mini","choices":[]}', 'gpt-m') === '{"id":"c","model":"gpt-m","choices":[]}'
 */
export function renameModel(data: string, to: string): string {
	return data.replace(MODEL_KEY, () => `"model":${JSON.stringify(to)}`)
}

/**
 * Gemini's chunks and answers name the model in `modelVersion` (after the candidates, whose text cannot match: a key
 * inside a string value is escaped).
 * @example renameModelVersion('{"candidates":[],"modelVersion":"gemini-2.5-flash"}', 'gemini-m') === '{"candidates":[],"modelVersion":"gemini-m"}'
 */
export function renameModelVersion(data: string, to: string): string {
	return data.replace(MODEL_VERSION_KEY, () => `"modelVersion":${JSON.stringify(to)}`)
}
