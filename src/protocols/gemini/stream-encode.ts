/**
 * Canonical events → a Gemini `alt=sse` stream, as `streamGenerateContent` sends it: every frame is a whole
 * GenerateContentResponse chunk (`candidates[0].content.parts`, `modelVersion`, `responseId`), the last one adds
 * `finishReason` and `usageMetadata`; no event names, no terminator. Tool calls are sent whole (Gemini never streams
 * `args` in pieces), so their JSON fragments are collected until the block closes; calls that follow each other go out
 * in one chunk, as Gemini sends parallel calls: `@google/genai`'s chat keeps each chunk as a model content of its own,
 * and Gemini 3 wants a signature on the first call of each (only the first call of a turn has one).
 * @module
 */
import type { BlockStart, StreamEvent } from '../../core/events'
import type { ThinkingPart, Usage, WebSource } from '../../core/ir'
import type { SseFrame } from '../../core/sse'
import { newId } from '../../lib/ids'
import type { EncodeContext } from '../codec'
import { type EventEncoder, runMachine } from '../stream-machine'
import { encodeStreamError } from './error'
import { type CitedText, encodeGrounding } from './grounding'
import { encodeLogprobs } from './logprobs'
import type { GeminiGroundingMetadata, GeminiPart, GeminiStreamChunk } from './model'
import { type Carried, carryThinking, isHidden, shownCounter, worthCarrying } from './carried-thinking'
import { isObj, REDACTED_PREFIX } from './read'
import { SKIP_SIGNATURE, signatureForClient } from './signatures'
import { encodeFinishReason, encodeUsage } from './usage'

type Call = { id: string; name: string; signature?: string; json: string }

const parseArgs = (json: string): Record<string, unknown> => {
	try {
		const v: unknown = JSON.parse(json || '{}')
		return isObj(v) ? v : {}
	} catch {
		return {} // WIRE-NOTES §8: arguments may be invalid JSON; Gemini needs an object
	}
}

/** A block as the encoder knows it: whether it followed a text block, and (thinking) whether it had text. */
type Open = { block: BlockStart; afterText: boolean; text: boolean }

/**
 * Canonical events → Gemini SSE frames for a Gemini-native client. `ping` yields nothing: Gemini has no keepalive
 * chunk, and an SSE comment is not expressible as an SseFrame (the relay can write `SSE_KEEPALIVE` bytes itself).
 * An `error` becomes the `{error:{code,message,status}}` frame Google SDKs throw on, and ends the stream.
 * Signatures are shown as in `encodeResponseParts` (parts.ts): Anthropic's tagged on a thought part, Gemini's raw on
 * its kind of part; one of a text part follows that text on an empty text part, as Gemini streams it. A thinking
 * signature goes on the thinking's last text chunk, held back until the signature or the next event comes: LangChain
 * JS (`ChatGoogleGenerativeAI`) and the AI SDK's google provider keep a thought part only when it has text, so one
 * on an empty part was lost, and with it the thinking of the turn after a tool call (Claude's needs its signature).
 * A client that did not ask for thoughts (`includeThoughts`) gets no thought part: thinking other than Gemini's
 * text-part signatures is collected and carried (carried-thinking.ts) on the first function call that follows it, or
 * else on the empty text part that ends the stream, where Gemini streams a text part's signature. Shown thinking is
 * carried as well, on the next function call only: Gemini CLI keeps no thought part in its history (Gemini signs the
 * call), so without it Claude would lose its thinking on the tool-result turn (restoreCarried skips a kept copy).
 * With `ctx.choice` (one of several candidates: choices.ts) the candidate carries that `index`.
 * Another vendor's web search and its citations go out as `groundingMetadata` on the last chunk, with finishReason, as
 * Gemini streams its own grounding, once the text its spans count in is whole (grounding.ts).
 */
export function streamEncoder(ctx: EncodeContext): EventEncoder {
	let over = false
	let id = ''
	const blocks = new Map<number, Open>()
	let lastKind: BlockStart['kind'] | undefined
	let call: Call | undefined
	let calls = 0
	let pending: string | undefined // a text part's signature, sent once the text after it is
	let heldCalls: GeminiPart[] = [] // function calls not sent yet: the next call joins them, anything else sends them first
	let heldThought: string | undefined // the last thought chunk of open shown thinking, which its signature joins
	let usage: Partial<Usage> | undefined
	const show = ctx.includeThoughts === true
	const hidden = new Map<number, Carried & { part: ThinkingPart }>() // open thinking blocks kept from the client (or, shown, copied)
	let carried: Carried[] = [] // closed ones, for the next part that can carry them
	const shown = shownCounter()
	const searches: Array<{ queries: string[]; sources: WebSource[] }> = []
	const texts: CitedText[] = [] // the answer's text blocks in order, for the grounding spans
	const textAt = new Map<number, Required<CitedText>>()
	const carry = (): string | undefined => {
		if (!carried.length) return undefined
		const signature = carryThinking(carried)
		carried = []
		return signature
	}
	const frame = (parts: GeminiPart[], finishReason?: string, logprobsResult?: Record<string, unknown>, groundingMetadata?: GeminiGroundingMetadata): SseFrame => {
		if (!id) id = newId('gemini')
		const candidate = { content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}), ...(logprobsResult && { logprobsResult }), index: ctx.choice ?? 0 }
		const chunk: GeminiStreamChunk = { candidates: [groundingMetadata ? { ...candidate, groundingMetadata } : candidate] }
		if (finishReason && usage) chunk.usageMetadata = encodeUsage(usage)
		chunk.modelVersion = ctx.model
		chunk.responseId = id
		return { data: JSON.stringify(chunk) }
	}
	const sendCalls = (out: SseFrame[]) => {
		if (!heldCalls.length) return
		out.push(frame(heldCalls))
		heldCalls = []
	}
	const flush = (out: SseFrame[]) => {
		if (pending) out.push(frame([{ text: '', thoughtSignature: pending }]))
		pending = undefined
	}
	/** What may come between parallel calls, or within one, without sending the calls held so far. */
	const keepsCallsHeld = (ev: StreamEvent): boolean =>
		ev.type === 'usage' ||
		ev.type === 'ping' ||
		(ev.type === 'block_start' && ev.block.kind === 'tool_call') ||
		(call !== undefined && (ev.type === 'json_delta' || ev.type === 'signature_delta' || ev.type === 'block_stop'))
	const sendThought = (out: SseFrame[], thoughtSignature?: string) => {
		out.push(frame([{ text: heldThought ?? '', thought: true, ...(thoughtSignature && { thoughtSignature }) }]))
		heldThought = undefined
	}
	/** What may come between thinking text and its signature without sending the text held so far. */
	const keepsThoughtHeld = (ev: StreamEvent): boolean => ev.type === 'usage' || ev.type === 'ping' || ev.type === 'thinking_delta' || ev.type === 'signature_delta'
	function signature(open: Open | undefined, signature: string, out: SseFrame[]) {
		if (open?.block.kind === 'tool_call' && call) return void (call.signature = signature)
		if (open?.block.kind !== 'thinking') return void out.push(frame([{ text: '', thoughtSignature: signature }]))
		const shown = signatureForClient(signature)
		if (!shown.onText) return sendThought(out, shown.signature)
		// Signature-only thinking right after a text block: the signature of that text.
		if (!open.text && open.afterText && !pending) return void out.push(frame([{ text: '', thoughtSignature: shown.signature }]))
		flush(out)
		pending = shown.signature
	}
	return {
		push(ev, out) {
			if (over) return
			if (heldThought !== undefined && !keepsThoughtHeld(ev)) sendThought(out)
			if (heldCalls.length && !keepsCallsHeld(ev)) sendCalls(out)
			switch (ev.type) {
				case 'start':
					id = ev.id
					if (ev.usage) usage = { ...usage, ...ev.usage }
					break
				case 'block_start':
					blocks.set(ev.index, { block: ev.block, afterText: lastKind === 'text', text: false })
					lastKind = ev.block.kind
					if (ev.block.kind !== 'text') flush(out)
					if (ev.block.kind === 'text') {
						const t = { text: '', citations: [] }
						texts.push(t)
						textAt.set(ev.index, t)
					} else if (ev.block.kind === 'web_search') searches.push({ queries: ev.block.queries, sources: ev.block.sources })
					if (ev.block.kind === 'tool_call')
						call = { id: ev.block.id, name: ev.block.name, signature: ev.block.signature, json: '' }
					else if (ev.block.kind === 'redacted_thinking') {
						if (ev.block.data) carried.push({ at: shown.at, part: { type: 'redacted_thinking', data: ev.block.data } })
						if (show) out.push(frame([{ text: '', thought: true, thoughtSignature: REDACTED_PREFIX + ev.block.data }]))
					} else if (ev.block.kind === 'thinking') hidden.set(ev.index, { at: shown.at, part: { type: 'thinking', text: '' } })
					// mcp_tool_use / mcp_tool_result blocks have no Gemini form and are left out (see response.ts).
					break
				case 'text_delta': {
					shown.text(ev.text)
					const t = textAt.get(ev.index)
					if (t) t.text += ev.text
					// Each streamed chunk carries the logprobsResult of its own tokens.
					if (ev.text) out.push(frame([{ text: ev.text }], undefined, encodeLogprobs(ev.logprobs)))
					break
				}
				case 'citation':
					textAt.get(ev.index)?.citations.push(ev.citation)
					break
				case 'thinking_delta': {
					const open = blocks.get(ev.index)
					if (open && ev.text) open.text = true
					const kept = hidden.get(ev.index)
					if (kept) kept.part.text += ev.text
					if (ev.text && show) {
						if (heldThought !== undefined) sendThought(out)
						heldThought = ev.text
					}
					break
				}
				case 'signature_delta': {
					const kept = hidden.get(ev.index)
					if (kept) kept.part.signature = ev.signature
					// Gemini's own signature of a text part is shown as Gemini shows it without thoughts.
					if (!kept || !isHidden(kept.part)) hidden.delete(ev.index)
					if (show || !kept || !isHidden(kept.part)) signature(blocks.get(ev.index), ev.signature, out)
					break
				}
				case 'json_delta':
					if (call) call.json += ev.json
					break
				case 'block_stop': {
					const kind = blocks.get(ev.index)?.block.kind
					if (kind === 'text') flush(out)
					const kept = hidden.get(ev.index)
					if (kept && worthCarrying(kept.part)) carried.push(kept)
					hidden.delete(ev.index)
					if (call && kind === 'tool_call') {
						shown.other()
						const part: GeminiPart = { functionCall: { id: call.id, name: call.name, args: parseArgs(call.json) } }
						// The first call of an answer Gemini did not make: the documented placeholder (parts.ts).
						const sig = call.signature ?? carry() ?? (calls === 0 ? SKIP_SIGNATURE : undefined)
						if (sig) part.thoughtSignature = sig
						calls++
						call = undefined
						heldCalls.push(part)
					}
					break
				}
				case 'usage':
					usage = { ...usage, ...ev.usage }
					break
				case 'finish': {
					flush(out)
					// An empty text part, as Gemini ends streams: @google/genai's chat sessions drop an answer (and the question
					// before it) from their history when any chunk has no part. The part comes back in that history as a
					// model turn of its own, which the request decoder reads as nothing (gemini/parts.ts).
					// Shown thinking is carried for function calls only: a final answer's thinking is not needed back.
					const last = show ? undefined : carry()
					out.push(frame([last ? { text: '', thoughtSignature: last } : { text: '' }], encodeFinishReason(ev.reason), undefined, encodeGrounding(searches, texts)))
					break
				}
				case 'error':
					out.push(encodeStreamError(ev.error))
					over = true
					return
				case 'ping':
					break
			}
		},
		// A Gemini stream has no terminator: it ends with the chunk that carries finishReason.
		end(out) {
			if (!over && heldThought !== undefined) sendThought(out)
			if (!over) sendCalls(out)
			over = true
		},
		get done() {
			return over
		},
	}
}

export const encodeStream = (events: AsyncIterable<StreamEvent>, ctx: EncodeContext): AsyncGenerator<SseFrame> => runMachine(streamEncoder(ctx), events)
