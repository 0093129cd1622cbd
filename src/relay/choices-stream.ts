/**
 * Several answers streamed (choices.ts): each upstream call is a source of frames, read by one decoder per answer it
 * carries (Gemini's candidates by `index`, or the one answer of a call per answer). Every source is opened and awaited
 * up to its first content before the response starts, as a single converted stream is (stream.ts), so a call that
 * fails at once fails the request before anything was sent. Then the sources' chunks go to the client's choices
 * encoder as they arrive, interleaved, each answer's events with its index; usage is the whole request's (the sum over
 * the sources), and the stream ends once every answer ended (one usage chunk, one terminator) or at the first error.
 * Stop sequences the vendor was not sent are cut in each answer by its own StopCutter; a call whose answers all matched
 * is aborted there (the vendor stops generating), and the output it produced is then billed and shown as on an abort.
 * @module
 */
import { failedRow } from '../billing/usage-record'
import { GatewayError } from '../core/errors'
import type { StreamEvent } from '../core/events'
import { type Usage, sumUsage } from '../core/ir'
import { formatSse, type SseFrame } from '../core/sse'
import type { ChoiceEvent, ChoicesEncoder } from '../protocols/codec'
import type { FrameDecoder } from '../protocols/stream-machine'
import { upstreamError } from '../providers/upstream-error'
import type { ResponseAttempt as Attempt } from '../routing/attempts'
import { countedUsage, settle } from './budget'
import { type ChoicesAttempt, finalError, siblings } from './choices'
import { countText } from './estimate'
import { createEventMeter } from './meter'
import { FIRST_EVENT_WINDOW_MS, prefetch } from './prefetch'
import { beforeContentError, failedBeforeContent, isPreambleEvent } from './stream'
import { StopCutter } from './stop-sequences'
import { countOpen, releaseAfterEnd, type RelayStep, settleStream, StreamRelay } from './stream-relay'
import { fetchUpstream, type UpstreamCall } from './upstream-fetch'

type Meter = ReturnType<typeof createEventMeter>
/** One answer of a source: its decoder, its index among all the answers, what it produced, and its cutter, if any. */
type Reader = { decoder: FrameDecoder; choice: number; meter: Meter; cutter: StopCutter | undefined }
type Chunk = IteratorResult<ChoiceEvent[], undefined>

/** One upstream call and the answers it carries; its first reader's usage is the call's. */
type Source = {
	up: UpstreamCall
	batches: AsyncIterator<SseFrame[], undefined>
	readers: Reader[]
	chunks: AsyncIterator<ChoiceEvent[], undefined>
	/** Chunks the prefetch window read, not yet sent. */
	buffered: ChoiceEvent[][]
	/** A read under way (the window's, or the relay's). */
	pending: Promise<Chunk> | undefined
	ended: boolean
}

const DONE = { value: undefined, done: true } as const

/** The answer ended: the vendor's end, or a stop sequence the gateway enforces. */
const answered = (r: Reader) => r.decoder.done || r.cutter?.done === true

/**
 * Every answer of the source ended and the relay has what they said: a read of the source decodes its chunk as it
 * arrives, so its answers may be over while that read's events still wait, unsent, for the race in `readMore`
 * (two calls ending together: the other's finish was lost, and its answer ended "unexpectedly").
 */
const consumed = (s: Source) => s.pending === undefined && s.readers.every(answered)

/** The source's answers all ended, one at least on a stop sequence before the vendor's end: its call is cut short. */
const stoppedEarly = (s: Pick<Source, 'readers'>) => s.readers.every(answered) && s.readers.some((r) => !r.decoder.done)

/**
 * A reader's decoded events to `out`: as they came, or through its cutter, metered as the vendor produced them (the
 * whole delta a sequence matched in, usage that follows it) and the cutter's own `finish` too (the answer ended so).
 */
function passOn(reader: Reader, events: StreamEvent[], out: ChoiceEvent[]) {
	const { cutter, meter, choice } = reader
	if (!cutter) {
		for (const event of events) {
			meter.onEvent(event)
			out.push({ choice, event })
		}
		return
	}
	const cut: StreamEvent[] = []
	for (const e of events) {
		if (!cutter.done || e.type === 'usage') meter.onEvent(e)
		cutter.push(e, cut)
	}
	const ending = cut.length
	// A sequence matched: the answer ends with this chunk (its `finish` after the chunk's usage).
	cutter.end(cut)
	for (let i = 0; i < cut.length; i++) {
		if (i >= ending) meter.onEvent(cut[i]!)
		out.push({ choice, event: cut[i]! })
	}
}

/**
 * A source's frame batches through its readers' decoders: each batch's events, tagged with their answer's index. A
 * reader cut by a stop sequence is still fed, for the usage the call reports, until every answer of the call ended;
 * the call is then aborted when one was cut short.
 */
function sourceChunks(batches: AsyncIterator<SseFrame[], undefined>, readers: Reader[], up: UpstreamCall): AsyncIterator<ChoiceEvent[], undefined> {
	const over = () => readers.every(answered)
	const next = (): Promise<Chunk> => {
		if (!over()) return batches.next().then(decode)
		if (stoppedEarly({ readers })) up.abort()
		return Promise.resolve(DONE)
	}
	const decode = (r: IteratorResult<SseFrame[], undefined>): Chunk | Promise<Chunk> => {
		const out: ChoiceEvent[] = []
		const events: StreamEvent[] = []
		for (const reader of readers) {
			if (r.done) reader.decoder.end(events)
			else
				for (const f of r.value) {
					if (reader.decoder.done) break
					reader.decoder.push(f, events)
				}
			passOn(reader, events, out)
			events.length = 0
		}
		if (out.length) return { value: out, done: false }
		return r.done ? DONE : next()
	}
	return {
		next,
		async return() {
			await batches.return?.()
			return DONE
		},
	}
}

const onlyPreamble = (events: ChoiceEvent[]) => events.every((e) => isPreambleEvent(e.event))

/** Opens one call and reads it up to its first content: the source, or the failure (the call aborted). */
async function openSource(a: ChoicesAttempt, k: number, signal: AbortSignal): Promise<Source | { error: GatewayError; source?: Source }> {
	const { plan } = a
	let up: UpstreamCall
	try {
		up = await fetchUpstream(plan.url, { headers: plan.headers, body: plan.body, ...plan.via }, plan.timeouts, signal)
	} catch (e) {
		return { error: e instanceof GatewayError ? e : new GatewayError('upstream', String(e), { retryable: true }) }
	}
	if (!up.res.ok) {
		const error = upstreamError(up.res.status, await up.res.text().catch(() => ''), up.res.headers)
		up.abort()
		return { error }
	}
	if (!up.res.body) {
		up.abort()
		return { error: new GatewayError('upstream', 'upstream sent an empty stream', { retryable: true }) }
	}
	const readers = Array.from({ length: plan.perCall }, (_, i) => ({
		decoder: plan.codec.streamDecoder(i),
		choice: k * plan.perCall + i,
		meter: createEventMeter(),
		cutter: a.held.length ? new StopCutter(a.held) : undefined,
	}))
	const batches = up.sse()
	const chunks = sourceChunks(batches, readers, up)
	const pre = await prefetch(chunks, onlyPreamble, FIRST_EVENT_WINDOW_MS).catch(() => undefined)
	const source: Source = { up, batches, readers, chunks, buffered: pre?.buffered ?? [], pending: pre?.pending, ended: pre?.done ?? true }
	// A read the window left running may fail once the call is aborted (another call failed, or the stream ended
	// before it was needed): handled, not left to reject unseen.
	pre?.pending?.catch(() => undefined)
	if (!pre) return { ...failedBeforeContent(up), source }
	const head = pre.buffered.flat()
	const err = head.find((e) => e.event.type === 'error')?.event
	const sawContent = head.some((e) => e.event.type === 'block_start' || e.event.type === 'finish')
	if ((err && !sawContent) || (pre.done && head.length === 0)) {
		up.abort()
		return { error: beforeContentError(err?.type === 'error' ? err.error : undefined), source }
	}
	return source
}

/** A source's usage (its first reader's: every reader of one call sees the call's whole usage), as reported. */
const reportedOf = (s: Source): Partial<Usage> | undefined => s.readers[0]!.meter.usage()

/** The output text a source's answers produced, counted. */
const countSource = (s: Source) => s.readers.reduce((n, r) => n + countText(r.meter.text()), 0)

/**
 * The whole request's usage: the sources' sum, a source that reported none (or only some) counted here (its prompt
 * and output text), `estimated` then; so is the output of a source cut short by a stop sequence when its count is
 * more than the reported one, which may be a placeholder (budget.ts `settle`, `stoppedEarly`).
 */
function totalUsage(sources: Source[], countInput: () => number): { usage: Usage; estimated: boolean } {
	let estimated = false
	const parts = sources.map((s) => {
		const reported = reportedOf(s)
		const counted = countedUsage(reported, countInput, () => countSource(s), stoppedEarly(s))
		if (counted) estimated = true
		return { ...reported, ...counted }
	})
	return { usage: sumUsage(parts), estimated }
}

/** The text all the answers produced, counted (a cut stream's output when more than the usage says). */
const countAll = (sources: Source[]) => sources.reduce((n, s) => n + countSource(s), 0)

export async function streamedChoices(a: ChoicesAttempt): Promise<Attempt> {
	const calls = siblings(a.call.signal)
	const opened = await Promise.all(
		Array.from({ length: a.plan.calls }, (_, k) =>
			openSource(a, k, calls.signal).then((r) => {
				if ('error' in r) calls.fail(r.error)
				return r
			}),
		),
	)
	const failed = calls.first
	if (!failed)
		return { ok: new ChoicesRelay(a, opened as Source[]).respond((opened[0] as Source).up, { 'x-request-id': a.call.requestId }, a.call.svc.env.keepaliveMs), judgedAtEnd: true }
	const sources = opened.flatMap((r) => ('error' in r ? (r.source && r.error !== failed ? [r.source] : []) : [r]))
	for (const s of sources) s.up.abort()
	// The other calls the vendor had begun answering (it reported their usage, the prompt at least) were charged by it:
	// they are billed, and the request ends with the failure rather than trying another channel.
	const charged = sources.filter((s) => reportedOf(s) !== undefined)
	if (!charged.length) return { error: failed }
	const { usage, estimated } = totalUsage(charged, a.budget.countInput)
	const row = failedRow(failed.status, a.call.signal.aborted)
	await settle(a.info, a.budget, { usage, estimated, estimateOutput: () => countAll(charged), ...row, channel: a.channel, upstreamModel: a.upstreamModel })
	return { error: finalError(failed) }
}

/**
 * The upstream calls of one relay as one: aborted together; after a clean end each one's body is drained on its own,
 * but a call cut short by a stop sequence is aborted (the vendor stops generating).
 */
const together = (sources: Source[]) => ({
	abort: () => {
		for (const s of sources) s.up.abort()
	},
	release: () => {
		for (const s of sources) {
			if (stoppedEarly(s)) s.up.abort()
			else releaseAfterEnd(s.up, () => s.batches.next())
		}
	},
})

class ChoicesRelay extends StreamRelay {
	private readonly encoder: ChoicesEncoder
	private readonly frames: SseFrame[] = []
	private finished = 0
	private shown = ''

	constructor(
		private readonly a: ChoicesAttempt,
		private readonly sources: Source[],
	) {
		super(together(sources))
		const call = a.call
		this.encoder = call.client.choicesEncoder!({ model: call.ir.model, includeUsage: call.includeUsage, countInputTokens: a.budget.countInput }, a.plan.n)
		countOpen(a)
	}

	/**
	 * The client text for events: each answer's to the encoder; usage, whoever reported it, as the whole request's
	 * (the sum so far, and before the last answer's finish, what every call used, counted where none was reported).
	 * Once every answer is done (or an error ended the stream), the encoder's closing follows.
	 */
	private encode(events: ChoiceEvent[]): { text: string; last: boolean } {
		const frames = this.frames
		let usageMoved = false
		for (const e of events) {
			const ev = e.event
			if (ev.type === 'usage' || (ev.type === 'start' && ev.usage)) usageMoved = true
			if (ev.type === 'usage') continue
			if (ev.type === 'finish' && ++this.finished === this.a.plan.n) {
				this.showUsage(frames, true)
				usageMoved = false
			}
			this.encoder.push(e, frames)
		}
		if (usageMoved) this.showUsage(frames, false)
		const last = this.encoder.done || this.sources.every(consumed)
		if (last) this.encoder.end(frames)
		let text = ''
		for (const f of frames) text += formatSse(f)
		frames.length = 0
		return { text, last }
	}

	private showUsage(frames: SseFrame[], whole: boolean) {
		const usage = whole ? totalUsage(this.sources, this.a.budget.countInput).usage : sumUsage(this.sources.map((s) => reportedOf(s) ?? {}))
		const key = JSON.stringify(usage)
		if (key === this.shown) return
		this.shown = key
		this.encoder.push({ choice: 0, event: { type: 'usage', usage } }, frames)
	}

	protected read(): RelayStep | Promise<RelayStep> {
		// The prefetch windows' chunks first, as one step.
		const held: ChoiceEvent[] = []
		for (const s of this.sources) for (const c of s.buffered.splice(0)) held.push(...c)
		if (held.length) {
			const step = this.stepOf(held)
			if (step) return step
		}
		return this.readMore()
	}

	/** The step events make (none when they encode to nothing and the stream goes on); clean when every answer finished. */
	private stepOf(events: ChoiceEvent[]): RelayStep | undefined {
		const { text, last } = this.encode(events)
		if (last) return { text, last, clean: this.sources.every((s) => s.readers.every((r) => r.meter.end() === 'ok')) }
		return text ? { text, last } : undefined
	}

	/** The next chunk of whichever source has one first. */
	private async readMore(): Promise<RelayStep> {
		while (true) {
			const live = this.sources.filter((s) => !s.ended)
			// Every body ended: the decoders ended with them (a cut one with its error), so this step is the last.
			if (!live.length) return this.stepOf([]) ?? { text: '', last: true }
			for (const s of live) s.pending ??= s.chunks.next()
			// A failed read ends the stream (`failed`); the reads left waiting are handled here too, so none is left unhandled.
			const [s, r, failure] = await Promise.race(live.map((s) => s.pending!.then((r) => [s, r, undefined] as const, (e: unknown) => [s, undefined, e ?? new Error('read failed')] as const)))
			if (failure !== undefined) throw failure
			s.pending = undefined
			if (r!.done) s.ended = true
			const step = this.stepOf(r!.done ? [] : r!.value)
			if (step) return step
		}
	}

	protected failed() {
		return this.cancelled ? '' : this.errorEvent(new GatewayError('upstream', 'the upstream stream failed', { code: 'upstream_stream_error' }))
	}

	protected errorEvent(e: GatewayError) {
		return formatSse(this.a.call.client.encodeStreamError(e))
	}

	/** Each source's body is drained by `together(…).release`. */
	protected rest() {
		return Promise.resolve(DONE)
	}

	protected settle() {
		const { usage, estimated } = totalUsage(this.sources, this.a.budget.countInput)
		const ends = this.sources.flatMap((s) => s.readers.map((r) => r.meter.end()))
		const endReason = ends.includes('error') ? 'error' : this.cancelled ? 'client_abort' : ends.includes('cut') ? 'upstream_cut' : 'ok'
		const stopped = this.sources.some(stoppedEarly)
		return settleStream(this.a, { usage, estimated, estimateOutput: () => countAll(this.sources), endReason, stoppedEarly: stopped })
	}
}
