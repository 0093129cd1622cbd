/**
 * Realtime transcription sessions (`/v1/realtime?intent=transcription`, or an `ek_` secret minted for
 * `session.type: "transcription"`): the model comes in the first session.update, each completed transcription is
 * billed from its `conversation.item.input_audio_transcription.completed` usage at the transcription model's prices,
 * what cannot be served is refused with an `error` event, and the balance or the key's spend limit ends the session.
 * Through the official `openai` SDK's `OpenAIRealtimeWS` (over TLS: it builds only wss: URLs) and raw WebSockets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { OpenAIRealtimeWS } from 'openai/realtime/ws'
import type { TestApp } from '../../helpers/app'
import { type RealtimeMock } from '../../mocks/openai/realtime'
import { type RealtimeRig, startRealtimeRig, stopRealtimeRig } from './realtime-rig'
import { call, micros, priceList, usageOf } from './helpers'
import { type Client, connectRealtime, eventually } from './realtime-client'

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
				models: ['gpt-4o-transcribe', 'transcribe', 'whisper-1', 'unpriced-transcribe'],
				model_map: { transcribe: 'gpt-4o-mini-transcribe' },
			},
			{ name: 'claude', type: 'anthropic', base_url: 'http://127.0.0.1:9', api_key: 'up-an', models: ['claude-transcribe'] },
		],
		// OpenAI's list prices per million tokens: gpt-4o-transcribe $2.50 text / $6 audio input, $10 output;
		// gpt-4o-mini-transcribe $1.25 / $3, $5; whisper-1 $0.006 a minute.
		models: priceList([
			{ name: 'gpt-4o-transcribe', input_per_mtok: 2.5, audio_input_per_mtok: 6, output_per_mtok: 10 },
			{ name: 'transcribe', input_per_mtok: 1.25, audio_input_per_mtok: 3, output_per_mtok: 5 },
			{ name: 'whisper-1', input_per_mtok: 0, output_per_mtok: 0, per_minute: 0.006 },
			{ name: 'claude-transcribe', input_per_mtok: 3, output_per_mtok: 15 },
		]),
	}))
	;({ rt, app, tls } = rig)
}, 30_000)

afterAll(() => stopRealtimeRig(rig))

/** `seconds` of 24 kHz PCM16 silence, base64 (48,000 bytes a second). */
const pcm = (seconds: number) => Buffer.alloc(Math.round(seconds * 48_000)).toString('base64')
const append = (seconds: number) => JSON.stringify({ type: 'input_audio_buffer.append', audio: pcm(seconds) })
const commit = JSON.stringify({ type: 'input_audio_buffer.commit' })
const update = (model: string, extra: Record<string, unknown> = {}) =>
	JSON.stringify({ type: 'session.update', session: { type: 'transcription', audio: { input: { format: { type: 'audio/pcm', rate: 24_000 }, transcription: { model, ...extra }, turn_detection: null } } } })
const open = (key: string) => connectRealtime(`${app.url.replace('http', 'ws')}/v1/realtime?intent=transcription`, { key })
/** Upstream frames of a given type, parsed, from `from` on. */
const upstreamEvents = (type: string, from = 0) =>
	rt.received
		.slice(from)
		.filter((f): f is string => typeof f === 'string')
		.map((f) => JSON.parse(f))
		.filter((e) => e.type === type)

describe('Realtime transcription sessions', () => {
	it('should relay a transcription session of the openai SDK, renaming the model upstream, and bill each completed transcription at its usage', async () => {
		const { key, accountId } = await app.account(1)
		const before = rt.handshakes.length
		const from = rt.received.length
		const client = new OpenAI({ apiKey: key, baseURL: `https://127.0.0.1:${tls.server!.port}/v1` })
		const rtc = new OpenAIRealtimeWS({ intent: 'transcription', options: { rejectUnauthorized: false } }, client)
		await new Promise<void>((resolve, reject) => {
			rtc.socket.once('open', () => resolve())
			rtc.socket.once('error', reject)
		})
		const completed: any[] = []
		rtc.on('conversation.item.input_audio_transcription.completed', (e) => void completed.push(e))
		const done = async (n: number) => {
			while (completed.length < n) await Bun.sleep(5)
		}
		rtc.send({ type: 'session.update', session: { type: 'transcription', audio: { input: { transcription: { model: 'transcribe' }, turn_detection: null } } } })
		rtc.send({ type: 'input_audio_buffer.append', audio: pcm(1) })
		rtc.send({ type: 'input_audio_buffer.append', audio: pcm(1) })
		rtc.send({ type: 'input_audio_buffer.commit' })
		await done(1)
		rtc.send({ type: 'input_audio_buffer.append', audio: pcm(3) })
		rtc.send({ type: 'input_audio_buffer.commit' })
		await done(2)
		expect(completed.map((e) => [e.transcript, e.usage.input_tokens])).toEqual([
			['Hello world.', 20],
			['Hello world.', 30],
		])
		rtc.close()

		const hs = rt.handshakes[before]!
		expect(new URL(hs.url).searchParams.get('intent')).toBe('transcription')
		expect(new URL(hs.url).searchParams.has('model')).toBe(false)
		expect(hs.headers.authorization).toBe('Bearer up-rt')
		expect(upstreamEvents('session.update', from).map((e) => e.session.audio.input.transcription.model)).toEqual(['gpt-4o-mini-transcribe'])
		// 2 s, then 3 s: 20 and 30 audio tokens at $3, 4 output tokens at $5 each time.
		const costs = [20 * 3 + 4 * 5, 30 * 3 + 4 * 5]
		await eventually(async () => expect(micros(await app.balance(accountId))).toBe(1_000_000 - costs[0]! - costs[1]!))
		const rows = await usageOf(app, accountId)
		expect(rows.map((r) => [r.model, r.endpoint, r.cost, r.input_tokens, r.output_tokens, r.estimated, r.end_reason])).toEqual([
			['transcribe', '/v1/realtime', costs[0]! / 1e6, 20, 4, false, 'ok'],
			['transcribe', '/v1/realtime', costs[1]! / 1e6, 30, 4, false, 'ok'],
		])
	})

	it('should bill whisper-1 by the duration its usage reports, per started second, with the beta transcription_session.update', async () => {
		const { key, accountId } = await app.account(1)
		const c = await open(key)
		c.ws.send(JSON.stringify({ type: 'transcription_session.update', session: { input_audio_format: 'pcm16', input_audio_transcription: { model: 'whisper-1' }, turn_detection: null } }))
		c.ws.send(append(2.5))
		c.ws.send(commit)
		const completed = await c.next('conversation.item.input_audio_transcription.completed')
		expect(completed.usage).toEqual({ type: 'duration', seconds: 2.5 })
		c.ws.close()
		await c.closed
		// 3 seconds at $0.006 a minute.
		await eventually(async () => expect(micros(await app.balance(accountId))).toBe(1_000_000 - 300))
		expect((await usageOf(app, accountId)).map((r) => [r.model, r.cost, r.estimated])).toEqual([['whisper-1', 300 / 1e6, false]])
	})

	it('should refuse with an error event and close 1008, before any upstream handshake and charging nothing: no model first, a model unknown, not allowed, unpriced, or on no OpenAI channel', async () => {
		const { key, accountId } = await app.account(1)
		const limited = await app.admin('/api/tokens', { body: { account_id: accountId, name: 'limited' } })
		await app.admin(`/api/tokens/${limited.body.id}`, { method: 'PATCH', body: { allowed_models: ['whisper-1'] } })
		const before = rt.handshakes.length
		for (const [who, first, code] of [
			[key, append(1), 'missing_required_parameter'],
			[key, update('gpt-nope-transcribe'), 'model_not_found'],
			[limited.body.key as string, update('gpt-4o-transcribe'), 'model_not_allowed'],
			[key, update('unpriced-transcribe'), 'model_not_priced'],
			[key, update('claude-transcribe'), 'unsupported_for_model'],
		] as const) {
			const c = await open(who)
			c.ws.send(first)
			c.ws.send(append(1))
			const error = await c.next('error')
			expect(error.error.code).toBe(code)
			expect((await c.closed).code).toBe(1008)
		}
		expect(rt.handshakes.length).toBe(before)
		expect(await usageOf(app, accountId)).toEqual([])
		expect(micros(await app.balance(accountId))).toBe(1_000_000)
	})

	it('should refuse a later update naming another model, or a response.create, without forwarding it, the session running on', async () => {
		const { key, accountId } = await app.account(1)
		const from = rt.received.length
		const c = await open(key)
		c.ws.send(update('transcribe'))
		c.ws.send(JSON.stringify({ event_id: 'evt_swap', ...JSON.parse(update('gpt-4o-transcribe')) }))
		const swap = await c.next('error')
		expect(swap.error).toMatchObject({ code: 'invalid_value', param: 'session.audio.input.transcription.model', event_id: 'evt_swap' })
		c.ws.send(JSON.stringify({ type: 'response.create', event_id: 'evt_resp' }))
		const resp = await c.next('error')
		expect(resp.error).toMatchObject({ code: 'unsupported_value', event_id: 'evt_resp' })
		c.ws.send(append(1))
		c.ws.send(commit)
		await c.next('conversation.item.input_audio_transcription.completed')
		c.ws.close()
		await c.closed
		expect(upstreamEvents('session.update', from).map((e) => e.session.audio.input.transcription.model)).toEqual(['gpt-4o-mini-transcribe'])
		expect(upstreamEvents('response.create', from)).toEqual([])
		const cost = 10 * 3 + 4 * 5
		await eventually(async () => expect(micros(await app.balance(accountId))).toBe(1_000_000 - cost))
	})

	// gpt-4o-transcribe holds 25 audio tokens ($6) and 12.5 output tokens ($10) a second of audio: $0.005 covers the
	// first 2 s (charged $0.00016 by its usage) and about 17 s more, not the 40 s the client streams next.
	for (const [what, balance, limit] of [
		['balance', 0.005, undefined],
		["key's spend limit", 10, 0.005],
	] as const) {
		it(`should end the session with an insufficient_quota error event when the ${what} cannot cover more audio, forwarding none past it`, async () => {
			const { key, accountId } = await app.account(balance, limit === undefined ? {} : { spend_limit: limit })
			const c = await open(key)
			const from = rt.received.length
			c.ws.send(update('gpt-4o-transcribe'))
			c.ws.send(append(2))
			c.ws.send(commit)
			await c.next('conversation.item.input_audio_transcription.completed')
			for (let i = 0; i < 40 && c.ws.readyState === WebSocket.OPEN; i++) c.ws.send(append(1))
			const err = await c.next('error')
			expect(err.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' })
			expect((await c.closed).code).toBe(1008)
			const forwarded = upstreamEvents('input_audio_buffer.append', from).length - 1
			expect(forwarded).toBeGreaterThan(10)
			expect(forwarded).toBeLessThan(20)
			const cost = 20 * 6 + 4 * 10
			await eventually(async () => expect(micros(await app.balance(accountId))).toBe(micros(balance) - cost))
			expect((await usageOf(app, accountId)).map((r) => r.cost)).toEqual([cost / 1e6])
		})
	}

	it('should charge committed audio whose transcription the upstream cut as estimated, and the rest never', async () => {
		const { key, accountId } = await app.account(1)
		const c = await open(key)
		c.ws.send(update('gpt-4o-transcribe', { prompt: 'mock:silent' }))
		c.ws.send(append(2))
		c.ws.send(commit)
		await c.next('input_audio_buffer.committed')
		c.ws.send(append(5)) // never committed: never transcribed, never charged
		c.ws.send(JSON.stringify({ type: 'mock.hangup' }))
		expect((await c.closed).code).toBe(1011)
		// 2 s estimated at 25 audio tokens a second ($6), no transcript.
		await eventually(async () => expect(micros(await app.balance(accountId))).toBe(1_000_000 - 50 * 6))
		expect((await usageOf(app, accountId)).map((r) => [r.cost, r.input_tokens, r.estimated, r.end_reason, r.status])).toEqual([[300 / 1e6, 50, true, 'upstream_cut', 502]])
	})

	it('should charge nothing for a failed transcription or audio never committed, and hold nothing once closed', async () => {
		const { key, accountId } = await app.account(1)
		const c = await open(key)
		c.ws.send(update('gpt-4o-transcribe', { prompt: 'mock:fail' }))
		c.ws.send(append(2))
		c.ws.send(commit)
		await c.next('conversation.item.input_audio_transcription.failed')
		c.ws.send(append(3))
		c.ws.close()
		await c.closed
		await eventually(async () => expect((await usageOf(app, accountId)).map((r) => [r.cost, r.end_reason])).toEqual([[0, 'error']]))
		expect(micros(await app.balance(accountId))).toBe(1_000_000)
	})

	it('should open a transcription session with a client secret minted for one, its config applied first', async () => {
		const { key, accountId } = await app.account(1)
		const missing = await call(app, key, '/v1/realtime/client_secrets', { body: { session: { type: 'transcription' } } })
		expect(missing.status).toBe(400)
		expect(missing.body.error.param).toBe('session.audio.input.transcription.model')
		const minted = await call(app, key, '/v1/realtime/client_secrets', {
			body: { session: { type: 'transcription', audio: { input: { transcription: { model: 'transcribe', language: 'en' }, turn_detection: null } } } },
		})
		expect(minted.status).toBe(200)
		const from = rt.received.length
		const c: Client = await connectRealtime(`${app.url.replace('http', 'ws')}/v1/realtime?intent=transcription`, { protocols: ['realtime', `openai-insecure-api-key.${minted.body.value}`] })
		c.ws.send(append(1))
		c.ws.send(commit)
		await c.next('conversation.item.input_audio_transcription.completed')
		c.ws.close()
		await c.closed
		const first = JSON.parse(rt.received[from] as string)
		expect(first).toMatchObject({ type: 'session.update', session: { type: 'transcription', audio: { input: { transcription: { model: 'gpt-4o-mini-transcribe', language: 'en' } } } } })
		await eventually(async () => expect(micros(await app.balance(accountId))).toBe(1_000_000 - (10 * 3 + 4 * 5)))
	})
})
