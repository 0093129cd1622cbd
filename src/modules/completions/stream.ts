/**
 * A streamed legacy completion, relayed frame for frame as the chat fast path relays OpenAI chunks
 * (relay/stream.ts): the first frames held in the prefetch window so a failure there still fails over; the usage
 * chunk (asked for by the relay) and every chunk's `"usage":null` cut when the client did not ask for them; the model
 * renamed back for a model_map alias; `data: [DONE]` ends the stream, and one the upstream left out is added (an
 * error frame instead when it was cut). Metered by the chat meter, whose reading (usage, `[DONE]`, a finish reason,
 * error frames) holds for `text_completion` chunks; only the estimate for missing usage reads `choices[].text`.
 * @module
 */
import { GatewayError } from '../../core/errors'
import { formatSse, type SseBatchReader, type SseFrame } from '../../core/sse'
import { openaiChat } from '../../protocols/openai-chat'
import type { Budget, CallInfo } from '../../relay/budget'
import { countText } from '../../relay/estimate'
import { renameModel, stripUsage } from '../../relay/fast-path'
import { createFrameMeter, type FrameMeter } from '../../relay/meter'
import type { FramesPrefetched } from '../../relay/prefetch'
import { openRelayed } from '../../relay/stream'
import { countOpen, PassthroughRelay, settleStream } from '../../relay/stream-relay'
import type { UpstreamCall } from '../../relay/upstream-fetch'
import type { ResponseAttempt as Attempt } from '../../routing/attempts'
import type { Channel } from '../../routing/catalog'
import { choiceText } from './prompt'

export type CompletionStream = {
	info: CallInfo
	budget: Budget
	up: UpstreamCall
	channel: Channel
	upstreamModel: string
	/** The model the client named. */
	model: string
	/** The client asked for the usage chunk. */
	includeUsage: boolean
	headers: Record<string, string>
}

/** Every completion chunk carries text (possibly empty): none is preamble, so the window ends at the first frame. */
const noPreamble = () => false

export async function relayCompletionStream(s: CompletionStream): Promise<Attempt> {
	const it = s.up.sse(s.includeUsage)
	const opened = await openRelayed(s.up, it, noPreamble, 'openai-chat')
	if ('error' in opened) return opened
	return { ok: new CompletionRelay(s, it, opened).respond(s.up, s.headers, s.info.svc.env.keepaliveMs), judgedAtEnd: true }
}

const DONE_FRAME = formatSse({ data: '[DONE]' })

class CompletionRelay extends PassthroughRelay {
	private readonly meter: FrameMeter = createFrameMeter('openai-chat')
	protected readonly strip: boolean
	private readonly alias: string | undefined

	constructor(
		private readonly s: CompletionStream,
		it: SseBatchReader,
		window: FramesPrefetched,
	) {
		super(s.up, it, window)
		this.strip = !s.includeUsage
		this.alias = s.upstreamModel !== s.model ? s.model : undefined
		countOpen(s)
	}

	protected isLast(f: SseFrame): boolean {
		return f.data === '[DONE]'
	}

	/** A frame's text for the client: as the upstream sent it unless usage is cut or the model renamed. */
	protected emit(f: SseFrame): string {
		this.meter.onFrame(f)
		let data = this.strip ? stripUsage(f.data) : f.data
		if (data === undefined) return ''
		if (this.alias !== undefined && data !== '[DONE]') data = renameModel(data, this.alias)
		return data === f.data ? (f.raw ?? formatSse(f)) : formatSse({ event: f.event, id: f.id, data })
	}

	protected ending(): string {
		const end = this.meter.end()
		if (end === 'cut') return this.streamError('the upstream stream ended unexpectedly', 'upstream_cut')
		return end === 'error' ? '' : DONE_FRAME
	}

	protected errorEvent(e: GatewayError) {
		return formatSse(openaiChat.encodeStreamError(e))
	}

	protected settle() {
		const meter = this.meter
		const end = meter.end()
		return settleStream(this.s, {
			usage: meter.usage(),
			estimateOutput: () => countText(meter.kept().map(keptText).join('')),
			endReason: this.broken && !this.cancelled ? 'upstream_malformed' : this.cancelled ? 'client_abort' : end === 'cut' ? 'upstream_cut' : end,
		})
	}
}

/** The completion text a kept chunk carried. */
function keptText(f: SseFrame): string {
	if (f.data === '[DONE]' || !f.data.includes('"text"')) return ''
	try {
		return choiceText((JSON.parse(f.data) as { choices?: unknown }).choices)
	} catch {
		return ''
	}
}
