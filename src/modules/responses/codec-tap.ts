/**
 * A client codec whose output is read or rewritten on its way out: the JSON answer it encodes, and each stream frame
 * its encoder makes. What the Responses route adds to the OpenAI Responses codec for converted answers (echo.ts,
 * converted-items.ts) without the codec knowing the request.
 * @module
 */
import type { SseFrame } from '../../core/sse'
import type { EncodeContext, ProtocolCodec } from '../../protocols/codec'
import type { EventEncoder } from '../../protocols/stream-machine'

export type Tap = {
	/** The encoded JSON answer, or what goes out instead. */
	body(body: Record<string, unknown>): Record<string, unknown>
	/** A stream frame the encoder made, or what goes out instead (nothing: undefined; several: an array). */
	frame(f: SseFrame): SseFrame | SseFrame[] | undefined
}

/** The events that carry the whole Response object at a stream's end. */
export const FINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed'])

/** A Response object with each of its output items passed through `f` (what the call rewriters do to the answer). */
export const mapOutput = (r: Record<string, unknown>, f: (item: unknown) => unknown): Record<string, unknown> =>
	Array.isArray(r.output) ? { ...r, output: r.output.map(f) } : r

export function tappedCodec<C extends ProtocolCodec>(codec: C, tap: Tap): C {
	return {
		...codec,
		encodeResponse: (res, ctx: EncodeContext) => tap.body(codec.encodeResponse(res, ctx) as Record<string, unknown>),
		streamEncoder(ctx: EncodeContext): EventEncoder {
			const inner = codec.streamEncoder(ctx)
			return {
				push(event, out) {
					const from = out.length
					inner.push(event, out)
					const made = out.splice(from)
					for (const f of made) {
						const tapped = tap.frame(f)
						if (Array.isArray(tapped)) out.push(...tapped)
						else if (tapped) out.push(tapped)
					}
				},
				end: (out) => inner.end(out),
				get done() {
					return inner.done
				},
			}
		},
	}
}
