/**
 * Interaction resources ⇄ canonical responses. The answer's content in order: text as `model_output` steps (a run of
 * text one step of one text content, its citations the content's `url_citation` annotations: annotations.ts), thinking as `thought` steps (the summary only when the client asked to see thoughts:
 * `thinking_summaries: 'auto'`; else carried in the signature, steps.ts `thoughtStep`), tool calls as `function_call` steps. The status tells why it ended: `requires_action`
 * for function calls awaiting their results, `incomplete` at the output cap, else `completed`.
 *
 * Usage (https://ai.google.dev/api/interactions-api#Usage): `total_input_tokens` is the whole prompt, cache reads
 * included (`total_cached_tokens`), as Gemini's `promptTokenCount`; `total_output_tokens` excludes the thinking, which
 * is `total_thought_tokens`, as `candidatesTokenCount` does (gemini/usage.ts): canonical output is their sum. The
 * `total_tool_use_tokens` (what built-in tools such as Google Search fed back to the model) is apart from
 * `total_input_tokens`, as generateContent's `toolUsePromptTokenCount` is apart from `promptTokenCount`: canonical input
 * counts it (billed as input) and keeps it as `toolUseInput`, which the encoder gives apart again; `total_tokens` counts
 * it. The `*_tokens_by_modality` lists (`{modality: 'text' | 'image' | 'audio', tokens}`) split those totals as
 * generateContent's `*TokensDetails` do, and are given only when the upstream split its counts (audio or image tokens,
 * which vendors price apart): a vendor that does not (Claude) may still have had images in the input. The tier that
 * served the request is the Interaction's `service_tier` (Flex and Priority are priced apart, as on generateContent).
 * @module
 */
import { utf8Length } from '../../core/citations'
import type { ChatResponse, StopReason, Usage } from '../../core/ir'
import { emptyUsage, promptTokens } from '../../core/ir'
import { unpackToolCallId } from '../../core/tool-ids'
import { type ModalityTokens, splitModalities } from '../../core/usage-modalities'
import { newId } from '../../lib/ids'
import { isObj, num, type Obj } from '../gemini/read'
import { googleTierOf, servedTier } from '../gemini/usage'
import type { EncodeContext } from '../codec'
import { decodeAnnotations, urlCitation } from './annotations'
import type { Interaction, InteractionUsage } from './model'
import { functionCallStep, thoughtStep } from './steps'

/** A fresh interaction id (Google's look like `v1_…`). */
export const interactionId = (): string => newId('v1_', 32)

export const iso = (unixSeconds?: number) => new Date(unixSeconds !== undefined ? unixSeconds * 1000 : Date.now()).toISOString().replace(/\.\d{3}Z$/, 'Z')

/** @example statusOf('tool_use') === 'requires_action' */
export function statusOf(reason: StopReason): string {
	if (reason === 'tool_use') return 'requires_action'
	if (reason === 'max_tokens') return 'incomplete'
	return 'completed'
}

/** Canonical usage → the Interaction's `usage`. */
export function encodeUsage(u: Partial<Usage>): InteractionUsage {
	const full = { ...emptyUsage(), ...u }
	const toolUse = Math.min(full.toolUseInput ?? 0, full.input)
	const input = promptTokens(full) - toolUse
	const answer = Math.max(0, full.output - full.reasoning)
	const out: InteractionUsage = { total_input_tokens: input }
	// The input's audio counts its cached part too, as `promptTokensDetails` does; text is what is left.
	const audioIn = (full.audioInput ?? 0) + (full.audioCacheRead ?? 0)
	if (audioIn || full.imageInput) out.input_tokens_by_modality = byModality([['text', input - audioIn - (full.imageInput ?? 0)], ['image', full.imageInput ?? 0], ['audio', audioIn]])
	if (full.cacheRead) out.total_cached_tokens = full.cacheRead
	if (full.audioCacheRead) out.cached_tokens_by_modality = byModality([['text', full.cacheRead - full.audioCacheRead], ['audio', full.audioCacheRead]])
	out.total_output_tokens = answer
	const media = (full.audioOutput ?? 0) + (full.imageOutput ?? 0)
	if (media) out.output_tokens_by_modality = byModality([['text', answer - media], ['audio', full.audioOutput ?? 0], ['image', full.imageOutput ?? 0]])
	if (toolUse) out.total_tool_use_tokens = toolUse
	if (full.reasoning) out.total_thought_tokens = full.reasoning
	out.total_tokens = input + toolUse + full.output
	return out
}

/** `[modality, tokens]` pairs → a `ModalityTokens` list, without the empty ones. */
const byModality = (split: Array<[string, number]>) => split.filter(([, n]) => n > 0).map(([modality, tokens]) => ({ modality, tokens }))

/** The Interaction's `usage` and `service_tier` → canonical usage; undefined when there is no usage. */
export function decodeUsage(u: unknown, serviceTier?: unknown): Usage | undefined {
	if (!isObj(u)) return undefined
	const input = num(u.total_input_tokens) ?? 0
	const cached = num(u.total_cached_tokens) ?? 0
	const thoughts = num(u.total_thought_tokens) ?? 0
	const toolUse = num(u.total_tool_use_tokens) ?? 0
	const answer = num(u.total_output_tokens) ?? 0
	const out: Usage = { input: Math.max(0, input - cached) + toolUse, output: answer + thoughts, cacheRead: cached, cacheWrite: 0, reasoning: thoughts }
	if (toolUse > 0) out.toolUseInput = toolUse
	const tier = servedTier(serviceTier)
	if (tier) out.tier = tier
	// Priced apart as generateContent's modality details are (core/usage-modalities.ts).
	const lists = { prompt: 'input_tokens_by_modality', cached: 'cached_tokens_by_modality', toolUse: 'tool_use_tokens_by_modality', output: 'output_tokens_by_modality' }
	const tokens: ModalityTokens = (list, modality) =>
		(Array.isArray(u[lists[list]]) ? (u[lists[list]] as unknown[]) : []).reduce((n: number, e) => n + (isObj(e) && e.modality === modality ? (num(e.tokens) ?? 0) : 0), 0)
	return splitModalities(out, tokens, cached, answer)
}

/**
 * The answer's content → output steps. Claude splits its text into blocks (each cited claim one): a run of them is one
 * text, as Gemini answers, each block's citations at their place in it, as the stream gives it (stream-encode.ts).
 */
export function outputSteps(content: ChatResponse['content'], showThoughts: boolean): Obj[] {
	const steps: Obj[] = []
	let text: { type: 'text'; text: string; annotations?: Obj[] } | undefined
	for (const p of content) {
		if (p.type === 'text') {
			if (!text) steps.push({ type: 'model_output', content: [(text = { type: 'text', text: '' })] })
			const offset = utf8Length(text.text)
			for (const c of p.citations ?? []) (text.annotations ??= []).push(urlCitation(c, offset, p.text))
			text.text += p.text
			continue
		}
		text = undefined
		if (p.type === 'thinking' || p.type === 'redacted_thinking') {
			const step = thoughtStep(p, showThoughts)
			if (step) steps.push(step)
		} else if (p.type === 'tool_call') steps.push(functionCallStep(p))
	}
	return steps
}

/** A canonical answer → an Interaction resource. */
export function encodeInteraction(res: ChatResponse, ctx: EncodeContext, id: string): Interaction {
	const now = iso()
	return {
		id,
		object: 'interaction',
		model: ctx.model,
		status: statusOf(res.stopReason),
		created: res.created !== undefined ? iso(res.created) : now,
		updated: now,
		steps: outputSteps(res.content, ctx.includeThoughts === true),
		usage: encodeUsage(res.usage),
		...tierOf(res.usage),
	}
}

/** The Interaction's `service_tier`, for a tier Gemini names (Flex, Priority) that served the answer. */
export function tierOf(u: Partial<Usage>): { service_tier?: string } {
	const tier = googleTierOf(u.tier)
	return tier ? { service_tier: tier } : {}
}

/** An Interaction resource (an upstream's) → the canonical answer. */
export function decodeResponse(body: unknown): ChatResponse {
	const b = isObj(body) ? body : {}
	const content: ChatResponse['content'] = []
	for (const s of Array.isArray(b.steps) ? b.steps : []) {
		if (!isObj(s)) continue
		if (s.type === 'model_output' && Array.isArray(s.content))
			for (const c of s.content) {
				if (!isObj(c) || c.type !== 'text' || typeof c.text !== 'string') continue
				const citations = decodeAnnotations(c.annotations, c.text)
				content.push(citations.length ? { type: 'text', text: c.text, citations } : { type: 'text', text: c.text })
			}
		if (s.type === 'thought') {
			const text = (Array.isArray(s.summary) ? s.summary : []).map((c) => (isObj(c) && typeof c.text === 'string' ? c.text : '')).join('')
			content.push({ type: 'thinking', text, ...(typeof s.signature === 'string' && { signature: s.signature }) })
		}
		if (s.type === 'function_call' && typeof s.name === 'string') {
			const { id, signature } = unpackToolCallId(typeof s.id === 'string' ? s.id : newId('call_'))
			content.push({ type: 'tool_call', id, name: s.name, input: isObj(s.arguments) ? s.arguments : {}, ...(signature && { signature }) })
		}
	}
	const calls = content.some((p) => p.type === 'tool_call')
	const stopReason: StopReason = b.status === 'incomplete' ? 'max_tokens' : calls ? 'tool_use' : 'end_turn'
	return {
		id: typeof b.id === 'string' ? b.id : interactionId(),
		model: typeof b.model === 'string' ? b.model : '',
		content,
		stopReason,
		usage: decodeUsage(b.usage, b.service_tier) ?? emptyUsage(),
	}
}

/** The usage of an upstream Interaction body, without a full decode. */
export const usageOf = (body: unknown): Usage | undefined => (isObj(body) ? decodeUsage(body.usage, body.service_tier) : undefined)
