/**
 * QA report item 1: an OpenAI upstream streams two parallel tool calls with their argument deltas interleaved by
 * `tool_calls[].index` (0, 1, 0, 1…), as OpenAI's chunk format allows. Converted for the other protocols' clients the
 * calls must arrive whole and with their arguments: /v1/messages got two empty tool_use blocks then `event: error`,
 * Gemini clients got both functionCalls with `args: {}` then an error. The mock interleaves on `#interleave`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createAnthropic } from '@ai-sdk/anthropic'
import { GoogleGenAI, type FunctionCall } from '@google/genai'
import { jsonSchema, streamText, tool } from 'ai'
import { lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, usageRows } from './harness'

;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const USER = 'weather and time #tools #interleave'
const WEATHER = { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] }
const TIME = { type: 'object' as const, properties: { timezone: { type: 'string' } }, required: ['timezone'] }
const EXPECTED = [
	['get_weather', { city: 'Paris' }],
	['get_time', { timezone: 'Tokyo' }],
]

/** The mock really interleaved: the first call's fragments are not all before the second call's. */
async function expectUpstreamInterleaved() {
	const up = lastRequest(m.mocks.openai)
	expect(up.body.stream).toBe(true)
	const res = await fetch(`${m.mocks.openai.url}/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer up-openai', 'content-type': 'application/json' }, body: JSON.stringify(up.body) })
	const order = (await res.text())
		.split('\n')
		.filter((l) => l.startsWith('data: {'))
		.flatMap((l) => (JSON.parse(l.slice(6)).choices?.[0]?.delta?.tool_calls ?? []).map((c: { index: number }) => c.index))
	expect(order.slice(0, 4)).toEqual([0, 1, 0, 1])
	m.mocks.openai.requests.pop()
}

describe('interleaved tool-call deltas from an OpenAI upstream', () => {
	it('should reach an Anthropic SDK stream as two whole tool_use blocks with input_json_delta, no error', async () => {
		const acct = await m.account()
		const stream = acct.anthropic.messages.stream({
			model: MODEL.openai,
			max_tokens: 200,
			tools: [
				{ name: 'get_weather', input_schema: WEATHER },
				{ name: 'get_time', input_schema: TIME },
			],
			messages: [{ role: 'user', content: USER }],
		})
		const events: Array<{ type: string; index?: number; delta?: { type: string } }> = []
		stream.on('streamEvent', (e) => events.push(e as (typeof events)[number]))
		const msg = await stream.finalMessage()
		await expectUpstreamInterleaved()
		expect(msg.stop_reason).toBe('tool_use')
		expect(msg.content.map((b) => (b.type === 'tool_use' ? [b.name, b.input] : [b.type]))).toEqual(EXPECTED)
		for (const index of [0, 1]) expect(events.some((e) => e.type === 'content_block_delta' && e.index === index && e.delta?.type === 'input_json_delta')).toBe(true)
		expect(events.map((e) => e.type)).not.toContain('error')
		const [row] = await usageRows(m, acct.accountId)
		expect([row!.status, row!.end_reason]).toEqual([200, 'ok'])
	})

	it('should reach a Gemini (@google/genai) stream as functionCalls with their real args, no error', async () => {
		const acct = await m.account()
		const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
		const calls: FunctionCall[] = []
		const chunks = await ai.models.generateContentStream({
			model: MODEL.openai,
			contents: USER,
			config: {
				tools: [
					{
						functionDeclarations: [
							{ name: 'get_weather', parametersJsonSchema: WEATHER },
							{ name: 'get_time', parametersJsonSchema: TIME },
						],
					},
				],
			},
		})
		for await (const c of chunks) calls.push(...(c.functionCalls ?? []))
		expect(calls.map((c) => [c.name, c.args])).toEqual(EXPECTED)
		const [row] = await usageRows(m, acct.accountId)
		expect([row!.status, row!.end_reason]).toEqual([200, 'ok'])
	})

	it('should relay the interleaved stream to an OpenAI client as sent and bill it as a success (same protocol)', async () => {
		const acct = await m.account()
		const s = await acct.openai.chat.completions.create({
			model: MODEL.openai,
			stream: true,
			messages: [{ role: 'user', content: USER }],
			tools: [
				{ type: 'function', function: { name: 'get_weather', parameters: WEATHER } },
				{ type: 'function', function: { name: 'get_time', parameters: TIME } },
			],
		})
		const calls: Array<{ name: string; args: string }> = []
		for await (const c of s)
			for (const tc of c.choices[0]?.delta.tool_calls ?? []) {
				if (tc.function?.name) calls[tc.index] = { name: tc.function.name, args: '' }
				calls[tc.index]!.args += tc.function?.arguments ?? ''
			}
		expect(calls.map((c) => [c.name, JSON.parse(c.args)])).toEqual(EXPECTED)
		// A guard, not a regression: the fast path meters the relayed stream with the same decoder, which must not fail.
		const [row] = await usageRows(m, acct.accountId)
		expect([row!.status, row!.end_reason, row!.estimated]).toEqual([200, 'ok', false])
	})

	it('should let the Vercel AI SDK (@ai-sdk/anthropic) stream both calls with their inputs', async () => {
		const acct = await m.account()
		const model = createAnthropic({ apiKey: acct.key, baseURL: `${m.app.url}/v1` })(MODEL.openai)
		const errors: unknown[] = []
		const r = streamText({
			model,
			prompt: USER,
			tools: {
				get_weather: tool({ inputSchema: jsonSchema<{ city: string }>(WEATHER) }),
				get_time: tool({ inputSchema: jsonSchema<{ timezone: string }>(TIME) }),
			},
			onError: ({ error }) => void errors.push(error),
		})
		const calls = await r.toolCalls
		expect(errors).toEqual([])
		expect(await r.finishReason).toBe('tool-calls')
		expect(calls.map((c) => [c.toolName, c.input])).toEqual(EXPECTED)
	})
})
