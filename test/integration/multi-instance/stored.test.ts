/**
 * What the gateway stores in the database works from every instance: made on A, used on B (two real processes on one
 * PostgreSQL, no Redis between them, so nothing can travel but through the database). Responses continued by
 * `previous_response_id` (converted for Claude, and OpenAI's own), OpenAI files and batches, Anthropic files and
 * message batches, Gemini context caches.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { toFile as anthropicFile } from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import { toFile } from 'openai'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { startAnthropicMock, startGeminiMock, startOpenAIMock, type VendorMock } from '../../mocks'
import { anthropic, books, noteSkip, ON_POSTGRES, openai, type Pair, type Server, startPair } from './pair'

noteSkip(import.meta.path)

let oa: VendorMock
let an: VendorMock
let ge: VendorMock
beforeAll(async () => {
	if (!ON_POSTGRES) return
	oa = await startOpenAIMock({ apiKey: 'up-o' })
	an = await startAnthropicMock({ apiKey: 'up-a' })
	ge = await startGeminiMock({ apiKey: 'up-g' })
})
afterAll(async () => {
	await oa?.stop()
	await an?.stop()
	await ge?.stop()
})

const config = (): GatewayConfig => ({
	channels: [
		{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-o', models: ['gpt-4o-mini'] },
		{ name: 'an', type: 'anthropic', base_url: an.url, api_key: 'up-a', models: ['claude-sonnet-5'] },
		{ name: 'ge', type: 'gemini', base_url: ge.url, api_key: 'up-g', models: ['gemini-2.5-flash'] },
	],
	models: ['gpt-4o-mini', 'claude-sonnet-5', 'gemini-2.5-flash'].map((name) => ({ name, input_per_mtok: 1, output_per_mtok: 2 })),
})

const gemini = (server: Server, key: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: server.url, apiVersion: 'v1beta' } })

describe.skipIf(!ON_POSTGRES)('made on instance A, used on instance B (one PostgreSQL, no Redis)', () => {
	let p: Pair
	let key: string
	let accountId: number
	beforeAll(async () => {
		p = await startPair(import.meta.path, config(), { redis: false, env: { TASK_POLL_INTERVAL_MS: '200' } })
		const acct = await p.account(5)
		key = acct.tokens[0]!.key
		accountId = acct.accountId
	}, 30_000)
	afterAll(() => p?.close())

	it('should continue on B a converted Responses conversation begun on A, and serve its stored routes there', async () => {
		const first = await openai(p.a, key).responses.create({ model: 'claude-sonnet-5', input: 'my name is Ada' })
		an.reset()
		const next = await openai(p.b, key).responses.create({ model: 'claude-sonnet-5', previous_response_id: first.id, input: 'what is my name' })
		expect(next.output_text).toContain('what is my name')
		// Claude got the whole conversation: A's turn and answer, then B's.
		const sent = an.requests.at(-1)!.body as { messages: Array<{ role: string; content: unknown }> }
		expect(JSON.stringify(sent.messages)).toContain('my name is Ada')
		expect(sent.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
		expect((await openai(p.b, key).responses.retrieve(first.id)).id).toBe(first.id)
		const items = await openai(p.b, key).responses.inputItems.list(next.id)
		expect(items.data.length).toBeGreaterThan(0)
		// Streamed on A from B's answer.
		let text = ''
		for await (const e of await openai(p.a, key).responses.create({ model: 'claude-sonnet-5', previous_response_id: next.id, input: 'and again', stream: true }))
			if (e.type === 'response.output_text.delta') text += e.delta
		expect(text).toContain('and again')
	})

	it("should continue on B an OpenAI model's response made on A", async () => {
		const first = await openai(p.a, key).responses.create({ model: 'gpt-4o-mini', input: 'remember the number 7' })
		const next = await openai(p.b, key).responses.create({ model: 'gpt-4o-mini', previous_response_id: first.id, input: 'which number' })
		expect(next.previous_response_id).toBe(first.id)
		expect((await openai(p.b, key).responses.retrieve(first.id)).output_text).toBe(first.output_text)
	})

	it('should run on B an OpenAI batch whose file was uploaded on A, and settle it once with both instances polling', async () => {
		const line = (id: string) => JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', max_tokens: 20, messages: [{ role: 'user', content: `batch ${id}` }] } })
		const file = await openai(p.a, key).files.create({ file: await toFile(Buffer.from(`${line('one')}\n${line('two')}\n`), 'in.jsonl'), purpose: 'batch' })
		expect((await openai(p.b, key).files.retrieve(file.id)).id).toBe(file.id)
		const batch = await openai(p.b, key).batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })
		const done = await openai(p.a, key).batches.retrieve(batch.id)
		expect(done.status).toBe('completed')
		const out = await (await openai(p.b, key).files.content(done.output_file_id!)).text()
		expect(out.trim().split('\n').map((l) => JSON.parse(l).custom_id).sort()).toEqual(['one', 'two'])
		// Both instances poll open tasks: the batch's settlement is written once whichever did it.
		await Bun.sleep(600)
		const rows = await p.dep.withDb((db) => db.sql.query<{ n: string }>("SELECT count(*) AS n FROM usage_logs WHERE account_id = $1 AND endpoint LIKE '%batches%' AND cost > 0", [accountId]))
		const again = await openai(p.b, key).batches.retrieve(batch.id)
		expect(again.status).toBe('completed')
		await Bun.sleep(300)
		const rows2 = await p.dep.withDb((db) => db.sql.query<{ n: string }>("SELECT count(*) AS n FROM usage_logs WHERE account_id = $1 AND endpoint LIKE '%batches%' AND cost > 0", [accountId]))
		expect(Number(rows[0]!.n)).toBeGreaterThan(0)
		expect(Number(rows2[0]!.n)).toBe(Number(rows[0]!.n))
		const s = await books(p.dep, accountId)
		expect(s.credits).toBe(s.balance + s.usageCost + s.leased)
	})

	it('should read on B an Anthropic file uploaded on A, and the results of a message batch created on A', async () => {
		const meta = await anthropic(p.a, key).beta.files.upload({ file: await anthropicFile(Buffer.from('shared notes'), 'notes.txt', { type: 'text/plain' }) })
		expect(await anthropic(p.b, key).beta.files.retrieveMetadata(meta.id)).toEqual(meta)
		const created = await anthropic(p.a, key).messages.batches.create({
			requests: [{ custom_id: 'q1', params: { model: 'claude-sonnet-5', max_tokens: 20, messages: [{ role: 'user', content: 'batched hello' }] } }],
		})
		const done = await anthropic(p.b, key).messages.batches.retrieve(created.id)
		expect(done.processing_status).toBe('ended')
		const results: string[] = []
		for await (const r of await anthropic(p.b, key).messages.batches.results(created.id)) results.push(r.custom_id)
		expect(results).toEqual(['q1'])
	})

	it('should answer on B from a Gemini context cache created on A', async () => {
		const cache = await gemini(p.a, key).caches.create({ model: 'gemini-2.5-flash', config: { contents: [{ role: 'user', parts: [{ text: 'The contract renews every year' }] }], ttl: '600s' } })
		expect((await gemini(p.b, key).caches.get({ name: cache.name! })).name).toBe(cache.name)
		ge.reset()
		const r = await gemini(p.b, key).models.generateContent({ model: 'gemini-2.5-flash', contents: 'when does it renew', config: { cachedContent: cache.name } })
		expect(r.text).toContain('when does it renew')
		expect(JSON.stringify(ge.requests.at(-1)!.body)).toContain('The contract renews every year')
		await gemini(p.b, key).caches.delete({ name: cache.name! })
		const gone = await gemini(p.a, key).caches.get({ name: cache.name! }).then(
			() => 200,
			(e: { status?: number }) => e.status,
		)
		expect(gone).toBe(404)
	})
})
