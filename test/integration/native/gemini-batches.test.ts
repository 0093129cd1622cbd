/**
 * Gemini's Batch Mode through the gateway, with the official `@google/genai` (`ai.batches.*`, apiVersion v1beta)
 * against the Gemini mock (test/mocks/gemini/batches.ts): create with inline requests, get polling to the end, the
 * responses read from the batch, list, cancel, delete; every request's upper bound held at batch prices at creation
 * and the answered requests billed from their `usageMetadata` (cached and thinking tokens too) when the batch ends,
 * once, across two instances; each batch its account's, under the gateway's names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type ApiError, type BatchJob, GoogleGenAI, type InlinedRequest, JobState } from '@google/genai'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { startTaskPoller } from '../../../src/tasks/poller'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startGeminiMock, startOpenAIMock, type VendorMock } from '../../mocks'
import { type Cluster, allUsage, clients, startCluster } from '../admin/instances'

let mock: VendorMock
let oa: VendorMock
let app: TestApp

/** Batch prices, micro-USD per million tokens: [input, output, cache read]. */
const BATCH: Record<string, [number, number, number]> = {
	// Half of $0.30 / $2.50 / $0.075.
	'gemini-2.5-flash': [150_000, 1_250_000, 37_500],
	// Its own batch prices ($0.10 / $1); cache reads (none set: at the input price, halved: $0.20) capped at the batch
	// input price.
	'qa-gemini': [100_000, 1_000_000, 100_000],
}

const config = (gm: string, openai: string): GatewayConfig => ({
	channels: [
		{ name: 'gm', type: 'gemini', base_url: gm, api_key: 'up-gm', models: ['gemini-2.5-flash', 'qa-gemini'], model_map: { 'qa-gemini': 'gemini-2.5-flash' } },
		{ name: 'oa', type: 'openai', base_url: openai, api_key: 'up-oa', models: ['gpt-4o-mini'] },
	],
	models: [
		{ name: 'gemini-2.5-flash', input_per_mtok: 0.3, output_per_mtok: 2.5, cache_read_per_mtok: 0.075 },
		{ name: 'qa-gemini', input_per_mtok: 0.4, output_per_mtok: 3, batch_input_per_mtok: 0.1, batch_output_per_mtok: 1 },
		{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 },
	],
})

beforeAll(async () => {
	mock = await startGeminiMock({ apiKey: 'up-gm' })
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	app = await startTestApp({ config: config(mock.url, oa.url) })
}, 60_000)

afterAll(async () => {
	await app.close()
	await mock.stop()
	await oa.stop()
})

const genai = (url: string, key: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: url, apiVersion: 'v1beta' } })
const client = async (balance = 1, token?: Record<string, unknown>) => {
	const a = await app.account(balance, token as Parameters<TestApp['account']>[1])
	return { ...a, ai: genai(app.url, a.key) }
}
const failure = (p: Promise<unknown>) => p.then(
	() => undefined,
	(e) => e as ApiError,
)
const said = (e: ApiError | undefined) => JSON.parse(e?.message ?? '{}') as { error: { code: number; message: string; status: string } }

const req = (text: string, max = 100, extra: Record<string, unknown> = {}): InlinedRequest => ({ contents: [{ role: 'user', parts: [{ text }] }], config: { maxOutputTokens: max, ...extra }, metadata: { key: text.slice(0, 12) } })
/** The requests as the channel got them in the last batch created (the gateway bounds each one's bytes). */
const sentRequests = () => ((mock.requests.filter((r) => r.path.endsWith(':batchGenerateContent')).at(-1)!.body as { batch: { inputConfig: { requests: { requests: Array<{ request: Record<string, unknown> }> } } } }).batch.inputConfig.requests.requests)
/** The bound a batch is held at: every byte of each request at the dearest batch input price, its maxOutputTokens at the output price. */
const held = (model: string, clientModel?: string) =>
	sentRequests().reduce((n, { request: sent }) => {
		// The client's own request is bounded, with its model as it named it.
		const request = clientModel && sent.model ? { ...sent, model: `models/${clientModel}` } : sent
		const [i, o, cr] = BATCH[model]!
		const max = (request.generationConfig as { maxOutputTokens: number }).maxOutputTokens
		return n + Math.round((Buffer.byteLength(JSON.stringify(request)) * Math.max(i, cr)) / 1e6) + Math.round((max * o) / 1e6) + 1
	}, 0)

type Usage = { promptTokenCount?: number; cachedContentTokenCount?: number; candidatesTokenCount?: number; thoughtsTokenCount?: number }
const usages = (b: BatchJob): Usage[] => (b.dest?.inlinedResponses ?? []).filter((r) => r.response).map((r) => r.response!.usageMetadata as Usage)
/** micro-USD of the answered requests at the model's batch prices, each rounded half up as the ledger rounds. */
function costOf(b: BatchJob, model = 'gemini-2.5-flash'): number {
	const [i, o, cr] = BATCH[model]!
	return usages(b).reduce((n, u) => {
		const cached = u.cachedContentTokenCount ?? 0
		return n + Math.round((((u.promptTokenCount ?? 0) - cached) * i + cached * cr + ((u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0)) * o) / 1e6)
	}, 0)
}
const usd = (micro: number) => micro / 1e6
const micro = async (accountId: number) => Math.round((await app.balance(accountId)) * 1e6)
const rowsOf = async (accountId: number) => (await app.admin(`/api/usage?account_id=${accountId}&limit=100`)).body.data as Array<Record<string, number | string>>

describe('Gemini batches', () => {
	it('should hold the bound at batch prices, then bill the answered requests from their usageMetadata (cached and thinking tokens too)', async () => {
		const a = await client(1)
		const src = [req('hello there batch'), req('a cached prompt #cache with enough words to cover the cache', 50), req('think about it first', 300, { thinkingConfig: { includeThoughts: true, thinkingBudget: 200 } })]
		const created = await a.ai.batches.create({ model: 'gemini-2.5-flash', src, config: { displayName: 'first' } })
		expect(created).toMatchObject({ displayName: 'first', state: JobState.JOB_STATE_PENDING, model: 'models/gemini-2.5-flash' })
		expect(created.name).toMatch(/^batches\/gemini_batch_/)
		const up = mock.requests.filter((r) => r.path.endsWith(':batchGenerateContent')).at(-1)!
		expect(up.path).toBe('/v1beta/models/gemini-2.5-flash:batchGenerateContent')
		expect(up.headers['x-goog-api-key']).toBe('up-gm')
		expect(await micro(a.accountId)).toBe(1e6 - held('gemini-2.5-flash'))

		const done = await a.ai.batches.get({ name: created.name! })
		expect(done.state).toBe(JobState.JOB_STATE_SUCCEEDED)
		const answers = done.dest!.inlinedResponses!
		expect(answers.map((r) => [r.metadata, r.response?.candidates?.[0]?.content?.parts?.filter((p) => !p.thought).map((p) => p.text).join('')])).toEqual([
			[{ key: 'hello there ' }, 'Hello! You said: hello there batch'],
			[{ key: 'a cached pro' }, 'Hello! You said: a cached prompt #cache with enough words to cover the cache'],
			[{ key: 'think about ' }, 'Hello! You said: think about it first'],
		])
		const u = usages(done)
		expect(u[1]!.cachedContentTokenCount).toBeGreaterThan(0)
		expect(u[2]!.thoughtsTokenCount).toBeGreaterThan(0)
		const cost = costOf(done)
		expect(cost).toBeGreaterThan(0)
		expect(await micro(a.accountId)).toBe(1e6 - cost)
		// Settled once: asking again changes nothing.
		await a.ai.batches.get({ name: created.name! })
		expect(await micro(a.accountId)).toBe(1e6 - cost)

		// The usage rows carry the requests' tokens and add up to what the account paid.
		const rows = await rowsOf(a.accountId)
		expect(rows.every((r) => r.endpoint === '/v1beta/models/{model}:batchGenerateContent')).toBe(true)
		const sum = (k: string) => rows.reduce((n, r) => n + Number(r[k]), 0)
		expect({ input: sum('input_tokens'), output: sum('output_tokens'), cached: sum('cached_tokens'), reasoning: sum('reasoning_tokens') }).toEqual({
			input: u.reduce((n, x) => n + (x.promptTokenCount ?? 0), 0),
			output: u.reduce((n, x) => n + (x.candidatesTokenCount ?? 0) + (x.thoughtsTokenCount ?? 0), 0),
			cached: u.reduce((n, x) => n + (x.cachedContentTokenCount ?? 0), 0),
			reasoning: u.reduce((n, x) => n + (x.thoughtsTokenCount ?? 0), 0),
		})
		expect(Math.round(sum('cost') * 1e6)).toBe(cost)
	})

	it("should run a model_map alias under the channel's name, show the client only its own names, and price it at the model's batch prices", async () => {
		const a = await client(1)
		const b = await a.ai.batches.create({ model: 'qa-gemini', src: [req('an alias of the channel', 40), { ...req('naming the model', 40), model: 'qa-gemini' }] })
		const up = mock.requests.filter((r) => r.path.endsWith(':batchGenerateContent')).at(-1)!
		expect(up.path).toBe('/v1beta/models/gemini-2.5-flash:batchGenerateContent')
		expect(sentRequests()[1]!.request.model).toBe('models/gemini-2.5-flash')
		expect(await micro(a.accountId)).toBe(1e6 - held('qa-gemini', 'qa-gemini'))
		const raw = await fetch(`${app.url}/v1beta/${b.name}`, { headers: { 'x-goog-api-key': a.key } })
		const text = await raw.text()
		const vendorName = (mock.requests.find((r) => r.method === 'GET' && r.path.startsWith('/v1beta/batches/') && r.path.length > 16)?.path ?? '').slice('/v1beta/'.length)
		expect(vendorName).toMatch(/^batches\/[0-9a-f]{20}$/)
		expect(text).not.toContain(vendorName)
		expect(text).not.toContain('gemini-2.5-flash')
		const op = JSON.parse(text)
		expect(op).toMatchObject({ name: b.name, done: true, metadata: { name: b.name, model: 'models/qa-gemini', state: 'BATCH_STATE_SUCCEEDED' } })
		expect(op.response.inlinedResponses.inlinedResponses.map((r: { response: { modelVersion: string } }) => r.response.modelVersion)).toEqual(['qa-gemini', 'qa-gemini'])
		const done = await a.ai.batches.get({ name: b.name! })
		expect(await micro(a.accountId)).toBe(1e6 - costOf(done, 'qa-gemini'))
		expect(new Set((await rowsOf(a.accountId)).map((r) => r.model))).toEqual(new Set(['qa-gemini']))
	})

	it("should refuse another vendor's model, an unknown one and an unknown input file in Gemini's shape, before anything is sent or held", async () => {
		const a = await client(1)
		const before = mock.requests.length
		const other = await failure(a.ai.batches.create({ model: 'gpt-4o-mini', src: [req('not a Gemini model')] }))
		expect(other?.status).toBe(400)
		expect(said(other).error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' })
		expect(said(other).error.message).toContain('"gpt-4o-mini" is not served by a Gemini channel')
		expect((await failure(a.ai.batches.create({ model: 'no-such-model', src: [req('who')] })))?.status).toBe(404)
		// A file input naming no upload of the account's (gemini-batch-files.test.ts runs them).
		const file = await failure(a.ai.batches.create({ model: 'gemini-2.5-flash', src: 'files/abc123' }))
		expect(file?.status).toBe(404)
		expect(said(file).error).toMatchObject({ status: 'NOT_FOUND', message: 'File files/abc123 not found' })
		const other2 = await failure(a.ai.batches.create({ model: 'gemini-2.5-flash', src: [{ ...req('another model'), model: 'qa-gemini' }] }))
		expect(other2?.status).toBe(400)
		// The SDK's default version (/v1): Batch Mode is Google's /v1beta API, and /v1/batches is OpenAI's.
		const v1 = await failure(new GoogleGenAI({ apiKey: a.key, httpOptions: { baseUrl: app.url } }).batches.create({ model: 'gemini-2.5-flash', src: [req('wrong version')] }))
		expect(v1?.status).toBe(400)
		expect(said(v1).error.message).toContain('/v1beta')
		expect(mock.requests.length).toBe(before)
		expect(await micro(a.accountId)).toBe(1e6)
	})

	it('should bill a cancelled batch only for what it answered before the cancel', async () => {
		const a = await client(1)
		const b = await a.ai.batches.create({ model: 'gemini-2.5-flash', src: [req('answered before the cancel #hold'), req('never run'), req('never run either')] })
		expect((await a.ai.batches.get({ name: b.name! })).state).toBe(JobState.JOB_STATE_RUNNING)
		await a.ai.batches.cancel({ name: b.name! })
		const done = await a.ai.batches.get({ name: b.name! })
		expect(done.state).toBe(JobState.JOB_STATE_CANCELLED)
		expect(done.dest?.inlinedResponses).toHaveLength(1)
		const cost = costOf(done)
		expect(cost).toBeGreaterThan(0)
		expect(await micro(a.accountId)).toBe(1e6 - cost)
		expect((await rowsOf(a.accountId)).some((r) => r.end_reason === 'cancelled')).toBe(true)
	})

	it('should not bill a request answered with an error, and refund all of an expired batch', async () => {
		const a = await client(1)
		const bad: InlinedRequest = { contents: [{ role: 'system', parts: [{ text: 'not a turn role' }] }], config: { maxOutputTokens: 10 } }
		const b = await a.ai.batches.create({ model: 'gemini-2.5-flash', src: [req('this one succeeds'), bad] })
		const done = await a.ai.batches.get({ name: b.name! })
		expect(done.dest!.inlinedResponses!.map((r) => [!!r.response, r.error?.code])).toEqual([
			[true, undefined],
			[false, 400],
		])
		expect(await micro(a.accountId)).toBe(1e6 - costOf(done))

		const c = await client(1)
		const late = await c.ai.batches.create({ model: 'gemini-2.5-flash', src: [req('ran out of time #expire'), req('this one too')] })
		expect(await micro(c.accountId)).toBeLessThan(1e6)
		expect((await c.ai.batches.get({ name: late.name! })).state).toBe(JobState.JOB_STATE_EXPIRED)
		expect(await micro(c.accountId)).toBe(1e6)
		expect(Math.round((await rowsOf(c.accountId)).reduce((n, r) => n + Number(r.cost), 0) * 1e6)).toBe(0)
	})

	it('should show, cancel and delete a batch only for its account', async () => {
		const a = await client(1)
		const b = await client(1)
		const batch = await a.ai.batches.create({ model: 'gemini-2.5-flash', src: [req('private work')] })
		const before = mock.requests.length
		for (const call of [() => b.ai.batches.get({ name: batch.name! }), () => b.ai.batches.cancel({ name: batch.name! }), () => b.ai.batches.delete({ name: batch.name! })]) {
			const err = await failure(call())
			expect(err?.status).toBe(404)
			expect(said(err).error.status).toBe('NOT_FOUND')
		}
		expect(mock.requests.length).toBe(before)
		expect(await micro(b.accountId)).toBe(1e6)
		const mine: string[] = []
		for await (const x of await a.ai.batches.list()) mine.push(x.name!)
		expect(mine).toEqual([batch.name!])
		expect((await b.ai.batches.list()).page).toEqual([])
	})

	it('should refuse to delete a running batch, and delete an ended one, keeping its usage', async () => {
		const a = await client(1)
		const batch = await a.ai.batches.create({ model: 'gemini-2.5-flash', src: [req('a long batch #hold'), req('never run')] })
		const hold = held('gemini-2.5-flash')
		const busy = await failure(a.ai.batches.delete({ name: batch.name! }))
		expect(busy?.status).toBe(400)
		expect(said(busy).error.message).toContain('cancel it')
		expect(mock.requests.filter((r) => r.method === 'DELETE')).toHaveLength(0)
		expect(await micro(a.accountId)).toBe(1e6 - hold)
		await a.ai.batches.cancel({ name: batch.name! })
		// It ends (and is settled) in the delete, before its responses are gone upstream.
		await a.ai.batches.delete({ name: batch.name! })
		expect(mock.requests.filter((r) => r.method === 'DELETE')).toHaveLength(1)
		expect((await failure(a.ai.batches.get({ name: batch.name! })))?.status).toBe(404)
		expect((await a.ai.batches.list()).page).toEqual([])
		const rows = await rowsOf(a.accountId)
		const spent = Math.round(rows.reduce((n, r) => n + Number(r.cost), 0) * 1e6)
		expect(spent).toBeGreaterThan(0)
		expect(spent).toBeLessThan(hold)
		expect(await micro(a.accountId)).toBe(1e6 - spent)
		expect(rows.some((r) => String(r.request_id).endsWith(':settle'))).toBe(true)
	})

	it('should page the list newest first by pageSize and pageToken, as the SDK pages it', async () => {
		const a = await client(1)
		const names: string[] = []
		for (const n of [1, 2, 3]) names.push((await a.ai.batches.create({ model: 'gemini-2.5-flash', src: [req(`page ${n}`, 5)], config: { displayName: `p${n}` } })).name!)
		const first = await a.ai.batches.list({ config: { pageSize: 2 } })
		expect(first.page.map((b) => b.name)).toEqual([names[2], names[1]])
		expect(first.page.map((b) => b.displayName)).toEqual(['p3', 'p2'])
		expect(first.hasNextPage()).toBe(true)
		expect((await first.nextPage()).map((b) => b.name)).toEqual([names[0]])
		const all: string[] = []
		for await (const b of await a.ai.batches.list({ config: { pageSize: 1 } })) all.push(b.name!)
		expect(all).toEqual([...names].reverse())
	})

	it("should refuse a batch the balance or the key's spend limit cannot cover, holding nothing and sending nothing", async () => {
		const src = [req('needs a large cap', 100_000)]
		// The bound of this request: its bytes as the channel would get them, its cap at the output price.
		const bytes = Buffer.byteLength(JSON.stringify({ contents: src[0]!.contents, generationConfig: { maxOutputTokens: 100_000 } }))
		const bound = Math.round((bytes * 150_000) / 1e6) + 125_000 + 1
		const poor = await client(usd(bound - 1))
		const before = mock.requests.length
		const err = await failure(poor.ai.batches.create({ model: 'gemini-2.5-flash', src }))
		expect(err?.status).toBe(402)
		expect(await micro(poor.accountId)).toBe(bound - 1)
		const limited = await client(1, { spend_limit: usd(bound - 1) })
		expect((await failure(limited.ai.batches.create({ model: 'gemini-2.5-flash', src })))?.status).toBe(402)
		expect(mock.requests.length).toBe(before)
		// Exactly the bound is enough.
		const exact = await client(usd(bound))
		await exact.ai.batches.create({ model: 'gemini-2.5-flash', src })
		expect(held('gemini-2.5-flash')).toBe(bound)
		expect(await micro(exact.accountId)).toBe(0)
	})

	it('should hold the cap and the candidates of a request written in snake_case, as Google reads them', async () => {
		// `generation_config` beside the empty `generationConfig` the SDK writes: Google reads the one written last.
		const request = { contents: [{ role: 'user', parts: [{ text: 'needs a large cap' }] }], generationConfig: {}, generation_config: { max_output_tokens: 50_000, candidate_count: 2 } }
		const extraBody = { batch: { inputConfig: { requests: { requests: [{ request }] } } } }
		const create = (ai: GoogleGenAI) => ai.batches.create({ model: 'gemini-2.5-flash', src: [req('replaced by extraBody', 1)], config: { httpOptions: { extraBody } } })
		// Two candidates of up to 50,000 tokens at $1.25 per million: $0.125, the bytes besides.
		const bound = Math.round((Buffer.byteLength(JSON.stringify(request)) * 150_000) / 1e6) + 125_000 + 1
		const poor = await client(usd(bound - 1))
		const before = mock.requests.length
		expect((await failure(create(poor.ai)))?.status).toBe(402)
		expect(mock.requests.length).toBe(before)
		expect(await micro(poor.accountId)).toBe(bound - 1)
		const enough = await client(usd(bound))
		await create(enough.ai)
		expect(sentRequests()[0]!.request).toMatchObject({ generation_config: { max_output_tokens: 50_000, candidate_count: 2 } })
		expect(await micro(enough.accountId)).toBe(0)
	})

	it("should charge nothing for a batch the upstream refuses, answering its error in Gemini's shape", async () => {
		const a = await client(1)
		mock.faultOnce = { kind: 'status', status: 503 }
		const err = await failure(a.ai.batches.create({ model: 'gemini-2.5-flash', src: [req('overloaded upstream')] }))
		expect(err?.status).toBe(503)
		expect(said(err).error.status).toBe('UNAVAILABLE')
		expect(await micro(a.accountId)).toBe(1e6)
		expect((await a.ai.batches.list()).page).toEqual([])
	})

	it('should settle a batch found ended by the background poller', async () => {
		const a = await client(1)
		const b = await a.ai.batches.create({ model: 'gemini-2.5-flash', src: [req('nobody polls this one')] })
		const poller = startTaskPoller(app.svc, { intervalMs: 3_600_000, idleMs: 0 })
		try {
			expect(await poller.tick()).toBeGreaterThan(0)
		} finally {
			await poller.stop()
		}
		const row = (await app.svc.db.sql.query<{ status: string }>('SELECT status FROM tasks WHERE id = $1', [b.name!.slice('batches/'.length)]))[0]
		expect(row?.status).toBe('completed')
		expect(await micro(a.accountId)).toBe(1e6 - costOf(await a.ai.batches.get({ name: b.name! })))
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
		const [one, two] = cl.nodes.map((n) => clients(n, a.key).gemini)
		const b = await one!.batches.create({ model: 'gemini-2.5-flash', src: [req('seen by both instances'), req('a cached line #cache with words enough to cover it')] })
		const pollers = cl.nodes.map((n) => startTaskPoller(n.svc, { intervalMs: 3_600_000, idleMs: 0 }))
		try {
			await Promise.all([one!.batches.get({ name: b.name! }), two!.batches.get({ name: b.name! }), ...pollers.map((p) => p.tick()), two!.batches.get({ name: b.name! })])
		} finally {
			for (const p of pollers) await p.stop()
		}
		const cost = costOf(await two!.batches.get({ name: b.name! }))
		for (const n of cl.nodes) await n.svc.ledger.flush()
		const balance = Math.round((await cl.nodes[1]!.admin(`/api/accounts/${a.accountId}`)).body.balance * 1e6)
		expect(balance).toBe(1e6 - cost)
		const rows = await allUsage(cl.nodes[0]!, a.accountId)
		expect(rows.filter((r) => String(r.request_id).endsWith(':settle'))).toHaveLength(1)
		expect(Math.round(rows.reduce((n, r) => n + Number(r.cost), 0) * 1e6)).toBe(cost)
	})
})
