/**
 * Gemini's Interactions API (`ai.interactions.*` of @google/genai) against models of every vendor: create (whole and
 * streamed), images, thoughts, function calling with the results in the next turn, kept interactions (`get`,
 * `delete`, `previous_interaction_id`), `store: false`, errors in Gemini's shape, and the bill (usage rows and
 * balance) as chat's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createGoogleGenerativeAI } from '@ai-sdk/google'
import { GoogleGenAI } from '@google/genai'
import { generateText, streamText } from 'ai'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { purgeInteractions } from '../../../src/modules/interactions/store'
import { pngOf } from '../../helpers/png'
import { countWords, SEARCH_TOOL_TOKENS, thoughtSignatureFor } from '../../mocks'
import { type Account, expectCharges, GEMINI_3, lastRequest, type Matrix, MODEL, PRICE, SETUP_MS, startMatrix, THINKER, UPSTREAMS, type Upstream, usageRows } from './harness'

/** A Gemini model whose channel serves Interactions clients from Gemini's own Interactions API (`interactions_api`). */
const NATIVE = 'gemini-ix'
PRICE[NATIVE] = PRICE['gemini-m']!

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		channels: (mocks): NonNullable<GatewayConfig['channels']> => [
			{ name: 'ch-gemini-ix', type: 'gemini', base_url: mocks.gemini.url, api_key: 'up-gemini', models: [NATIVE], model_map: { [NATIVE]: 'gemini-2.5-flash' }, settings: { interactions_api: true } },
			{ name: 'ch-gemini-3', type: 'gemini', base_url: mocks.gemini.url, api_key: 'up-gemini', models: [GEMINI_3], model_map: { [GEMINI_3]: 'gemini-3-pro-preview' } },
		],
		models: [
			{ name: NATIVE, input_per_mtok: PRICE[NATIVE].input, output_per_mtok: PRICE[NATIVE].output },
			{ name: GEMINI_3, input_per_mtok: 0.3, output_per_mtok: 2.5 },
		],
	})
}, SETUP_MS)
afterAll(() => m.close())

const genai = (acct: Account, apiVersion = 'v1beta') => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion } })

const hello = (text: string) => `Hello! You said: ${text}`

const weather = { type: 'function' as const, name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }

type Event = { event_type: string; index?: number; step?: Record<string, any>; delta?: Record<string, any>; interaction?: Record<string, any>; event_id?: string; error?: Record<string, any> }

/** A streamed create's events, and the step texts and calls they built. */
async function streamed(ai: GoogleGenAI, params: Record<string, unknown>) {
	const events: Event[] = []
	for await (const e of (await ai.interactions.create({ ...params, stream: true } as never)) as unknown as AsyncIterable<Event>) events.push(e)
	const text = events.filter((e) => e.event_type === 'step.delta' && e.delta?.type === 'text').map((e) => e.delta!.text).join('')
	return { events, text, types: events.map((e) => e.event_type) }
}

/** The conversation the upstream got, one line per message, in the vendor's own shape. */
function upstreamLines(up: Upstream): string[] {
	const body = lastRequest(m.mocks[up]).body
	const text = (c: unknown): string =>
		typeof c === 'string'
			? c
			: Array.isArray(c)
				? c.map((p) => (p.text ?? p.content ?? (p.functionResponse ? JSON.stringify(p.functionResponse.response) : '') ?? '') as string).join('')
				: ''
	if (up === 'gemini') return (body.contents as Array<{ role: string; parts: unknown[] }>).map((c) => `${c.role}: ${text(c.parts)}`)
	return (body.messages as Array<{ role: string; content: unknown }>).filter((x) => x.role !== 'system').map((x) => `${x.role}: ${text(x.content)}`)
}

for (const up of UPSTREAMS) {
	describe(`ai.interactions, ${up} upstream`, () => {
		it('should answer a create with an Interaction and bill it as chat', async () => {
			const acct = await m.account()
			const r = await genai(acct).interactions.create({ model: MODEL[up], input: 'hello there' })
			expect(r.status).toBe('completed')
			expect(r.output_text).toBe(hello('hello there'))
			expect(r.id).toStartWith('v1_')
			expect(r.steps).toEqual([{ type: 'model_output', content: [{ type: 'text', text: hello('hello there') }] }])
			expect(r.usage?.total_input_tokens).toBe(2)
			expect(r.usage?.total_output_tokens).toBe(countWords(hello('hello there')))
			await expectCharges(m, acct, [{ model: MODEL[up], input: 2, output: 5, endpoint: '/v1beta/interactions', stream: false }])
		})

		it('should stream step events ending in interaction.completed, billed as chat', async () => {
			const acct = await m.account()
			const { events, text, types } = await streamed(genai(acct), { model: MODEL[up], input: 'stream me please', system_instruction: 'Be brief.' })
			expect(text).toBe(hello('stream me please'))
			expect(types[0]).toBe('interaction.created')
			expect(types.slice(1, 3)).toEqual(['interaction.status_update', 'step.start'])
			expect(types.at(-2)).toBe('step.stop')
			expect(types.at(-1)).toBe('interaction.completed')
			const created = events[0]!.interaction!
			const done = events.at(-1)!.interaction!
			expect(done.id).toBe(created.id)
			expect(done.status).toBe('completed')
			// Input: the system instruction's words and the input's.
			expect(done.usage.total_input_tokens).toBe(5)
			expect(done.usage.total_output_tokens).toBe(6)
			expect(new Set(events.map((e) => e.event_id)).size).toBe(events.length)
			await expectCharges(m, acct, [{ model: MODEL[up], input: 5, output: 6, endpoint: '/v1beta/interactions', stream: true }])
		})

		it('should take an image in the input', async () => {
			const acct = await m.account()
			const data = Buffer.from(pngOf(2, 2)).toString('base64')
			const r = await genai(acct).interactions.create({ model: MODEL[up], input: [{ type: 'text', text: 'what is it' }, { type: 'image', data, mime_type: 'image/png' }] })
			expect(r.output_text).toBe(`I see 1 image. ${hello('what is it')}`)
		})

		it('should show thoughts when thinking_summaries is auto, and carry them into the next turn', async () => {
			const acct = await m.account()
			const ai = genai(acct)
			const generation_config = { thinking_level: 'low' as const, thinking_summaries: 'auto' as const, max_output_tokens: 4000 }
			const r = await ai.interactions.create({ model: THINKER[up], input: 'ponder this', generation_config })
			const thought = r.steps.find((s) => s.type === 'thought') as { summary?: Array<{ text: string }>; signature?: string } | undefined
			expect(thought?.summary?.[0]?.text).toBe('Let me think about ponder this.')
			expect(r.output_text).toBe(hello('ponder this'))
			// Anthropic verifies the signature of the thinking it is sent back (the mock too).
			if (up === 'anthropic') expect(thought?.signature).toBeString()
			const next = await ai.interactions.create({ model: THINKER[up], input: 'and then', previous_interaction_id: r.id, generation_config })
			expect(next.output_text).toBe(hello('and then'))
			expect(next.previous_interaction_id).toBe(r.id)
		})

		for (const stream of [false, true])
			it(`should carry thinking the client did not ask to see into the turn that answers its function calls${stream ? ' (streamed)' : ''}`, async () => {
				const acct = await m.account()
				const ai = genai(acct)
				// Thinking on, summaries hidden: Claude still needs its signed thinking before the calls it answers (the mock checks both).
				const generation_config = { thinking_level: 'low' as const, thinking_summaries: 'none' as const, max_output_tokens: 4000 }
				const params = { model: THINKER[up], input: '#tools weather', tools: [weather], generation_config }
				let steps: Array<Record<string, any>>
				let id: string
				if (stream) {
					const { events } = await streamed(ai, params)
					expect(events.some((e) => e.delta?.type === 'thought_summary')).toBe(false)
					id = events[0]!.interaction!.id
					steps = (await ai.interactions.get(id)).steps.slice(1) as typeof steps
				} else {
					const r = await ai.interactions.create(params)
					id = r.id
					steps = r.steps as typeof steps
				}
				expect(steps.every((s) => s.type !== 'thought' || s.summary === undefined)).toBe(true)
				const calls = steps.filter((s) => s.type === 'function_call')
				const r2 = await ai.interactions.create({
					...params,
					previous_interaction_id: id,
					input: calls.map((c) => ({ type: 'function_result' as const, call_id: c.id, name: c.name, result: 'ok' })),
				})
				expect(r2.output_text).toBe('Tool results: ok; ok')
				if (up === 'anthropic') {
					const turn = (lastRequest(m.mocks.anthropic).body.messages as Array<{ role: string; content: Array<{ type: string; thinking?: string }> }>)[1]!
					expect(turn.content[0]).toMatchObject({ type: 'thinking', thinking: 'Let me think about #tools weather.' })
				}
			})

		for (const stream of [false, true]) {
			it(`should call functions and take their results in the next turn by previous_interaction_id${stream ? ' (streamed)' : ''}`, async () => {
				const acct = await m.account()
				const ai = genai(acct)
				let calls: Array<{ id: string; name: string; arguments: Record<string, unknown> }>
				let id: string
				if (!stream) {
					const r = await ai.interactions.create({ model: MODEL[up], input: '#tools what is the weather', tools: [weather] })
					expect(r.status).toBe('requires_action')
					calls = r.steps.filter((s) => s.type === 'function_call') as typeof calls
					id = r.id
				} else {
					const { events } = await streamed(ai, { model: MODEL[up], input: '#tools what is the weather', tools: [weather] })
					const starts = events.filter((e) => e.event_type === 'step.start' && e.step?.type === 'function_call')
					calls = starts.map((e) => ({
						...(e.step as { id: string; name: string }),
						arguments: JSON.parse(events.filter((d) => d.event_type === 'step.delta' && d.index === e.index).map((d) => d.delta!.arguments).join('')),
					}))
					expect(events.at(-1)!.interaction!.status).toBe('requires_action')
					id = events[0]!.interaction!.id
				}
				expect(calls.map((c) => [c.name, c.arguments])).toEqual([
					['get_weather', { city: 'Paris' }],
					['get_weather', { city: 'Tokyo' }],
				])
				const results = calls.map((c, i) => ({ type: 'function_result' as const, call_id: c.id, name: c.name, result: i === 0 ? 'sunny' : 'rainy' }))
				const r2 = await ai.interactions.create({ model: MODEL[up], input: results, tools: [weather], previous_interaction_id: id })
				expect(r2.output_text).toBe('Tool results: sunny; rainy')
				expect(r2.status).toBe('completed')
				// The upstream got the whole conversation: the question, the calls, their results.
				expect(upstreamLines(up)[0]).toBe('user: #tools what is the weather')
				expect(upstreamLines(up).length).toBeGreaterThanOrEqual(3)
			})
		}

		it('should keep an interaction for get and delete, for its own account only', async () => {
			const acct = await m.account()
			const ai = genai(acct)
			const r = await ai.interactions.create({ model: MODEL[up], input: 'keep me' })
			// The kept resource has the user_input steps before the model's; create answered only the model's.
			const got = await ai.interactions.get(r.id)
			expect(got.id).toBe(r.id)
			expect(got.output_text).toBe(hello('keep me'))
			expect(got.steps).toEqual([{ type: 'user_input', content: [{ type: 'text', text: 'keep me' }] }, ...r.steps])
			const withInput = await ai.interactions.get(r.id, { include_input: true })
			expect(withInput.input).toEqual([{ type: 'user_input', content: [{ type: 'text', text: 'keep me' }] }])
			// Another account's key sees no such interaction, and cannot continue it.
			const other = genai(await m.account())
			expect(other.interactions.get(r.id)).rejects.toMatchObject({ status: 404 })
			expect(other.interactions.create({ model: MODEL[up], input: 'x', previous_interaction_id: r.id })).rejects.toMatchObject({ status: 404 })
			await ai.interactions.delete(r.id)
			expect(ai.interactions.get(r.id)).rejects.toMatchObject({ status: 404 })
			expect(ai.interactions.delete(r.id)).rejects.toMatchObject({ status: 404 })
		})

		it('should keep nothing with store: false, the client sending the history as steps', async () => {
			const acct = await m.account()
			const ai = genai(acct)
			const r = await ai.interactions.create({ model: MODEL[up], input: 'first', store: false })
			expect(ai.interactions.get(r.id)).rejects.toMatchObject({ status: 404 })
			const r2 = await ai.interactions.create({
				model: MODEL[up],
				store: false,
				input: [{ type: 'user_input', content: [{ type: 'text', text: 'first' }] }, ...r.steps, { type: 'user_input', content: [{ type: 'text', text: 'second' }] }] as never,
			})
			expect(r2.output_text).toBe(hello('second'))
			const assistant = up === 'gemini' ? 'model' : 'assistant'
			expect(upstreamLines(up)).toEqual(['user: first', `${assistant}: ${hello('first')}`, 'user: second'])
		})

		it('should continue a chain of three turns with the whole conversation', async () => {
			const acct = await m.account()
			const ai = genai(acct, 'v1')
			const a = await ai.interactions.create({ model: MODEL[up], input: 'one' })
			const b = await ai.interactions.create({ model: MODEL[up], input: 'two', previous_interaction_id: a.id })
			const { events } = await streamed(ai, { model: MODEL[up], input: 'three', previous_interaction_id: b.id })
			const assistant = up === 'gemini' ? 'model' : 'assistant'
			expect(upstreamLines(up)).toEqual(['user: one', `${assistant}: ${hello('one')}`, 'user: two', `${assistant}: ${hello('two')}`, 'user: three'])
			// The streamed turn is kept too: the next one continues it.
			const c = events[0]!.interaction!.id as string
			const d = await ai.interactions.create({ model: MODEL[up], input: 'four', previous_interaction_id: c })
			expect(d.output_text).toBe(hello('four'))
			expect(upstreamLines(up).length).toBe(7)
			// Input of each turn: every earlier word again (1, then 1+4+1, 6+4+1, 11+4+1 words), billed under /v1.
			await expectCharges(
				m,
				acct,
				[1, 6, 11, 16].map((input, i) => ({ model: MODEL[up], input, output: 4, endpoint: '/v1/interactions', stream: i === 2 })),
			)
		})
	})
}

describe('ai.interactions, Gemini 3 through generateContent', () => {
	it("should give the function call's thought signature back on the next turn as Gemini issued it", async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const r = await ai.interactions.create({ model: GEMINI_3, input: '#tools weather', tools: [weather], generation_config: { thinking_level: 'low' } })
		const calls = r.steps.filter((s) => s.type === 'function_call') as Array<{ id: string; name: string }>
		expect(calls).toHaveLength(2)
		const r2 = await ai.interactions.create({
			model: GEMINI_3,
			previous_interaction_id: r.id,
			tools: [weather],
			input: calls.map((c, i) => ({ type: 'function_result' as const, call_id: c.id, name: c.name, result: i ? 'rain' : 'sun' })),
		})
		expect(r2.output_text).toBe('Tool results: sun; rain')
		const sentCall = (lastRequest(m.mocks.gemini).body.contents as Array<{ parts: Array<Record<string, unknown>> }>).flatMap((c) => c.parts).find((p) => p.functionCall)
		// Gemini's own signature, not the placeholder a call of unknown origin gets.
		expect(sentCall?.thoughtSignature).toBe(thoughtSignatureFor('get_weather', { city: 'Paris' }))
	})
})

describe('ai.interactions errors', () => {
	it('should answer an unknown model with 404 in Gemini\'s shape, and charge nothing', async () => {
		const acct = await m.account()
		const r = await fetch(`${m.app.url}/v1beta/interactions`, { method: 'POST', headers: { 'x-goog-api-key': acct.key, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'no-such-model', input: 'hi' }) })
		expect(r.status).toBe(404)
		const body = (await r.json()) as { error: { code: number; status: string; message: string } }
		expect(body.error.code).toBe(404)
		expect(body.error.status).toBe('NOT_FOUND')
		await expectCharges(m, acct, [])
	})

	it('should refuse a Google built-in tool for another vendor\'s model with a 400 naming it', async () => {
		const acct = await m.account()
		const err = await genai(acct).interactions.create({ model: MODEL.openai, input: 'run it', tools: [{ type: 'code_execution' }] }).catch((e) => e)
		expect(err.status).toBe(400)
		expect(JSON.stringify(err.body ?? err.message)).toContain('code_execution')
	})

	it('should refuse a request without a key in Gemini\'s shape', async () => {
		const r = await fetch(`${m.app.url}/v1/interactions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL.gemini, input: 'hi' }) })
		// Google's status for a call without a key, with the gateway's word on where to put one.
		expect(r.status).toBe(403)
		expect(((await r.json()) as { error: { status: string; message: string } }).error).toMatchObject({ status: 'PERMISSION_DENIED', message: expect.stringContaining('x-goog-api-key') })
	})
})

describe('kept interactions, purged after 30 days', () => {
	it('should purge an old turn only once no younger kept turn continues it', async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const one = await ai.interactions.create({ model: MODEL.anthropic, input: 'oldest words' })
		const two = await ai.interactions.create({ model: MODEL.anthropic, input: 'older words', previous_interaction_id: one.id })
		const three = await ai.interactions.create({ model: MODEL.anthropic, input: 'young words', previous_interaction_id: two.id })
		const db = m.app.svc.db
		const age = (id: string, days: number) => db.sql.query(`UPDATE interactions SET created_at = now() - make_interval(days => $2) WHERE id = $1`, [id, days])
		const kept = async () => (await db.sql.query<{ id: string }>('SELECT id FROM interactions WHERE account_id = $1', [acct.accountId])).map((r) => r.id).sort()
		await age(one.id, 40)
		await age(two.id, 35)
		await purgeInteractions(db, 30)
		expect(await kept()).toEqual([one.id, two.id, three.id].sort())
		await ai.interactions.create({ model: MODEL.anthropic, input: 'still whole', previous_interaction_id: three.id })
		expect(JSON.stringify(lastRequest(m.mocks.anthropic).body)).toContain('oldest words')
		await age(three.id, 31)
		const [four] = (await kept()).filter((id) => ![one.id, two.id, three.id].includes(id))
		await age(four!, 31)
		await purgeInteractions(db, 30)
		expect(await kept()).toEqual([])
		expect((await ai.interactions.get(three.id).catch((e) => e)).status).toBe(404)
	})
})

describe('Vercel AI SDK google.interactions', () => {
	for (const up of UPSTREAMS)
		for (const stream of [false, true])
			it(`should answer generateText and streamText through the Interactions API (${up} upstream${stream ? ', streamed' : ''})`, async () => {
				const acct = await m.account()
				const google = createGoogleGenerativeAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1beta` })
				const model = google.interactions(MODEL[up])
				let text: string
				let usage: { inputTokens?: number; outputTokens?: number }
				if (stream) {
					const r = streamText({ model, prompt: 'via the sdk', maxRetries: 0 })
					text = await r.text
					usage = await r.usage
				} else {
					const r = await generateText({ model, prompt: 'via the sdk', maxRetries: 0 })
					text = r.text
					usage = r.usage
				}
				expect(text).toBe(hello('via the sdk'))
				expect(usage.inputTokens).toBe(3)
				expect(usage.outputTokens).toBe(6)
				await expectCharges(m, acct, [{ model: MODEL[up], input: 3, output: 6, endpoint: '/v1beta/interactions', stream }])
			})

	it('should refuse transcription for another vendor\'s model with a 400 naming it', async () => {
		const acct = await m.account()
		const err = await genai(acct).interactions.create({ model: MODEL.anthropic, input: 'x', generation_config: { transcription_config: {} } as never }).catch((e) => e)
		expect(err.status).toBe(400)
		expect(JSON.stringify(err.body ?? err.message)).toContain('transcription_config')
		expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
	})
})

describe('the Interaction resource', () => {
	it("should show the request's configuration as asked, created and kept", async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const asked = {
			system_instruction: 'Be brief.',
			tools: [weather],
			generation_config: { temperature: 0.5, max_output_tokens: 200, tool_choice: 'none' as const },
			response_format: { type: 'text' as const, mime_type: 'application/json' as const, schema: { type: 'object', properties: { a: { type: 'string' } } } },
		}
		const r = await ai.interactions.create({ model: MODEL.openai, input: 'show me', ...asked })
		expect(r).toMatchObject(asked)
		const got = await ai.interactions.get(r.id)
		expect(got).toMatchObject(asked)
		const next = await ai.interactions.create({ model: MODEL.openai, input: 'again', previous_interaction_id: r.id })
		// Not carried over: each interaction shows its own.
		expect(next.system_instruction).toBeUndefined()
		expect(next.previous_interaction_id).toBe(r.id)
	})
})

describe('ai.interactions endings', () => {
	it('should say incomplete when the answer reached max_output_tokens', async () => {
		const acct = await m.account()
		const r = await genai(acct).interactions.create({ model: MODEL.anthropic, input: '#length go', generation_config: { max_output_tokens: 3 } })
		expect(r.status).toBe('incomplete')
		expect(r.usage?.total_output_tokens).toBe(3)
	})

	it('should end a stream the upstream broke with an error event, billed for what was consumed', async () => {
		const acct = await m.account()
		m.mocks.openai.faultOnce = { kind: 'midstream', afterChunks: 2 }
		const events: Event[] = []
		const err: unknown = await (async () => {
			for await (const e of (await genai(acct).interactions.create({ model: MODEL.openai, input: 'one two three four five six', stream: true })) as unknown as AsyncIterable<Event>) events.push(e)
		})().catch((e) => e)
		const types = events.map((e) => e.event_type)
		expect(types[0]).toBe('interaction.created')
		expect(types).not.toContain('interaction.completed')
		// The SDK hands the error event over as the stream's last.
		expect(err).toBeUndefined()
		expect(events.at(-1)).toMatchObject({ event_type: 'error', error: { code: 'INTERNAL' } })
		expect(events.at(-1)!.error!.message).toBeString()
		const rows = await usageRows(m, acct.accountId)
		expect(rows.map((r) => r.end_reason)).toEqual(['error'])
	})
})

describe('Gemini channels with interactions_api: Gemini\'s own Interactions API upstream', () => {
	const sent = () => lastRequest(m.mocks.gemini)

	for (const stream of [false, true])
		it(`should forward the interaction to /v1beta/interactions and bill the usage it reports${stream ? ' (streamed)' : ''}`, async () => {
			const acct = await m.account()
			const ai = genai(acct)
			const text = stream
				? (await streamed(ai, { model: NATIVE, input: 'native please', system_instruction: 'Be kind.' })).text
				: (await ai.interactions.create({ model: NATIVE, input: 'native please', system_instruction: 'Be kind.' })).output_text
			expect(text).toBe(hello('native please'))
			expect(sent().path).toBe('/v1beta/interactions')
			expect(sent().body).toMatchObject({ model: 'gemini-2.5-flash', store: false, system_instruction: 'Be kind.', input: [{ type: 'user_input', content: [{ type: 'text', text: 'native please' }] }] })
			expect(sent().body.stream).toBe(stream ? true : undefined)
			await expectCharges(m, acct, [{ model: NATIVE, input: 4, output: 5, endpoint: '/v1beta/interactions', stream }])
		})

	it('should send back the thought signatures and function calls of the previous turn, as Gemini issued them', async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const generation_config = { thinking_summaries: 'auto' as const }
		const r = await ai.interactions.create({ model: NATIVE, input: '#tools weather', tools: [weather], generation_config })
		expect(r.status).toBe('requires_action')
		const calls = r.steps.filter((s) => s.type === 'function_call') as Array<{ id: string; name: string }>
		expect(calls).toHaveLength(2)
		const r2 = await ai.interactions.create({
			model: NATIVE,
			previous_interaction_id: r.id,
			tools: [weather],
			generation_config,
			input: calls.map((c, i) => ({ type: 'function_result' as const, call_id: c.id, name: c.name, result: i ? 'rain' : 'sun' })),
		})
		expect(r2.output_text).toBe('Tool results: sun; rain')
		// The mock refuses a signature it did not issue and a result naming no call of the input: both came back intact.
		expect((sent().body.input as Array<{ type: string }>).map((s) => s.type)).toEqual(['user_input', 'thought', 'function_call', 'function_call', 'function_result', 'function_result'])
	})

	it("should take Google's built-in tools there, and only there", async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const r = await ai.interactions.create({ model: NATIVE, input: '#search the news', tools: [{ type: 'google_search' }] })
		expect(r.output_text).toBe(hello('#search the news'))
		expect(sent().body.tools).toEqual([{ type: 'google_search' }])
		// The same Gemini model through generateContent cannot take Google's other built-in tools; google_search it runs
		// as grounding (interactions-citations.test.ts).
		const err = await ai.interactions.create({ model: MODEL.gemini, input: 'x', tools: [{ type: 'url_context' }] }).catch((e) => e)
		expect(err.status).toBe(400)
	})

	for (const stream of [false, true])
		it(`should show the search results' tokens as total_tool_use_tokens, apart from the input, and bill them as input${stream ? ' (streamed)' : ''}`, async () => {
			const acct = await m.account()
			const ai = genai(acct)
			const params = { model: NATIVE, input: '#search the weather', tools: [{ type: 'google_search' as const }] }
			// @google/genai adds `initial_input_tokens` (the first hop's input) to a whole answer's usage: not the gateway's.
			const { initial_input_tokens: _, ...usage } = stream
				? (await streamed(ai, params)).events.find((e) => e.event_type === 'interaction.completed')!.interaction!.usage
				: ((await ai.interactions.create(params)).usage as Record<string, unknown>)
			const input = countWords('#search the weather')
			const output = countWords(hello('#search the weather'))
			// As Google gives them: the prompt, the tools' tokens apart, the total counting both.
			expect(usage).toEqual({ total_input_tokens: input, total_tool_use_tokens: SEARCH_TOOL_TOKENS, total_output_tokens: output, total_tokens: input + SEARCH_TOOL_TOKENS + output })
			await expectCharges(m, acct, [{ model: NATIVE, input: input + SEARCH_TOOL_TOKENS, output, endpoint: '/v1beta/interactions', stream }])
		})
})

describe('ai.interactions: what another vendor can take of a request', () => {
	const clock = { type: 'function' as const, name: 'get_time', description: 'Time in a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } }
	const news = { type: 'function' as const, name: 'get_news', description: 'News of a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } }

	it('should carry audio a function returned where the vendor takes audio, and refuse it with a 400 naming it where not', async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const data = Buffer.from('RIFF-audio-bytes').toString('base64')
		const input = (model: string) => ({
			model,
			store: false,
			tools: [weather],
			input: [
				{ type: 'user_input' as const, content: [{ type: 'text' as const, text: 'listen' }] },
				{ type: 'function_call' as const, id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } },
				{ type: 'function_result' as const, call_id: 'call_1', name: 'get_weather', result: [{ type: 'text' as const, text: 'recorded' }, { type: 'audio' as const, data, mime_type: 'audio/wav' as const }] },
			],
		})
		const err = await ai.interactions.create(input(MODEL.anthropic) as never).catch((e) => e)
		expect(err.status).toBe(400)
		expect(err.message).toContain('input[2].result[1]: audio (audio/wav) cannot be sent to this model (Anthropic)')
		// Gemini hears it, as a part after the function response; OpenAI chat in the user turn after the tool message.
		await ai.interactions.create(input(MODEL.gemini) as never)
		const parts = (lastRequest(m.mocks.gemini).body.contents as Array<{ parts: Array<Record<string, any>> }>).flatMap((c) => c.parts)
		expect(parts.find((p) => p.inlineData)?.inlineData).toEqual({ mimeType: 'audio/wav', data })
		await ai.interactions.create(input(MODEL.openai) as never)
		const msgs = lastRequest(m.mocks.openai).body.messages as Array<{ role: string; content: any }>
		expect(msgs.at(-1)).toEqual({ role: 'user', content: [{ type: 'input_audio', input_audio: { data, format: 'wav' } }] })
	})

	it('should offer another vendor only the tools allowed_tools names', async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const params = (model: string) => ({
			model,
			input: 'hello',
			tools: [weather, clock, news],
			generation_config: { tool_choice: { allowed_tools: { mode: 'any' as const, tools: ['get_weather', 'get_time'] } } },
		})
		await ai.interactions.create(params(MODEL.openai))
		const openai = lastRequest(m.mocks.openai).body
		expect((openai.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).toEqual(['get_weather', 'get_time'])
		expect(openai.tool_choice).toBe('required')
		await ai.interactions.create(params(MODEL.anthropic))
		const anthropic = lastRequest(m.mocks.anthropic).body
		expect((anthropic.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(['get_weather', 'get_time'])
		expect(anthropic.tool_choice).toEqual({ type: 'any' })
		await ai.interactions.create(params(MODEL.gemini))
		const gemini = lastRequest(m.mocks.gemini).body
		expect(gemini.tools[0].functionDeclarations.map((d: { name: string }) => d.name)).toEqual(['get_weather', 'get_time'])
		expect(gemini.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } })
	})

	it('should refuse an audio response_format for a model that cannot answer in audio, and send it to Gemini\'s Interactions API', async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const response_format = [{ type: 'text' as const }, { type: 'audio' as const, mime_type: 'audio/wav' as const }]
		for (const model of [MODEL.openai, MODEL.anthropic, MODEL.gemini]) {
			const err = await ai.interactions.create({ model, input: 'say it aloud', response_format }).catch((e) => e)
			expect(err.status).toBe(400)
			expect(err.message).toContain('response_format[1].type: response_format of type audio (audio output) is only available on Gemini\'s API')
		}
		await ai.interactions.create({ model: NATIVE, input: 'say it aloud', response_format })
		expect(lastRequest(m.mocks.gemini).body.response_format).toEqual(response_format)
	})
})
