/**
 * Stream codecs as synchronous state machines: a decoder takes one upstream frame at a time and appends the canonical
 * events it completes; an encoder takes one event at a time and appends the client frames. Neither awaits anything,
 * so a relay can run a whole upstream chunk through decoder and encoder with one await per chunk (for the network)
 * rather than a promise per event at every stage. `decodeStream`/`encodeStream`, the iterable form every codec also
 * offers, are these machines behind one adapter (`runMachine`).
 * @module
 */
import type { StreamEvent } from '../core/events'
import type { ChatResponse } from '../core/ir'
import type { SseFrame } from '../core/sse'
import type { UpstreamCodec } from './codec'

/** A stream codec as a state machine: input items in, output items appended, synchronously. */
export interface StreamMachine<In, Out> {
	/** Handles one item, appending what it completes to `out`. */
	push(item: In, out: Out[]): void
	/** The input ended: appends the closing output (a decoder's stream cut short ends with an `error` event; an
	 * encoder's events that stopped early, with an error frame). */
	end(out: Out[]): void
	/** The stream is over (its terminator, or an error): later items are ignored and `end` appends nothing. */
	readonly done: boolean
}

/** Upstream frames → canonical events. */
export type FrameDecoder = StreamMachine<SseFrame, StreamEvent>

/** Canonical events → client frames. */
export type EventEncoder = StreamMachine<StreamEvent, SseFrame>

/** A machine as an async generator over an async input: stops reading the input once the machine is done. */
export async function* runMachine<In, Out>(machine: StreamMachine<In, Out>, input: AsyncIterable<In>): AsyncGenerator<Out> {
	const out: Out[] = []
	for await (const item of input) {
		machine.push(item, out)
		// A loop rather than `yield* out` (an async-from-sync iterator per item).
		for (let i = 0; i < out.length; i++) yield out[i]!
		out.length = 0
		if (machine.done) return
	}
	machine.end(out)
	for (let i = 0; i < out.length; i++) yield out[i]!
}

/**
 * `inner` with each event it decodes handed to `each`, which appends what goes on in its place (nothing, the event,
 * others): for a decoder that drops, holds back or renumbers the events of the vendor's own.
 */
export function eachDecoded(inner: FrameDecoder, each: (e: StreamEvent, out: StreamEvent[]) => void): FrameDecoder {
	const events: StreamEvent[] = []
	const pass = (out: StreamEvent[]) => {
		for (const e of events) each(e, out)
		events.length = 0
	}
	return {
		push(frame, out) {
			inner.push(frame, events)
			pass(out)
		},
		end(out) {
			inner.end(events)
			pass(out)
		},
		get done() {
			return inner.done
		},
	}
}

/** `codec` with its decoded answers changed: a whole one by `response`, a streamed one by the decoder `decoder` makes of its own. */
export function mapDecoding<C extends UpstreamCodec>(codec: C, response: (r: ChatResponse) => ChatResponse, decoder: (d: FrameDecoder) => FrameDecoder): C {
	const streamDecoder = (choice?: number) => decoder(codec.streamDecoder(choice))
	return { ...codec, decodeResponse: (body, choice) => response(codec.decodeResponse(body, choice)), streamDecoder, decodeStream: (frames) => runMachine(streamDecoder(), frames) }
}
