import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { call, micros, priceList, usageOf } from './helpers'

let reranker: VendorMock
let oa: VendorMock
let app: TestApp

beforeAll(async () => {
	// The OpenAI mock serves a Cohere/Jina-style /v1/rerank: it stands in for a `rerank` channel and an openai one.
	reranker = await startOpenAIMock({ apiKey: 'up-rr' })
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'rr', type: 'rerank', base_url: reranker.url, api_key: 'up-rr', models: ['rerank-english-v3.0'] },
				{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['jina-reranker-v2'] },
			],
			models: priceList([
				{ name: 'rerank-english-v3.0', input_per_mtok: 1000, per_search_unit: 0.002 },
				{ name: 'jina-reranker-v2', input_per_mtok: 1000 },
			]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await reranker.stop()
	await oa.stop()
})

const docs = ['Paris is the capital of France', 'Berlin is in Germany', 'The capital of France is big']

describe('POST /v1/rerank', () => {
	it('should rank documents from a rerank channel, sorted by score, with usage, billing tokens and search units', async () => {
		const { key, accountId } = await app.account(1)
		reranker.reset()
		const r = await call(app, key, '/v1/rerank', { body: { model: 'rerank-english-v3.0', query: 'capital of France', documents: docs } })
		expect(r.status).toBe(200)
		expect(reranker.requests[0]!.path).toBe('/v1/rerank')
		expect(reranker.requests[0]!.headers.authorization).toBe('Bearer up-rr')
		const scores = r.body.results.map((x: { relevance_score: number }) => x.relevance_score)
		expect(scores).toEqual([...scores].sort((a: number, b: number) => b - a))
		expect(r.body.results[2].index).toBe(1)
		expect(r.body.usage.total_tokens).toBe(3 + 6 + 4 + 6)
		// upstream returned documents and the client did not say: echoed from the request
		expect(r.body.results[0].document).toEqual({ text: docs[r.body.results[0].index] })
		// 19 tokens × 1000 + 1 search unit × 2000
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 19_000 - 2000)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ endpoint: '/v1/rerank', input_tokens: 19, estimated: false })
	})

	it('should cut to top_n and leave documents out when return_documents is false', async () => {
		const { key } = await app.account(1)
		const r = await call(app, key, '/v1/rerank', { body: { model: 'rerank-english-v3.0', query: 'capital of France', documents: docs, top_n: 2, return_documents: false } })
		expect(r.body.results).toHaveLength(2)
		expect(r.body.results[0].document).toBeUndefined()
	})

	it('should keep object documents as the client sent them', async () => {
		const { key } = await app.account(1)
		const objs = [{ text: 'France capital', id: 'a' }, { text: 'nothing', id: 'b' }]
		const r = await call(app, key, '/v1/rerank', { body: { model: 'rerank-english-v3.0', query: 'France capital', documents: objs, return_documents: true } })
		expect(r.body.results[0]).toMatchObject({ index: 0, document: { text: 'France capital', id: 'a' } })
	})

	it('should serve a rerank model listed on an openai channel at its /rerank', async () => {
		const { key } = await app.account(1)
		oa.reset()
		const r = await call(app, key, '/v1/rerank', { body: { model: 'jina-reranker-v2', query: 'Germany', documents: docs } })
		expect(r.status).toBe(200)
		expect(oa.requests[0]!.path).toBe('/v1/rerank')
		expect(r.body.results[0].index).toBe(1)
		expect(r.body.model).toBe('jina-reranker-v2')
	})

	it('should list such a model as a reranker, not as a chat model for Anthropic or Gemini clients', async () => {
		const { key } = await app.account(1)
		const list = async (path: string, headers: Record<string, string>) => {
			const res = await fetch(`${app.url}${path}`, { headers: { ...headers } })
			expect(res.status).toBe(200)
			return JSON.stringify(await res.json())
		}
		// OpenAI's list names every model the key reaches; Anthropic's only those /v1/messages serves, Gemini's those
		// with a Gemini method (README, Models).
		expect(await list('/v1/models', { authorization: `Bearer ${key}` })).toContain('jina-reranker-v2')
		expect(await list('/v1/models', { 'x-api-key': key, 'anthropic-version': '2023-06-01' })).not.toContain('reranker')
		expect(await list('/v1beta/models', { 'x-goog-api-key': key })).not.toContain('reranker')
	})

	it('should answer 400 for missing documents and charge nothing', async () => {
		const { key, accountId } = await app.account(1)
		const r = await call(app, key, '/v1/rerank', { body: { model: 'rerank-english-v3.0', query: 'x', documents: [] } })
		expect(r.status).toBe(400)
		expect(r.body.error).toBeDefined()
		expect(await app.balance(accountId)).toBe(1)
	})

	it('should fail over to nothing and not charge when the reranker is down', async () => {
		const { key, accountId } = await app.account(1)
		reranker.fault = { kind: 'status', status: 503 }
		try {
			const r = await call(app, key, '/v1/rerank', { body: { model: 'rerank-english-v3.0', query: 'x', documents: ['y'] } })
			// A vendor's 503 is an overload, and stays 503 when it ends the failover (README: status codes).
			expect(r.status).toBe(503)
		} finally {
			reranker.fault = undefined
		}
		expect(await app.balance(accountId)).toBe(1)
	})
})
