/**
 * Stop sequences a vendor cannot take (OpenAI chat takes 4 and its reasoning models none, Gemini 5: the codec's
 * `stopsTaken`): the first ones go to the vendor, the gateway enforces the rest on the answer's text. The text is cut
 * before the earliest match and the answer ends as a stop sequence ends it (`stop_sequence` with the sequence matched);
 * a stream stops being read there, so the vendor stops generating. Vendors apply stop sequences to text only, so
 * thinking and tool call arguments are never cut.
 * @module
 */
import type { StreamEvent } from '../core/events'
import type { ChatRequest, ChatResponse } from '../core/ir'
import type { UpstreamCodec } from '../protocols/codec'
import { eachDecoded, type FrameDecoder, type StreamMachine } from '../protocols/stream-machine'

/**
 * The request as `codec`'s vendor takes it for `model`, and the stop sequences left for the gateway to enforce (none
 * when all fit: the request is returned as it is): those past the vendor's number, and those it refuses outright
 * (Claude: only whitespace, such as `"\n"`) when the request comes from another protocol's client (`client`).
 * @example splitStops({ ...req, stop: ['a', 'b', 'c', 'd', 'e'] }, openaiChat, 'gpt-4o').held // ['e']
 */
export function splitStops(ir: ChatRequest, codec: UpstreamCodec, model: string, client?: UpstreamCodec): { ir: ChatRequest; held: string[] } {
	const stop = ir.stop
	if (!stop?.length) return { ir, held: NONE }
	const refused = codec.stopRefused && client !== codec ? stop.filter(codec.stopRefused) : NONE
	const sendable = refused.length ? stop.filter((s) => !refused.includes(s)) : stop
	const taken = codec.stopsTaken?.(model)
	const over = taken !== undefined && sendable.length > taken
	if (!over && !refused.length) return { ir, held: NONE }
	const sent = over ? sendable.slice(0, taken) : sendable
	// An empty sequence would match before any text: no vendor stops on one, so neither does the gateway.
	const held = [...refused, ...(over ? sendable.slice(taken) : NONE)].filter((s) => s !== '')
	return { ir: { ...ir, stop: sent.length ? sent : undefined }, held }
}

const NONE: string[] = []

/** The earliest match of any of `stops` in `text`: its position and the sequence (the first listed on a tie). */
function earliest(text: string, stops: string[]): { at: number; stop: string } | undefined {
	let found: { at: number; stop: string } | undefined
	for (const stop of stops) {
		const at = text.indexOf(stop)
		if (at >= 0 && (!found || at < found.at)) found = { at, stop }
	}
	return found
}

/** The length of the longest end of `text` that begins one of `stops` (and could become a match with more text). */
function openTail(text: string, stops: string[]): number {
	let longest = 0
	for (const stop of stops)
		for (let n = Math.min(stop.length - 1, text.length); n > longest; n--)
			if (text.endsWith(stop.slice(0, n))) {
				longest = n
				break
			}
	return longest
}

/**
 * Cuts a whole answer at the earliest match of `stops` in its text: the text before it stays, the content after it
 * goes (the vendor would not have generated it), and the answer ends with `stop_sequence`. Usage stays the vendor's.
 * Returns whether it cut.
 */
export function cutAnswer(res: ChatResponse, stops: string[]): boolean {
	for (let i = 0; i < res.content.length; i++) {
		const part = res.content[i]!
		if (part.type !== 'text') continue
		const hit = earliest(part.text, stops)
		if (!hit) continue
		const kept = part.text.slice(0, hit.at)
		res.content = res.content.slice(0, kept ? i + 1 : i)
		if (kept) res.content[i] = { ...part, text: kept }
		res.stopReason = 'stop_sequence'
		res.stopSequence = hit.stop
		return true
	}
	return false
}

/**
 * The stream form of `cutAnswer`, on canonical events: a text block's deltas go on as they come except for an end that
 * could still begin a sequence, held until the next delta tells (or the block ends). At a match the text before it goes
 * out and its block closes, and the machine is `done`: later events are dropped but usage (what the vendor reports
 * still counts), and `end` gives the `finish` (after any usage of the same chunk). The relay then stops reading.
 */
export class StopCutter implements StreamMachine<StreamEvent, StreamEvent> {
	/** The open text block's index (-1: none) and the end of its text held back. */
	private text = -1
	private held = ''
	private matched: string | undefined = undefined
	private finished = false

	constructor(private readonly stops: string[]) {}

	/** A sequence matched: the answer ends there. */
	get done(): boolean {
		return this.matched !== undefined
	}

	push(e: StreamEvent, out: StreamEvent[]): void {
		if (this.matched !== undefined) {
			if (e.type === 'usage') out.push(e)
			return
		}
		switch (e.type) {
			case 'block_start':
				if (e.block.kind === 'text') this.text = e.index
				break
			case 'text_delta':
				if (e.index === this.text) return this.onText(e, out)
				break
			case 'block_stop':
				if (e.index === this.text) {
					this.flush(out)
					this.text = -1
				}
				break
			case 'finish':
			case 'error':
				this.flush(out)
				break
		}
		out.push(e)
	}

	end(out: StreamEvent[]): void {
		if (this.matched === undefined || this.finished) return
		this.finished = true
		out.push({ type: 'finish', reason: 'stop_sequence', stopSequence: this.matched })
	}

	private onText(e: Extract<StreamEvent, { type: 'text_delta' }>, out: StreamEvent[]) {
		const text = this.held + e.text
		const hit = earliest(text, this.stops)
		if (hit) {
			this.held = ''
			if (hit.at > 0) out.push({ ...e, text: text.slice(0, hit.at) })
			out.push({ type: 'block_stop', index: e.index })
			this.matched = hit.stop
			return
		}
		const tail = openTail(text, this.stops)
		this.held = tail ? text.slice(text.length - tail) : ''
		if (text.length > tail) out.push(text === e.text && !tail ? e : { ...e, text: text.slice(0, text.length - tail) })
	}

	private flush(out: StreamEvent[]) {
		if (this.held && this.text >= 0) out.push({ type: 'text_delta', index: this.text, text: this.held })
		this.held = ''
	}
}

/** A decoder whose answer's text is cut at stop sequences (StopCutter), and whether it was, before the vendor's end. */
export type CuttingDecoder = FrameDecoder & { readonly cutShort: boolean }

/**
 * `inner` with its text cut at `stops`: done at a match (so a reader stops reading there, and the vendor stops
 * generating once the call is aborted), the cutter's `finish` after the events of the same frame.
 * @example runMachine(cuttingDecoder(codec.streamDecoder(), held), frames)
 */
export function cuttingDecoder(inner: FrameDecoder, stops: string[]): CuttingDecoder {
	const cutter = new StopCutter(stops)
	const cut = eachDecoded(inner, (e, out) => cutter.push(e, out))
	return {
		push(frame, out) {
			cut.push(frame, out)
			cutter.end(out)
		},
		end(out) {
			cut.end(out)
			cutter.end(out)
		},
		get done() {
			return inner.done || cutter.done
		},
		get cutShort() {
			return cutter.done && !inner.done
		},
	}
}
