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
		expect(first.data.map((m) => m.id)).toEqual(ALL.slice(0, 2))
		expect(first.data[0]).toMatchObject({ type: 'model', display_name: ALL[0] })
		expect(first.has_more).toBe(true)
		const ids: string[] = []
		for await (const m of anthropic.models.list({ limit: 2 })) ids.push(m.id)
		expect(ids).toEqual(ALL)
		expect((await anthropic.models.retrieve('gemini-2.5-flash')).id).toBe('gemini-2.5-flash')
		const missing = await get('/v1/models/nope', { 'x-api-key': a.key, 'anthropic-version': '2023-06-01' })
		expect(await missing.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } })
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

	it("should give @google/genai the model's output cap as outputTokenLimit, and no inputTokenLimit it does not know", async () => {
		// Audit: models.get / models.list carry Gemini's token limits; the gateway knows the output cap (max_output_tokens)
		// and keeps no context window, so inputTokenLimit is left out (README) rather than invented.
		const a = await n.app.account(1)
		const ai = new GoogleGenAI({ apiKey: a.key, httpOptions: { baseUrl: n.app.url, apiVersion: 'v1beta' } })
		const row = ((await n.app.admin('/api/models')).body.data as Array<{ id: number; name: string }>).find((m) => m.name === 'gemini-2.5-flash')!
		expect((await n.app.admin(`/api/models/${row.id}`, { method: 'PATCH', body: { max_output_tokens: 65536 } })).status).toBe(200)
		try {
			const one = await ai.models.get({ model: 'gemini-2.5-flash' })
			expect(one.outputTokenLimit).toBe(65536)
			expect(one.inputTokenLimit).toBeUndefined()
			const listed: Array<{ name?: string; outputTokenLimit?: number }> = []
			for await (const m of await ai.models.list()) listed.push(m)
			expect(listed.find((m) => m.name === 'models/gemini-2.5-flash')?.outputTokenLimit).toBe(65536)
			expect(listed.find((m) => m.name === 'models/gpt-4o-mini')?.outputTokenLimit).toBeUndefined()
		} finally {
			await n.app.admin(`/api/models/${row.id}`, { method: 'PATCH', body: { max_output_tokens: null } })
		}
	})

	it('should require a key', async () => {
		expect((await get('/v1/models', {})).status).toBe(401)
		expect((await get('/v1beta/models', {})).status).toBe(401)
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
