/**
 * Background responses (`background: true`) through the official `openai` SDK: OpenAI answers the POST `queued` with
 * no usage and runs the response afterwards. The bill must be the completed response's real usage, learned when the
 * client retrieves or cancels it or when the gateway polls it itself, and settled once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI, { APIError } from 'openai'
import { startBackgroundPoller } from '../../../src/modules/responses/background'
import { startTaskPoller } from '../../../src/tasks/poller'
import { startTestApp } from '../../helpers/app'
import { startOpenAIMock } from '../../mocks'
import { PRICES, SETUP_MS, settledRows, startNative, usageRows, openaiAccount, type Native } from './setup'

let n: Native

beforeAll(async () => {
	n = await startNative()
}, SETUP_MS)

afterAll(async () => {
	await n.close()
})

const client = () => openaiAccount(n.app)

/** Micro-USD of a gpt-4o-mini response's usage (USD per million tokens, so one token costs the price in micro-USD). */
const costOf = (u: { input_tokens: number; output_tokens: number }) => u.input_tokens * PRICES['gpt-4o-mini']![0] + u.output_tokens * PRICES['gpt-4o-mini']![1]
const USD = 1_000_000

describe('background responses', () => {
	it("should bill the completed response's usage once, however often it is retrieved", async () => {
		const a = await client()
		const queued = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'work on this in the background please', background: true })
		expect(queued.status).toBe('queued')
		// The POST holds the reservation: more than nothing, though no usage is known yet.
		expect(await n.app.balance(a.accountId)).toBeLessThan(1)

		// Retrieved at once by several polls: one of them sees it completed first; it is settled once.
		const polls = await Promise.all([1, 2, 3].map(() => a.openai.responses.retrieve(queued.id)))
		const done = polls.find((r) => r.status === 'completed')!
		expect(done.output_text).toBe('Hello! You said: work on this in the background please')
		await a.openai.responses.retrieve(queued.id)

		const rows = await usageRows(n.app, a.accountId)
		expect(rows.map((r) => r.end_reason)).toEqual(['background', 'ok'])
		expect(rows[1]).toMatchObject({ input_tokens: done.usage!.input_tokens, output_tokens: done.usage!.output_tokens, estimated: false })
		const cost = costOf(done.usage!)
		expect(Math.round(rows.reduce((s, r) => s + r.cost, 0) * USD)).toBe(cost)
		expect(Math.round((await n.app.balance(a.accountId)) * USD)).toBe(USD - cost)
	})

	it('should settle a response nobody retrieves when the gateway polls it', async () => {
		const a = await client()
		const queued = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'nobody will ever poll for this answer', background: true })
		await Bun.sleep(250)
		// The video/Midjourney/Suno task poller, on the same interval, claims the open response first (and does nothing
		// with it): the response is still due for this poller.
		const tasks = startTaskPoller(n.app.svc, { intervalMs: 200 })
		await tasks.tick()
		await tasks.stop()
		const poller = startBackgroundPoller(n.app.svc, { intervalMs: 200 })
		try {
			expect(await poller.tick()).toBeGreaterThanOrEqual(1)
		} finally {
			await poller.stop()
		}
		const rows = await usageRows(n.app, a.accountId)
		expect(rows.map((r) => r.end_reason)).toEqual(['background', 'ok'])
		// The poll completed it upstream: what the client reads now is what was billed.
		const done = await a.openai.responses.retrieve(queued.id)
		expect(rows[1]).toMatchObject({ input_tokens: done.usage!.input_tokens, output_tokens: done.usage!.output_tokens })
		expect(Math.round((await n.app.balance(a.accountId)) * USD)).toBe(USD - costOf(done.usage!))
		expect((await usageRows(n.app, a.accountId)).length).toBe(2)
	})

	it('should give the whole charge back for a response cancelled without usage', async () => {
		const a = await client()
		const queued = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'cancel me before I start', background: true })
		const cancelled = await a.openai.responses.cancel(queued.id)
		expect(cancelled.status).toBe('cancelled')
		const rows = await usageRows(n.app, a.accountId)
		expect(rows.map((r) => r.end_reason)).toEqual(['background', 'refund'])
		expect(rows[0]!.cost).toBeGreaterThan(0)
		expect(rows[1]!.cost).toBe(-rows[0]!.cost)
		expect(await n.app.balance(a.accountId)).toBe(1)
		// A later retrieve of the cancelled response changes nothing.
		await a.openai.responses.retrieve(queued.id)
		expect((await usageRows(n.app, a.accountId)).length).toBe(2)
	})

	it('should refuse to delete a response still running, and delete it once cancelled', async () => {
		const a = await client()
		const queued = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'delete me while I run', background: true })
		// The mock completes a queued response at its first retrieve: the delete's own check finds it done and settles it.
		await a.openai.responses.delete(queued.id)
		expect((await usageRows(n.app, a.accountId)).map((r) => r.end_reason)).toEqual(['background', 'ok'])

		const running = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'I keep running #running', background: true })
		const refused = await a.openai.responses.delete(running.id).then(
			() => undefined,
			(e: unknown) => e as APIError,
		)
		expect(refused?.status).toBe(400)
		expect(refused?.message).toContain('cancel it before deleting it')
		expect(n.openai.requests.some((r) => r.method === 'DELETE' && r.path === `/v1/responses/${running.id}`)).toBe(false)
		await a.openai.responses.cancel(running.id)
		await a.openai.responses.delete(running.id)
		const err = await a.openai.responses.retrieve(running.id).then(
			() => undefined,
			(e: unknown) => e as APIError,
		)
		expect(err?.status).toBe(404)
	})

	it("should take what the usage exceeds the charge by only as far as the key's spend limit goes", async () => {
		// A continuation is billed its whole conversation as input (OpenAI counts the chain's earlier inputs and
		// outputs): far more than the POST could estimate from its own input, so the settlement owes more than it took.
		const a = await client()
		const long = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ')
		const first = await a.openai.responses.create({ model: 'gpt-4o-mini', input: long })
		await n.app.svc.ledger.flush()
		const spent = (await n.app.admin(`/api/tokens/${a.tokenId}`)).body.spent as number
		// 200 micro-USD of room left on the key: enough for the POST's reservation, not for the conversation.
		const limit = (Math.round(spent * USD) + 200) / USD
		expect((await n.app.admin(`/api/tokens/${a.tokenId}`, { method: 'PATCH', body: { spend_limit: limit } })).status).toBe(200)

		const queued = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'go on', previous_response_id: first.id, max_output_tokens: 16, background: true })
		const done = await a.openai.responses.retrieve(queued.id)
		expect(done.status).toBe('completed')
		expect(costOf(done.usage!)).toBeGreaterThan(200)

		await n.app.svc.ledger.flush()
		const key = (await n.app.admin(`/api/tokens/${a.tokenId}`)).body
		expect(Math.round(key.spent * USD)).toBeLessThanOrEqual(Math.round(limit * USD))
		const rows = await usageRows(n.app, a.accountId)
		expect(rows.map((r) => r.end_reason)).toEqual(['ok', 'background', 'ok'])
		expect(Math.round(rows.reduce((s, r) => s + r.cost, 0) * USD)).toBe(Math.round(key.spent * USD))
	})

	// openai-node 7.58's background_options: OpenAI bills the 2h window 30% and the 8h window 40% below Standard on the
	// model's token rates; the response does not echo the window, so the POST's is what the settlement prices by.
	for (const [window, share] of [
		['8h', 0.6],
		['2h', 0.7],
		['soonest', 1],
	] as const)
		it(`should bill a response run in the ${window} completion window at ${share === 1 ? 'the Standard price' : `${Math.round((1 - share) * 100)}% below the Standard price`}`, async () => {
			const a = await client()
			const queued = await a.openai.responses.create({ model: 'gpt-4o-mini', input: `take up to ${window} for this`, background: true, background_options: { completion_window: window, continuation_id: 'nightly-review' } })
			expect(queued.status).toBe('queued')
			expect((n.openai.requests.at(-1)!.body as { background_options?: unknown }).background_options).toEqual({ completion_window: window, continuation_id: 'nightly-review' })
			const done = await a.openai.responses.retrieve(queued.id)
			expect(done.status).toBe('completed')
			const rows = await usageRows(n.app, a.accountId)
			expect(rows.map((r) => r.end_reason)).toEqual(['background', 'ok'])
			expect(rows[1]).toMatchObject({ input_tokens: done.usage!.input_tokens, output_tokens: done.usage!.output_tokens })
			// Prices of $1 and $2 per million tokens: one division, rounded half up, as every cost is.
			const cost = Math.round(costOf(done.usage!) * share)
			expect(Math.round(rows.reduce((sum, r) => sum + r.cost, 0) * USD)).toBe(cost)
			expect(Math.round((await n.app.balance(a.accountId)) * USD)).toBe(USD - cost)
		})

	it("should pass on OpenAI's refusal of a discounted window without background mode, charging nothing", async () => {
		const a = await client()
		for (const body of [
			{ model: 'gpt-4o-mini', input: 'not in the background', background_options: { completion_window: '8h' as const } },
			{ model: 'gpt-4o-mini', input: 'streamed', background: true, stream: true as const, background_options: { completion_window: '2h' as const } },
		]) {
			const err = await a.openai.responses.create(body).then(
				() => undefined,
				(e: unknown) => e as APIError,
			)
			expect(err?.status).toBe(400)
			expect(err?.param).toBe('background_options.completion_window')
		}
		expect(await n.app.balance(a.accountId)).toBe(1)
	})

	it("should stream a background response's events from a retrieve", async () => {
		const a = await client()
		const queued = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'stream me later', background: true })
		const types: string[] = []
		for await (const e of await a.openai.responses.retrieve(queued.id, { stream: true, starting_after: 1 })) types.push(e.type)
		expect(types[0]).toBe('response.output_item.added')
		expect(types.at(-1)).toBe('response.completed')
		expect(n.openai.requests.at(-1)!.query).toMatchObject({ stream: 'true', starting_after: '1' })
	})
})

describe('streamed background responses', () => {
	it('should bill a response whose stream was cut when it ends, not the part streamed', async () => {
		const a = await client()
		n.openai.faultOnce = { kind: 'cut', afterChunks: 5 }
		let id = ''
		const stream = a.openai.responses.stream({ model: 'gpt-4o-mini', input: 'stream in the background and get cut off', background: true })
		stream.on('response.created', (e) => (id = e.response.id))
		await stream.finalResponse().catch(() => undefined)
		expect(id).toStartWith('resp_')
		const rows = await settledRows(n.app, a.accountId)
		expect(rows.map((r) => r.end_reason)).toEqual(['background'])

		// The connection was lost, the response was not: the client resumes it and its whole usage is billed once.
		// The stream's charge is written before its task is recorded (chargeBackground), so a retrieve right after the
		// charge's row may come before the task: that one answers without settling, and the next settles.
		let done = await a.openai.responses.retrieve(id)
		let after = await usageRows(n.app, a.accountId)
		for (const until = Date.now() + 5_000; after.length < 2 && Date.now() < until; after = await settledRows(n.app, a.accountId, 2, 200)) done = await a.openai.responses.retrieve(id)
		expect(done.status).toBe('completed')
		expect(after.map((r) => r.end_reason)).toEqual(['background', 'ok'])
		expect(Math.round((await n.app.balance(a.accountId)) * USD)).toBe(USD - costOf(done.usage!))
	})

	it('should bill a background stream that ran to its end as any stream', async () => {
		const a = await client()
		const final = await a.openai.responses.stream({ model: 'gpt-4o-mini', input: 'stream in the background to the end', background: true }).finalResponse()
		const rows = await settledRows(n.app, a.accountId)
		expect(rows.map((r) => r.end_reason)).toEqual(['ok'])
		expect(Math.round((await n.app.balance(a.accountId)) * USD)).toBe(USD - costOf(final.usage!))
	})
})

describe("the gateway's own poller", () => {
	it(
		'should run while the server listens, so a client that never polls still pays',
		async () => {
			const openai = await startOpenAIMock({ apiKey: 'up-poll' })
			const app = await startTestApp({
				env: { TASK_POLL_INTERVAL_MS: '100' },
				config: {
					channels: [{ name: 'oa', type: 'openai', base_url: openai.url, api_key: 'up-poll', models: ['gpt-4o-mini'] }],
					models: [{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 }],
				},
			})
			try {
				const a = await app.account(1)
				const sdk = new OpenAI({ apiKey: a.key, baseURL: `${app.url}/v1`, maxRetries: 0 })
				const queued = await sdk.responses.create({ model: 'gpt-4o-mini', input: 'left alone in the background', background: true })
				let rows = await usageRows(app, a.accountId)
				for (let i = 0; i < 100 && rows.length < 2; i++) {
					await Bun.sleep(50)
					rows = await usageRows(app, a.accountId)
				}
				expect(rows.map((r) => r.end_reason)).toEqual(['background', 'ok'])
				expect(openai.requests.some((r) => r.method === 'GET' && r.path === `/v1/responses/${queued.id}`)).toBe(true)
			} finally {
				await app.close()
				await openai.stop()
			}
		},
		SETUP_MS,
	)
})
