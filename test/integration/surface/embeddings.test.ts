import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startGeminiMock, startOpenAIMock, vector, type VendorMock } from '../../mocks'
import { countInput } from '../../../src/modules/embeddings/count'
import { call, micros, priceList, usageOf } from './helpers'

let oa: VendorMock
let ge: VendorMock
let app: TestApp
/** In front of the Gemini mock: answers 503 UNAVAILABLE to the call numbered `failAt` (1-based), forwards the rest. */
let flaky: ReturnType<typeof Bun.serve>
let flakyCalls: { path: string; requests: number }[] = []
let failAt = 0

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	ge = await startGeminiMock({ apiKey: 'up-ge' })
	flaky = Bun.serve({
		port: 0,
		hostname: '127.0.0.1',
		async fetch(req) {
			const url = new URL(req.url)
			const text = await req.text()
			flakyCalls.push({ path: url.pathname, requests: (JSON.parse(text) as { requests?: unknown[] }).requests?.length ?? 1 })
			if (flakyCalls.length === failAt) return Response.json({ error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } }, { status: 503 })
			return fetch(ge.url + url.pathname + url.search, { method: 'POST', headers: req.headers, body: text })
		},
	})
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['text-embedding-3-small', 'emb-alias'], model_map: { 'emb-alias': 'text-embedding-3-small' } },
				{ name: 'ge', type: 'gemini', base_url: ge.url, api_key: 'up-ge', models: ['gemini-embedding-001'] },
				{ name: 'ge-flaky', type: 'gemini', base_url: `http://127.0.0.1:${flaky.port}`, api_key: 'up-ge', models: ['gemini-flaky'], model_map: { 'gemini-flaky': 'gemini-embedding-001' } },
			],
			// $1000 per million tokens = 1000 micro-USD per token, so every token shows in the balance.
			models: priceList([
				{ name: 'text-embedding-3-small', input_per_mtok: 1000 },
				{ name: 'emb-alias', input_per_mtok: 1000 },
				{ name: 'gemini-embedding-001', input_per_mtok: 1000 },
				{ name: 'gemini-flaky', input_per_mtok: 1000 },
			]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await oa.stop()
	await ge.stop()
	await flaky.stop(true)
})

describe('POST /v1/embeddings', () => {
	it('should relay an OpenAI embedding through the SDK and bill the upstream prompt tokens', async () => {
		const { key, accountId } = await app.account(1)
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		const r = await openai.embeddings.create({ model: 'text-embedding-3-small', input: 'one two three', dimensions: 8 })
		expect(r.data).toHaveLength(1)
		expect(r.data[0]!.embedding).toHaveLength(8)
		// The SDK asks for base64 and decodes it: the vector must survive the relay exactly (float32).
		const expected = vector('one two three', 8).map((x) => Math.fround(x))
		expect(r.data[0]!.embedding).toEqual(expected)
		expect(r.usage.prompt_tokens).toBe(3)
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 3000)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ endpoint: '/v1/embeddings', input_tokens: 3, cost: 0.003, estimated: false })
	})

	it('should return float arrays for an array input with encoding_format float', async () => {
		const { key } = await app.account(1)
		const r = await call(app, key, '/v1/embeddings', { body: { model: 'text-embedding-3-small', input: ['a b', 'c'], encoding_format: 'float', dimensions: 4 } })
		expect(r.status).toBe(200)
		expect(r.body.data.map((d: { index: number }) => d.index)).toEqual([0, 1])
		expect(r.body.data[1].embedding).toEqual(vector('c', 4))
	})

	it('should rename the model through model_map and show the client the name it asked for', async () => {
		const { key } = await app.account(1)
		oa.reset()
		const r = await call(app, key, '/v1/embeddings', { body: { model: 'emb-alias', input: 'x', encoding_format: 'float' } })
		expect(r.status).toBe(200)
		expect(r.body.model).toBe('emb-alias')
		expect((oa.requests[0]!.body as { model: string }).model).toBe('text-embedding-3-small')
		expect(oa.requests[0]!.headers.authorization).toBe('Bearer up-oa')
	})

	it('should convert to Gemini embedContent for one input and bill counted tokens', async () => {
		const { key, accountId } = await app.account(1)
		ge.reset()
		const r = await call(app, key, '/v1/embeddings', { body: { model: 'gemini-embedding-001', input: 'hello world', encoding_format: 'float', dimensions: 5 } })
		expect(r.status).toBe(200)
		expect(ge.requests[0]!.path).toBe('/v1beta/models/gemini-embedding-001:embedContent')
		expect(ge.requests[0]!.body).toEqual({ content: { parts: [{ text: 'hello world' }] }, outputDimensionality: 5 })
		expect(r.body).toMatchObject({ object: 'list', model: 'gemini-embedding-001', usage: { prompt_tokens: 2, total_tokens: 2 } })
		expect(r.body.data[0].embedding).toEqual(vector('hello world', 5))
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ input_tokens: 2, estimated: true, cost: 0.002 })
	})

	it('should convert an array to Gemini batchEmbedContents and answer base64 float32 when asked', async () => {
		const { key } = await app.account(1)
		ge.reset()
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		const r = await openai.embeddings.create({ model: 'gemini-embedding-001', input: ['first', 'second'], dimensions: 3 })
		expect(ge.requests[0]!.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents')
		expect((ge.requests[0]!.body as { requests: unknown[] }).requests).toHaveLength(2)
		expect(r.data[1]!.embedding).toEqual(vector('second', 3).map((x) => Math.fround(x)))
	})

	it('should split 150 inputs into Gemini batches of at most 100 and join the vectors in order', async () => {
		const { key, accountId, tokenId } = await app.account(1)
		ge.reset()
		const input = Array.from({ length: 150 }, (_, i) => `text number ${i}`)
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		const r = await openai.embeddings.create({ model: 'gemini-embedding-001', input, dimensions: 4 })
		const batches = ge.requests.map((q) => ({ path: q.path, texts: (q.body as { requests: { content: { parts: { text: string }[] } }[] }).requests.map((x) => x.content.parts[0]!.text) }))
		expect(batches.map((b) => b.path)).toEqual(Array(2).fill('/v1beta/models/gemini-embedding-001:batchEmbedContents'))
		expect(batches.map((b) => b.texts.length)).toEqual([100, 50])
		expect(batches.flatMap((b) => b.texts)).toEqual(input)
		expect(r.data.map((d) => d.index)).toEqual(input.map((_, i) => i))
		r.data.forEach((d, i) => expect(d.embedding).toEqual(vector(input[i]!, 4).map((x) => Math.fround(x))))
		// Charged once for every text of every batch (counted locally, as Gemini reports no usage).
		const tokens = countInput(input)
		expect(r.usage.prompt_tokens).toBe(tokens)
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - tokens * 1000)
		const rows = await usageOf(app, accountId)
		expect(rows).toHaveLength(1)
		expect(rows[0]).toMatchObject({ input_tokens: tokens, estimated: true, status: 200, end_reason: 'ok' })
		expect((await app.admin(`/api/tokens/${tokenId}`)).body.reserved).toBe(0)
	})

	it('should fail the whole request when a later batch fails, charged only for the batches Gemini answered', async () => {
		const { key, accountId, tokenId } = await app.account(1)
		flakyCalls = []
		failAt = 2
		const input = Array.from({ length: 250 }, (_, i) => `t ${i}`)
		const r = await call(app, key, '/v1/embeddings', { body: { model: 'gemini-flaky', input, encoding_format: 'float' } })
		failAt = 0
		expect(r.status).toBe(503)
		expect(r.body.error).toBeDefined()
		expect(flakyCalls[0]!.requests).toBe(100)
		expect(flakyCalls.every((c) => c.path === '/v1beta/models/gemini-embedding-001:batchEmbedContents' && c.requests <= 100)).toBe(true)
		// Batch 1 was answered before batch 2 failed; batch 3, sent beside batch 2, may have been answered too. Gemini bills
		// what it embedded, so those texts are charged (counted here: Gemini reports no tokens), the request failed.
		const first = countInput(input.slice(0, 100))
		const rows = await usageOf(app, accountId)
		expect(rows).toHaveLength(1)
		expect(rows[0]).toMatchObject({ end_reason: 'error', status: 503, estimated: true })
		expect([first, first + countInput(input.slice(200))]).toContain(rows[0]!.input_tokens)
		expect(micros(rows[0]!.cost)).toBe(rows[0]!.input_tokens * 1000)
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - rows[0]!.input_tokens * 1000)
		expect((await app.admin(`/api/tokens/${tokenId}`)).body.reserved).toBe(0)
	})

	it('should refuse token-array input for a Gemini model with a 400 and charge nothing', async () => {
		const { key, accountId } = await app.account(1)
		const r = await call(app, key, '/v1/embeddings', { body: { model: 'gemini-embedding-001', input: [[1, 2, 3]] } })
		expect(r.status).toBe(400)
		expect(r.body.error.param).toBe('input')
		expect(await app.balance(accountId)).toBe(1)
	})

	it('should answer 400 for empty input and 404 for an unknown model, in OpenAI shape', async () => {
		const { key } = await app.account(1)
		const empty = await call(app, key, '/v1/embeddings', { body: { model: 'text-embedding-3-small', input: '' } })
		expect(empty.status).toBe(400)
		expect(empty.body.error.type).toBe('invalid_request_error')
		const unknown = await call(app, key, '/v1/embeddings', { body: { model: 'nope', input: 'x' } })
		expect(unknown.status).toBe(404)
		expect(unknown.body.error.code).toBe('model_not_found')
	})

	// OpenAI's codes for a refused parameter, which its SDKs' callers switch on (platform.openai.com/docs/guides/error-codes).
	it('should code a refused parameter as OpenAI does: missing, of the wrong type, not one of its values', async () => {
		const { key } = await app.account(1)
		const codeOf = async (body: Record<string, unknown>) => (await call(app, key, '/v1/embeddings', { body })).body.error
		expect(await codeOf({ model: 'text-embedding-3-small' })).toMatchObject({ param: 'input', code: 'missing_required_parameter' })
		expect(await codeOf({ model: 'text-embedding-3-small', input: 'x', dimensions: 'ten' })).toMatchObject({ param: 'dimensions', code: 'invalid_type' })
		expect(await codeOf({ model: 'text-embedding-3-small', input: 'x', encoding_format: 'hex' })).toMatchObject({ param: 'encoding_format', code: 'invalid_value' })
	})

	it('should not charge when the upstream fails', async () => {
		const { key, accountId } = await app.account(1)
		oa.fault = { kind: 'status', status: 500 }
		try {
			const r = await call(app, key, '/v1/embeddings', { body: { model: 'text-embedding-3-small', input: 'x' } })
			expect(r.status).toBe(502)
		} finally {
			oa.fault = undefined
		}
		expect(await app.balance(accountId)).toBe(1)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ cost: 0, end_reason: 'error' })
	})
})
