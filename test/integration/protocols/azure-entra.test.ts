/**
 * Azure channels whose key is a Microsoft Entra ID service principal (`{"tenant_id","client_id","client_secret"}`),
 * through the official `openai` client, against a mock Azure resource with key auth disabled and a mock Entra
 * authority (test/mocks/azure/entra.ts, the channel's `settings.authority_host`): the client credentials grant's form,
 * the token sent as a Bearer on chat, streams, Responses, embeddings, images and audio, one token for many calls,
 * a new one after a 401 or near its expiry, and a refused secret as the channel's failure (failover, the channel
 * disabled), the secret in no log line, error body or disabled reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import OpenAI, { toFile } from 'openai'
import { createLogger } from '../../../src/lib/log'
import { startTestApp, type TestApp } from '../../helpers/app'
import { wav } from '../../helpers/wav'
import type { VendorMock } from '../../mocks'
import { startAzureMock } from '../../mocks/azure'
import { AZURE_SCOPE, type EntraMock, startEntraMock } from '../../mocks/azure/entra'
import { chat } from './clients'
import { SETUP_MS } from './harness'

const KEY = 'az-standby-key'
const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47'
const CLIENT = '6a1f2c9e-0b7d-4c1e-9a55-3e8f0d2b1c44'
const SECRET = 'Q8Q~mockClientSecret.Value_0123456789-abcdEF'
const WRONG_SECRET = 'Q8Q~wrongClientSecret.Value_9876543210-zyxwVU'
const DEPLOYMENTS = { 'prod-4o': 'gpt-4o', 'prod-embed': 'text-embedding-3-small', 'prod-tts': 'tts-1', 'prod-whisper': 'whisper-1', 'prod-image': 'dall-e-3', 'prod-instruct': 'gpt-3.5-turbo-instruct' }

let app: TestApp
let entra: EntraMock
/** The resource with key auth disabled: Entra ID tokens only. */
let azure: VendorMock
/** A resource on a key, where the failover of a refused service principal lands. */
let standby: VendorMock
const logs: string[] = []

beforeAll(async () => {
	entra = startEntraMock({ tenantId: TENANT, clientId: CLIENT, clientSecret: SECRET })
	azure = startAzureMock({ apiKey: 'az-disabled-key', deployments: DEPLOYMENTS, entra, keyAuth: false })
	standby = startAzureMock({ apiKey: KEY, deployments: DEPLOYMENTS })
	const wrongKey = JSON.stringify({ tenant_id: TENANT, client_id: CLIENT, client_secret: WRONG_SECRET })
	const sp = (name: string, models: Record<string, string>, extra: Record<string, unknown> = {}) => ({
		name,
		type: 'azure' as const,
		base_url: azure.url,
		api_key: entra.channelKey,
		models: Object.keys(models),
		model_map: models,
		settings: { authority_host: entra.url },
		...extra,
	})
	const chatPrice = { input_per_mtok: 1, output_per_mtok: 4 }
	app = await startTestApp({
		config: {
			channels: [
				sp('ent', { 'ent-4o': 'prod-4o', 'ent-embed': 'prod-embed', 'ent-tts': 'prod-tts', 'ent-whisper': 'prod-whisper', 'ent-image': 'prod-image', 'ent-instruct': 'prod-instruct' }),
				sp('ent-v1', { 'ent-v1': 'prod-4o' }, { base_url: `${azure.url}/openai/v1` }),
				sp('ent-many', { 'ent-many': 'prod-4o' }),
				sp('ent-revoked', { 'ent-revoked': 'prod-4o', 'ent-revoked-embed': 'prod-embed' }),
				sp('ent-short', { 'ent-short': 'prod-4o' }),
				sp('ent-renewal', { 'ent-renewal': 'prod-4o' }),
				// A secret the tenant does not take, first; a resource on a key behind it.
				sp('ent-wrong', { 'ent-failover': 'prod-4o' }, { api_key: wrongKey }),
				{ name: 'az-standby', type: 'azure', base_url: standby.url, api_key: KEY, models: ['ent-failover'], model_map: { 'ent-failover': 'prod-4o' }, priority: 1 },
				sp('ent-wrong-alone', { 'ent-nowhere': 'prod-4o' }, { api_key: wrongKey }),
			],
			models: [
				...['ent-4o', 'ent-instruct', 'ent-v1', 'ent-many', 'ent-revoked', 'ent-short', 'ent-renewal', 'ent-failover', 'ent-nowhere'].map((name) => ({ name, ...chatPrice })),
				{ name: 'ent-embed', input_per_mtok: 0.02 },
				{ name: 'ent-revoked-embed', input_per_mtok: 0.02 },
				{ name: 'ent-tts', per_mchar: 15 },
				{ name: 'ent-whisper', per_minute: 0.006 },
				{ name: 'ent-image', per_image: 0.04 },
			],
		},
	})
	Object.assign(app.svc, { log: createLogger('debug', (l) => logs.push(l)) })
}, SETUP_MS)
afterAll(async () => {
	await app?.close()
	await azure?.stop()
	await standby?.stop()
	await entra?.stop()
})

async function client() {
	const a = await app.account(10)
	return { ...a, openai: new OpenAI({ apiKey: a.key, baseURL: `${app.url}/v1`, maxRetries: 0 }) }
}

const last = (m: VendorMock) => m.requests[m.requests.length - 1]!
const bearerOf = (r: { headers: Record<string, string> }) => r.headers.authorization?.replace(/^Bearer /, '')

describe('azure channel with an Entra ID service principal', () => {
	for (const stream of [false, true])
		it(`should get a token by client credentials and send it as a Bearer, no api-key (chat, ${stream ? 'stream' : 'non-stream'})`, async () => {
			const c = await client()
			const before = entra.tokenRequests.length
			const a = await chat(c.openai, { model: 'ent-4o', messages: [{ role: 'user', content: `hello entra ${stream}` }] }, stream)
			expect(a.text).toBe(`Hello! You said: hello entra ${stream}`)
			const r = last(azure)
			expect(r.path).toBe('/openai/deployments/prod-4o/chat/completions')
			expect(r.headers['api-key']).toBeUndefined()
			expect(entra.accepts(bearerOf(r)!)).toBe(true)
			// The first call of the channel fetched its token; the second reused it.
			expect(entra.tokenRequests.length).toBe(stream ? before : before + 1)
			for (const t of entra.tokenRequests.slice(before)) {
				expect(t.path).toBe(`/${TENANT}/oauth2/v2.0/token`)
				expect(t.contentType).toStartWith('application/x-www-form-urlencoded')
				expect(t.form).toEqual({ grant_type: 'client_credentials', client_id: CLIENT, client_secret: SECRET, scope: AZURE_SCOPE })
			}
		})

	it('should send completions, embeddings (OpenAI and Gemini clients), speech, transcriptions, images and Responses with the token too', async () => {
		const c = await client()
		const calls = azure.requests.length
		const done = await c.openai.completions.create({ model: 'ent-instruct', prompt: 'say this' })
		expect(done.choices[0]!.text).toContain('Completed: say this')
		const e = await c.openai.embeddings.create({ model: 'ent-embed', input: 'hello', encoding_format: 'float' })
		expect(e.data[0]!.embedding.length).toBeGreaterThan(0)
		const genai = new GoogleGenAI({ apiKey: c.key, httpOptions: { baseUrl: app.url, apiVersion: 'v1beta' } })
		const g = await genai.models.embedContent({ model: 'ent-embed', contents: 'hello' })
		expect(g.embeddings![0]!.values!.length).toBeGreaterThan(0)
		const speech = await c.openai.audio.speech.create({ model: 'ent-tts', voice: 'alloy', input: 'hello' })
		expect((await speech.arrayBuffer()).byteLength).toBeGreaterThan(0)
		const t = await c.openai.audio.transcriptions.create({ model: 'ent-whisper', file: await toFile(wav(5), 'a.wav', { type: 'audio/wav' }) })
		expect(typeof t.text).toBe('string')
		const img = await c.openai.images.generate({ model: 'ent-image', prompt: 'a cat' })
		expect(img.data!.length).toBe(1)
		const r = await c.openai.responses.create({ model: 'ent-4o', input: 'hello responses' })
		expect(r.output_text).toContain('hello responses')
		const again = await c.openai.responses.retrieve(r.id)
		expect(again.id).toBe(r.id)
		const sent = azure.requests.slice(calls)
		expect(sent.map((s) => s.path)).toEqual([
			'/openai/deployments/prod-instruct/completions',
			'/openai/deployments/prod-embed/embeddings',
			'/openai/deployments/prod-embed/embeddings',
			'/openai/deployments/prod-tts/audio/speech',
			'/openai/deployments/prod-whisper/audio/transcriptions',
			'/openai/deployments/prod-image/images/generations',
			'/openai/responses',
			`/openai/responses/${r.id}`,
		])
		for (const s of sent) {
			expect(s.headers['api-key']).toBeUndefined()
			expect(entra.accepts(bearerOf(s)!)).toBe(true)
		}
	})

	it("should serve Azure's v1 API (base_url …/openai/v1) with the token", async () => {
		const c = await client()
		const a = await chat(c.openai, { model: 'ent-v1', messages: [{ role: 'user', content: 'v1 entra' }] }, true)
		expect(a.text).toBe('Hello! You said: v1 entra')
		expect(last(azure).path).toBe('/openai/v1/chat/completions')
		expect(entra.accepts(bearerOf(last(azure))!)).toBe(true)
	})
})

describe('azure channel: Entra ID tokens', () => {
	it('should fetch one token for many concurrent calls on a channel, and reuse it', async () => {
		const c = await client()
		const before = entra.tokenFetches
		entra.tokenDelayMs = 150
		try {
			const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => chat(c.openai, { model: 'ent-many', messages: [{ role: 'user', content: `call ${i}` }] }, i % 2 === 0)))
			expect(answers.map((a) => a.text)).toEqual(Array.from({ length: 6 }, (_, i) => `Hello! You said: call ${i}`))
		} finally {
			entra.tokenDelayMs = 0
		}
		expect(entra.tokenFetches - before).toBe(1)
		for (let i = 0; i < 3; i++) await chat(c.openai, { model: 'ent-many', messages: [{ role: 'user', content: 'again' }] }, false)
		expect(entra.tokenFetches - before).toBe(1)
	})

	it('should fetch a new token once the cached one is about to expire', async () => {
		const c = await client()
		// 301 s: fresh for one second before the gateway's five-minute margin.
		entra.tokenTtl = 301
		try {
			const before = entra.tokenFetches
			await chat(c.openai, { model: 'ent-short', messages: [{ role: 'user', content: 'first' }] }, false)
			await chat(c.openai, { model: 'ent-short', messages: [{ role: 'user', content: 'second' }] }, false)
			expect(entra.tokenFetches - before).toBe(1)
			const first = bearerOf(last(azure))
			await Bun.sleep(1_100)
			await chat(c.openai, { model: 'ent-short', messages: [{ role: 'user', content: 'third' }] }, false)
			expect(entra.tokenFetches - before).toBe(2)
			expect(bearerOf(last(azure))).not.toBe(first)
		} finally {
			entra.tokenTtl = 3600
		}
	})

	for (const op of ['chat', 'embeddings'] as const)
		it(`should fetch a new token and call again once when Azure refuses the cached one with 401 (${op})`, async () => {
			const c = await client()
			const call = () =>
				op === 'chat'
					? chat(c.openai, { model: 'ent-revoked', messages: [{ role: 'user', content: 'after revocation' }] }, true).then((a) => a.text)
					: c.openai.embeddings.create({ model: 'ent-revoked-embed', input: 'after revocation' }).then((e) => String(e.data.length))
			await call()
			const stale = bearerOf(last(azure))
			const fetches = entra.tokenFetches
			const calls = azure.requests.length
			entra.revokeTokens()
			expect(await call()).toBe(op === 'chat' ? 'Hello! You said: after revocation' : '1')
			expect(entra.tokenFetches).toBe(fetches + 1)
			const [refused, retried] = azure.requests.slice(calls)
			expect(bearerOf(refused!)).toBe(stale!)
			expect(bearerOf(retried!)).not.toBe(stale!)
			expect(entra.accepts(bearerOf(retried!)!)).toBe(true)
			expect(azure.requests.length).toBe(calls + 2)
		})
})

describe('azure channel: a service principal the tenant refuses', () => {
	it("should say the tenant's refusal of a renewal after Azure's 401 as the channel's credentials, not as an unreachable upstream", async () => {
		const c = await client()
		await chat(c.openai, { model: 'ent-renewal', messages: [{ role: 'user', content: 'warm up' }] }, false)
		entra.revokeTokens()
		entra.refuseAll = true
		try {
			const err = await c.openai.chat.completions.create({ model: 'ent-renewal', messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e)
			expect(err).toBeInstanceOf(OpenAI.APIError)
			expect(err.status).toBe(502)
			expect(err.code).toBe('upstream_auth')
			expect(JSON.stringify(err.error)).not.toContain(SECRET)
		} finally {
			entra.refuseAll = false
		}
		const channels = (await app.admin('/api/channels')).body.data as Array<{ name: string; status: string; disabled_reason: string | null }>
		expect(channels.find((ch) => ch.name === 'ent-renewal')!.disabled_reason).toContain('invalid_client')
	})

	it('should fail over to the next channel, disable the refused one with why, and never say the secret', async () => {
		const c = await client()
		const refusals = entra.tokenRequests.length
		const a = await chat(c.openai, { model: 'ent-failover', messages: [{ role: 'user', content: 'fail over' }] }, false)
		expect(a.text).toBe('Hello! You said: fail over')
		expect(last(standby).headers['api-key']).toBe(KEY)
		expect(entra.tokenRequests.slice(refusals).map((t) => t.form.client_secret)).toEqual([WRONG_SECRET])
		const channels = (await app.admin('/api/channels')).body.data as Array<{ name: string; status: string; disabled_reason: string | null }>
		const wrong = channels.find((ch) => ch.name === 'ent-wrong')!
		expect(wrong.status).toBe('disabled')
		expect(wrong.disabled_reason).toContain('invalid_client')
		expect(wrong.disabled_reason).toContain('AADSTS7000215')
		expect(wrong.disabled_reason).not.toContain(WRONG_SECRET)
		const logged = logs.join('\n')
		expect(logged).toContain('AADSTS7000215')
		expect(logged).not.toContain(WRONG_SECRET)
		expect(logged).not.toContain(SECRET)
	})

	it("should answer the caller 502 in OpenAI's shape when no channel is left, without the secret", async () => {
		const c = await client()
		const res = await fetch(`${app.url}/v1/chat/completions`, {
			method: 'POST',
			headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
			body: JSON.stringify({ model: 'ent-nowhere', messages: [{ role: 'user', content: 'hi' }] }),
		})
		const text = await res.text()
		expect(res.status).toBe(502)
		expect(JSON.parse(text).error).toMatchObject({ code: 'upstream_auth' })
		expect(JSON.parse(text).error.message).toContain("refused the gateway's credentials")
		for (const s of [WRONG_SECRET, SECRET, CLIENT, TENANT]) expect(text).not.toContain(s)
		expect(logs.join('\n')).not.toContain(WRONG_SECRET)
	})
})
