/**
 * The quick start as the README gives it: vendor keys in the environment (OPENAI_API_KEY, GEMINI_API_KEY, …) and no
 * GATEWAY_CONFIG. Each key makes a default channel whose model globs must not claim another vendor's models: QA found
 * OpenAI's `text-embedding-*` also matching Google's `text-embedding-004`, so half of its calls went to OpenAI, which
 * answers 404 model_not_found for it. Such a 404 is now tried on the next channel (src/routing/attempts.ts), so the
 * caller would still get its answer, after a wasted call to the wrong vendor: the tests check no call reaches it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { startTestApp, type TestApp } from '../../helpers/app'
import { OPENAI_MODELS, startGeminiMock, startOpenAIMock } from '../../mocks'

let app: TestApp
let openaiUp: Awaited<ReturnType<typeof startOpenAIMock>>
let geminiUp: Awaited<ReturnType<typeof startGeminiMock>>

beforeAll(async () => {
	// The OpenAI mock knows OpenAI's models only, as the real API does.
	openaiUp = await startOpenAIMock({ apiKey: 'up-openai', models: OPENAI_MODELS })
	geminiUp = await startGeminiMock({ apiKey: 'up-gemini' })
	app = await startTestApp({
		env: { OPENAI_API_KEY: 'up-openai', OPENAI_BASE_URL: openaiUp.url, GEMINI_API_KEY: 'up-gemini', GEMINI_BASE_URL: geminiUp.url, ALLOW_UNPRICED_MODELS: 'true' },
	})
}, 60_000)
afterAll(async () => {
	await app.close()
	await openaiUp.stop()
	await geminiUp.stop()
})

describe('quick-start channels', () => {
	it("should send Google's text-embedding-004 to the Gemini channel only, every time", async () => {
		const { key } = await app.account(1)
		const client = new OpenAI({ baseURL: `${app.url}/v1`, apiKey: key, maxRetries: 0 })
		for (let i = 0; i < 12; i++) {
			const out = await client.embeddings.create({ model: 'text-embedding-004', input: `line ${i}` })
			expect(out.data[0]!.embedding.length).toBeGreaterThan(0)
		}
		expect(openaiUp.requests.filter((r) => r.path.endsWith('/embeddings'))).toEqual([])
		expect(geminiUp.requests.length).toBe(12)
	})

	it("should still send OpenAI's own embedding models to the OpenAI channel", async () => {
		const { key } = await app.account(1)
		const client = new OpenAI({ baseURL: `${app.url}/v1`, apiKey: key, maxRetries: 0 })
		for (const model of ['text-embedding-3-small', 'text-embedding-3-large']) {
			const out = await client.embeddings.create({ model, input: 'hello' })
			expect(out.data[0]!.embedding.length).toBeGreaterThan(0)
		}
		expect(openaiUp.requests.filter((r) => r.path.endsWith('/embeddings')).map((r) => (r.body as { model: string }).model)).toEqual(['text-embedding-3-small', 'text-embedding-3-large'])
	})
})

describe('quick-start base URLs as an .env file gives them', () => {
	// A blank value counts as unset and spaces around a URL are not part of it, as for every other variable (README).
	let padded: TestApp
	beforeAll(async () => {
		padded = await startTestApp({ env: { OPENAI_API_KEY: 'up-openai', OPENAI_BASE_URL: `  ${openaiUp.url} `, ANTHROPIC_API_KEY: 'up-anthropic', ANTHROPIC_BASE_URL: ' ', ALLOW_UNPRICED_MODELS: 'true' } })
	}, 60_000)
	afterAll(() => padded?.close())

	it('should use the vendor URL for a blank one and the trimmed URL for a padded one', async () => {
		const { body } = await padded.admin('/api/channels')
		const urls = Object.fromEntries(body.data.map((c: { name: string; base_url: string }) => [c.name, c.base_url]))
		expect(urls).toEqual({ 'openai-default': openaiUp.url, 'anthropic-default': 'https://api.anthropic.com' })
		const { key } = await padded.account(1)
		const client = new OpenAI({ baseURL: `${padded.url}/v1`, apiKey: key, maxRetries: 0 })
		const before = openaiUp.requests.length
		const out = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] })
		expect(out.choices[0]!.message.content).toBeTruthy()
		expect(openaiUp.requests.length).toBe(before + 1)
	})
})

describe('metrics of models no price or channel lists', () => {
	it('should give the first 100 such names a label each and count the rest under one, however many a caller makes up', async () => {
		const { key } = await app.account(1)
		const ask = (model: string) =>
			fetch(`${app.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }) })
		expect((await ask('gpt-4o-mini')).status).toBe(200)
		// The OpenAI mock answers 404 for a name it does not know, as OpenAI does: each was still a request to count.
		for (let i = 0; i < 120; i++) expect((await ask(`gpt-made-up-${i}-${crypto.randomUUID()}`)).status).toBe(404)
		const text = await (await fetch(`${app.url}/metrics`)).text()
		const models = new Set([...text.matchAll(/^switchboard_requests_total\{[^}]*model="([^"]*)"/gm)].map((m) => m[1]))
		expect(models.has('gpt-4o-mini')).toBe(true)
		expect(models.has('(unlisted)')).toBe(true)
		expect([...models].filter((m) => m!.startsWith('gpt-made-up-')).length).toBeLessThanOrEqual(100)
	})
})
