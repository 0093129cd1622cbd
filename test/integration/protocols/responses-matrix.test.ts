/**
 * The official `openai` SDK's Responses API against every upstream: `responses.create` and `.stream` (whose
 * accumulator checks event order), `instructions`, function calls answered with `function_call_output`, reasoning
 * items replayed next turn, structured output (`text.format`), `item_reference` to earlier output, and
 * `previous_response_id`. Every stream is also checked event by event: `sequence_number` counts up from 0, each
 * delta names an item that was added and not yet done, and `response.completed` holds the items the events built.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type OpenAI from 'openai'
import type { ResponseStreamEvent } from 'openai/resources/responses/responses'
import { countWords } from '../../mocks'
import { type Account, expectCharges, label, lastRequest, type Matrix, MODEL, PAIRS, SETUP_MS, startMatrix, THINKER, UPSTREAMS } from './harness'
import { checkResponsesEvents } from './wire-checks'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

type Params = OpenAI.Responses.ResponseCreateParamsNonStreaming
type Response = OpenAI.Responses.Response

/** `responses.create`, or `.stream(...).finalResponse()` with the events checked. */
async function respond(acct: Account, stream: boolean, params: Params): Promise<Response> {
	if (!stream) return acct.openai.responses.create(params)
	const { stream: _, ...rest } = params
	const s = acct.openai.responses.stream(rest)
	const events: ResponseStreamEvent[] = []
	s.on('event', (e) => events.push(e))
	const final = await s.finalResponse()
	checkResponsesEvents(events)
	return final
}

const weather = { type: 'function' as const, name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false }

describe('openai SDK responses matrix', () => {
	for (const [up, stream] of PAIRS) {
		it(`should answer with instructions, usage and billing (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const r = await respond(acct, stream, { model: MODEL[up], instructions: 'Be brief.', input: 'hello responses matrix' })
			expect(r.status).toBe('completed')
			expect(r.model).toBe(MODEL[up])
			expect(r.output_text).toBe('Hello! You said: hello responses matrix')
			expect([r.usage?.input_tokens, r.usage?.output_tokens]).toEqual([5, 6])
			expect(r.usage?.total_tokens).toBe(11)
			await expectCharges(m, acct, [{ model: MODEL[up], input: 5, output: 6, stream, endpoint: '/v1/responses' }])
		})

		it(`should run a function-call loop with function_call_output (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const first = await respond(acct, stream, { model: MODEL[up], input: 'weather in two cities #tools', tools: [weather] })
			const calls = first.output.flatMap((o) => (o.type === 'function_call' ? [o] : []))
			expect(calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
				['get_weather', { city: 'Paris' }],
				['get_weather', { city: 'Tokyo' }],
			])
			expect(new Set(calls.map((c) => c.call_id)).size).toBe(2)
			const second = await respond(acct, stream, {
				model: MODEL[up],
				tools: [weather],
				input: [{ role: 'user', content: 'weather in two cities #tools' }, ...calls, ...calls.map((c, i) => ({ type: 'function_call_output' as const, call_id: c.call_id, output: i ? '22C' : '18C' }))],
			})
			expect(second.output_text).toBe('Tool results: 18C; 22C')
		})

		it(`should answer text.format json_schema with JSON (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const schema = { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city', 'days'], additionalProperties: false }
			const format = { type: 'json_schema' as const, name: 'trip', schema, strict: true }
			const r = await acct.openai.responses.create({ model: MODEL[up], input: 'plan Oslo', text: { format }, instructions: 'Plan.', max_output_tokens: 300 })
			// The Response echoes the request's settings (converted answers used to say `format: {type: 'text'}`).
			expect(r.text?.format).toEqual(format)
			expect([r.instructions, r.max_output_tokens]).toEqual(['Plan.', 300])
			expect(JSON.parse(r.output_text)).toEqual({ city: 'plan Oslo', days: 42 })
			// Converted for a Claude 4.5+ model: Claude's own structured outputs, the instructions left as they were.
			if (up === 'anthropic') expect(lastRequest(m.mocks.anthropic).body).toMatchObject({ system: 'Plan.', output_config: { format: { type: 'json_schema', schema } } })
			if (stream) {
				const events: ResponseStreamEvent[] = []
				const s = acct.openai.responses.stream({ model: MODEL[up], input: 'plan Oslo', text: { format } })
				s.on('event', (e) => events.push(e))
				await s.finalResponse()
				checkResponsesEvents(events)
				const lifecycle = events.flatMap((e) => ('response' in e ? [e.response.text?.format] : []))
				expect(lifecycle).toEqual(lifecycle.map(() => format))
			}
		})

		it(`should replay reasoning items next turn (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const first = await respond(acct, stream, { model: THINKER[up], input: 'think about cats', reasoning: { effort: 'medium', summary: 'auto' } })
			const reasoning = first.output.find((o) => o.type === 'reasoning')
			expect(reasoning?.type === 'reasoning' && reasoning.summary.map((s) => s.text).join('')).toBe('Let me think about think about cats.')
			expect(first.usage?.output_tokens_details.reasoning_tokens).toBe(countWords('Let me think about think about cats.'))
			const next = await respond(acct, stream, {
				model: THINKER[up],
				reasoning: { effort: 'medium', summary: 'auto' },
				input: [{ role: 'user', content: 'think about cats' }, ...(first.output as OpenAI.Responses.ResponseInputItem[]), { role: 'user', content: 'and dogs' }],
			})
			expect(next.output_text).toBe('Hello! You said: and dogs')
		})
	}

	// A stateful client names earlier output by id (the Vercel AI SDK does so by default): converted models resolve
	// the ids the gateway issued (modules/responses/converted-items.ts).
	for (const up of UPSTREAMS.filter((u) => u !== 'openai')) {
		for (const stream of [false, true]) {
			it(`should resolve item_reference to earlier converted output (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const first = await respond(acct, stream, { model: MODEL[up], input: 'remember me', reasoning: { effort: 'low', summary: 'auto' } })
				const refs = first.output.map((o) => ({ type: 'item_reference' as const, id: o.id! }))
				const next = await respond(acct, stream, { model: MODEL[up], reasoning: { effort: 'low', summary: 'auto' }, input: [{ role: 'user', content: 'remember me' }, ...refs, { role: 'user', content: 'next' }] })
				expect(next.output_text).toBe('Hello! You said: next')
				// The earlier answer reached the upstream: remember me (2) + its answer (5) + next (1).
				expect(next.usage?.input_tokens).toBe(2 + countWords(first.output_text) + 1)
			})
		}

		it(`should refuse another account's item_reference for ${up}`, async () => {
			const owner = await m.account()
			const first = await owner.openai.responses.create({ model: MODEL[up], input: 'private words' })
			const other = await m.account()
			const err = await other.openai.responses.create({ model: MODEL[up], input: [{ type: 'item_reference', id: first.output[0]!.id! }, { role: 'user', content: 'leak?' }] }).catch((e: unknown) => e)
			expect((err as { status?: number }).status).toBe(400)
			expect(String((err as Error).message)).toContain('store = false')
		})

		it(`should not keep the items of a store: false answer for ${up}`, async () => {
			const acct = await m.account()
			const first = await acct.openai.responses.create({ model: MODEL[up], input: 'forget me', store: false })
			const err = await acct.openai.responses.create({ model: MODEL[up], input: [{ type: 'item_reference', id: first.output[0]!.id! }, { role: 'user', content: 'again' }] }).catch((e: unknown) => e)
			expect((err as { status?: number }).status).toBe(400)
		})

		it(`should refuse previous_response_id of an OpenAI response for ${up} with a clear 400`, async () => {
			const acct = await m.account()
			const first = await acct.openai.responses.create({ model: MODEL.openai, input: `an openai turn before ${up}` })
			const err = await acct.openai.responses.create({ model: MODEL[up], input: 'continue', previous_response_id: first.id }).catch((e: unknown) => e)
			expect((err as { status?: number }).status).toBe(400)
			expect(String((err as Error).message)).toContain('previous_response_id')
		})
	}

	it('should continue an OpenAI response by previous_response_id', async () => {
		const acct = await m.account()
		const first = await acct.openai.responses.create({ model: MODEL.openai, input: 'first' })
		const next = await acct.openai.responses.create({ model: MODEL.openai, input: 'second', previous_response_id: first.id })
		expect(next.output_text).toBe('Hello! You said: second')
		expect(lastRequest(m.mocks.openai).body.previous_response_id).toBe(first.id)
	})
})

