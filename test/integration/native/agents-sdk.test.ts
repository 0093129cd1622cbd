/**
 * OpenAI's Agents SDK (`@openai/agents`) pointed at the gateway as a user would (`setDefaultOpenAIClient` with
 * `baseURL: {root}/v1`), on models of the OpenAI, Anthropic and Gemini mocks, with both of its model classes
 * (Responses, the default, and Chat Completions): tool loops, streamed runs, handoffs across vendors, structured
 * output, guardrails, gateway conversations, compaction, and errors as the SDK's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import {
	Agent,
	InputGuardrailTripwireTriggered,
	MaxTurnsExceededError,
	MemorySession,
	OpenAIChatCompletionsModel,
	OpenAIResponsesCompactionSession,
	OpenAIResponsesModel,
	run,
	setDefaultOpenAIClient,
	setTracingDisabled,
	tool,
} from '@openai/agents'
import OpenAI from 'openai'
import { z } from 'zod'
import { MODEL, SETUP_MS, startMatrix, THINKER, usageRows, type Matrix, type Upstream, UPSTREAMS } from '../protocols/harness'

// Traces would go to OpenAI's own endpoint with the key: not wanted from a test (nor from most gateway users).
setTracingDisabled(true)

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const weather = tool({ name: 'get_weather', description: 'The weather in a city', parameters: z.object({ city: z.string() }), execute: async ({ city }) => `sunny in ${city}` })

type Api = 'responses' | 'chat'

/** A fresh account, its OpenAI client set as the SDK's default, and the SDK model of `api` for `model`. */
async function agentClient(api: Api, model: string) {
	const acct = await m.account(10)
	const client = new OpenAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1`, maxRetries: 0 })
	setDefaultOpenAIClient(client)
	const modelOf = (name: string) => (api === 'chat' ? new OpenAIChatCompletionsModel(client, name) : new OpenAIResponsesModel(client, name))
	return { acct, client, model: modelOf(model), modelOf }
}

for (const api of ['responses', 'chat'] as Api[])
	for (const u of UPSTREAMS) {
		const other: Upstream = UPSTREAMS[(UPSTREAMS.indexOf(u) + 1) % UPSTREAMS.length]!
		describe(`Agents SDK, ${api} model on ${u}`, () => {
			it('should run a streamed tool loop, with run usage equal to what the gateway billed', async () => {
				const { acct, model } = await agentClient(api, MODEL[u])
				const result = await run(new Agent({ name: 'weather', instructions: 'Answer briefly', model, tools: [weather] }), 'weather please #tools', { stream: true })
				const events: string[] = []
				let deltas = ''
				for await (const e of result) {
					if (e.type === 'run_item_stream_event') events.push(e.name)
					if (e.type === 'raw_model_stream_event' && e.data.type === 'output_text_delta') deltas += e.data.delta
				}
				await result.completed
				expect(result.finalOutput).toBe('Tool results: sunny in Paris; sunny in Tokyo')
				expect(deltas).toBe(result.finalOutput!)
				expect(events.filter((n) => n === 'tool_called')).toHaveLength(2)
				expect(events.filter((n) => n === 'tool_output')).toHaveLength(2)
				const rows = await usageRows(m, acct.accountId)
				expect(rows.map((r) => [r.input_tokens, r.output_tokens, r.stream])).toEqual(result.state.usage.requestUsageEntries!.map((e) => [e.inputTokens, e.outputTokens, true]))
			})

			it(`should hand off to an agent on ${other}'s model`, async () => {
				const { model, modelOf } = await agentClient(api, MODEL[u])
				const target = new Agent({ name: 'city_agent', handoffDescription: 'Knows cities', model: modelOf(MODEL[other]) })
				const triage = new Agent({ name: 'triage', model, handoffs: [target], modelSettings: { toolChoice: 'transfer_to_city_agent' } })
				const result = await run(triage, 'which city')
				expect(result.lastAgent?.name).toBe('city_agent')
				expect(result.newItems.map((i) => i.type)).toEqual(['handoff_call_item', 'handoff_output_item', 'message_output_item'])
				// The mocks answer a turn after tool results with the results' text (even when a JSON format is asked); Gemini
				// gets the handoff's JSON output as its functionResponse object, whose value its mock reads back.
				expect(result.finalOutput).toBe(other === 'gemini' ? 'Tool results: city_agent' : 'Tool results: {"assistant":"city_agent"}')
			})

			it('should give a structured outputType, with reasoning settings on', async () => {
				const { acct, model } = await agentClient(api, THINKER[u])
				const agent = new Agent({ name: 'city', model, outputType: z.object({ city: z.string(), population: z.number() }), modelSettings: { reasoning: { effort: 'high' } } })
				const result = await run(agent, 'which city')
				expect(result.finalOutput).toEqual({ city: 'which city', population: 42 })
				// The mocks think 6 words ("Let me think about which city.") when asked to reason.
				expect(result.state.usage.outputTokensDetails[0]).toEqual({ reasoning_tokens: 6 })
				expect((await usageRows(m, acct.accountId)).map((r) => r.reasoning_tokens)).toEqual([6])
			})

			it('should trip an input guardrail run by an agent on the gateway, and stop at maxTurns', async () => {
				const { model } = await agentClient(api, MODEL[u])
				const checker = new Agent({ name: 'checker', model, outputType: z.object({ isHomework: z.boolean() }) })
				const guarded = new Agent({
					name: 'tutor',
					model,
					inputGuardrails: [{ name: 'homework', execute: async ({ input }) => ({ outputInfo: null, tripwireTriggered: (await run(checker, input)).finalOutput!.isHomework }) }],
				})
				expect(run(guarded, 'solve for x')).rejects.toBeInstanceOf(InputGuardrailTripwireTriggered)
				expect(run(new Agent({ name: 'loop', model, tools: [weather] }), 'weather #tools', { maxTurns: 1 })).rejects.toBeInstanceOf(MaxTurnsExceededError)
			})

			if (api === 'responses')
				it('should continue a gateway conversation by conversationId, with reasoning on', async () => {
					const { client, model } = await agentClient(api, THINKER[u])
					const conv = await client.conversations.create({})
					const agent = new Agent({ name: 'a', model, tools: [weather], modelSettings: { reasoning: { effort: 'low' } } })
					await run(agent, 'first #tools', { conversationId: conv.id })
					const second = await run(agent, 'second', { conversationId: conv.id, stream: true })
					for await (const _ of second);
					await second.completed
					expect(second.finalOutput).toBe('Hello! You said: second')
					const items = await client.conversations.items.list(conv.id, { order: 'asc' })
					expect(items.data.map((i) => i.type)).toEqual(['message', 'reasoning', 'function_call', 'function_call', 'function_call_output', 'function_call_output', 'reasoning', 'message', 'message', 'reasoning', 'message'])
				})
		})
	}

describe('Agents SDK, continuation and compaction on another vendor', () => {
	for (const u of ['anthropic', 'gemini'] as Upstream[])
		it(`should continue by previousResponseId on ${u}'s model, the earlier turn sent as input`, async () => {
			const { model } = await agentClient('responses', MODEL[u])
			const agent = new Agent({ name: 'a', model })
			// Mock response ids follow the text; these are not another test's (an id is recorded to one account only).
			const first = await run(agent, `first on ${u}`)
			const second = await run(agent, `second on ${u}`, { previousResponseId: first.lastResponseId })
			expect(second.finalOutput).toBe(`Hello! You said: second on ${u}`)
			const sent = JSON.stringify(m.mocks[u].requests.at(-1)!.body)
			for (const said of [`first on ${u}`, `Hello! You said: first on ${u}`, `second on ${u}`]) expect(sent).toContain(said)
		})

	it("should compact an OpenAI model's session through POST /v1/responses/compact, billed from its usage", async () => {
		const { acct, client, model } = await agentClient('responses', MODEL.openai)
		const session = new OpenAIResponsesCompactionSession({ client, model: MODEL.openai, underlyingSession: new MemorySession(), shouldTriggerCompaction: () => true })
		const agent = new Agent({ name: 'a', model, tools: [weather] })
		// Mock response ids follow the text; this one is not another test's (an id is recorded to one account only).
		await run(agent, 'compact me #tools', { session })
		const compacts = m.mocks.openai.requests.filter((r) => r.path === '/v1/responses/compact')
		expect(compacts.at(-1)!.body).toMatchObject({ model: 'gpt-4o-mini' })
		// The next turn sends the compaction item OpenAI answered, as input.
		const second = await run(agent, 'and now', { session })
		expect(second.finalOutput).toBe('Hello! You said: and now')
		const sent = m.mocks.openai.requests.filter((r) => r.path === '/v1/responses').at(-1)!.body as { input: { type?: string }[] }
		expect(sent.input.some((i) => i.type === 'compaction')).toBe(true)
		const rows = await usageRows(m, acct.accountId)
		const compactRows = rows.filter((r) => r.endpoint === '/v1/responses/compact')
		expect(compactRows.length).toBe(2)
		for (const r of compactRows) {
			expect(r.status).toBe(200)
			expect(r.estimated).toBe(false)
			expect(r.cost).toBeGreaterThan(0)
		}
	})

	it("should refuse compaction for another vendor's model with a 400, before any upstream call or charge", async () => {
		const { acct, client } = await agentClient('responses', MODEL.anthropic)
		const before = m.mocks.anthropic.requests.length
		const err = await client.responses.compact({ model: MODEL.anthropic, input: 'compact me' }).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(OpenAI.BadRequestError)
		expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('unsupported_for_model')
		expect((err as Error).message).toContain('only available on OpenAI models')
		expect(m.mocks.anthropic.requests.length).toBe(before)
		expect(await usageRows(m, acct.accountId)).toEqual([])
		expect(await m.app.balance(acct.accountId)).toBe(10)
	})
})
