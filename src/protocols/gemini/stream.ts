/**
 * Gemini stream → canonical events. With `alt=sse` every `data:` frame is a whole GenerateContentResponse chunk:
 * no event names, no `[DONE]`; the last chunk carries `finishReason` and the final (cumulative) `usageMetadata`.
 * Gemini has no block lifecycle, so it is synthesised here: consecutive text parts extend one text block, thought
 * parts one thinking block, and each functionCall is its own tool_call block whose args, sent whole, become ONE
 * json_delta (WIRE-NOTES #2, BerriAI/litellm#25561).
 * @module
 */
import { citationsWithin } from '../../core/citations'
import { GatewayError, upstreamRateLimited } from '../../core/errors'
import type { BlockStart, StreamEvent } from '../../core/events'
import { jsonOrUndefined } from '../../core/json'
import { type SignatureOrigin, tagSignature } from '../../core/signatures'
import type { SseFrame } from '../../core/sse'
import { newId } from '../../lib/ids'
import { type FrameDecoder, runMachine } from '../stream-machine'
import { errorDetails } from './error'
import { decodeLogprobs } from './logprobs'
import { codePartText, get, isObj, type Obj, str, syntheticCallId } from './read'
import { callScope, candidateAt } from './response'
import { addGrounding, groundingCitations, groundingSearches, newGrounding, searchPart } from './grounding'
import { decodeFinishReason, decodeUsage } from './usage'

export { encodeStream, streamEncoder } from './stream-encode'

/** An in-stream failure; Gemini's overload (503 UNAVAILABLE, "The model is overloaded") stays one, a 503 to callers. */
const upstreamError = (message: string, code?: string, overloaded = false) =>
	new GatewayError(overloaded ? 'overloaded' : 'upstream', message, code ? { code } : { code: 'upstream_stream_error' })

/**
 * Upstream SSE frames → canonical events: one `start`, strictly nested blocks, `usage` whenever it changes, then one
 * `finish`, or an `error` last when the upstream sends an error chunk or ends without a `finishReason` (cut).
 * `finishReason: STOP` after any functionCall becomes `tool_use`, even when it arrives in a later chunk (WIRE-NOTES §6).
 * `choice`: the candidate read of a stream with several (`candidateCount` > 1; each chunk names its candidates by
 * `index`); `usageMetadata` is the whole stream's.
 */
export function streamDecoder(choice = 0): FrameDecoder {
	let over = false
	let started = false
	let scope = ''
	let next = 0
	let open: { index: number; kind: 'text' | 'thinking' } | undefined
	let calls = 0
	let toolSeen = false
	let finishReason: string | undefined
	let blocked = false
	/** The chosen candidate appeared in some chunk. */
	let seen = false
	let lastUsage = ''
	// Google Search grounding reported so far (grounding.ts): its searches ride on the usage events.
	const grounding = newGrounding()
	/** The answer's text so far and where the open text block starts in it: grounding spans are into the whole text. */
	let answer = ''
	let blockFrom = 0
	/**
	 * The last `groundingMetadata` reported: its citations go to the text block when it closes and its search follows as
	 * a block. Gemini sends it on the last chunks, each resending all of it (langchain-ai/langchainjs#11456), and an
	 * early one may span text not yet sent: only the last one counts.
	 */
	let meta: unknown

	// The helpers below append the events a chunk produces to the caller's array, set by push and end.
	let out: StreamEvent[] = []

	function start(chunk: Obj) {
		if (started) return
		started = true
		const responseId = str(get(chunk, 'responseId'))
		scope = callScope(responseId)
		const ev: StreamEvent = { type: 'start', id: responseId ?? newId('gemini'), model: str(get(chunk, 'modelVersion')) ?? '' }
		const u = decodeUsage(get(chunk, 'usageMetadata'))
		if (u) ev.usage = { input: u.input, cacheRead: u.cacheRead }
		out.push(ev)
	}
	function close() {
		if (!open) return
		if (open.kind === 'text' && meta !== undefined)
			for (const citation of citationsWithin(groundingCitations(meta, answer), blockFrom, answer.length - blockFrom)) out.push({ type: 'citation', index: open.index, citation })
		out.push({ type: 'block_stop', index: open.index })
		open = undefined
	}
	function openBlock(kind: 'text' | 'thinking'): number {
		if (open?.kind === kind) return open.index
		close()
		open = { index: next++, kind }
		if (kind === 'text') blockFrom = answer.length
		out.push({ type: 'block_start', index: open.index, block: { kind } })
		return open.index
	}
	/**
	 * A signature ends its thinking block: it is the block's last event (as in Anthropic's stream). It carries the tag
	 * of the kind of part it came on, so it can go back there and is never taken for Anthropic's (core/signatures.ts).
	 */
	function signed(origin: SignatureOrigin, signature: string) {
		const index = openBlock('thinking')
		out.push({ type: 'signature_delta', index, signature: tagSignature(origin, signature) })
		close()
	}
	function part(p: Obj) {
		const sig = str(get(p, 'thoughtSignature')) || undefined
		if (p.thought === true) {
			const text = str(p.text) ?? ''
			if (text) out.push({ type: 'thinking_delta', index: openBlock('thinking'), text })
			if (sig) signed('gemini-thought', sig)
			return
		}
		const fc = get(p, 'functionCall')
		if (isObj(fc) && typeof fc.name === 'string') {
			close()
			const index = next++
			const n = calls++
			const id = str(fc.id) || syntheticCallId(scope, n, fc.name)
			const block: BlockStart = { kind: 'tool_call', id, name: fc.name }
			if (sig) block.signature = sig
			out.push({ type: 'block_start', index, block }, { type: 'json_delta', index, json: JSON.stringify(isObj(fc.args) ? fc.args : {}) }, { type: 'block_stop', index })
			toolSeen = true
			return
		}
		const text = typeof p.text === 'string' ? p.text : codePartText(p)
		if (text === undefined) return // generated media (inlineData) has no canonical stream event
		let sigLeft = sig
		if (sigLeft && open?.kind === 'thinking') {
			signed('gemini-text', sigLeft)
			sigLeft = undefined
		}
		// Open a text block only on the first non-empty text (WIRE-NOTES #1, BerriAI/litellm#34692).
		if (text) {
			out.push({ type: 'text_delta', index: openBlock('text'), text })
			answer += text
		}
		if (sigLeft) signed('gemini-text', sigLeft)
	}

	return {
		push(frame, target) {
			if (over) return
			out = target
			const data = frame.data.trim()
			if (!data || data === '[DONE]') return
			const chunk = jsonOrUndefined(data)
			if (!isObj(chunk)) {
				start({})
				close()
				out.push({ type: 'error', error: upstreamError('upstream sent a malformed stream event', 'upstream_malformed') })
				over = true
				return
			}
			start(chunk)
			const err = errorDetails(chunk)
			if (err) {
				close()
				// A rate limit is the gateway's own, as at the HTTP level: Google's text names the gateway's project.
				const limited = err.code === 429 || err.status === 'RESOURCE_EXHAUSTED'
				out.push({ type: 'error', error: limited ? upstreamRateLimited(err.message) : upstreamError(err.message, err.status, err.code === 503 || err.status === 'UNAVAILABLE') })
				over = true
				return
			}
			const candidate = candidateAt(chunk.candidates, choice)
			if (candidate) seen = true
			const content = isObj(candidate?.content) ? candidate.content : undefined
			const from = out.length
			if (Array.isArray(content?.parts)) for (const p of content.parts) if (isObj(p)) part(p)
			// Each streamed chunk has its own `logprobsResult`, for the tokens of its text: it rides on that text's delta.
			const logprobs = decodeLogprobs(get(candidate ?? {}, 'logprobsResult'))
			const delta = logprobs && out.slice(from).find((e) => e.type === 'text_delta')
			if (delta?.type === 'text_delta') delta.logprobs = logprobs
			const grounded = get(candidate ?? {}, 'groundingMetadata')
			if (isObj(grounded)) meta = grounded
			const u = decodeUsage(get(chunk, 'usageMetadata'))
			const searches = groundingSearches(addGrounding(grounding, chunk))
			if (u && searches > 0) u.webSearches = searches
			const key = u && JSON.stringify(u)
			if (u && key !== lastUsage) {
				lastUsage = key as string
				out.push({ type: 'usage', usage: u })
			}
			const reason = candidate && str(get(candidate, 'finishReason'))
			if (reason && reason !== 'FINISH_REASON_UNSPECIFIED') finishReason = reason
			const feedback = get(chunk, 'promptFeedback')
			if (!candidate && isObj(feedback) && str(get(feedback, 'blockReason'))) blocked = true
		},
		end(target) {
			if (over) return
			over = true
			out = target
			start({})
			close()
			const search = searchPart(meta, `gs_${scope}`)
			if (search) {
				const index = next++
				out.push({ type: 'block_start', index, block: { kind: 'web_search', id: search.id, queries: search.queries, sources: search.sources } }, { type: 'block_stop', index })
			}
			if (finishReason !== undefined) out.push({ type: 'finish', reason: decodeFinishReason(finishReason, toolSeen) })
			else if (blocked) out.push({ type: 'finish', reason: 'content_filter' })
			else if (!seen && choice > 0) out.push({ type: 'error', error: upstreamError(`Gemini stream sent no candidate ${choice}`) })
			else out.push({ type: 'error', error: upstreamError('Gemini stream ended before its finishReason (connection cut?)', 'upstream_cut') })
		},
		get done() {
			return over
		},
	}
}

export const decodeStream = (frames: AsyncIterable<SseFrame>): AsyncGenerator<StreamEvent> => runMachine(streamDecoder(), frames)
