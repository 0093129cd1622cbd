/**
 * Input audio transcription billing of a Realtime session, shared by transcription sessions (transcription.ts) and
 * conversation sessions that turn transcription on (session.ts): each committed audio buffer
 * (`input_audio_buffer.committed`, by the client or the server's voice detection) is one transcription, billed from
 * its `conversation.item.input_audio_transcription.completed` usage (transcription-usage.ts) at the transcription
 * model's prices, one usage row each (model = the transcription model). Before audio is forwarded the buffer it goes
 * into holds enough for it (`transcriptionBound` of its duration, taken `HOLD_SECONDS` ahead): `coverNow`, else
 * `cover` (which the ledger may refuse). A completion settles its buffer's holds; a failed transcription
 * (`….failed`) releases them; one whose completion never came is charged as estimated from its audio. Audio never
 * committed is not transcribed and costs nothing. Nothing stays held after `close`.
 *
 * Two transcribers are kept: the one audio is held for now (the client's latest config, checked before it went
 * upstream) and the one the upstream applies to a commit (its latest `session.created`/`session.updated`, which it
 * sends in order with its commits): a buffer committed while transcription was off upstream is never billed.
 * @module
 */
import type { AuthToken } from '../../auth/api-key'
import type { Hold } from '../../billing/ledger'
import type { Price } from '../../billing/pricing'
import { type RecordBase, usageRecord } from '../../billing/usage-record'
import { GatewayError } from '../../core/errors'
import { observeUsage } from '../../metrics/observe-usage'
import type { Channel } from '../../routing/catalog'
import type { Services } from '../../services'
import { transcriptionBound } from '../audio/transcriptions'
import { audioBytesPerSecond } from './estimate'
import { transcriptionCharge } from './transcription-usage'

/** Seconds of audio a new hold covers beyond what the buffer already needs (fewer ledger calls for a steady stream). */
export const HOLD_SECONDS = 60

/** A transcription model as the gateway and the upstream name it, and its price. */
export type Transcriber = { model: string; upstreamModel: string; price: Price }

/** One input audio buffer: its holds (what they sum to) and the bytes of audio forwarded into it. */
type Buffered = { holds: Hold[]; held: number; bytes: number }
/** A committed buffer, with the transcriber the upstream applied to it. */
type Committed = Buffered & { by: Transcriber }

type Json = Record<string, any>

const empty = (): Buffered => ({ holds: [], held: 0, bytes: 0 })

export type MeterInit = {
	svc: Services
	token: AuthToken
	base: RecordBase
	channel: () => Channel | undefined
	/** The end reason of a transcription completed now: `ok`, or why the client was not there for it. */
	endReason: () => string
}

export class TranscriptionMeter {
	/** The transcriber audio appended now is held for; undefined when the client turned transcription off. */
	holdFor: Transcriber | undefined
	/** The transcriber the upstream applies to what it commits now. */
	applied: Transcriber | undefined
	/** Bytes per second of the input audio. */
	bytesPerSecond = audioBytesPerSecond(undefined)
	private buffer = empty()
	/** Committed buffers waiting for their transcription, by item id, oldest first. */
	private committed = new Map<string, Committed>()
	private billing: Promise<void> = Promise.resolve()
	/** Settlements queued on `billing` and not yet done. */
	private settling = 0
	private drained: (() => void) | undefined
	private closed = false

	constructor(private readonly s: MeterInit) {}

	private owner = () => ({ accountId: this.s.token.accountId, tokenId: this.s.token.id })

	/** What the buffer still needs held with `bytes` more audio, and what to ask for (`HOLD_SECONDS` ahead). */
	private needs(bytes: number): { need: number; want: number } {
		const b = this.buffer
		const price = this.holdFor!.price
		const seconds = (b.bytes + bytes) / this.bytesPerSecond
		return { need: transcriptionBound(price, seconds) - b.held, want: transcriptionBound(price, seconds + HOLD_SECONDS) - b.held }
	}

	/** Audio into the buffer: true when its holds cover it (taking one more the lease allows at once), else it must wait for `cover`. */
	coverNow(bytes: number): boolean {
		if (this.holdFor) {
			const { need, want } = this.needs(bytes)
			if (need > 0) {
				const now = this.s.svc.ledger.reserveNow(this.owner(), this.s.base.requestId, want)
				if (!now) return false
				this.take(now)
			}
		}
		this.buffer.bytes += bytes
		return true
	}

	/** Audio into the buffer once one more hold covers it; the ledger's refusal is thrown. */
	async cover(bytes: number): Promise<void> {
		if (this.holdFor) {
			const { need, want } = this.needs(bytes)
			if (need > 0) {
				const hold = await this.reserveMore(want, need)
				if (this.closed) return void (await hold.release())
				this.take(hold)
			}
		}
		this.buffer.bytes += bytes
	}

	/**
	 * A hold for more audio. Refused while transcriptions already completed are still being settled, it is asked again
	 * once they are: their holds, which go back then, may be what the audio needs (a small balance, a slow database).
	 */
	private async reserveMore(want: number, need: number): Promise<Hold> {
		const ledger = this.s.svc.ledger
		try {
			return await ledger.reserve(this.owner(), this.s.base.requestId, want, need)
		} catch (e) {
			if (this.settling === 0 || !(e instanceof GatewayError) || e.kind !== 'insufficient_quota') throw e
			await this.billing
			return ledger.reserve(this.owner(), this.s.base.requestId, want, need)
		}
	}

	private take(hold: Hold) {
		this.buffer.holds.push(hold)
		this.buffer.held += hold.amount
	}

	/** The client emptied the input buffer (`input_audio_buffer.clear`): its holds stay for what comes next. */
	cleared() {
		this.buffer.bytes = 0
	}

	/** An upstream event about input audio: a commit, the start of speech, a transcription completed or failed. */
	seen(event: Json) {
		const type = event.type
		if (type === 'input_audio_buffer.committed') {
			// What was forwarded so far is this item; audio after it goes into a new buffer, with new holds.
			const b = this.buffer
			this.buffer = empty()
			if (this.applied) this.committed.set(String(event.item_id), { ...b, by: this.applied })
			else this.queue(() => this.releaseAll(b, undefined))
		} else if (type === 'input_audio_buffer.speech_started') {
			// Server voice detection: the silence before the speech is no part of the item (its holds stay with the buffer).
			this.buffer.bytes = 0
		} else if (type === 'conversation.item.input_audio_transcription.completed') {
			const b = this.itemOf(event.item_id)
			if (b) this.bill(b, event.usage, typeof event.transcript === 'string' ? event.transcript : '', this.s.endReason())
		} else if (type === 'conversation.item.input_audio_transcription.failed') {
			const b = this.itemOf(event.item_id)
			if (b) this.queue(() => this.releaseAll(b, 'error'))
		} else return
		if (!this.committed.size) this.billing.then(() => this.drained?.())
	}

	/** The committed buffer of an item (removed), else an empty one (charged from the headroom) at the transcriber applied. */
	private itemOf(id: unknown): Committed | undefined {
		const b = this.committed.get(String(id))
		this.committed.delete(String(id))
		return b ?? (this.applied && { ...empty(), by: this.applied })
	}

	private queue(step: () => Promise<void>) {
		this.settling++
		this.billing = this.billing
			.then(step)
			.catch((e) => this.s.svc.log.warn('realtime transcription settlement failed', { request_id: this.s.base.requestId, error: String(e) }))
			.finally(() => void this.settling--)
	}

	private record(by: Transcriber | undefined, fields: Omit<Parameters<typeof usageRecord>[1], 'channel' | 'upstreamModel'>) {
		return usageRecord(by ? { ...this.s.base, model: by.model } : this.s.base, { channel: this.s.channel(), upstreamModel: by?.upstreamModel, ...fields })
	}

	/** One transcription's charge from its holds: the others go back first, so the one settled can use their money. */
	private bill(b: Committed, usage: unknown, text: string, endReason: string) {
		const charge = transcriptionCharge(b.by.price, usage, b.bytes / this.bytesPerSecond, text)
		this.queue(async () => {
			const [first, ...rest] = b.holds
			await Promise.all(rest.map((h) => h.release()))
			const h = first ?? (await this.s.svc.ledger.reserve(this.owner(), this.s.base.requestId, 0, 0))
			const record = this.record(b.by, { status: endReason === 'upstream_cut' ? 502 : 200, endReason, usage: charge.usage, estimated: charge.estimated })
			const charged = await h.settle(charge.cost, record)
			observeUsage(this.s.svc, this.s.token, record, charged)
		})
	}

	/** Holds that go back; with an end reason (a failed transcription) the release is recorded. */
	private async releaseAll(b: Buffered & { by?: Transcriber }, endReason: string | undefined) {
		const [first, ...rest] = b.holds
		await Promise.all(rest.map((h) => h.release()))
		await first?.release(endReason ? this.record(b.by, { status: 200, endReason }) : undefined)
	}

	/** Resolves once every committed buffer has its transcription (undefined when none waits). */
	pending(): Promise<void> | undefined {
		if (!this.committed.size) return undefined
		return new Promise<void>((resolve) => (this.drained = resolve))
	}

	/** Committed audio whose transcription never came (the upstream closed, or the client left and it did not come): charged as estimated. */
	abandon(endReason: string) {
		const cut = [...this.committed.values()]
		this.committed.clear()
		for (const b of cut) this.bill(b, undefined, '', endReason)
		this.drained?.()
	}

	/** Once both sockets are done with: what is still waiting is estimated, what is still held goes back. */
	async close(endReason: string) {
		this.closed = true
		this.abandon(endReason)
		await this.billing
		const held = this.buffer.holds
		this.buffer = empty()
		await Promise.all(held.map((h) => h.release()))
	}
}
