import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import { type Native, PRICES, SETUP_MS, startNative } from './setup'

let n: Native
beforeAll(async () => {
	n = await startNative()
}, SETUP_MS)
afterAll(() => n.close())

const ALL = Object.keys(PRICES).sort()
/** What an Anthropic client can call through /v1/messages: every chat model, not the two embedding models. */
const CHAT = ALL.filter((id) => id !== 'text-embedding-3-small' && id !== 'gemini-embedding-001')

const get = (path: string, headers: Record<string, string>) => fetch(`${n.app.url}${path}`, { headers })

describe('GET /v1/models', () => {
	it("should list every usable model in OpenAI's shape for the openai SDK", async () => {
		const a = await n.app.account(1)
		const openai = new OpenAI({ apiKey: a.key, baseURL: `${n.app.url}/v1`, maxRetries: 0 })
		const ids: string[] = []
		for await (const m of openai.models.list()) {
			expect(m.object).toBe('model')
			ids.push(m.id)
		}
		expect(ids).toEqual(ALL)
		const one = await openai.models.retrieve('claude-sonnet-5')
		expect(one).toMatchObject({ id: 'claude-sonnet-5', object: 'model', owned_by: 'anthropic' })
		expect((await openai.models.retrieve('openai/gpt-4o-mini')).id).toBe('openai/gpt-4o-mini')
	})

	it("should list only the key's allowed models, and 404 the others", async () => {
		const a = await n.app.account(1, { allowed_models: ['gpt-*', 'gemini-2.5-flash'] } as never)
		const res = await get('/v1/models', { authorization: `Bearer ${a.key}` })
		expect(((await res.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id)).toEqual(['gemini-2.5-flash', 'gpt-4o-mini', 'gpt-alias'])
		const hidden = await get('/v1/models/claude-sonnet-5', { authorization: `Bearer ${a.key}` })
		expect(hidden.status).toBe(404)
		expect(await hidden.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'model_not_found' } })
	})

	it("should answer in Anthropic's shape, paged, for the anthropic SDK", async () => {
		const a = await n.app.account(1)
		const anthropic = new Anthropic({ apiKey: a.key, baseURL: n.app.url, maxRetries: 0 })
		const first = await anthropic.models.list({ limit: 2 })
		expect(first.data.map((m) => m.id)).toEqual(CHAT.slice(0, 2))
		expect(first.data[0]).toMatchObject({ type: 'model', display_name: CHAT[0] })
		expect(first.has_more).toBe(true)
		const ids: string[] = []
		for await (const m of anthropic.models.list({ limit: 2 })) ids.push(m.id)
		expect(ids).toEqual(CHAT)
		expect((await anthropic.models.retrieve('gemini-2.5-flash')).id).toBe('gemini-2.5-flash')
		for (const id of ['nope', 'text-embedding-3-small']) {
			const missing = await get(`/v1/models/${id}`, { 'x-api-key': a.key, 'anthropic-version': '2023-06-01' })
			expect(missing.status).toBe(404)
			expect(await missing.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } })
		}
	})

	it("should answer in Gemini's shape for @google/genai (x-goog-api-key) and under /v1beta", async () => {
		const a = await n.app.account(1)
		for (const apiVersion of [undefined, 'v1beta']) {
			const ai = new GoogleGenAI({ apiKey: a.key, httpOptions: { baseUrl: n.app.url, ...(apiVersion && { apiVersion }) } })
			const names: string[] = []
			for await (const m of await ai.models.list({ config: { pageSize: 4 } })) names.push(m.name ?? '')
			expect(names).toEqual(ALL.map((id) => `models/${id}`))
			const one = await ai.models.get({ model: 'gemini-embedding-001' })
			expect(one).toMatchObject({ name: 'models/gemini-embedding-001', displayName: 'gemini-embedding-001' })
			expect(one.supportedActions).toContain('embedContent')
		}
		const missing = await get('/v1beta/models/nope', { 'x-goog-api-key': a.key })
		expect(missing.status).toBe(404)
		expect(await missing.json()).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } })
	})

	it("should give @google/genai each model's limits as inputTokenLimit and outputTokenLimit: configured, else the vendor's documented ones", async () => {
		// Gemini's Model resource (https://ai.google.dev/api/models#Model) carries both; LangChain and @google/genai read them.
		const a = await n.app.account(1)
		const ai = new GoogleGenAI({ apiKey: a.key, httpOptions: { baseUrl: n.app.url, apiVersion: 'v1beta' } })
		const one = await ai.models.get({ model: 'gemini-2.5-flash' })
		expect(one).toMatchObject({ inputTokenLimit: 1_048_576, outputTokenLimit: 65_536 })
		const listed: Array<{ name?: string; inputTokenLimit?: number; outputTokenLimit?: number }> = []
		for await (const m of await ai.models.list()) listed.push(m)
		const byName = (id: string) => listed.find((m) => m.name === `models/${id}`)!
		expect(byName('gpt-4o-mini')).toMatchObject({ inputTokenLimit: 128_000, outputTokenLimit: 16_384 })
		// An alias has the limits of the model its channel sends upstream (model_map).
		expect(byName('gpt-alias')).toMatchObject({ inputTokenLimit: 128_000, outputTokenLimit: 16_384 })
		// Claude Sonnet 5's documented limits (platform.claude.com/docs/en/models/sonnet-5/overview).
		expect(byName('claude-sonnet-5')).toMatchObject({ inputTokenLimit: 1_000_000, outputTokenLimit: 128_000 })
		// A model the built-in table has no figures for gets neither: a made-up limit would mislead.
		expect(byName('gemini-embedding-001').inputTokenLimit).toBeUndefined()
		expect(byName('gemini-embedding-001').outputTokenLimit).toBeUndefined()
		const row = ((await n.app.admin('/api/models')).body.data as Array<{ id: number; name: string }>).find((m) => m.name === 'claude-sonnet-5')!
		const set = await n.app.admin(`/api/models/${row.id}`, { method: 'PATCH', body: { context_window: 500_000, max_output_tokens: 100_000 } })
		expect(set.status).toBe(200)
		expect(set.body).toMatchObject({ context_window: 500_000, max_output_tokens: 100_000 })
		try {
			expect(await ai.models.get({ model: 'claude-sonnet-5' })).toMatchObject({ inputTokenLimit: 500_000, outputTokenLimit: 100_000 })
		} finally {
			const cleared = await n.app.admin(`/api/models/${row.id}`, { method: 'PATCH', body: { context_window: null, max_output_tokens: null } })
			expect(cleared.body).toMatchObject({ context_window: null, max_output_tokens: null })
		}
	})

	it("should give the openai SDK the limits as extra members, and the anthropic SDK ModelInfo's max_input_tokens and max_tokens", async () => {
		const a = await n.app.account(1)
		const openai = new OpenAI({ apiKey: a.key, baseURL: `${n.app.url}/v1`, maxRetries: 0 })
		const oa: Array<OpenAI.Models.Model & { context_window?: number; max_output_tokens?: number }> = []
		for await (const m of openai.models.list()) oa.push(m)
		expect(oa.find((m) => m.id === 'gpt-4o-mini')).toEqual({ id: 'gpt-4o-mini', object: 'model', created: expect.any(Number), owned_by: 'openai', context_window: 128_000, max_output_tokens: 16_384 })
		expect(oa.find((m) => m.id === 'claude-sonnet-5')).toMatchObject({ context_window: 1_000_000, max_output_tokens: 128_000 })
		expect(Object.keys(oa.find((m) => m.id === 'text-embedding-3-small')!).sort()).toEqual(['created', 'id', 'object', 'owned_by'])
		expect(await openai.models.retrieve('gemini-2.5-flash')).toMatchObject({ context_window: 1_048_576, max_output_tokens: 65_536 })
		const anthropic = new Anthropic({ apiKey: a.key, baseURL: n.app.url, maxRetries: 0 })
		const an: Anthropic.Models.ModelInfo[] = []
		for await (const m of anthropic.models.list()) an.push(m)
		expect(an.find((m) => m.id === 'gpt-4o-mini')).toMatchObject({ max_input_tokens: 128_000, max_tokens: 16_384 })
		expect(an.find((m) => m.id === 'claude-sonnet-5')).toMatchObject({ max_input_tokens: 1_000_000, max_tokens: 128_000 })
		// An embedding model is not one /v1/messages can call: it is not offered to Anthropic's clients.
		expect(an.some((m) => m.id === 'text-embedding-3-small')).toBe(false)
		expect(await anthropic.models.retrieve('gemini-2.5-flash')).toMatchObject({ max_input_tokens: 1_048_576, max_tokens: 65_536 })
	})

	it('should require a key', async () => {
		expect((await get('/v1/models', {})).status).toBe(401)
		expect((await get('/v1beta/models', {})).status).toBe(403) // Google's status for a call without a key
	})

	it("should refuse the anthropic SDK in Anthropic's shape, with the request-id it reads (a bad key, none, a bad query)", async () => {
		const bad = new Anthropic({ apiKey: 'sk-not-a-key', baseURL: n.app.url, maxRetries: 0 })
		for (const call of [() => bad.models.list(), () => bad.models.retrieve('claude-sonnet-5'), () => bad.models.retrieve('openai/gpt-4o-mini')]) {
			const e = (await call().catch((x: unknown) => x)) as InstanceType<typeof Anthropic.APIError>
			expect(e).toBeInstanceOf(Anthropic.AuthenticationError)
			expect(e.error).toMatchObject({ type: 'error', error: { type: 'authentication_error' }, request_id: e.requestID })
			expect(e.requestID).toBeTruthy()
			expect(e.headers?.get('request-id')).toBe(e.requestID)
		}
		const none = await get('/v1/models', { 'anthropic-version': '2023-06-01' })
		expect(none.status).toBe(401)
		expect(await none.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error', message: expect.stringContaining('x-api-key') } })
		const a = await n.app.account(1)
		const anthropic = new Anthropic({ apiKey: a.key, baseURL: n.app.url, maxRetries: 0 })
		const invalid = (await anthropic.models.list({ limit: 0 }).catch((x: unknown) => x)) as InstanceType<typeof Anthropic.APIError>
		expect(invalid).toBeInstanceOf(Anthropic.BadRequestError)
		expect(invalid.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
		expect(invalid.requestID).toBeTruthy()
		// OpenAI's clients keep OpenAI's shape on the same paths.
		const openai = await get('/v1/models', { authorization: 'Bearer sk-not-a-key' })
		expect(openai.status).toBe(401)
		expect(await openai.json()).toMatchObject({ error: { type: 'invalid_request_error' } })
	})
})

describe('POST /v1/messages/count_tokens', () => {
	it('should count by Anthropic, by Gemini and locally, without billing, for the anthropic SDK', async () => {
		const a = await n.app.account(1)
		const anthropic = new Anthropic({ apiKey: a.key, baseURL: n.app.url, maxRetries: 0 })
		const messages = [{ role: 'user' as const, content: 'one two three four' }]
		const claude = await anthropic.messages.countTokens({ model: 'claude-sonnet-5', system: 'five six', messages })
		expect(claude.input_tokens).toBe(6)
		const up = n.anthropic.requests.at(-1)!
		expect(up.path).toBe('/v1/messages/count_tokens')
		expect(up.body).toEqual({ model: 'claude-sonnet-5', system: 'five six', messages })
		const gem = await anthropic.messages.countTokens({ model: 'gemini-2.5-flash', system: 'five six', messages })
		expect(gem.input_tokens).toBe(6)
		expect(n.gemini.requests.at(-1)!.path).toBe('/v1beta/models/gemini-2.5-flash:countTokens')
		const local = await anthropic.messages.countTokens({ model: 'gpt-4o-mini', messages }).withResponse()
		expect(local.response.headers.get('x-switchboard-counted-by')).toBe('estimate')
		expect(local.data.input_tokens).toBeGreaterThan(0)
		expect(await n.app.balance(a.accountId)).toBe(1)
		expect((await n.app.admin(`/api/usage?account_id=${a.accountId}`)).body.data).toEqual([])
	})

	it('should count locally when the vendor counter fails with a retryable error', async () => {
		const a = await n.app.account(1)
		n.anthropic.faultOnce = { kind: 'status', status: 529 }
		const res = await fetch(`${n.app.url}/v1/messages/count_tokens`, {
			method: 'POST',
			headers: { 'x-api-key': a.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
			body: JSON.stringify({ model: 'claude-sonnet-5', messages: [{ role: 'user', content: 'hello' }] }),
		})
		expect(res.status).toBe(200)
		expect(res.headers.get('x-switchboard-counted-by')).toBe('estimate')
	})

	it("should answer 404 and 400 in Anthropic's shape", async () => {
		const a = await n.app.account(1)
		const h = { 'x-api-key': a.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }
		const missing = await fetch(`${n.app.url}/v1/messages/count_tokens`, { method: 'POST', headers: h, body: JSON.stringify({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }) })
		expect(missing.status).toBe(404)
		expect(await missing.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } })
		const bad = await fetch(`${n.app.url}/v1/messages/count_tokens`, { method: 'POST', headers: h, body: JSON.stringify({ model: 'claude-sonnet-5' }) })
		expect(bad.status).toBe(400)
		expect(await bad.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
	})
})
