/**
 * Input audio transcription in Realtime conversation sessions (`session.audio.input.transcription`, the beta's
 * `input_audio_transcription`): billed apart from the responses, each completed transcription at the transcription
 * model's prices from its `conversation.item.input_audio_transcription.completed` usage (one usage row each), audio
 * held for before it is forwarded, a model the key may not use or without a price refused with an `error` event.
 * Through the official `openai` SDK's `OpenAIRealtimeWS` (over TLS: it builds only wss: URLs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { OpenAIRealtimeWS } from 'openai/realtime/ws'
import { responseBound } from '../../../src/relay/socket-relay'
import type { TestApp } from '../../helpers/app'
import { REALTIME_USAGE, type RealtimeMock } from '../../mocks/openai/realtime'
import { type RealtimeRig, startRealtimeRig, stopRealtimeRig } from './realtime-rig'
import { call, micros, priceList, slowSettlement, type UsageRow, usageOf } from './helpers'
import { eventually } from './realtime-client'

let rt: RealtimeMock
let app: TestApp
let tls: RealtimeRig['tls']
let rig: RealtimeRig | undefined

beforeAll(async () => {
	rig = await startRealtimeRig((url) => ({
		channels: [
			{
				name: 'rt',
				type: 'openai',
				base_url: url,
				api_key: 'up-rt',
				models: ['gpt-realtime', 'gpt-4o-transcribe', 'transcribe', 'whisper-1', 'unpriced-transcribe'],
				model_map: { transcribe: 'gpt-4o-mini-transcribe' },
			},
		],
		// OpenAI's list prices per million tokens (gpt-realtime: text $4 / $16, cached $0.40, audio $32 / $64;
		// gpt-4o-transcribe $2.50 / $6 audio input, $10 output; gpt-4o-mini-transcribe $1.25 / $3, $5); whisper-1 $0.006 a minute.
		models: priceList([
			{ name: 'gpt-realtime', input_per_mtok: 4, output_per_mtok: 16, cache_read_per_mtok: 0.4, audio_input_per_mtok: 32, audio_output_per_mtok: 64 },
			{ name: 'gpt-4o-transcribe', input_per_mtok: 2.5, audio_input_per_mtok: 6, output_per_mtok: 10 },
			{ name: 'transcribe', input_per_mtok: 1.25, audio_input_per_mtok: 3, output_per_mtok: 5 },
			{ name: 'whisper-1', input_per_mtok: 0, output_per_mtok: 0, per_minute: 0.006 },
		]),
	}))
	;({ rt, app, tls } = rig)
}, 30_000)

afterAll(() => stopRealtimeRig(rig))

/** The cost of the mock's REALTIME_USAGE response at gpt-realtime's prices (micro-USD). */
const RESPONSE_COST = 10 * 4 + 70 * 32 + 40 * 0.4 + 50 * 16 + 200 * 64

/** `seconds` of 24 kHz PCM16 silence, base64 (48,000 bytes a second). */
const pcm = (seconds: number) => Buffer.alloc(Math.round(seconds * 48_000)).toString('base64')
const transcribing = (transcription: Record<string, unknown> | null) => ({ type: 'realtime' as const, audio: { input: { transcription, turn_detection: null } } })
/** Upstream frames of a given type, parsed, from `from` on. */
const upstreamEvents = (type: string, from = 0) =>
	rt.received
		.slice(from)
		.filter((f): f is string => typeof f === 'string')
		.map((f) => JSON.parse(f))
		.filter((e) => e.type === type)

type Session = { rtc: OpenAIRealtimeWS; send(event: Record<string, unknown>): void; next(type: string): Promise<any>; closed: Promise<number>; open(): boolean }

/** An SDK conversation session that keeps every server event, and waits for one of a given type. */
async function session(key: string, opts: { model?: string; apiKey?: string } = {}): Promise<Session> {
	const client = new OpenAI({ apiKey: key, baseURL: `https://127.0.0.1:${tls.server!.port}/v1` })
	const rtc = new OpenAIRealtimeWS({ model: opts.model ?? 'gpt-realtime', options: { rejectUnauthorized: false } }, client)
	const events: any[] = []
	let seen = 0
	rtc.on('event', (e) => void events.push(e))
	rtc.on('error', () => {}) // error events are read from `events`
	const closed = new Promise<number>((resolve) => rtc.socket.once('close', (code: number) => resolve(code)))
	await new Promise<void>((resolve, reject) => {
		rtc.socket.once('open', () => resolve())
		rtc.socket.once('error', reject)
	})
	let gone = false
	void closed.then(() => (gone = true))
	const next = async (type: string) => {
		for (;;) {
			while (seen < events.length) {
				const e = events[seen++]
				if (e.type === type) return e
			}
			if (gone) throw new Error(`closed before ${type}`)
			await Bun.sleep(5)
		}
	}
	return { rtc, send: (event) => rtc.send(event as any), next, closed, open: () => rtc.socket.readyState === 1 }
}

/** Micro-USD the ledger holds for an account right now. */
const heldFor = (accountId: number) =>
	app.svc.ledger
		.leases()
		.filter((l) => l.accountId === accountId)
		.reduce((s, l) => s + l.inUse, 0)

describe('Realtime conversation sessions with input audio transcription', () => {
	it('should bill each completed transcription at the transcription model, renamed upstream, besides the response, one usage row each', async () => {
		const { key, accountId } = await app.account(1)
		const from = rt.received.length
		const s = await session(key)
		await s.next('session.created')
		s.send({ type: 'session.update', session: transcribing({ model: 'transcribe' }) })
		await s.next('session.updated')
		s.send({ type: 'input_audio_buffer.append', audio: pcm(2) })
		s.send({ type: 'input_audio_buffer.commit' })
		expect((await s.next('conversation.item.input_audio_transcription.completed')).usage.input_tokens).toBe(20)
		s.send({ type: 'input_audio_buffer.append', audio: pcm(3) })
		s.send({ type: 'input_audio_buffer.commit' })
		expect((await s.next('conversation.item.input_audio_transcription.completed')).usage.input_tokens).toBe(30)
		s.send({ type: 'response.create' })
		expect((await s.next('response.done')).response.usage).toEqual(REALTIME_USAGE)
		s.rtc.close()
		await s.closed

		expect(upstreamEvents('session.update', from).map((e) => e.session.audio.input.transcription.model)).toEqual(['gpt-4o-mini-transcribe'])
		// 2 s, then 3 s: 20 and 30 audio tokens at $3, 4 output tokens at $5 each time.
		const costs = [20 * 3 + 4 * 5, 30 * 3 + 4 * 5]
		await eventually(async () => expect(micros(await app.balance(accountId))).toBe(1_000_000 - RESPONSE_COST - costs[0]! - costs[1]!))
		const rows = (await usageOf(app, accountId)) as Array<UsageRow & { upstream_model: string }>
		expect(rows.map((r) => [r.model, r.upstream_model, r.cost, r.input_tokens, r.output_tokens, r.estimated, r.end_reason])).toEqual([
			['transcribe', 'gpt-4o-mini-transcribe', costs[0]! / 1e6, 20, 4, false, 'ok'],
			['transcribe', 'gpt-4o-mini-transcribe', costs[1]! / 1e6, 30, 4, false, 'ok'],
			['gpt-realtime', 'gpt-realtime', RESPONSE_COST / 1e6, 120, 250, false, 'ok'],
		])
		await eventually(async () => expect(heldFor(accountId)).toBe(0))
	})

	it('should bill whisper-1 by duration with the beta input_audio_transcription, and nothing once transcription is turned off', async () => {
		const { key, accountId } = await app.account(1)
		const s = await session(key)
		await s.next('session.created')
		s.send({ type: 'session.update', session: { input_audio_transcription: { model: 'whisper-1' }, turn_detection: null } })
		await s.next('session.updated')
		s.send({ type: 'input_audio_buffer.append', audio: pcm(2.5) })
		s.send({ type: 'input_audio_buffer.commit' })
		expect((await s.next('conversation.item.input_audio_transcription.completed')).usage).toEqual({ type: 'duration', seconds: 2.5 })
		s.send({ type: 'session.update', session: { input_audio_transcription: null } })
		await s.next('session.updated')
		s.send({ type: 'input_audio_buffer.append', audio: pcm(4) })
		s.send({ type: 'input_audio_buffer.commit' })
		await s.next('conversation.item.added')
		s.rtc.close()
		await s.closed
		// 3 seconds at $0.006 a minute; the 4 s committed while off: never transcribed, never charged.
		await eventually(async () => expect(micros(await app.balance(accountId))).toBe(1_000_000 - 300))
		expect((await usageOf(app, accountId)).map((r) => [r.model, r.cost, r.estimated])).toEqual([['whisper-1', 300 / 1e6, false]])
		await eventually(async () => expect(heldFor(accountId)).toBe(0))
	})

	it('should refuse a session.update whose transcription model is unknown, not allowed, unpriced or unnamed, without forwarding it, the session running on', async () => {
		const { key, accountId } = await app.account(1)
		const limited = await app.admin('/api/tokens', { body: { account_id: accountId, name: 'limited' } })
		await app.admin(`/api/tokens/${limited.body.id}`, { method: 'PATCH', body: { allowed_models: ['gpt-realtime', 'whisper-1'] } })
		for (const [who, transcription, code] of [
			[key, { model: 'gpt-nope-transcribe' }, 'model_not_found'],
			[limited.body.key as string, { model: 'gpt-4o-transcribe' }, 'model_not_allowed'],
			[key, { model: 'unpriced-transcribe' }, 'model_not_priced'],
			[key, { language: 'en' }, 'missing_required_parameter'],
		] as const) {
			const from = rt.received.length
			const s = await session(who)
			await s.next('session.created')
			s.send({ type: 'session.update', event_id: 'evt_update', session: transcribing(transcription) })
			const error = await s.next('error')
			expect(error.error).toMatchObject({ code, event_id: 'evt_update' })
			s.send({ type: 'input_audio_buffer.append', audio: pcm(1) })
			s.send({ type: 'input_audio_buffer.commit' })
			await s.next('conversation.item.added')
			s.send({ type: 'response.create' })
			await s.next('response.done')
			s.rtc.close()
			await s.closed
			expect(upstreamEvents('session.update', from)).toEqual([])
			expect(upstreamEvents('conversation.item.input_audio_transcription.completed', from)).toEqual([])
		}
		await eventually(async () => expect((await usageOf(app, accountId)).map((r) => r.model)).toEqual(['gpt-realtime', 'gpt-realtime', 'gpt-realtime', 'gpt-realtime']))
	})

	// gpt-4o-transcribe holds 25 audio tokens ($6) and 12.5 output tokens ($10) a second of audio: $0.005 above the
	// response's hold covers the first 2 s (charged $0.00016 by its usage) and about 17 s more, not the 40 s streamed next.
	it('should end the session with an insufficient_quota error event when the balance cannot hold for more transcribed audio, forwarding none past it', async () => {
		const bound = responseBound(app.svc.catalog.price('gpt-realtime')!, 0).want
		const balance = bound + 5_000
		const { key, accountId } = await app.account(balance / 1e6)
		const s = await session(key)
		await s.next('session.created')
		const from = rt.received.length
		const upstreamClosed = rt.closed.length
		s.send({ type: 'session.update', session: transcribing({ model: 'gpt-4o-transcribe' }) })
		s.send({ type: 'input_audio_buffer.append', audio: pcm(2) })
		s.send({ type: 'input_audio_buffer.commit' })
		await s.next('conversation.item.input_audio_transcription.completed')
		for (let i = 0; i < 40 && s.open(); i++) s.send({ type: 'input_audio_buffer.append', audio: pcm(1) })
		const err = await s.next('error')
		expect(err.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' })
		expect(await s.closed).toBe(1008)
		// The client hears the error on its own socket; what went upstream is all in once the gateway's upstream socket
		// has closed (its frames arrive before its close), not before (seen in CI: 3 of them in when the error came).
		await eventually(async () => expect(rt.closed.length).toBeGreaterThan(upstreamClosed))
		const forwarded = upstreamEvents('input_audio_buffer.append', from).length - 1
		expect(forwarded).toBeGreaterThan(10)
		expect(forwarded).toBeLessThan(20)
		const cost = 20 * 6 + 4 * 10
		await eventually(async () => expect(micros(await app.balance(accountId))).toBe(balance - cost))
		expect((await usageOf(app, accountId)).map((r) => [r.model, r.cost])).toEqual([['gpt-4o-transcribe', cost / 1e6]])
		await eventually(async () => expect(heldFor(accountId)).toBe(0))
	})

	// The first buffer's hold takes all the money it may (60 s ahead), and goes back only once its transcription is
	// settled: audio the client sends at once after the transcription came must wait for that, not end the session.
	it('should forward audio that a transcription still being settled leaves money for, once its hold went back', async () => {
		const bound = responseBound(app.svc.catalog.price('gpt-realtime')!, 0).want
		const balance = bound + 5_000
		const { key, accountId } = await app.account(balance / 1e6)
		const undo = slowSettlement(app.svc.ledger, 300)
		try {
			const s = await session(key)
			await s.next('session.created')
			const from = rt.received.length
			s.send({ type: 'session.update', session: transcribing({ model: 'gpt-4o-transcribe' }) })
			s.send({ type: 'input_audio_buffer.append', audio: pcm(2) })
			s.send({ type: 'input_audio_buffer.commit' })
			await s.next('conversation.item.input_audio_transcription.completed')
			for (let i = 0; i < 5; i++) s.send({ type: 'input_audio_buffer.append', audio: pcm(1) })
			s.send({ type: 'input_audio_buffer.commit' })
			await s.next('conversation.item.input_audio_transcription.completed')
			expect(upstreamEvents('input_audio_buffer.append', from)).toHaveLength(6)
			s.rtc.close()
			await s.closed
			await eventually(async () => expect((await usageOf(app, accountId)).map((r) => r.model)).toEqual(['gpt-4o-transcribe', 'gpt-4o-transcribe']))
			await eventually(async () => expect(heldFor(accountId)).toBe(0))
		} finally {
			undo()
		}
	})

	it('should charge committed audio whose transcription never came as estimated when the upstream closes, holding nothing after', async () => {
		const { key, accountId } = await app.account(1)
		const s = await session(key)
		await s.next('session.created')
		s.send({ type: 'session.update', session: transcribing({ model: 'gpt-4o-transcribe', prompt: 'mock:silent' }) })
		s.send({ type: 'input_audio_buffer.append', audio: pcm(2) })
		s.send({ type: 'input_audio_buffer.commit' })
		await s.next('input_audio_buffer.committed')
		s.send({ type: 'input_audio_buffer.append', audio: pcm(5) }) // never committed: never transcribed, never charged
		s.send({ type: 'mock.hangup' } as any)
		expect(await s.closed).toBe(1011)
		// 2 s estimated at 25 audio tokens a second ($6), no transcript.
		await eventually(async () => expect(micros(await app.balance(accountId))).toBe(1_000_000 - 50 * 6))
		expect((await usageOf(app, accountId)).map((r) => [r.model, r.cost, r.input_tokens, r.estimated, r.end_reason])).toEqual([['gpt-4o-transcribe', 300 / 1e6, 50, true, 'upstream_cut']])
		await eventually(async () => expect(heldFor(accountId)).toBe(0))
	})

	it('should apply a client secret minted with a transcription model, renamed upstream, and refuse to mint one the key may not use', async () => {
		const { key, accountId } = await app.account(1)
		const unpriced = await call(app, key, '/v1/realtime/client_secrets', { body: { session: { model: 'gpt-realtime', ...transcribing({ model: 'unpriced-transcribe' }) } } })
		expect(unpriced.status).toBe(403)
		expect(unpriced.body.error.code).toBe('model_not_priced')
		const minted = await call(app, key, '/v1/realtime/client_secrets', { body: { session: { model: 'gpt-realtime', ...transcribing({ model: 'transcribe' }) } } })
		expect(minted.status).toBe(200)
		const from = rt.received.length
		const s = await session(minted.body.value)
		await s.next('session.created')
		expect(upstreamEvents('session.update', from).map((e) => e.session.audio.input.transcription.model)).toEqual(['gpt-4o-mini-transcribe'])
		s.send({ type: 'input_audio_buffer.append', audio: pcm(1) })
		s.send({ type: 'input_audio_buffer.commit' })
		await s.next('conversation.item.input_audio_transcription.completed')
		s.rtc.close()
		await s.closed
		await eventually(async () => expect((await usageOf(app, accountId)).map((r) => [r.model, r.cost])).toEqual([['transcribe', (10 * 3 + 4 * 5) / 1e6]]))
		await eventually(async () => expect(heldFor(accountId)).toBe(0))
	})
})
