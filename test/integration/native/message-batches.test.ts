/**
 * Anthropic's Message Batches API through the gateway, with the official `@anthropic-ai/sdk` against the Anthropic
 * mock (test/mocks/anthropic/batches.ts): create, poll, results (JSONL streamed and parsed by the SDK), list, cancel,
 * delete; every request's upper bound held at batch prices at creation and the succeeded requests billed from their
 * usage (cache reads and writes included) when the batch ends, once, across two instances; each batch its account's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { startTaskPoller } from '../../../src/tasks/poller'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startAnthropicMock, startOpenAIMock, type VendorMock } from '../../mocks'
import { type Cluster, allUsage, clients, startCluster } from '../admin/instances'

let mock: VendorMock
let oa: VendorMock
let app: TestApp

/** Batch prices, micro-USD per million tokens: [input, output, cache read, cache write]. */
const BATCH: Record<string, [number, number, number, number]> = {
	// Half of $4 / $16 / $0.40 / $5.
	'claude-sonnet-5': [2_000_000, 8_000_000, 200_000, 2_500_000],
	// Its own batch prices ($0.50 / $4); cache writes halved, reads (none set: at the input price, halved: $1) capped at
	// the batch input price.
	'qa-claude': [500_000, 4_000_000, 500_000, 0],
}

const config = (an: string, openai: string): GatewayConfig => ({
	channels: [
		{ name: 'an', type: 'anthropic', base_url: an, api_key: 'up-an', models: ['claude-sonnet-5', 'qa-claude', 'claude-haiku-4-5'], model_map: { 'qa-claude': 'claude-sonnet-5' } },
		{ name: 'an-opus', type: 'anthropic', base_url: an, api_key: 'up-an', models: ['claude-opus-5'] },
		{ name: 'oa', type: 'openai', base_url: openai, api_key: 'up-oa', models: ['gpt-4o-mini'] },
	],
	models: [
		{ name: 'claude-sonnet-5', input_per_mtok: 4, output_per_mtok: 16, cache_read_per_mtok: 0.4, cache_write_per_mtok: 5 },
		{ name: 'qa-claude', input_per_mtok: 2, output_per_mtok: 10, batch_input_per_mtok: 0.5, batch_output_per_mtok: 4 },
		{ name: 'claude-opus-5', input_per_mtok: 5, output_per_mtok: 25 },
		{ name: 'claude-haiku-4-5', input_per_mtok: 1, output_per_mtok: 5, cache_write_per_mtok: 1.25, cache_write_1h_per_mtok: 2, per_web_search: 0.01 },
		{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 },
	],
})

beforeAll(async () => {
	mock = await startAnthropicMock({ apiKey: 'up-an' })
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	app = await startTestApp({ config: config(mock.url, oa.url) })
}, 60_000)

afterAll(async () => {
	await app.close()
	await mock.stop()
	await oa.stop()
})

const client = async (balance = 1, token?: Record<string, unknown>) => {
	const a = await app.account(balance, token as Parameters<TestApp['account']>[1])
	return { ...a, claude: new Anthropic({ apiKey: a.key, baseURL: app.url, maxRetries: 0 }) }
}
const failure = (p: Promise<unknown>) => p.then(
	() => undefined,
	(e) => e as InstanceType<typeof Anthropic.APIError>,
)

type Req = { custom_id: string; params: Anthropic.MessageCreateParamsNonStreaming }
const req = (id: string, text: string, model = 'claude-sonnet-5', max = 100): Req => ({ custom_id: id, params: { model, max_tokens: max, messages: [{ role: 'user', content: text }] } })
/** The bound a request is held at when its params' bytes exceed its token bound: every byte at the dearest input price, its max_tokens at the output price. */
const held = (reqs: Req[]) =>
	reqs.reduce((n, r) => {
		const [i, o, cr, cw] = BATCH[r.params.model]!
		return n + Math.round((Buffer.byteLength(JSON.stringify(r.params)) * Math.max(i, cr, cw)) / 1e6) + (r.params.max_tokens * o) / 1e6 + 1
	}, 0)

type Result = { custom_id: string; result: { type: string; message?: { usage: Anthropic.Usage } } }
const results = async (c: Anthropic, id: string): Promise<Result[]> => {
	const out: Result[] = []
	for await (const line of await c.messages.batches.results(id)) out.push(line as unknown as Result)
	return out
}
/** micro-USD of the succeeded results at their models' batch prices, each rounded half up as the ledger rounds. */
function costOf(lines: Result[], modelOf: (customId: string) => string = () => 'claude-sonnet-5'): number {
	let micro = 0
	for (const l of lines) {
		if (l.result.type !== 'succeeded') continue
		const u = l.result.message!.usage
		const [i, o, cr, cw] = BATCH[modelOf(l.custom_id)]!
		micro += Math.round((u.input_tokens * i + u.output_tokens * o + (u.cache_read_input_tokens ?? 0) * cr + (u.cache_creation_input_tokens ?? 0) * cw) / 1e6)
	}
	return micro
}
const usd = (micro: number) => micro / 1e6
const micro = async (accountId: number) => Math.round((await app.balance(accountId)) * 1e6)

describe('Anthropic message batches', () => {
	it('should hold the bound at batch prices, then bill the succeeded requests from their usage (cache reads and writes too) and refund the rest', async () => {
		const a = await client(1)
		const reqs = [req('one', 'hello there batch'), req('two', 'a cached prompt #cache with enough words to cover the cache', 'claude-sonnet-5', 50), req('three', 'written to the cache #write-cache with words enough for it', 'claude-sonnet-5', 80)]
		const created = await a.claude.messages.batches.create({ requests: reqs })
		expect(created).toMatchObject({ type: 'message_batch', processing_status: 'in_progress', results_url: null, request_counts: { processing: 3 } })
		expect(await micro(a.accountId)).toBe(1e6 - held(reqs))
		expect(mock.requests.filter((r) => r.path === '/v1/messages/batches' && r.method === 'POST').at(-1)?.headers['x-api-key']).toBe('up-an')

		const done = await a.claude.messages.batches.retrieve(created.id)
		expect(done.processing_status).toBe('ended')
		expect(done.request_counts).toEqual({ processing: 0, succeeded: 3, errored: 0, canceled: 0, expired: 0 })
		// The results are on the gateway, which serves them to this account only; the vendor's URL would not take its key.
		expect(done.results_url).toBe(`${app.url}/v1/messages/batches/${created.id}/results`)
		const lines = await results(a.claude, created.id)
		expect(lines.map((l) => [l.custom_id, l.result.type])).toEqual([['one', 'succeeded'], ['two', 'succeeded'], ['three', 'succeeded']])
		const usage = lines.map((l) => l.result.message!.usage)
		expect(usage[1]!.cache_read_input_tokens).toBeGreaterThan(0)
		expect(usage[2]!.cache_creation_input_tokens).toBeGreaterThan(0)
		const cost = costOf(lines)
		expect(cost).toBeGreaterThan(0)
		expect(await micro(a.accountId)).toBe(1e6 - cost)
		// Settled once: asking again changes nothing.
		await a.claude.messages.batches.retrieve(created.id)
		await results(a.claude, created.id)
		expect(await micro(a.accountId)).toBe(1e6 - cost)

		// The usage rows carry the requests' tokens and add up to what the account paid.
		const rows = (await app.admin(`/api/usage?account_id=${a.accountId}&limit=100`)).body.data as Array<Record<string, number | string>>
		expect(rows.every((r) => r.endpoint === '/v1/messages/batches')).toBe(true)
		const sum = (k: string) => rows.reduce((n, r) => n + Number(r[k]), 0)
		expect({ input: sum('input_tokens'), output: sum('output_tokens'), cached: sum('cached_tokens'), written: sum('cache_write_tokens') }).toEqual({
			// The management API reports the whole prompt, as vendors other than Anthropic do: cache reads and writes included.
			input: usage.reduce((n, u) => n + u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0), 0),
			output: usage.reduce((n, u) => n + u.output_tokens, 0),
			cached: usage.reduce((n, u) => n + (u.cache_read_input_tokens ?? 0), 0),
			written: usage.reduce((n, u) => n + (u.cache_creation_input_tokens ?? 0), 0),
		})
		expect(Math.round(sum('cost') * 1e6)).toBe(cost)
	})

	it("should send each request's model under the channel's name and price it at the model's own batch prices", async () => {
		const a = await client(1)
		const reqs = [req('mapped', 'an alias of the channel', 'qa-claude', 40), req('plain', 'the model as named', 'claude-sonnet-5', 40)]
		const b = await a.claude.messages.batches.create({ requests: reqs })
		const sent = mock.requests.filter((r) => r.path === '/v1/messages/batches' && r.method === 'POST').at(-1)!.body as { requests: Req[] }
		expect(sent.requests.map((r) => [r.custom_id, r.params.model])).toEqual([['mapped', 'claude-sonnet-5'], ['plain', 'claude-sonnet-5']])
		expect(await micro(a.accountId)).toBe(1e6 - held(reqs))
		await a.claude.messages.batches.retrieve(b.id)
		const cost = costOf(await results(a.claude, b.id), (id) => (id === 'mapped' ? 'qa-claude' : 'claude-sonnet-5'))
		expect(await micro(a.accountId)).toBe(1e6 - cost)
		const rows = (await app.admin(`/api/usage?account_id=${a.accountId}&limit=100`)).body.data as Array<{ model: string }>
		expect(new Set(rows.map((r) => r.model))).toEqual(new Set(['qa-claude', 'claude-sonnet-5']))
	})

	it('should name the model in the results as the client asked for it, as messages.create does, the rest as Anthropic sent it', async () => {
		const a = await client(1)
		const params = req('x', 'hello there', 'qa-claude', 40).params
		const direct = await a.claude.messages.create(params)
		expect(direct.model).toBe('qa-claude')
		// A batch of the alias alone (its model is the task's), and one beside a model sent under its own name.
		for (const reqs of [[req('one', 'hello there', 'qa-claude', 40)], [req('mapped', 'hello there', 'qa-claude', 40), req('plain', 'hello there', 'claude-sonnet-5', 40)]]) {
			const b = await a.claude.messages.batches.create({ requests: reqs })
			await a.claude.messages.batches.retrieve(b.id)
			const models: Record<string, string | undefined> = {}
			for await (const line of await a.claude.messages.batches.results(b.id)) models[line.custom_id] = line.result.type === 'succeeded' ? line.result.message.model : line.result.type
			expect(models).toEqual(Object.fromEntries(reqs.map((r) => [r.custom_id, r.params.model])))
			// Only the model changed: the upstream's lines otherwise byte for byte.
			const upstream = await fetch(`${mock.url}/v1/messages/batches/${b.id}/results`, { headers: { 'x-api-key': 'up-an', 'anthropic-version': '2023-06-01' } }).then((r) => r.text())
			const shown = await fetch(`${app.url}/v1/messages/batches/${b.id}/results`, { headers: { 'x-api-key': a.key, 'anthropic-version': '2023-06-01' } }).then((r) => r.text())
			expect(shown).toBe(upstream.replaceAll(/"custom_id":"(mapped|one)"(.*?)"model":"claude-sonnet-5"/g, '"custom_id":"$1"$2"model":"qa-claude"'))
			expect(shown).not.toBe(upstream)
		}
	})

	it('should hold and bill 1-hour cache writes at half their price and web searches at their full price', async () => {
		const a = await client(1)
		const tools = [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }]
		const system = [{ type: 'text', text: 'be brief', cache_control: { type: 'ephemeral', ttl: '1h' } }]
		const r = { custom_id: 'search', params: { model: 'claude-haiku-4-5', max_tokens: 60, system, tools, messages: [{ role: 'user', content: 'what is new #search #write-cache-1h in the news' }] } } as unknown as Req
		await a.claude.messages.batches.create({ requests: [r] }).then(async (b) => {
			// Every input byte at the 1-hour write price ($1/M in a batch), the output at $2.50/M, and three searches at $10 per 1,000.
			expect(await micro(a.accountId)).toBe(1e6 - (Buffer.byteLength(JSON.stringify(r.params)) * 1 + 60 * 2.5 + 1 + 3 * 10_000))
			await a.claude.messages.batches.retrieve(b.id)
			const [line] = await results(a.claude, b.id)
			const u = line!.result.message!.usage
			expect(u.server_tool_use?.web_search_requests).toBe(2)
			expect(u.cache_creation?.ephemeral_1h_input_tokens).toBeGreaterThan(0)
			const tokens = Math.round((u.input_tokens * 500_000 + u.output_tokens * 2_500_000 + (u.cache_creation_input_tokens ?? 0) * 1_000_000) / 1e6)
			expect(await micro(a.accountId)).toBe(1e6 - tokens - 2 * 10_000)
		})
	})

	it("should refuse another vendor's model, and models no one Anthropic channel serves, naming them, before anything is sent or held", async () => {
		const a = await client(1)
		const before = mock.requests.length
		const other = await failure(a.claude.messages.batches.create({ requests: [req('fine', 'ok'), req('gpt', 'not a Claude model', 'gpt-4o-mini')] }))
		expect(other?.status).toBe(400)
		expect(other?.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
		const said = (e: typeof other) => (e?.error as { error: { message: string } }).error.message
		expect(said(other)).toContain('"gpt-4o-mini"')
		expect(said(other)).toContain("'gpt'")
		const split = await failure(a.claude.messages.batches.create({ requests: [req('s', 'sonnet'), req('o', 'opus', 'claude-opus-5')] }))
		expect(split?.status).toBe(400)
		expect(said(split)).toContain('claude-opus-5')
		const unknown = await failure(a.claude.messages.batches.create({ requests: [req('u', 'who', 'no-such-model')] }))
		expect(unknown?.status).toBe(404)
		expect(mock.requests.length).toBe(before)
		expect(await micro(a.accountId)).toBe(1e6)
	})

	it('should bill a canceled batch only for what it answered before the cancel', async () => {
		const a = await client(1)
		const b = await a.claude.messages.batches.create({ requests: [req('first', 'answered before the cancel'), req('second', 'never run'), req('third', 'never run either')] })
		const canceling = await a.claude.messages.batches.cancel(b.id)
		expect(canceling.processing_status).toBe('canceling')
		expect(canceling.cancel_initiated_at).toBeString()
		const done = await a.claude.messages.batches.retrieve(b.id)
		expect(done.request_counts).toEqual({ processing: 0, succeeded: 1, errored: 0, canceled: 2, expired: 0 })
		const lines = await results(a.claude, b.id)
		expect(lines.map((l) => l.result.type)).toEqual(['succeeded', 'canceled', 'canceled'])
		const cost = costOf(lines)
		expect(cost).toBeGreaterThan(0)
		expect(await micro(a.accountId)).toBe(1e6 - cost)
		const rows = (await app.admin(`/api/usage?account_id=${a.accountId}&limit=100`)).body.data as Array<{ end_reason: string; cost: number }>
		expect(rows.some((r) => r.end_reason === 'cancelled')).toBe(true)
	})

	it('should bill neither errored nor expired requests, and refund all of a batch none of whose requests succeeded', async () => {
		const a = await client(1)
		const bad = { custom_id: 'bad', params: { model: 'claude-sonnet-5', max_tokens: 10, messages: [{ role: 'system', content: 'not a turn role' }] } } as unknown as Req
		const b = await a.claude.messages.batches.create({ requests: [req('ok', 'this one succeeds'), bad, req('late', 'ran out of time #expire')] })
		await a.claude.messages.batches.retrieve(b.id)
		const lines = await results(a.claude, b.id)
		expect(lines.map((l) => l.result.type)).toEqual(['succeeded', 'errored', 'expired'])
		expect(await micro(a.accountId)).toBe(1e6 - costOf(lines))

		const c = await client(1)
		const none = await c.claude.messages.batches.create({ requests: [req('gone', 'expired #expire'), { ...bad, custom_id: 'bad2' }] })
		expect(await micro(c.accountId)).toBeLessThan(1e6)
		expect((await c.claude.messages.batches.retrieve(none.id)).request_counts).toMatchObject({ succeeded: 0, errored: 1, expired: 1 })
		expect(await micro(c.accountId)).toBe(1e6)
		const rows = (await app.admin(`/api/usage?account_id=${c.accountId}&limit=100`)).body.data as Array<{ cost: number }>
		expect(Math.round(rows.reduce((n, r) => n + r.cost, 0) * 1e6)).toBe(0)
	})

	it('should show, cancel, delete and give the results of a batch only to its account', async () => {
		const a = await client(1)
		const b = await client(1)
		const batch = await a.claude.messages.batches.create({ requests: [req('x', 'private work')] })
		const before = mock.requests.length
		for (const call of [
			() => b.claude.messages.batches.retrieve(batch.id),
			() => b.claude.messages.batches.cancel(batch.id),
			() => b.claude.messages.batches.delete(batch.id),
			() => b.claude.messages.batches.results(batch.id),
		]) {
			const err = await failure(call())
			expect(err).toBeInstanceOf(Anthropic.NotFoundError)
			expect(err?.error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } })
		}
		const raw = await fetch(`${app.url}/v1/messages/batches/${batch.id}/results`, { headers: { 'x-api-key': b.key, 'anthropic-version': '2023-06-01' } })
		expect(raw.status).toBe(404)
		expect(mock.requests.length).toBe(before)
		expect(await micro(b.accountId)).toBe(1e6)
		expect((await a.claude.messages.batches.list()).data.map((x) => x.id)).toEqual([batch.id])
		expect((await b.claude.messages.batches.list()).data).toEqual([])
	})

	it('should refuse to delete a batch still processing, and delete an ended one, keeping its usage', async () => {
		const a = await client(1)
		const batch = await a.claude.messages.batches.create({ requests: [req('d', 'a long batch #hold'), req('e', 'never run')] })
		const before = mock.requests.length
		const busy = await failure(a.claude.messages.batches.delete(batch.id))
		expect(busy?.status).toBe(400)
		expect((busy?.error as { error: { message: string } }).error.message).toContain('cancel it')
		expect(mock.requests.slice(before).filter((r) => r.method === 'DELETE')).toHaveLength(0)
		const early = await fetch(`${app.url}/v1/messages/batches/${batch.id}/results`, { headers: { 'x-api-key': a.key, 'anthropic-version': '2023-06-01' } })
		expect(early.status).toBe(400)
		expect((await early.json()).error.type).toBe('invalid_request_error')
		expect(await micro(a.accountId)).toBe(1e6 - held([req('d', 'a long batch #hold'), req('e', 'never run')]))
		await a.claude.messages.batches.cancel(batch.id)
		// It ends (and is settled) in the delete, before its results are gone upstream.
		expect(await a.claude.messages.batches.delete(batch.id)).toEqual({ id: batch.id, type: 'message_batch_deleted' })
		expect(await failure(a.claude.messages.batches.retrieve(batch.id))).toBeInstanceOf(Anthropic.NotFoundError)
		expect((await a.claude.messages.batches.list()).data).toEqual([])
		const rows = (await app.admin(`/api/usage?account_id=${a.accountId}&limit=100`)).body.data as Array<{ request_id: string; cost: number }>
		const spent = Math.round(rows.reduce((n, r) => n + r.cost, 0) * 1e6)
		expect(spent).toBeGreaterThan(0)
		expect(await micro(a.accountId)).toBe(1e6 - spent)
		expect(rows.some((r) => r.request_id.endsWith(':settle'))).toBe(true)
	})

	it('should page the list newest first by limit, after_id and before_id, as the SDK pages it', async () => {
		const a = await client(1)
		const ids: string[] = []
		for (const n of [1, 2, 3]) ids.push((await a.claude.messages.batches.create({ requests: [req(`p${n}`, `page ${n}`, 'claude-sonnet-5', 5)] })).id)
		const [c1, c2, c3] = ids
		const first = await a.claude.messages.batches.list({ limit: 2 })
		expect(first.data.map((b) => b.id)).toEqual([c3, c2])
		expect(first).toMatchObject({ has_more: true, first_id: c3, last_id: c2 })
		expect((await a.claude.messages.batches.list({ after_id: c2 })).data.map((b) => b.id)).toEqual([c1])
		const newer = await a.claude.messages.batches.list({ before_id: c1, limit: 1 })
		expect(newer.data.map((b) => b.id)).toEqual([c2])
		expect(newer.has_more).toBe(true)
		const all: string[] = []
		for await (const b of a.claude.messages.batches.list({ limit: 1 })) all.push(b.id)
		expect(all).toEqual([c3, c2, c1])
	})

	it("should refuse a batch the balance or the key's spend limit cannot cover, holding nothing and sending nothing", async () => {
		const reqs = [req('big', 'needs a large cap', 'claude-sonnet-5', 100_000)]
		const poor = await client(usd(held(reqs) - 1))
		const before = mock.requests.length
		const err = await failure(poor.claude.messages.batches.create({ requests: reqs }))
		expect(err?.status).toBe(402)
		expect(await micro(poor.accountId)).toBe(held(reqs) - 1)
		const limited = await client(1, { spend_limit: usd(held(reqs) - 1) })
		expect((await failure(limited.claude.messages.batches.create({ requests: reqs })))?.status).toBe(402)
		expect(mock.requests.length).toBe(before)
		// Exactly the bound is enough.
		const exact = await client(usd(held(reqs)))
		await exact.claude.messages.batches.create({ requests: reqs })
		expect(await micro(exact.accountId)).toBe(0)
	})

	it('should charge nothing for a batch the upstream refuses, answering its error in Anthropic\'s shape', async () => {
		const a = await client(1)
		mock.faultOnce = { kind: 'status', status: 529 }
		const err = await failure(a.claude.messages.batches.create({ requests: [req('o', 'overloaded upstream')] }))
		// The gateway's overload answer in Anthropic's shape (529, overloaded_error), as for a message.
		expect(err?.status).toBe(529)
		expect(err?.error).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } })
		expect(await micro(a.accountId)).toBe(1e6)
		expect((await a.claude.messages.batches.list()).data).toEqual([])
	})

	it('should settle a batch found ended by the background poller', async () => {
		const a = await client(1)
		const b = await a.claude.messages.batches.create({ requests: [req('bg', 'nobody polls this one')] })
		const poller = startTaskPoller(app.svc, { intervalMs: 3_600_000, idleMs: 0 })
		try {
			expect(await poller.tick()).toBeGreaterThan(0)
		} finally {
			await poller.stop()
		}
		const row = (await app.svc.db.sql.query<{ status: string }>('SELECT status FROM tasks WHERE upstream_id = $1', [b.id]))[0]
		expect(row?.status).toBe('completed')
		expect(await micro(a.accountId)).toBe(1e6 - costOf(await results(a.claude, b.id)))
	})
})

describe('two instances', () => {
	let cl: Cluster
	beforeAll(async () => {
		cl = await startCluster(2, config(mock.url, oa.url))
	}, 60_000)
	afterAll(() => cl.close())

	it('should settle a batch exactly once when both instances and their pollers see it end together', async () => {
		const a = await cl.account(1)
		const [one, two] = cl.nodes.map((n) => clients(n, a.key).anthropic)
		const reqs = [req('c1', 'seen by both instances'), req('c2', 'a cached line #cache with words enough to cover it')]
		const b = await one!.messages.batches.create({ requests: reqs })
		const pollers = cl.nodes.map((n) => startTaskPoller(n.svc, { intervalMs: 3_600_000, idleMs: 0 }))
		try {
			await Promise.all([one!.messages.batches.retrieve(b.id), two!.messages.batches.retrieve(b.id), ...pollers.map((p) => p.tick()), two!.messages.batches.retrieve(b.id)])
		} finally {
			for (const p of pollers) await p.stop()
		}
		const lines = await results(two!, b.id)
		const cost = costOf(lines)
		for (const n of cl.nodes) await n.svc.ledger.flush()
		const balance = Math.round((await cl.nodes[1]!.admin(`/api/accounts/${a.accountId}`)).body.balance * 1e6)
		expect(balance).toBe(1e6 - cost)
		const rows = await allUsage(cl.nodes[0]!, a.accountId)
		expect(rows.filter((r) => String(r.request_id).endsWith(':settle'))).toHaveLength(1)
		expect(Math.round(rows.reduce((n, r) => n + Number(r.cost), 0) * 1e6)).toBe(cost)
	})
})
