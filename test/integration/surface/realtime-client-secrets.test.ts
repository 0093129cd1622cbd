/**
 * Ephemeral client secrets for the Realtime API, minted with the official SDK (`client.realtime.clientSecrets` and
 * the beta's `client.beta.realtime.sessions`) and presented by a browser-like client: the gateway's own `ek_…`,
 * bound to the minting key and the config's model, applied at connect, dead once expired or its key revoked.
 */
import { afterAll, beforeAll, describe, expect, it, setSystemTime } from 'bun:test'
import OpenAI from 'openai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { REALTIME_USAGE, type RealtimeMock, startRealtimeMock } from '../../mocks/openai/realtime'
import { call, micros, priceList, usageOf } from './helpers'
import { connectRealtime, eventually, refusedRealtimeHandshake } from './realtime-client'

let rt: RealtimeMock
let app: TestApp

const PRICE = { input_per_mtok: 4, output_per_mtok: 16, cache_read_per_mtok: 0.4, audio_input_per_mtok: 32, audio_output_per_mtok: 64, max_output_tokens: 1000 }
const RESPONSE_COST = 10 * 4 + 70 * 32 + 40 * 0.4 + 50 * 16 + 200 * 64

beforeAll(async () => {
	rt = await startRealtimeMock({ apiKey: 'up-rt' })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'rt', type: 'openai', base_url: rt.url, api_key: 'up-rt', models: ['gpt-realtime', 'voice'], model_map: { voice: 'gpt-realtime-2025-08-28' } },
				{ name: 'claude', type: 'anthropic', base_url: 'http://127.0.0.1:9', api_key: 'up-an', models: ['claude-voice'] },
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
	setSystemTime()
	await app.close()
	await rt.stop()
})

const sdk = (key: string) => new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
const socketUrl = (query = '') => `${app.url.replace('http', 'ws')}/v1/realtime${query}`
/** How a browser presents a secret: it cannot set headers. */
const browser = (secret: string) => ['realtime', `openai-insecure-api-key.${secret}`]

describe('POST /v1/realtime/client_secrets', () => {
	it('should mint a gateway ek_ secret that a browser uses to open a session of its model, with the config applied first, billed to the minting key', async () => {
		const { key, accountId, tokenId } = await app.account(1)
		const t0 = Math.floor(Date.now() / 1000)
		const minted = await sdk(key).realtime.clientSecrets.create({
			expires_after: { anchor: 'created_at', seconds: 300 },
			session: { type: 'realtime', model: 'voice', instructions: 'Be brief.', output_modalities: ['audio'] },
		})
		expect(minted.value).toStartWith('ek_')
		expect(minted.value).not.toContain(key)
		expect(minted.expires_at).toBeGreaterThanOrEqual(t0 + 300)
		expect(minted.expires_at).toBeLessThanOrEqual(t0 + 301)
		expect(minted.session).toMatchObject({ type: 'realtime', object: 'realtime.session', model: 'voice', instructions: 'Be brief.' })
		expect(rt.handshakes.length).toBe(0)

		const received = rt.received.length
		const c = await connectRealtime(socketUrl(), { protocols: browser(minted.value) })
		expect(c.ws.protocol).toBe('realtime')
		expect((await c.next('session.created')).session.model).toBe('gpt-realtime-2025-08-28')
		const hs = rt.handshakes.at(-1)!
		expect(hs.headers.authorization).toBe('Bearer up-rt')
		expect(JSON.stringify(hs)).not.toContain(minted.value)
		// The minted config went up first, as a session.update (the upstream model is the URL's).
		await eventually(async () => expect(rt.received.length).toBeGreaterThan(received))
		expect(JSON.parse(rt.received[received] as string)).toEqual({
			type: 'session.update',
			session: { type: 'realtime', instructions: 'Be brief.', output_modalities: ['audio'] },
		})
		c.ws.send(JSON.stringify({ type: 'response.create' }))
		expect((await c.next('response.done')).response.usage).toEqual(REALTIME_USAGE)
		c.ws.close()
		await c.closed
		await eventually(async () => expect(micros(await app.balance(accountId))).toBe(1_000_000 - RESPONSE_COST))
		expect((await usageOf(app, accountId)).map((r) => [r.endpoint, r.model])).toEqual([['/v1/realtime', 'voice']])
		const rows = await app.admin(`/api/usage?account_id=${accountId}`)
		expect(rows.body.data[0].token_id).toBe(tokenId)

		// Bearer works too, with ?model= naming the same model.
		const bearer = await connectRealtime(socketUrl('?model=voice'), { key: minted.value })
		await bearer.next('session.created')
		bearer.ws.close()
		await bearer.closed
	})

	it('should make the secret useless anywhere but /v1/realtime, and for any other model', async () => {
		const { key } = await app.account(1)
		const { value } = await sdk(key).realtime.clientSecrets.create({ session: { type: 'realtime', model: 'voice' } })
		const chat = await call(app, value, '/v1/chat/completions', { body: { model: 'voice', messages: [{ role: 'user', content: 'hi' }] } })
		expect(chat.status).toBe(401)
		expect(chat.body.error.code).toBe('invalid_api_key')
		expect((await call(app, value, '/v1/models')).status).toBe(401)
		// A secret cannot mint secrets either.
		expect((await call(app, value, '/v1/realtime/client_secrets', { body: { session: { type: 'realtime', model: 'voice' } } })).status).toBe(401)
		const before = rt.handshakes.length
		const other = await refusedRealtimeHandshake(app.url, '/v1/realtime?model=gpt-realtime', { authorization: `Bearer ${value}` })
		expect(other.status).toBe(400)
		expect(other.body.error.param).toBe('model')
		// A secret changed by one character opens nothing.
		const flipped = value.slice(0, -2) + (value.at(-2) === 'A' ? 'B' : 'A') + value.at(-1)
		expect((await refusedRealtimeHandshake(app.url, '/v1/realtime', { 'sec-websocket-protocol': `realtime, openai-insecure-api-key.${flipped}` })).status).toBe(401)
		expect(rt.handshakes.length).toBe(before)
	})

	it('should stop accepting the secret once it expires (600 s by default), and when its key is disabled or deleted', async () => {
		const { key, tokenId } = await app.account(1)
		const { value, expires_at } = await sdk(key).realtime.clientSecrets.create({ session: { type: 'realtime', model: 'gpt-realtime' } })
		expect(expires_at - Math.floor(Date.now() / 1000)).toBeGreaterThanOrEqual(599)
		const presented = { 'sec-websocket-protocol': `realtime, openai-insecure-api-key.${value}` }
		try {
			setSystemTime(new Date((expires_at + 1) * 1000))
			const late = await refusedRealtimeHandshake(app.url, '/v1/realtime', presented)
			expect(late.status).toBe(401)
			expect(late.body.error.message).toContain('expired')
		} finally {
			setSystemTime()
		}
		const ok = await connectRealtime(socketUrl(), { protocols: browser(value) })
		await ok.next('session.created')
		ok.ws.close()
		await ok.closed

		await app.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body: { status: 'disabled' } })
		expect((await refusedRealtimeHandshake(app.url, '/v1/realtime', presented)).status).toBe(401)
		await app.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body: { status: 'active' } })
		await app.admin(`/api/tokens/${tokenId}`, { method: 'DELETE' })
		expect((await refusedRealtimeHandshake(app.url, '/v1/realtime', presented)).status).toBe(401)
	})

	it("should refuse to mint for a model the key may not use or no OpenAI channel serves, without a model, or outside 10–7200 seconds", async () => {
		const { key, accountId } = await app.account(1)
		const limited = await app.admin('/api/tokens', { body: { account_id: accountId, name: 'limited' } })
		await app.admin(`/api/tokens/${limited.body.id}`, { method: 'PATCH', body: { allowed_models: ['gpt-4o'] } })
		const mint = (k: string, body: unknown) => call(app, k, '/v1/realtime/client_secrets', { body })
		const notAllowed = await mint(limited.body.key, { session: { type: 'realtime', model: 'gpt-realtime' } })
		expect(notAllowed.status).toBe(403)
		expect(notAllowed.body.error.code).toBe('model_not_allowed')
		expect((await mint(key, { session: { type: 'realtime', model: 'claude-voice' } })).body.error.code).toBe('unsupported_for_model')
		expect((await mint(key, { session: { type: 'realtime', model: 'nope' } })).status).toBe(404)
		const noModel = await mint(key, { session: { type: 'realtime' } })
		expect(noModel.status).toBe(400)
		expect(noModel.body.error.param).toBe('session.model')
		for (const seconds of [9, 7201]) {
			const r = await mint(key, { expires_after: { anchor: 'created_at', seconds }, session: { type: 'realtime', model: 'gpt-realtime' } })
			expect(r.status).toBe(400)
			expect(r.body.error).toMatchObject({ type: 'invalid_request_error', param: 'expires_after.seconds' })
		}
		expect((await call(app, 'sk-wrong-key-000000000000000000000000000000', '/v1/realtime/client_secrets', { body: { session: { type: 'realtime', model: 'gpt-realtime' } } })).status).toBe(401)
	})
})

describe('POST /v1/realtime/sessions (beta)', () => {
	it('should answer the session with client_secret { value, expires_at } (a minute by default) that opens a session of its model', async () => {
		const { key, accountId } = await app.account(1)
		const t0 = Math.floor(Date.now() / 1000)
		const s = await sdk(key).beta.realtime.sessions.create({ model: 'gpt-realtime' as never, modalities: ['text'], instructions: 'Hi.' })
		expect(s).toMatchObject({ object: 'realtime.session', model: 'gpt-realtime', modalities: ['text'], instructions: 'Hi.' })
		expect(s.client_secret.value).toStartWith('ek_')
		expect(s.client_secret.expires_at).toBeGreaterThanOrEqual(t0 + 60)
		expect(s.client_secret.expires_at).toBeLessThanOrEqual(t0 + 61)
		const received = rt.received.length
		const c = await connectRealtime(socketUrl('?model=gpt-realtime'), { protocols: [...browser(s.client_secret.value), 'openai-beta.realtime-v1'] })
		await c.next('session.created')
		await eventually(async () => expect(rt.received.length).toBeGreaterThan(received))
		expect(JSON.parse(rt.received[received] as string)).toEqual({ type: 'session.update', session: { modalities: ['text'], instructions: 'Hi.' } })
		c.ws.send(JSON.stringify({ type: 'response.create' }))
		await c.next('response.done')
		c.ws.close()
		await c.closed
		await eventually(async () => expect(micros(await app.balance(accountId))).toBe(1_000_000 - RESPONSE_COST))
	})
})
