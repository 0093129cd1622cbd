/**
 * Gemini GenerateContentResponse ⇄ canonical response.
 * @module
 */
import { citationsWithin } from '../../core/citations'
import { GatewayError } from '../../core/errors'
import type { ChatResponse, McpToolResultPart, McpToolUsePart, TextPart, Usage, WebSearchPart } from '../../core/ir'
import { emptyUsage } from '../../core/ir'
import { newId, randomString } from '../../lib/ids'
import type { EncodeContext } from '../codec'
import type { GeminiResponse } from './model'
import { decodeLogprobs, encodeLogprobs } from './logprobs'
import { decodeModelParts, encodeResponseParts, type ModelPart } from './parts'
import { get, idSafe, isObj, str, syntheticCallId } from './read'
import { addGrounding, encodeGrounding, groundingCitations, groundingSearches, newGrounding, searchPart } from './grounding'
import { decodeFinishReason, decodeUsage, encodeFinishReason, encodeUsage } from './usage'

/**
 * Scope for synthetic tool-call ids of one response: its `responseId` when Gemini sent one (so the ids are stable
 * for that response), else random, since ids must stay unique across the turns of a conversation.
 */
export const callScope = (responseId: string | undefined): string =>
	responseId ? idSafe(responseId).slice(0, 16) : randomString(12)

/**
 * Upstream body → canonical response, from the candidate whose `index` is `choice` (`candidateCount` > 1 gives
 * several). A prompt blocked before generation (`promptFeedback.blockReason`, no candidates) is an empty
 * `content_filter` response.
 */
export function decodeResponse(body: GeminiResponse, choice = 0): ChatResponse {
	const b: unknown = body
	const o = isObj(b) ? b : {}
	const responseId = str(get(o, 'responseId'))
	const candidate = candidateAt(o.candidates, choice)
	// A prompt blocked before generation has no candidate at all: each answer is that refusal.
	const feedback = get(o, 'promptFeedback')
	const blockedPrompt = isObj(feedback) && !!str(get(feedback, 'blockReason'))
	if (!candidate && choice > 0 && !blockedPrompt) throw new GatewayError('upstream', `upstream sent no candidate ${choice}`, { retryable: true, code: 'upstream_malformed' })
	const content = isObj(candidate?.content) ? candidate.content : undefined
	const parts = Array.isArray(content?.parts) ? content.parts : []
	const scope = callScope(responseId)
	const decoded = decodeModelParts(parts, (n, name, given) => given ?? syntheticCallId(scope, n, name), undefined, true)
	// Response content has no media slot: generated images are a known gap of the canonical model.
	const kept = decoded.filter((p): p is Exclude<ModelPart, { type: 'image' }> => p.type !== 'image')
	const out: ChatResponse['content'] = withGrounding(kept, get(candidate ?? {}, 'groundingMetadata'), responseId)
	const toolSeen = out.some((p) => p.type === 'tool_call')
	const blocked = !candidate && blockedPrompt
	const res: ChatResponse = {
		id: responseId ?? newId('gemini'),
		model: str(get(o, 'modelVersion')) ?? '',
		content: out,
		stopReason: blocked ? 'content_filter' : decodeFinishReason(str(get(candidate ?? {}, 'finishReason')), toolSeen),
		usage: usageOf(body) ?? emptyUsage(),
	}
	const logprobs = decodeLogprobs(get(candidate ?? {}, 'logprobsResult'))
	if (logprobs) res.logprobs = logprobs
	const created = Date.parse(str(get(o, 'createTime')) ?? '')
	if (!Number.isNaN(created)) res.created = Math.floor(created / 1000)
	return res
}

/**
 * A grounded answer's Google Search (grounding.ts): a search part first, and each text part's citations (the
 * supports' spans are into the answer's whole text).
 */
function withGrounding(parts: Array<Exclude<ModelPart, { type: 'image' }>>, meta: unknown, responseId: string | undefined): ChatResponse['content'] {
	const search = searchPart(meta, `gs_${idSafe(responseId ?? randomString(12)).slice(0, 24)}`)
	if (!search) return parts
	const text = parts.map((p) => (p.type === 'text' ? p.text : '')).join('')
	const all = groundingCitations(meta, text)
	let offset = 0
	const cited = parts.map((p) => {
		if (p.type !== 'text') return p
		const citations = citationsWithin(all, offset, p.text.length)
		offset += p.text.length
		return citations.length ? { ...p, citations } : p
	})
	return [search, ...cited]
}

/**
 * The candidate of answer `choice`: by its `index`, which Gemini leaves out for 0 (a proto3 default), else by position.
 */
export function candidateAt(candidates: unknown, choice: number): Record<string, unknown> | undefined {
	if (!Array.isArray(candidates)) return undefined
	for (let i = 0; i < candidates.length; i++) {
		const c: unknown = candidates[i]
		if (isObj(c) && (typeof c.index === 'number' ? c.index : i) === choice) return c
	}
	return undefined
}

/**
 * Canonical response → a Gemini body for a Gemini-native client (of any upstream model). MCP connector parts are
 * left out: Gemini has no such parts, and a Gemini client cannot ask for MCP servers (src/mcp serves the messages
 * and chat-completions protocols). Thought parts only for a client that asked for them (`includeThoughts`, parts.ts).
 * Another vendor's web search and its citations become the candidate's `groundingMetadata` (grounding.ts).
 */
export function encodeResponse(res: ChatResponse, ctx: EncodeContext): GeminiResponse {
	type Kept = Exclude<ChatResponse['content'][number], McpToolUsePart | McpToolResultPart | WebSearchPart>
	const parts = res.content.filter((p): p is Kept => p.type !== 'mcp_tool_use' && p.type !== 'mcp_tool_result' && p.type !== 'web_search')
	const searches = res.content.filter((p): p is WebSearchPart => p.type === 'web_search')
	const groundingMetadata = encodeGrounding(searches, parts.filter((p): p is TextPart => p.type === 'text'))
	return {
		candidates: [
			{
				content: { role: 'model', parts: encodeResponseParts(parts, ctx.includeThoughts === true) },
				finishReason: encodeFinishReason(res.stopReason),
				index: ctx.choice ?? 0,
				...(res.logprobs?.length && { logprobsResult: encodeLogprobs(res.logprobs) }),
				...(groundingMetadata && { groundingMetadata }),
			},
		],
		usageMetadata: encodeUsage(res.usage),
		modelVersion: ctx.model,
		responseId: res.id,
	}
}

/** Usage of an upstream Gemini body without a full decode (fast-path billing), with its Google Search grounding (grounding.ts). */
export function usageOf(body: GeminiResponse): Usage | undefined {
	const b: unknown = body
	const usage = isObj(b) ? decodeUsage(get(b, 'usageMetadata')) : undefined
	const searches = usage ? groundingSearches(addGrounding(newGrounding(), b)) : 0
	if (usage && searches > 0) usage.webSearches = searches
	return usage
}
