import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type TestApp, startTestApp } from '../../helpers/app'
import { REALTIME_CANCELLED_USAGE, REALTIME_USAGE, type RealtimeMock, startRealtimeMock } from '../../mocks/openai/realtime'
import { countText } from '../../../src/relay/estimate'
import { CLIENT_BUFFER_LIMIT, responseBound } from '../../../src/relay/socket-relay'
import { micros, priceList, slowSettlement, usageOf } from './helpers'
import { connectRealtime, eventually, refusedRealtimeHandshake } from './realtime-client'

let rt: RealtimeMock
let app: TestApp

// gpt-realtime's list prices per million tokens: text $4 / $16, cached $0.40, audio $32 / $64.
const PRICE = {
	input_per_mtok: 4,
	output_per_mtok: 16,
	cache_read_per_mtok: 0.4,
	audio_input_per_mtok: 32,
	audio_output_per_mtok: 64,
	max_output_tokens: 1000,
}
// REALTIME_USAGE: 10 text + 70 audio uncached input, 40 cached text, 50 text + 200 audio output.
const RESPONSE_COST = 10 * 4 + 70 * 32 + 40 * 0.4 + 50 * 16 + 200 * 64 // 15,896 micro-USD
// REALTIME_CANCELLED_USAGE: 120 text input, 2 text + 8 audio output.
const CANCELLED_COST = 120 * 4 + 2 * 16 + 8 * 64 // 1,024 micro-USD

beforeAll(async () => {
	rt = await startRealtimeMock({ apiKey: 'up-rt' })
	app = await startTestApp({
		config: {
			channels: [
				{
					name: 'rt',
					type: 'openai',
					base_url: rt.url,
					api_key: 'up-rt',
					models: ['gpt-realtime', 'voice'],
					model_map: { voice: 'gpt-realtime-2025-08-28' },
				},
				{
					name: 'claude',
					type: 'anthropic',
					base_url: 'http://127.0.0.1:9',
					api_key: 'up-an',
					models: ['claude-voice'],
				},
			],
			models: priceList([
				{ name: 'gpt-realtime', ...PRICE },
				{ name: 'voice', ...PRICE },
				{ name: 'claude-voice', input_per_mtok: 3, output_per_mtok: 15 },
			]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await rt.stop()
})

const wsUrl = (model: string) => `${app.url.replace('http', 'ws')}/v1/realtime?model=${model}`

const connect = (model: string, opts: { key?: string; protocols?: string[] } = {}) => connectRealtime(wsUrl(model), opts)
const refusedHandshake = (model: string, headers: Record<string, string> = {}) => refusedRealtimeHandshake(app.url, `/v1/realtime?model=${model}`, headers)

/**
 * Cancels the running response `first`, then asks for another, which the hold `first` gives back must cover: both end
 * `ok`, the account charged the cancelled part and one whole response (of a 0.15 USD balance).
 */
async function cancelThenCreate(c: Awaited<ReturnType<typeof connect>>, first: string, accountId: number) {
	c.ws.send(JSON.stringify({ type: 'response.cancel', response_id: first }))
	expect((await c.next('response.done')).response.id).toBe(first)
	c.ws.send(JSON.stringify({ type: 'response.create' }))
	expect((await c.next('response.done')).response.usage).toEqual(REALTIME_USAGE)
	c.ws.close()
	await c.closed
	await eventually(async () => expect(micros(await app.balance(accountId))).toBe(150_000 - CANCELLED_COST - RESPONSE_COST))
	expect((await usageOf(app, accountId)).map((r) => r.end_reason)).toEqual(['ok', 'ok'])
}

describe('GET /v1/realtime (WebSocket)', () => {
	it('should relay text and binary frames intact both ways, with the channel key upstream, and bill each response.done exactly', async () => {
		const { key, accountId } = await app.account(1)
		const before = rt.handshakes.length
		const c = await connect('voice', { key })
		expect(c.ws.protocol).toBe('realtime')
		const created = await c.next('session.created')
		expect(created.session.model).toBe('gpt-realtime-2025-08-28')

		const hs = rt.handshakes[before]!
		expect(hs.headers.authorization).toBe('Bearer up-rt')
		expect(new URL(hs.url).searchParams.get('model')).toBe('gpt-realtime-2025-08-28')
		expect(JSON.stringify(hs)).not.toContain(key)

		// A client event goes up byte for byte (odd spacing, key order and an unknown field kept).
		const update = '{ "type":"session.update",  "session": {"type":"realtime","instructions":"Be brief. ✓"}, "x_extra": [1,2] }'
		c.ws.send(update)
		const bytes = new Uint8Array([0, 1, 2, 250, 251, 252, 253, 254, 255])
		c.ws.send(bytes)
		await eventually(async () => expect(c.frames.some((f) => f instanceof ArrayBuffer)).toBe(true))
		expect(rt.received).toContain(update)
		expect(new Uint8Array(c.frames.find((f) => f instanceof ArrayBuffer) as ArrayBuffer)).toEqual(bytes)

		c.ws.send(JSON.stringify({ type: 'response.create' }))
		const done = await c.next('response.done')
		expect(done.response.usage).toEqual(REALTIME_USAGE)
		expect(c.frames.filter((f) => typeof f === 'string' && f.includes('"response.output_audio.delta"'))).toHaveLength(2)

		c.ws.send(JSON.stringify({ type: 'response.create' }))
		await c.next('response.done')
		c.ws.close(1000)
		await c.closed

		await eventually(async () => expect(micros(await app.balance(accountId))).toBe(1_000_000 - 2 * RESPONSE_COST))
		const rows = await usageOf(app, accountId)
		expect(rows).toHaveLength(2)
		for (const row of rows)
			expect(row).toMatchObject({
				endpoint: '/v1/realtime',
				model: 'voice',
				cost: RESPONSE_COST / 1e6,
				input_tokens: 120,
				cached_tokens: 40,
				output_tokens: 250,
				status: 200,
				end_reason: 'ok',
				upstream_model: 'gpt-realtime-2025-08-28',
			})
	})

	it('should take the key from the openai-insecure-api-key subprotocol and never forward it', async () => {
		const { key } = await app.account(1)
		const before = rt.handshakes.length
		const c = await connect('gpt-realtime', {
			protocols: ['realtime', `openai-insecure-api-key.${key}`, 'openai-beta.realtime-v1'],
		})
		expect(c.ws.protocol).toBe('realtime')
		await c.next('session.created')
		const hs = rt.handshakes[before]!
		expect(hs.protocols).toEqual(['realtime', 'openai-beta.realtime-v1'])
		expect(hs.headers.authorization).toBe('Bearer up-rt')
		expect(JSON.stringify(hs)).not.toContain(key)
		c.ws.close()
		await c.closed
	})

	it('should refuse the handshake in OpenAI error shape: no key, a bad key, a model not allowed, unknown, or served by no OpenAI channel', async () => {
		const { key } = await app.account(1)
		const before = rt.handshakes.length
		const none = await refusedHandshake('gpt-realtime')
		expect(none.status).toBe(401)
		expect(none.body.error.type).toBe('invalid_request_error')
		expect(
			(
				await refusedHandshake('gpt-realtime', {
					authorization: 'Bearer sk-wrong',
				})
			).status,
		).toBe(401)
		expect(
			(
				await refusedHandshake('gpt-realtime', {
					'sec-websocket-protocol': 'realtime, openai-insecure-api-key.sk-wrong',
				})
			).status,
		).toBe(401)

		const anthropic = await refusedHandshake('claude-voice', {
			authorization: `Bearer ${key}`,
		})
		expect(anthropic.status).toBe(400)
		expect(anthropic.body.error).toMatchObject({
			code: 'unsupported_for_model',
			param: 'model',
		})
		const unknown = await refusedHandshake('nope', {
			authorization: `Bearer ${key}`,
		})
		expect(unknown.status).toBe(404)
		expect(unknown.body.error.code).toBe('model_not_found')

		const limited = await app.admin('/api/tokens', {
			body: { account_id: (await app.account(1)).accountId, name: 'limited' },
		})
		await app.admin(`/api/tokens/${limited.body.id}`, {
			method: 'PATCH',
			body: { allowed_models: ['gpt-4o'] },
		})
		const notAllowed = await refusedHandshake('gpt-realtime', {
			authorization: `Bearer ${limited.body.key}`,
		})
		expect(notAllowed.status).toBe(403)
		expect(notAllowed.body.error.code).toBe('model_not_allowed')
		const plain = await fetch(`${app.url}/v1/realtime?model=gpt-realtime`, {
			headers: { authorization: `Bearer ${key}` },
		})
		expect(plain.status).toBe(426)
		expect((await plain.json()).error.code).toBe('websocket_required')
		expect(rt.handshakes.length).toBe(before)
	})

	it('should refuse call_id sideband connections clearly, naming the parameter, before any upstream handshake', async () => {
		const { key } = await app.account(1)
		const before = rt.handshakes.length
		// As OpenAI documents them: the call's id, no model. A WebSocket client cannot read a refused handshake's body, so
		// it gets the reason as an `error` event, then close 1008. (Transcription sessions: realtime-transcription.test.ts.)
		for (const [query, param] of [['call_id=rtc_u1_9c6574da8b8a41a18da9308f4ad974ce', 'call_id']] as const) {
			const c = await connectRealtime(`${app.url.replace('http', 'ws')}/v1/realtime?${query}`, { key })
			const error = await c.next('error')
			expect(error.error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_value', param })
			expect((await c.closed).code).toBe(1008)
			// Asked over plain HTTP, the same refusal is a 400.
			const plain = await fetch(`${app.url}/v1/realtime?${query}`, { headers: { authorization: `Bearer ${key}` } })
			expect(plain.status).toBe(400)
			expect((await plain.json()).error).toMatchObject({ code: 'unsupported_value', param })
		}
		expect(rt.handshakes.length).toBe(before)
	})

	it('should refuse with 402 before upgrading when the balance cannot cover a response, and 429 past the rpm limit', async () => {
		const { key } = await app.account(0.01)
		const poor = await refusedHandshake('gpt-realtime', {
			authorization: `Bearer ${key}`,
		})
		expect(poor.status).toBe(402)
		expect(poor.body.error.code).toBe('insufficient_quota')

		const rich = await app.account(1)
		await app.admin(`/api/tokens/${rich.tokenId}`, {
			method: 'PATCH',
			body: { rpm_limit: 1 },
		})
		const c = await connect('gpt-realtime', { key: rich.key })
		await c.next('session.created')
		const over = await refusedHandshake('gpt-realtime', {
			authorization: `Bearer ${rich.key}`,
		})
		expect(over.status).toBe(429)
		expect(over.body.error.code).toBe('rate_limit_exceeded')
		c.ws.close()
		await c.closed
	})

	// Held per response: 2,048 turn tokens at the audio input price and 1,000 output at the audio output price; at
	// least 16 output tokens. $0.09 covers the first response's minimum, not the second's (a longer conversation).
	for (const [what, balance, limit] of [
		['balance', 0.09, undefined],
		["key's spend limit", 10, 0.09],
	] as const) {
		it(`should cut the session off with an insufficient_quota error event when the ${what} runs out, never spending past it`, async () => {
			const { key, accountId } = await app.account(balance, limit === undefined ? {} : { spend_limit: limit })
			const c = await connect('gpt-realtime', { key })
			await c.next('session.created')
			c.ws.send(JSON.stringify({ type: 'response.create' }))
			await c.next('response.done')
			const err = await c.next('error')
			expect(err.error).toMatchObject({
				type: 'insufficient_quota',
				code: 'insufficient_quota',
			})
			expect((await c.closed).code).toBe(1008)
			await eventually(async () => expect(rt.closed.length).toBeGreaterThan(0))
			await eventually(async () => expect(micros(await app.balance(accountId))).toBe(micros(balance) - RESPONSE_COST))
			const rows = await usageOf(app, accountId)
			expect(rows.map((r) => r.cost)).toEqual([RESPONSE_COST / 1e6])
		})
	}

	// One response's hold is 2,048 turn tokens at the audio input price and 1,000 output at the audio output price
	// ($0.1295); $0.15 covers it, not a second one's minimum ($0.0666) beside it.
	it('should hold for each response in flight: a concurrent out-of-band response.create the balance cannot also cover is refused with an error event and not sent upstream', async () => {
		const { key, accountId } = await app.account(0.15)
		const c = await connect('gpt-realtime', { key })
		await c.next('session.created')
		const outOfBand = (id: string) => JSON.stringify({ type: 'response.create', event_id: id, response: { conversation: 'none', metadata: { mock: 'hold' } } })
		const sent = rt.received.length
		c.ws.send(outOfBand('evt_first'))
		const first = (await c.next('response.created')).response.id
		c.ws.send(outOfBand('evt_second'))
		const err = await c.next('error')
		expect(err.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota', event_id: 'evt_second' })
		// Only the first went upstream; the session stays open, the first response runs on.
		expect(rt.received.slice(sent).map((f) => JSON.parse(f as string).event_id)).toEqual(['evt_first'])
		// Settled, the hold is back: the next response is covered.
		await cancelThenCreate(c, first, accountId)
	})

	// As above, with a slow database: the first response's hold goes back, and the spare is renewed, 300 ms after its
	// response.done. A response.create sent at once waits for that rather than being refused for money on its way back.
	it('should serve a response.create sent while the response before it is still being settled, once its hold went back', async () => {
		const { key, accountId } = await app.account(0.15)
		const undo = slowSettlement(app.svc.ledger, 300)
		try {
			const c = await connect('gpt-realtime', { key })
			await c.next('session.created')
			c.ws.send(JSON.stringify({ type: 'response.create', response: { metadata: { mock: 'hold' } } }))
			const first = (await c.next('response.created')).response.id
			await cancelThenCreate(c, first, accountId)
		} finally {
			undo()
		}
	})

	it('should bill each of several responses in flight at once at its own response.done, each from its own hold', async () => {
		const { key, accountId } = await app.account(1)
		const c = await connect('gpt-realtime', { key })
		await c.next('session.created')
		const oob = JSON.stringify({ type: 'response.create', response: { conversation: 'none', metadata: { mock: 'hold' } } })
		c.ws.send(oob)
		const a = (await c.next('response.created')).response.id
		c.ws.send(oob)
		const b = (await c.next('response.created')).response.id
		c.ws.send(oob)
		const d = (await c.next('response.created')).response.id
		// Three responses running: three holds of a response each (the first taken at connect).
		const held = () => app.svc.ledger.leases().filter((l) => l.accountId === accountId).reduce((s, l) => s + l.inUse, 0)
		await eventually(async () => expect(held()).toBeGreaterThanOrEqual(3 * responseBound(app.svc.catalog.price('gpt-realtime')!, 0).want))
		for (const id of [b, a, d]) {
			c.ws.send(JSON.stringify({ type: 'response.cancel', response_id: id }))
			expect((await c.next('response.done')).response.id).toBe(id)
		}
		c.ws.close()
		await c.closed
		await eventually(async () => expect(micros(await app.balance(accountId))).toBe(1_000_000 - 3 * CANCELLED_COST))
		expect(await usageOf(app, accountId)).toHaveLength(3)
		await eventually(async () => expect(held()).toBe(0))
	})

	it('should cancel a running response when the client leaves and bill what its response.done reports', async () => {
		const { key, accountId } = await app.account(1)
		const c = await connect('gpt-realtime', { key })
		await c.next('session.created')
		c.ws.send(
			JSON.stringify({
				type: 'response.create',
				response: { metadata: { mock: 'hold' } },
			}),
		)
		await c.next('response.output_audio.delta')
		const received = rt.received.length
		c.ws.close(1000)
		await eventually(async () => expect(micros(await app.balance(accountId))).toBe(1_000_000 - CANCELLED_COST))
		expect(rt.received.slice(received).map((f) => JSON.parse(f as string).type)).toEqual(['response.cancel'])
		const rows = await usageOf(app, accountId)
		expect(rows).toHaveLength(1)
		expect(rows[0]).toMatchObject({
			end_reason: 'client_abort',
			input_tokens: REALTIME_CANCELLED_USAGE.input_tokens,
			output_tokens: 10,
			cost: CANCELLED_COST / 1e6,
		})
	})

	it('should close the client when the upstream closes, keeping what was billed and releasing the rest', async () => {
		const { key, accountId } = await app.account(1)
		const c = await connect('gpt-realtime', { key })
		await c.next('session.created')
		c.ws.send(JSON.stringify({ type: 'response.create' }))
		await c.next('response.done')
		c.ws.send(JSON.stringify({ type: 'mock.hangup' }))
		const closed = await c.closed
		expect(closed.code).toBe(1011)
		await eventually(async () => expect(micros(await app.balance(accountId))).toBe(1_000_000 - RESPONSE_COST))
		await eventually(async () =>
			expect(
				app.svc.ledger
					.leases()
					.filter((l) => l.accountId === accountId)
					.reduce((s, l) => s + l.inUse, 0),
			).toBe(0),
		)
		expect((await usageOf(app, accountId)).map((r) => r.end_reason)).toEqual(['ok'])
	})

	it('should bill a response the upstream cut from what was seen, estimated: the conversation so far as input, its text and audio deltas as output', async () => {
		const { key, accountId } = await app.account(1)
		const c = await connect('gpt-realtime', { key })
		await c.next('session.created')
		const said = 'Tell me about the tides, and keep it short please.'
		c.ws.send(JSON.stringify({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: said }] } }))
		// 1 s of PCM16 24 kHz input audio: 10 tokens (1 per 100 ms).
		c.ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: Buffer.alloc(48_000).toString('base64') }))
		// 2 s of output audio: 40 tokens (1 per 50 ms).
		c.ws.send(JSON.stringify({ type: 'response.create', response: { metadata: { mock: 'hold', audio_ms: '2000' } } }))
		await c.next('response.output_audio.delta')
		c.ws.send(JSON.stringify({ type: 'mock.hangup' }))
		expect((await c.closed).code).toBe(1011)
		const input = countText(said) + 10
		const cost = (input - 10) * 4 + 10 * 32 + 40 * 64
		await eventually(async () => expect(micros(await app.balance(accountId))).toBe(1_000_000 - cost))
		const rows = await usageOf(app, accountId)
		expect(rows).toHaveLength(1)
		expect(rows[0]).toMatchObject({ end_reason: 'upstream_cut', estimated: true, input_tokens: input, output_tokens: 40, cost: cost / 1e6 })
	})

	it('should close a client that stops reading with 1008 once its unsent frames pass the buffer limit, instead of buffering without bound', async () => {
		const { key } = await app.account(1)
		const port = Number(new URL(app.url).port)
		const net = await import('node:net')
		// A raw client that completes the handshake, then stops reading: the gateway's frames pile up in its buffer.
		const sock = net.connect(port, '127.0.0.1')
		let head = ''
		await new Promise<void>((resolve) => {
			sock.on('connect', () =>
				sock.write(
					[`GET /v1/realtime?model=gpt-realtime HTTP/1.1`, `host: 127.0.0.1:${port}`, 'upgrade: websocket', 'connection: Upgrade', 'sec-websocket-version: 13', 'sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==', `authorization: Bearer ${key}`, '', ''].join('\r\n'),
				),
			)
			const onHead = (d: Buffer) => {
				head += d.toString('latin1')
				if (head.includes('\r\n\r\n')) {
					sock.pause()
					sock.off('data', onHead)
					resolve()
				}
			}
			sock.on('data', onHead)
		})
		expect(head.startsWith('HTTP/1.1 101')).toBe(true)
		const closedBefore = rt.closed.length
		// A masked client text frame asking the mock for four times the limit in 1 MiB frames.
		const payload = Buffer.from(JSON.stringify({ type: 'mock.flood', count: Math.ceil((4 * CLIENT_BUFFER_LIMIT) / 2 ** 20), bytes: 2 ** 20 }))
		const frame = Buffer.concat([Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 255, 0, 0, 0, 0]), payload])
		sock.write(frame)
		// The gateway gives up on the client and closes the upstream session with it.
		await eventually(async () => expect(rt.closed.length).toBeGreaterThan(closedBefore), 10_000)
		// Reading again: what was buffered arrives, then the close frame with 1008.
		const chunks: Buffer[] = []
		const ended = new Promise<void>((resolve) => sock.on('close', () => resolve()))
		sock.on('data', (d) => chunks.push(Buffer.from(d)))
		sock.resume()
		await Promise.race([ended, Bun.sleep(10_000)])
		const all = Buffer.concat(chunks)
		expect(all.length).toBeLessThan(2 * CLIENT_BUFFER_LIMIT)
		expect(all.toString('latin1')).toContain('"code":"client_too_slow"')
		// The last frame is a close frame (0x88) whose code is 1008.
		const at = all.lastIndexOf(Buffer.from([0x88]))
		expect(at).toBeGreaterThan(-1)
		expect(all.readUInt16BE(at + 2)).toBe(1008)
		sock.destroy()
	}, 30_000)
})
