/**
 * Stream codecs as synchronous state machines: a decoder takes one upstream frame at a time and appends the canonical
 * events it completes; an encoder takes one event at a time and appends the client frames. Neither awaits anything,
 * so a relay can run a whole upstream chunk through decoder and encoder with one await per chunk (for the network)
 * rather than a promise per event at every stage. `decodeStream`/`encodeStream`, the iterable form every codec also
 * offers, are these machines behind one adapter each.
 * @module
 */
import type { StreamEvent } from '../core/events'
import type { SseFrame } from '../core/sse'

/** Upstream frames → canonical events. */
export interface FrameDecoder {
	/** Decodes one frame, appending the events it completes to `out`. */
	push(frame: SseFrame, out: StreamEvent[]): void
	/** The upstream body ended: appends the closing events (a stream cut short ends with an `error` event). */
	end(out: StreamEvent[]): void
	/** The stream is over (its terminator, or an error): later frames are ignored and `end` appends nothing. */
	readonly done: boolean
}

/** Canonical events → client frames. */
export interface EventEncoder {
	/** Encodes one event, appending the frames it produces to `out`. */
	push(event: StreamEvent, out: SseFrame[]): void
	/** The events ended: appends the closing frames (the protocol's terminator, or an error if the events stopped early). */
	end(out: SseFrame[]): void
	/** The stream is over (after an `error` event): later events are ignored and `end` appends nothing. */
	readonly done: boolean
}

/** A decoder as an async generator: stops reading `frames` once the decoder is done. */
export async function* decodeWith(decoder: FrameDecoder, frames: AsyncIterable<SseFrame>): AsyncGenerator<StreamEvent> {
	const out: StreamEvent[] = []
	for await (const frame of frames) {
		decoder.push(frame, out)
		// A loop rather than `yield* out` (an async-from-sync iterator per frame).
		for (let i = 0; i < out.length; i++) yield out[i]!
		out.length = 0
		if (decoder.done) return
	}
	decoder.end(out)
	for (let i = 0; i < out.length; i++) yield out[i]!
}

/** An encoder as an async generator: stops reading `events` once the encoder is done. */
export async function* encodeWith(encoder: EventEncoder, events: AsyncIterable<StreamEvent>): AsyncGenerator<SseFrame> {
	const out: SseFrame[] = []
	for await (const event of events) {
		encoder.push(event, out)
		for (let i = 0; i < out.length; i++) yield out[i]!
		out.length = 0
		if (encoder.done) return
	}
	encoder.end(out)
	for (let i = 0; i < out.length; i++) yield out[i]!
}
