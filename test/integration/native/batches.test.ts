/**
 * OpenAI's Files and Batch API through the gateway, with the official `openai` SDK against the OpenAI mock
 * (test/mocks/openai/batches.ts): upload, create, poll, download, list, cancel; the whole file's upper bound held
 * at creation and the real cost of the completed lines settled at batch prices (half the model's) when it ends;
 * every file and batch seen only by its own account.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI, { APIError, toFile } from 'openai'
import { countInput } from '../../../src/modules/embeddings/count'
import { startTaskPoller } from '../../../src/tasks/poller'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { refused } from './setup'

let mock: VendorMock
let app: TestApp

beforeAll(async () => {
	mock = await startOpenAIMock({ apiKey: 'up-oa' })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'oa', type: 'openai', base_url: mock.url, api_key: 'up-oa', models: ['gpt-4o-mini', 'gpt-4.1', 'o4-mini', 'text-embedding-3-small', 'renamed'], model_map: { renamed: 'gpt-4o-mini' } },
			],
			models: [
				{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 },
				// A reasoning model, for reasoning_effort (which gpt-4o-mini refuses, as OpenAI does).
				{ name: 'o4-mini', input_per_mtok: 1, output_per_mtok: 2 },
				// Its own batch prices instead of half.
				{ name: 'gpt-4.1', input_per_mtok: 2, output_per_mtok: 8, batch_input_per_mtok: 0.4, batch_output_per_mtok: 3 },
				{ name: 'text-embedding-3-small', input_per_mtok: 0.5, output_per_mtok: 0 },
				{ name: 'renamed', input_per_mtok: 1, output_per_mtok: 2 },
			],
		},
	})
}, 60_000)

afterAll(async () => {
	await app.close()
	await mock.stop()
})

const client = async (balance = 1, fields?: Record<string, unknown>) => {
	const a = await app.account(balance, fields as Parameters<TestApp['account']>[1])
	return { ...a, openai: new OpenAI({ apiKey: a.key, baseURL: `${app.url}/v1`, maxRetries: 0 }) }
}

type Line = { custom_id: string; method: 'POST'; url: string; body: Record<string, unknown> }
const chatLine = (id: string, text: string, model = 'gpt-4o-mini', max = 100): Line => ({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content: text }], max_tokens: max } })
const jsonl = (lines: Line[]) => lines.map((l) => JSON.stringify(l)).join('\n') + '\n'
const upload = async (openai: OpenAI, lines: Line[]) => openai.files.create({ file: await toFile(Buffer.from(jsonl(lines)), 'batch.jsonl'), purpose: 'batch' })

/** micro-USD of an output file's lines at per-model batch prices (USD per million tokens: [input, output]), each line rounded half up. */
function costOf(output: string, prices: Record<string, [number, number]>, modelOf: (customId: string) => string): number {
	let micro = 0
	for (const raw of output.trim().split('\n')) {
		const line = JSON.parse(raw)
		const u = line.response.body.usage
		const [i, o] = prices[modelOf(line.custom_id)]!
		const input = u.prompt_tokens ?? u.input_tokens
		const out = u.completion_tokens ?? u.output_tokens ?? 0
		micro += Math.round(input * i + out * o)
	}
	return micro
}
const usd = (micro: number) => micro / 1e6

describe('OpenAI batches', () => {
	it('should hold the upper bound, then charge the completed lines at half price and refund the rest', async () => {
		const a = await client(1)
		const lines = [chatLine('one', 'hello there batch'), chatLine('two', 'second line of the batch', 'gpt-4o-mini', 50)]
		const file = await upload(a.openai, lines)
		expect(file).toMatchObject({ object: 'file', purpose: 'batch', filename: 'batch.jsonl' })
		const created = await a.openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })
		expect(created).toMatchObject({ object: 'batch', status: 'validating', input_file_id: file.id })
		// Held: each line's body bytes as input tokens at $0.50/M plus its max_tokens at $1/M (and a micro-USD of rounding margin).
		const bound = lines.reduce((sum, l) => sum + Math.round(Buffer.byteLength(JSON.stringify(l.body)) * 0.5) + (l.body.max_tokens as number) * 1 + 1, 0)
		expect(await app.balance(a.accountId)).toBeCloseTo(1 - usd(bound), 9)

		const done = await a.openai.batches.retrieve(created.id)
		expect(done.status).toBe('completed')
		expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 })
		const output = await (await a.openai.files.content(done.output_file_id!)).text()
		expect(output.trim().split('\n').map((l) => JSON.parse(l).custom_id).sort()).toEqual(['one', 'two'])
		const cost = costOf(output, { 'gpt-4o-mini': [0.5, 1] }, () => 'gpt-4o-mini')
		expect(cost).toBeGreaterThan(0)
		expect(await app.balance(a.accountId)).toBeCloseTo(1 - usd(cost), 9)
		// Settled once: retrieving again changes nothing.
		await a.openai.batches.retrieve(created.id)
		expect(await app.balance(a.accountId)).toBeCloseTo(1 - usd(cost), 9)
	})

	it("should record the lines' tokens (input, cached, output, reasoning) in the batch's usage rows, per model", async () => {
		const a = await client(1)
		// o4-mini reasons and takes max_completion_tokens (a reasoning model refuses max_tokens).
		const reasoned = (id: string, text: string, extra: Record<string, unknown> = {}): Line => ({
			custom_id: id,
			method: 'POST',
			url: '/v1/chat/completions',
			body: { model: 'o4-mini', messages: [{ role: 'user', content: text }], max_completion_tokens: 100, ...extra },
		})
		const lines = [
			reasoned('cached', 'a cached prompt #cache with enough words to cover the cache', { reasoning_effort: 'low' }),
			reasoned('plain', 'a plain second line'),
			chatLine('big', 'the larger model answers this one', 'gpt-4.1'),
		]
		const file = await upload(a.openai, lines)
		const b = await a.openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })
		const done = await a.openai.batches.retrieve(b.id)
		const output = (await (await a.openai.files.content(done.output_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l))
		// What the vendor reported per model, summed over its lines.
		const reported = (model: string) => {
			const mine = output.filter((l) => (l.custom_id === 'big' ? 'gpt-4.1' : 'o4-mini') === model).map((l) => l.response.body.usage)
			const sum = (f: (u: any) => number) => mine.reduce((n, u) => n + f(u), 0)
			return { input: sum((u) => u.prompt_tokens), cached: sum((u) => u.prompt_tokens_details.cached_tokens), output: sum((u) => u.completion_tokens), reasoning: sum((u) => u.completion_tokens_details.reasoning_tokens) }
		}
		expect(reported('o4-mini').cached).toBeGreaterThan(0)
		expect(reported('o4-mini').reasoning).toBeGreaterThan(0)
		const rows = (await app.admin(`/api/usage?account_id=${a.accountId}&limit=100`)).body.data as Array<{ model: string; input_tokens: number; cached_tokens: number; output_tokens: number; reasoning_tokens: number; cost: number }>
		for (const model of ['o4-mini', 'gpt-4.1']) {
			const of = rows.filter((r) => r.model === model)
			const sum = (f: (r: (typeof rows)[number]) => number) => of.reduce((n, r) => n + f(r), 0)
			expect({ input: sum((r) => r.input_tokens), cached: sum((r) => r.cached_tokens), output: sum((r) => r.output_tokens), reasoning: sum((r) => r.reasoning_tokens) }).toEqual(reported(model))
		}
		// Each model's rows cost what its lines did at its batch prices, and together what the account paid.
		const cost = (model: string, p: [number, number]) =>
			costOf(output.filter((l) => (l.custom_id === 'big' ? 'gpt-4.1' : 'o4-mini') === model).map((l) => JSON.stringify(l)).join('\n'), { [model]: p }, () => model)
		const micro = (model: string) => Math.round(rows.filter((r) => r.model === model).reduce((n, r) => n + r.cost, 0) * 1e6)
		expect(micro('gpt-4.1')).toBe(cost('gpt-4.1', [0.4, 3]))
		expect(micro('o4-mini')).toBe(cost('o4-mini', [0.5, 1]))
		expect(await app.balance(a.accountId)).toBeCloseTo(1 - usd(micro('gpt-4.1') + micro('o4-mini')), 9)
	})

	it("should price each line by its own model, at a model's own batch prices", async () => {
		const a = await client(1)
		const file = await upload(a.openai, [chatLine('mini', 'cheap model line'), chatLine('big', 'the larger model answers this', 'gpt-4.1')])
		const b = await a.openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })
		const done = await a.openai.batches.retrieve(b.id)
		const output = await (await a.openai.files.content(done.output_file_id!)).text()
		const cost = costOf(output, { 'gpt-4o-mini': [0.5, 1], 'gpt-4.1': [0.4, 3] }, (id) => (id === 'big' ? 'gpt-4.1' : 'gpt-4o-mini'))
		expect(await app.balance(a.accountId)).toBeCloseTo(1 - usd(cost), 9)
	})

	it('should price a Responses batch from its lines\' usage', async () => {
		const a = await client(1)
		const line = { custom_id: 'r1', method: 'POST' as const, url: '/v1/responses', body: { model: 'gpt-4o-mini', input: 'answer through the responses api', max_output_tokens: 64 } }
		const file = await upload(a.openai, [line])
		const b = await a.openai.batches.create({ input_file_id: file.id, endpoint: '/v1/responses', completion_window: '24h' })
		const done = await a.openai.batches.retrieve(b.id)
		expect(done.status).toBe('completed')
		const output = await (await a.openai.files.content(done.output_file_id!)).text()
		expect(JSON.parse(output).response.body.usage.input_tokens).toBeGreaterThan(0)
		const cost = costOf(output, { 'gpt-4o-mini': [0.5, 1] }, () => 'gpt-4o-mini')
		expect(await app.balance(a.accountId)).toBeCloseTo(1 - usd(cost), 9)
	})

	it('should settle an embeddings batch found ended by the background poller', async () => {
		const a = await client(1)
		const file = await a.openai.files.create({
			file: await toFile(Buffer.from(JSON.stringify({ custom_id: 'e1', method: 'POST', url: '/v1/embeddings', body: { model: 'text-embedding-3-small', input: 'embed these words please' } }) + '\n'), 'e.jsonl'),
			purpose: 'batch',
		})
		const b = await a.openai.batches.create({ input_file_id: file.id, endpoint: '/v1/embeddings', completion_window: '24h' })
		const poller = startTaskPoller(app.svc, { intervalMs: 3_600_000, idleMs: 0 })
		try {
			expect(await poller.tick()).toBeGreaterThan(0)
		} finally {
			await poller.stop()
		}
		const seen = await a.openai.batches.retrieve(b.id)
		expect(seen.status).toBe('completed')
		const output = await (await a.openai.files.content(seen.output_file_id!)).text()
		const cost = costOf(output, { 'text-embedding-3-small': [0.25, 0] }, () => 'text-embedding-3-small')
		expect(cost).toBeGreaterThan(0)
		expect(await app.balance(a.accountId)).toBeCloseTo(1 - usd(cost), 9)
	})

	it('should hold an embeddings batch at its inputs\' token count, as POST /v1/embeddings holds it, not a token per byte', async () => {
		const texts = ['word '.repeat(1500), ['alpha beta gamma delta '.repeat(200), 'one more text to embed here'], 'mixed text, 12345 and ünïcödé '.repeat(40)]
		const lines = texts.map((input, i) => ({ custom_id: `e${i}`, method: 'POST' as const, url: '/v1/embeddings', body: { model: 'text-embedding-3-small', input } }))
		// text-embedding-3-small at batch prices: $0.25/M, a quarter micro-USD a token, plus a micro-USD of rounding margin per line.
		const hold = texts.reduce<number>((n, input) => n + Math.round(countInput(input) * 0.25) + 1, 0)
		const byBytes = lines.reduce((n, l) => n + Math.round(Buffer.byteLength(JSON.stringify(l.body)) * 0.25) + 1, 0)
		expect(byBytes).toBeGreaterThan(3 * hold)
		// The balance covers the real hold, not the byte-based one.
		const a = await client(usd(hold + 20))
		const file = await upload(a.openai, lines)
		const b = await a.openai.batches.create({ input_file_id: file.id, endpoint: '/v1/embeddings', completion_window: '24h' })
		expect(b.status).toBe('validating')
		expect(Math.round((await app.balance(a.accountId)) * 1e6)).toBe(20)
		const done = await a.openai.batches.retrieve(b.id)
		const output = await (await a.openai.files.content(done.output_file_id!)).text()
		expect(await app.balance(a.accountId)).toBeCloseTo(usd(hold + 20 - costOf(output, { 'text-embedding-3-small': [0.25, 0] }, () => 'text-embedding-3-small')), 9)
	})

	it('should charge a cancelled batch only for the lines that completed', async () => {
		const a = await client(1)
		const file = await upload(a.openai, [chatLine('first', 'done before the cancel'), chatLine('second', 'never run'), chatLine('third', 'never run either')])
		const b = await a.openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })
		expect((await a.openai.batches.cancel(b.id)).status).toBe('cancelling')
		const done = await a.openai.batches.retrieve(b.id)
		expect(done.status).toBe('cancelled')
		expect(done.request_counts).toEqual({ total: 3, completed: 1, failed: 0 })
		const output = await (await a.openai.files.content(done.output_file_id!)).text()
		const cost = costOf(output, { 'gpt-4o-mini': [0.5, 1] }, () => 'gpt-4o-mini')
		expect(await app.balance(a.accountId)).toBeCloseTo(1 - usd(cost), 9)
	})

	it("should show files and batches only to their account and list each account's own", async () => {
		const a = await client(1)
		const b = await client(1)
		const file = await upload(a.openai, [chatLine('x', 'private work')])
		const batch = await a.openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })
		const before = mock.requests.length
		for (const call of [() => b.openai.files.retrieve(file.id), () => b.openai.files.content(file.id), () => b.openai.files.delete(file.id), () => b.openai.batches.retrieve(batch.id), () => b.openai.batches.cancel(batch.id)]) {
			const err = await refused(call())
			expect(err).toBeInstanceOf(APIError)
			expect(err!.status).toBe(404)
		}
		const err = await refused(b.openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }))
		expect(err!.status).toBe(404)
		expect(mock.requests.length).toBe(before)
		expect(await app.balance(b.accountId)).toBe(1)

		const done = await a.openai.batches.retrieve(batch.id)
		expect((await refused(b.openai.files.content(done.output_file_id!)))!.status).toBe(404)
		expect((await a.openai.files.retrieve(done.output_file_id!)).purpose).toBe('batch_output')
		expect((await a.openai.batches.list()).data.map((x) => x.id)).toEqual([batch.id])
		expect((await b.openai.batches.list()).data).toEqual([])
		expect((await a.openai.files.list()).data.map((f) => f.id).sort()).toEqual([file.id, done.output_file_id!].sort())
		expect(await a.openai.files.delete(file.id)).toMatchObject({ id: file.id, deleted: true })
		expect((await refused(a.openai.files.retrieve(file.id)))!.status).toBe(404)
	})

	it('should refuse a file naming a model the key may not use, unserved or renamed, before anything is sent or held', async () => {
		const a = await client(1, { allowed_models: ['gpt-4o-mini', 'renamed'] } as Record<string, unknown>)
		const before = mock.requests.length
		const denied = await refused(upload(a.openai, [chatLine('ok', 'fine'), chatLine('no', 'not allowed', 'gpt-4.1')]))
		expect(denied!.status).toBe(403)
		const unknown = await refused(upload((await client(1)).openai, [chatLine('u', 'who', 'no-such-model')]))
		expect(unknown!.status).toBe(404)
		const renamed = await refused(upload(a.openai, [chatLine('r', 'mapped', 'renamed')]))
		expect(renamed!.status).toBe(400)
		expect(renamed!.message).toContain('served here as "gpt-4o-mini"')
		const purpose = await refused(a.openai.files.create({ file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'assistants' }))
		expect(purpose!.status).toBe(400)
		expect(mock.requests.length).toBe(before)
		expect(await app.balance(a.accountId)).toBe(1)
	})

	it('should hold for the images and files a line names (a URL, a file_id), not by the bytes of their references', async () => {
		const a = await client(1)
		const image = { custom_id: 'img', method: 'POST' as const, url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'high' } }] }] } }
		// A file a line names must be the account's (refs.ts): one it uploaded.
		const named = await upload(a.openai, [chatLine('x', 'a file to name')])
		const pdf = { custom_id: 'pdf', method: 'POST' as const, url: '/v1/responses', body: { model: 'gpt-4o-mini', max_output_tokens: 10, input: [{ role: 'user', content: [{ type: 'input_file', file_id: named.id }, { type: 'input_text', text: 'summarise' }] }] } }
		// An image URL at high detail: gpt-4o-mini's most for one image, 2833 + 5667 × 8 tiles (768x2048) = 48,169 tokens.
		for (const [line, endpoint, least] of [[image, '/v1/chat/completions', 48_169], [pdf, '/v1/responses', 15_000]] as const) {
			const before = await app.balance(a.accountId)
			const file = await upload(a.openai, [line])
			await a.openai.batches.create({ input_file_id: file.id, endpoint, completion_window: '24h' })
			// gpt-4o-mini at batch prices: $0.50/M input, so each input token held is half a micro-USD. The settlement is capped
			// at the hold, so a hold short of an image's tokens would leave them unpaid.
			const held = Math.round((before - (await app.balance(a.accountId))) * 1e6)
			expect(held).toBeGreaterThanOrEqual(Math.round(least * 0.5) + 10)
		}
	})

	it("should refuse a Responses line continuing another account's response, as POST /v1/responses does", async () => {
		const a = await client(1)
		const b = await client(1)
		const mine = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'a private conversation' })
		const cont = (id: string) => ({ custom_id: 'c', method: 'POST' as const, url: '/v1/responses', body: { model: 'gpt-4o-mini', input: 'what did I say?', previous_response_id: id, max_output_tokens: 16 } })
		const uploads = () => mock.requests.filter((r) => r.path === '/v1/files').length
		const before = uploads()
		const stolen = await refused(upload(b.openai, [cont(mine.id)]))
		expect(stolen!.status).toBe(400)
		expect(stolen!.param).toBe('previous_response_id')
		const conv = await refused(upload(b.openai, [{ ...cont(mine.id), body: { model: 'gpt-4o-mini', input: 'x', conversation: 'conv_someone_elses' } }]))
		expect(conv!.status).toBe(404)
		// Nor may it name the response's items (OpenAI resolves them in the key's project).
		const item = mine.output[0]!.id!
		const named = await refused(upload(b.openai, [{ ...cont(mine.id), body: { model: 'gpt-4o-mini', input: [{ type: 'item_reference', id: item }] } }]))
		expect(named!.status).toBe(404)
		expect(named!.message).toContain(`Item with id '${item}' not found.`)
		expect(uploads()).toBe(before)
		// The owner may continue it in a batch.
		const file = await upload(a.openai, [cont(mine.id)])
		const batch = await a.openai.batches.create({ input_file_id: file.id, endpoint: '/v1/responses', completion_window: '24h' })
		expect(batch.status).toBe('validating')
	})

	it("should charge a line's real usage beyond the hold, as a background response is, when it continues a long conversation", async () => {
		const a = await client(1)
		const long = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'word '.repeat(4000) })
		const line = { custom_id: 'more', method: 'POST' as const, url: '/v1/responses', body: { model: 'gpt-4o-mini', input: 'and then?', previous_response_id: long.id, max_output_tokens: 16 } }
		const file = await upload(a.openai, [line])
		const before = await app.balance(a.accountId)
		const b = await a.openai.batches.create({ input_file_id: file.id, endpoint: '/v1/responses', completion_window: '24h' })
		const held = Math.round((before - (await app.balance(a.accountId))) * 1e6)
		const done = await a.openai.batches.retrieve(b.id)
		const output = await (await a.openai.files.content(done.output_file_id!)).text()
		const cost = costOf(output, { 'gpt-4o-mini': [0.5, 1] }, () => 'gpt-4o-mini')
		// The chain's 4,000 words are input of the continuation (OpenAI bills them), far beyond the line's own bytes.
		expect(cost).toBeGreaterThan(held)
		expect(await app.balance(a.accountId)).toBeCloseTo(before - usd(cost), 9)
	})

	it("should take what a batch's usage exceeds its hold by only as far as the key's spend limit goes", async () => {
		const a = await client(1)
		const long = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'term '.repeat(4000) })
		const spentOf = async () => {
			await app.svc.ledger.flush()
			return Math.round(Number((await app.admin(`/api/tokens/${a.tokenId}`)).body.spent) * 1e6)
		}
		// 500 micro-USD of room left on the key: enough for the hold, not for the continuation's chain (~2,000 at batch prices).
		const limit = (await spentOf()) + 500
		expect((await app.admin(`/api/tokens/${a.tokenId}`, { method: 'PATCH', body: { spend_limit: usd(limit) } })).status).toBe(200)
		const line = { custom_id: 'more', method: 'POST' as const, url: '/v1/responses', body: { model: 'gpt-4o-mini', input: 'and then?', previous_response_id: long.id, max_output_tokens: 16 } }
		const file = await upload(a.openai, [line])
		const b = await a.openai.batches.create({ input_file_id: file.id, endpoint: '/v1/responses', completion_window: '24h' })
		const held = (await spentOf()) - (limit - 500)
		const done = await a.openai.batches.retrieve(b.id)
		const cost = costOf(await (await a.openai.files.content(done.output_file_id!)).text(), { 'gpt-4o-mini': [0.5, 1] }, () => 'gpt-4o-mini')
		expect(cost).toBeGreaterThan(500)
		const spent = await spentOf()
		// More than the hold was taken, up to the key's limit and no further; the usage rows add up to what the key spent.
		expect(spent).toBeLessThanOrEqual(limit)
		expect(held).toBeGreaterThan(0)
		expect(spent).toBeGreaterThan(limit - 500 + held)
		const rows = (await app.admin(`/api/usage?account_id=${a.accountId}&limit=100`)).body.data as Array<{ cost: number }>
		expect(Math.round(rows.reduce((s, r) => s + r.cost, 0) * 1e6)).toBe(spent)
		expect(Math.round((1 - (await app.balance(a.accountId))) * 1e6)).toBe(spent)
	})

	it("should let the account retrieve and continue the responses its Responses batch made, and no other account", async () => {
		const a = await client(1)
		const other = await client(1)
		const file = await upload(a.openai, [{ custom_id: 'r', method: 'POST', url: '/v1/responses', body: { model: 'gpt-4o-mini', input: 'remember the number seven', max_output_tokens: 32 } }])
		const b = await a.openai.batches.create({ input_file_id: file.id, endpoint: '/v1/responses', completion_window: '24h' })
		const done = await a.openai.batches.retrieve(b.id)
		const id = JSON.parse(await (await a.openai.files.content(done.output_file_id!)).text()).response.body.id as string
		expect((await a.openai.responses.retrieve(id)).id).toBe(id)
		const next = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'which number?', previous_response_id: id })
		expect(next.status).toBe('completed')
		expect((await refused(other.openai.responses.retrieve(id)))!.status).toBe(404)
	})

	it("should refuse a batch whose lines are for another endpoint, and one the balance cannot cover, holding nothing", async () => {
		const a = await client(0.0001)
		const file = await upload(a.openai, [chatLine('big', 'needs a large cap', 'gpt-4o-mini', 100_000)])
		const batchCalls = () => mock.requests.filter((r) => r.path === '/v1/batches').length
		const before = batchCalls()
		const wrong = await refused(a.openai.batches.create({ input_file_id: file.id, endpoint: '/v1/responses', completion_window: '24h' }))
		expect(wrong!.status).toBe(400)
		const poor = await refused(a.openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }))
		expect(poor!.status).toBe(402)
		expect(batchCalls()).toBe(before)
		expect(await app.balance(a.accountId)).toBeCloseTo(0.0001, 9)
	})
})

describe('list paging', () => {
	it("should list only the files of the purpose asked for, as OpenAI's purpose filter does", async () => {
		const a = await client(1)
		const file = await upload(a.openai, [chatLine('p', 'filter my files')])
		const b = await a.openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })
		const done = await a.openai.batches.retrieve(b.id)
		expect(done.output_file_id).toBeString()
		expect((await a.openai.files.list({ purpose: 'batch' })).data.map((f) => f.id)).toEqual([file.id])
		const outputs = await a.openai.files.list({ purpose: 'batch_output', limit: 1 })
		expect(outputs.data.map((f) => f.id)).toEqual([done.output_file_id!])
		expect(outputs.has_more).toBe(false)
		expect((await a.openai.files.list({ purpose: 'fine-tune' })).data).toEqual([])
		expect((await a.openai.files.list()).data).toHaveLength(2)
	})
	it('should refuse a limit that is not a whole number, naming it, before the database sees it', async () => {
		const { key } = await client()
		for (const path of ['/v1/files?limit=2.5', '/v1/batches?limit=2.5', '/v1/models?limit=2.5']) {
			const res = await fetch(`${app.url}${path}`, { headers: { authorization: `Bearer ${key}` } })
			expect(res.status).toBe(400)
			expect((await res.json()).error).toMatchObject({ type: 'invalid_request_error', param: 'limit' })
		}
	})
})
