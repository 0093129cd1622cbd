/**
 * A JSON answer format together with function tools, for Gemini models. Models before Gemini 3 refuse the two together
 * (400 "Function calling with a response mime type: 'application/json' is unsupported", symfony/ai#1777), which is what
 * an Agents SDK agent with an `outputType` and tools, or any Responses / chat client sending `text.format` or
 * `response_format` with `tools`, asks for: such a model gets the schema as a system instruction instead (as Claude
 * without structured outputs does), and Gemini 3 models, which take both, keep the JSON mode.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startGeminiMock, type VendorMock } from '../../mocks'

let app: TestApp
let gemini: VendorMock
let client: OpenAI
beforeAll(async () => {
	gemini = await startGeminiMock({ apiKey: 'up-ge' })
	const models = ['gemini-2.5-flash', 'gemini-3-pro-preview']
	app = await startTestApp({
		config: {
			channels: [{ name: 'ge', type: 'gemini', base_url: gemini.url, api_key: 'up-ge', models }],
			models: models.map((name) => ({ name, input_per_mtok: 1, output_per_mtok: 2 })),
		},
	})
	const a = await app.account(10)
	client = new OpenAI({ apiKey: a.key, baseURL: `${app.url}/v1`, maxRetries: 0 })
}, 60_000)
afterAll(async () => {
	await app.close()
	await gemini.stop()
})

const schema = { type: 'object', properties: { city: { type: 'string' }, summary: { type: 'string' } }, required: ['city', 'summary'], additionalProperties: false }
const weather = { type: 'function' as const, name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false }
const format = { type: 'json_schema' as const, name: 'report', schema, strict: true }
const upstream = () => gemini.requests.at(-1)!.body as { systemInstruction?: { parts: Array<{ text: string }> }; generationConfig?: Record<string, unknown>; tools?: unknown[] }
const instruction = () => (upstream().systemInstruction?.parts ?? []).map((p) => p.text).join('\n')

describe('a JSON format with function tools on a Gemini model before Gemini 3', () => {
	for (const stream of [false, true])
		it(`should call the tools and then answer, the schema given as an instruction (responses, ${stream ? 'stream' : 'non-stream'})`, async () => {
			const body = { model: 'gemini-2.5-flash', instructions: 'Be brief.', tools: [weather], text: { format } }
			// The SDK's `.stream()` parses the text as the format's JSON, which the mock does not write for a prompt: read the events.
			const run = async (input: OpenAI.Responses.ResponseInput) => {
				if (!stream) return client.responses.create({ ...body, input })
				let done: OpenAI.Responses.Response | undefined
				for await (const e of await client.responses.create({ ...body, input, stream: true })) if (e.type === 'response.completed') done = e.response
				return done!
			}
			const first = await run([{ role: 'user', content: 'weather in two cities #tools' }])
			const calls = first.output.filter((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call')
			expect(calls.map((c) => c.arguments)).toEqual(['{"city":"Paris"}', '{"city":"Tokyo"}'])
			expect(upstream().generationConfig?.responseMimeType).toBeUndefined()
			expect(instruction()).toStartWith('Be brief.')
			expect(instruction()).toContain(`JSON Schema "report"`)
			expect(instruction()).toContain(JSON.stringify(schema))

			const outputs = calls.map((c) => ({ type: 'function_call_output' as const, call_id: c.call_id, output: `sunny in ${JSON.parse(c.arguments).city}` }))
			const second = await run([{ role: 'user', content: 'weather in two cities #tools' }, ...first.output, ...outputs] as OpenAI.Responses.ResponseInput)
			expect(second.status).toBe('completed')
			const text = second.output.flatMap((o) => (o.type === 'message' ? o.content : [])).map((c) => (c.type === 'output_text' ? c.text : ''))
			expect(text).toEqual(['Tool results: sunny in Paris; sunny in Tokyo'])
			// The Response object still says what the client asked for.
			expect(second.text?.format).toEqual(format)
		})

	it('should do the same for chat completions with response_format and tools', async () => {
		const r = await client.chat.completions.create({
			model: 'gemini-2.5-flash',
			messages: [{ role: 'user', content: 'weather #tools' }],
			tools: [{ type: 'function', function: { name: weather.name, description: weather.description, parameters: weather.parameters } }],
			response_format: { type: 'json_schema', json_schema: { name: 'report', schema, strict: true } },
		})
		expect(r.choices[0]!.finish_reason).toBe('tool_calls')
		expect(upstream().generationConfig?.responseMimeType).toBeUndefined()
		expect(instruction()).toContain(JSON.stringify(schema))
	})

	it('should keep the JSON mode when no function tools are offered', async () => {
		const r = await client.responses.create({ model: 'gemini-2.5-flash', input: 'a report', text: { format } })
		expect(JSON.parse(r.output_text)).toEqual({ city: 'a report', summary: 'a report' })
		expect(upstream().generationConfig).toMatchObject({ responseMimeType: 'application/json', responseJsonSchema: schema })
		expect(upstream().systemInstruction).toBeUndefined()
	})
})

describe('a JSON format with function tools on a Gemini 3 model', () => {
	it('should send both, which Gemini 3 takes', async () => {
		const r = await client.responses.create({ model: 'gemini-3-pro-preview', input: 'a report', tools: [weather], text: { format } })
		expect(JSON.parse(r.output_text)).toEqual({ city: 'a report', summary: 'a report' })
		expect(upstream().generationConfig).toMatchObject({ responseMimeType: 'application/json', responseJsonSchema: schema })
		expect(upstream().tools).toHaveLength(1)
	})
})
