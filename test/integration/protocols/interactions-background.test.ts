/**
 * Background interactions (`background: true`) through `ai.interactions` of @google/genai and `google.interactions()`
 * of the AI SDK, for models of every vendor: the POST answers `in_progress` at once, `get` polls it to its end,
 * `cancel` stops it (billed for what ran), `get` with `stream: true` (and `last_event_id`) replays or follows its
 * events; and the events of an interaction not run in the background, made again from the kept resource.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createGoogleGenerativeAI } from '@ai-sdk/google'
import { GoogleGenAI } from '@google/genai'
import { generateText, streamText } from 'ai'
import { type Account, expectCharges, type Matrix, MODEL, SETUP_MS, startMatrix, UPSTREAMS, usageRows } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })

const hello = (text: string) => `Hello! You said: ${text}`

type Event = { event_type: string; index?: number; step?: Record<string, any>; delta?: Record<string, any>; interaction?: Record<string, any>; event_id?: string; status?: string }

async function collect(stream: unknown): Promise<Event[]> {
	const events: Event[] = []
	for await (const e of stream as AsyncIterable<Event>) events.push(e)
	return events
}

const textOf = (events: Event[]) =>
	events
		.filter((e) => e.event_type === 'step.delta' && e.delta?.type === 'text')
		.map((e) => e.delta!.text)
		.join('')

/** Polls `get` until the interaction has left `in_progress`. */
async function settled(ai: GoogleGenAI, id: string) {
	for (let i = 0; i < 200; i++) {
		const r = await ai.interactions.get(id)
		if (r.status !== 'in_progress') return r
		await Bun.sleep(25)
	}
	throw new Error(`interaction ${id} still in progress`)
}

for (const up of UPSTREAMS)
	describe(`background interactions, ${up} upstream`, () => {
		it('should answer in_progress at once, then be polled to its end and billed once as it ran', async () => {
			const acct = await m.account()
			const ai = genai(acct)
			const r = await ai.interactions.create({ model: MODEL[up], input: 'in the background', background: true })
			expect(r.status).toBe('in_progress')
			expect(r.id).toStartWith('v1_')
			expect(r.steps ?? []).toEqual([])
			const done = await settled(ai, r.id)
			expect(done.status).toBe('completed')
			expect(done.output_text).toBe(hello('in the background'))
			expect(done.steps).toEqual([
				{ type: 'user_input', content: [{ type: 'text', text: 'in the background' }] },
				{ type: 'model_output', content: [{ type: 'text', text: hello('in the background') }] },
			])
			expect(done.usage).toMatchObject({ total_input_tokens: 3, total_output_tokens: 6 })
			await expectCharges(m, acct, [{ model: MODEL[up], input: 3, output: 6, endpoint: '/v1beta/interactions', stream: true }])
			// It continues as any kept interaction.
			const next = await ai.interactions.create({ model: MODEL[up], input: 'and after', previous_interaction_id: r.id })
			expect(next.output_text).toBe(hello('and after'))
		})

		it('should replay its events with get stream=true, and resume after last_event_id', async () => {
			const acct = await m.account()
			const ai = genai(acct)
			const r = await ai.interactions.create({ model: MODEL[up], input: 'replay these words', background: true })
			await settled(ai, r.id)
			const all = await collect(await ai.interactions.get(r.id, { stream: true }))
			expect(all[0]!.event_type).toBe('interaction.created')
			expect(all[0]!.interaction!.id).toBe(r.id)
			expect(all.at(-1)!.event_type).toBe('interaction.completed')
			expect(all.at(-1)!.interaction!.status).toBe('completed')
			expect(textOf(all)).toBe(hello('replay these words'))
			expect(all.map((e) => e.event_id)).toEqual(all.map((_, i) => `evt_${i}`))
			const after = all.findIndex((e) => e.event_type === 'step.delta')
			const rest = await collect(await ai.interactions.get(r.id, { stream: true, last_event_id: all[after]!.event_id }))
			expect(rest).toEqual(all.slice(after + 1))
		})
	})

describe('background interactions: streaming and cancelling', () => {
	it('should stream a background create live, the run going on when the client leaves', async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const events: Event[] = []
		for await (const e of (await ai.interactions.create({ model: MODEL.anthropic, input: 'one two three four five', background: true, stream: true })) as unknown as AsyncIterable<Event>) {
			events.push(e)
			if (e.event_type === 'step.start') break
		}
		const id = events[0]!.interaction!.id as string
		const done = await settled(ai, id)
		expect(done.output_text).toBe(hello('one two three four five'))
		// The whole stream is there to resume from where the client left.
		const rest = await collect(await ai.interactions.get(id, { stream: true, last_event_id: events.at(-1)!.event_id }))
		expect(textOf(rest)).toBe(hello('one two three four five'))
		await expectCharges(m, acct, [{ model: MODEL.anthropic, input: 5, output: 8, stream: true }])
	})

	it('should cancel a running interaction: the upstream cut, billed for what ran only, the followers told', async () => {
		const acct = await m.account()
		const ai = genai(acct)
		// The upstream sends two chunks, then holds the answer open (a long answer still being written).
		m.mocks.openai.faultOnce = { kind: 'stall', afterChunks: 2 }
		const aborted = m.mocks.openai.aborts.length
		const r = await ai.interactions.create({ model: MODEL.openai, input: 'a long story please', background: true })
		const follow = collect(await ai.interactions.get(r.id, { stream: true }))
		await Bun.sleep(200)
		expect((await ai.interactions.get(r.id)).status).toBe('in_progress')
		const cancelled = await ai.interactions.cancel(r.id)
		expect(cancelled.status).toBe('cancelled')
		const events = await follow
		expect(events.at(-2)).toMatchObject({ event_type: 'interaction.status_update', status: 'cancelled' })
		expect(events.at(-1)).toMatchObject({ event_type: 'interaction.completed', interaction: { id: r.id, status: 'cancelled' } })
		const partial = textOf(events)
		expect(hello('a long story please').startsWith(partial)).toBe(true)
		expect(partial.length).toBeLessThan(hello('a long story please').length)
		for (let i = 0; i < 100 && m.mocks.openai.aborts.length === aborted; i++) await Bun.sleep(10)
		expect(m.mocks.openai.aborts.length).toBe(aborted + 1)
		const got = await ai.interactions.get(r.id)
		expect(got.status).toBe('cancelled')
		expect(got.output_text ?? '').toBe(partial)
		// One row, for the prompt and what was produced before the cut (no usage came: both estimated), nothing more.
		for (let i = 0; i < 100 && !(await usageRows(m, acct.accountId)).length; i++) await Bun.sleep(10)
		await expectCharges(m, acct, [{ model: MODEL.openai, input: 8, output: 2, stream: true, estimated: true, endReason: 'client_abort' }])
		// Over: a second cancel is refused, and the stream replays as it ended.
		expect((await ai.interactions.cancel(r.id).catch((e) => e)).status).toBe(400)
		const replay = await collect(await ai.interactions.get(r.id, { stream: true }))
		expect(replay).toEqual(events)
	})

	it('should stop a running interaction that is deleted', async () => {
		const acct = await m.account()
		const ai = genai(acct)
		m.mocks.gemini.faultOnce = { kind: 'stall', afterChunks: 1 }
		const aborted = m.mocks.gemini.aborts.length
		const r = await ai.interactions.create({ model: MODEL.gemini, input: 'delete me while running', background: true })
		await ai.interactions.delete(r.id)
		for (let i = 0; i < 400 && m.mocks.gemini.aborts.length === aborted; i++) await Bun.sleep(10)
		expect(m.mocks.gemini.aborts.length).toBe(aborted + 1)
		expect((await ai.interactions.get(r.id).catch((e) => e)).status).toBe(404)
	}, 10_000)

	it('should refuse what a background interaction cannot be, and hide it from other accounts', async () => {
		const acct = await m.account()
		const ai = genai(acct)
		expect((await ai.interactions.create({ model: MODEL.openai, input: 'x', background: true, store: false }).catch((e) => e)).status).toBe(400)
		m.mocks.openai.faultOnce = { kind: 'stall', afterChunks: 1 }
		const r = await ai.interactions.create({ model: MODEL.openai, input: 'still going', background: true })
		// Its conversation is not there yet to continue.
		expect((await ai.interactions.create({ model: MODEL.openai, input: 'next', previous_interaction_id: r.id }).catch((e) => e)).status).toBe(400)
		const other = genai(await m.account())
		expect((await other.interactions.get(r.id).catch((e) => e)).status).toBe(404)
		expect((await other.interactions.cancel(r.id).catch((e) => e)).status).toBe(404)
		expect((await other.interactions.get(r.id, { stream: true }).catch((e) => e)).status).toBe(404)
		await ai.interactions.cancel(r.id)
		// An unknown model is the HTTP error it always is, nothing kept or charged.
		const err = await ai.interactions.create({ model: 'no-such-model', input: 'x', background: true }).catch((e) => e)
		expect(err.status).toBe(404)
	})

	it('should read a background interaction whose instance died as failed', async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const id = 'v1_deadinstance000000000000000000'
		await m.app.svc.db.sql.query(
			`INSERT INTO interactions (id, account_id, interaction, input, updated_at) VALUES ($1, $2, $3, '[]', now() - interval '5 minutes')`,
			[id, acct.accountId, JSON.stringify({ id, object: 'interaction', model: MODEL.openai, status: 'in_progress' })],
		)
		expect((await ai.interactions.get(id)).status).toBe('failed')
		expect((await ai.interactions.cancel(id).catch((e) => e)).status).toBe(400)
	})
})

describe('background interactions run by another instance', () => {
	it('should follow one with get stream=true once it ends there, the stream begun meanwhile', async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const id = 'v1_otherinstance0000000000000000'
		const shell = { id, object: 'interaction', model: MODEL.openai, status: 'in_progress' }
		const db = m.app.svc.db
		await db.sql.query(`INSERT INTO interactions (id, account_id, interaction, input) VALUES ($1, $2, $3, '[]')`, [id, acct.accountId, JSON.stringify(shell)])
		// The response starts while it still runs elsewhere.
		const stream = await ai.interactions.get(id, { stream: true, last_event_id: 'evt_0' })
		const got = collect(stream)
		await Bun.sleep(700)
		const done = { ...shell, status: 'completed', steps: [{ type: 'model_output', content: [{ type: 'text', text: 'from afar' }] }] }
		const events = [
			{ event_type: 'interaction.created', interaction: shell, event_id: 'evt_0' },
			{ event_type: 'step.start', index: 0, step: { type: 'model_output' }, event_id: 'evt_1' },
			{ event_type: 'step.delta', index: 0, delta: { type: 'text', text: 'from afar' }, event_id: 'evt_2' },
			{ event_type: 'step.stop', index: 0, event_id: 'evt_3' },
			{ event_type: 'interaction.completed', interaction: { ...shell, status: 'completed' }, event_id: 'evt_4' },
		]
		await db.sql.query('UPDATE interactions SET interaction = $2, events = $3 WHERE id = $1', [id, JSON.stringify(done), JSON.stringify(events.map((e) => JSON.stringify(e)))])
		expect(await got).toEqual(events.slice(1) as never)
	})
})

describe('get stream=true of an interaction not run in the background', () => {
	it('should make its events again from the kept interaction, function calls included, resumable', async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const weather = { type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }
		const r = await ai.interactions.create({ model: MODEL.anthropic, input: '#tools weather', tools: [weather] })
		const events = await collect(await ai.interactions.get(r.id, { stream: true }))
		expect(events.map((e) => e.event_type)).toEqual([
			'interaction.created',
			'interaction.status_update',
			...r.steps.flatMap(() => ['step.start', 'step.delta', 'step.stop']),
			'interaction.completed',
		])
		const { initial_input_tokens: _, ...usage } = r.usage!
		expect(events.at(-1)!.interaction).toMatchObject({ id: r.id, status: 'requires_action', usage })
		const calls = events.filter((e) => e.event_type === 'step.start').map((e) => e.step)
		const args = events.filter((e) => e.delta?.type === 'arguments_delta').map((e) => JSON.parse(e.delta!.arguments))
		expect(calls.map((c, i) => ({ ...c, arguments: args[i] }))).toEqual(r.steps as never)
		const rest = await collect(await ai.interactions.get(r.id, { stream: true, last_event_id: 'evt_4' }))
		expect(rest).toEqual(events.slice(5))
		const bad = await fetch(`${m.app.url}/v1beta/interactions/${r.id}?stream=true&last_event_id=evt_999`, { headers: { 'x-goog-api-key': acct.key } })
		expect(bad.status).toBe(400)
	})
})

describe('Vercel AI SDK google.interactions in the background', () => {
	for (const stream of [false, true])
		it(`should poll (or follow) a background interaction to its answer${stream ? ' (streamText)' : ''}`, async () => {
			const acct = await m.account()
			const google = createGoogleGenerativeAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1beta` })
			const providerOptions = { google: { background: true } }
			const model = google.interactions(MODEL.openai)
			const text = stream
				? await streamText({ model, prompt: 'sdk in the background', providerOptions, maxRetries: 0 }).text
				: (await generateText({ model, prompt: 'sdk in the background', providerOptions, maxRetries: 0 })).text
			expect(text).toBe(hello('sdk in the background'))
			await expectCharges(m, acct, [{ model: MODEL.openai, input: 4, output: 7, stream: true }])
		})
})

describe("the stream's end marker", () => {
	/** The raw frames of an SSE response, as `event` and `data` pairs. */
	async function frames(r: Response): Promise<Array<[string, string]>> {
		expect(r.status).toBe(200)
		const text = await r.text()
		return text
			.split('\n\n')
			.filter((f) => f.includes('data: '))
			.map((f) => [/^event: (.*)$/m.exec(f)?.[1] ?? '', /^data: (.*)$/m.exec(f)![1]!])
	}
	const post = (acct: Account, body: unknown) =>
		fetch(`${m.app.url}/v1beta/interactions`, { method: 'POST', headers: { 'x-goog-api-key': acct.key, 'content-type': 'application/json' }, body: JSON.stringify(body) })

	// Google's stream ends `event: done` / `data: [DONE]` after `interaction.completed`; @google/genai's interactions
	// client reads `[DONE]` as its end (`sentinel: "[DONE]"`), other clients wait for it.
	it('should end a created stream, its replay and a followed background run with [DONE] after interaction.completed', async () => {
		const acct = await m.account()
		const live = await frames(await post(acct, { model: MODEL.openai, input: 'mark the end', stream: true }))
		expect(live.at(-1)).toEqual(['done', '[DONE]'])
		expect(live.at(-2)![0]).toBe('interaction.completed')
		expect(live.filter(([, d]) => d === '[DONE]')).toHaveLength(1)
		const id = JSON.parse(live[0]![1]).interaction.id
		const replay = await frames(await fetch(`${m.app.url}/v1beta/interactions/${id}?stream=true`, { headers: { 'x-goog-api-key': acct.key } }))
		// Made again from the kept interaction, one delta per piece of content, and ended as the live one.
		expect(replay.slice(-2).map(([e, d]) => (e === 'done' ? d : e))).toEqual(['interaction.completed', '[DONE]'])
		expect(replay.filter(([, d]) => d === '[DONE]')).toHaveLength(1)
		const bg = await frames(await post(acct, { model: MODEL.anthropic, input: 'mark the end', stream: true, background: true }))
		expect(bg.at(-1)).toEqual(['done', '[DONE]'])
		expect(bg.at(-2)![0]).toBe('interaction.completed')
		const bgId = JSON.parse(bg[0]![1]).interaction.id
		await settled(genai(acct), bgId)
		const kept = await frames(await fetch(`${m.app.url}/v1beta/interactions/${bgId}?stream=true`, { headers: { 'x-goog-api-key': acct.key } }))
		expect(kept.map(([e]) => e)).toEqual(bg.map(([e]) => e))
		// The SDK still reads every event before it.
		const events = await collect(await genai(acct).interactions.get(bgId, { stream: true }))
		expect(events.at(-1)!.event_type).toBe('interaction.completed')
	})
})
