/**
 * The Gemini Interactions codec (https://ai.google.dev/api/interactions-api), for clients of
 * `POST /v1beta/interactions` (modules/interactions): any model's answer is shown as an Interaction resource, or as the
 * API's step events when streamed. The route makes one per request with `interactionsCodec`, so that the id it keeps
 * the interaction under is the one the client is shown and the whole interaction reaches the store; `geminiInteractions`
 * is the codec with a fresh id per answer.
 * @module
 */
import type { ChatResponse } from '../../core/ir'
import type { StreamEvent } from '../../core/events'
import type { SseFrame } from '../../core/sse'
import type { EncodeContext, ProtocolCodec } from '../codec'
import { TIER_HEADER } from '../gemini/usage'
import { runMachine } from '../stream-machine'
import { encodeError, encodeStreamError } from './error'
import type { Interaction, InteractionRequest } from './model'
import { decodeRequest, encodeRequest } from './request'
import { decodeResponse, encodeInteraction, interactionId, usageOf } from './response'
import { streamDecoder } from './stream-decode'
import { streamEncoder } from './stream-encode'

export type InteractionsOptions = {
	/** The interaction's id; a fresh one per answer when not given. */
	id?: string
	/** Receives the whole Interaction (its output steps) once answered: the JSON body, or a stream that completed. */
	keep?: (interaction: Interaction) => void
	/** Fields set on every Interaction shown (the request's `previous_interaction_id`…). */
	echo?: Record<string, unknown>
}

export function interactionsCodec(o: InteractionsOptions = {}): ProtocolCodec<InteractionRequest, Interaction> {
	const idOf = () => o.id ?? interactionId()
	const echoed = (i: Interaction): Interaction => (o.echo ? { ...i, ...o.echo } : i)
	return {
		name: 'gemini-interactions',
		tierHeader: TIER_HEADER,
		decodeRequest,
		encodeRequest: (req, model) => encodeRequest(req, model) as InteractionRequest,
		decodeResponse: (body) => decodeResponse(body),
		encodeResponse(res: ChatResponse, ctx: EncodeContext) {
			const i = echoed(encodeInteraction(res, ctx, idOf()))
			o.keep?.(i)
			return i
		},
		decodeStream: (frames: AsyncIterable<SseFrame>) => runMachine(streamDecoder(), frames),
		encodeStream: (events: AsyncIterable<StreamEvent>, ctx: EncodeContext) => runMachine(streamEncoder(ctx, idOf(), keeper(o, echoed)), events),
		streamDecoder: () => streamDecoder(),
		streamEncoder: (ctx: EncodeContext) => streamEncoder(ctx, idOf(), keeper(o, echoed)),
		encodeError,
		encodeStreamError,
		usageOf: (body) => usageOf(body),
	}
}

const keeper = (o: InteractionsOptions, echoed: (i: Interaction) => Interaction) => (o.keep ? (i: Interaction) => o.keep!(echoed(i)) : undefined)

export const geminiInteractions = interactionsCodec()

export { Interaction, InteractionRequest, InteractionUsage } from './model'
export { interactionId } from './response'
