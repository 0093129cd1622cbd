import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'

import { startOpenAIMock, type VendorMock } from '../../mocks'

let m: VendorMock
let client: OpenAI

beforeAll(async () => {
	m = await startOpenAIMock({ apiKey: 'up-key' })
	client = new OpenAI({ apiKey: 'up-key', baseURL: m.url, maxRetries: 0 })
})
afterAll(() => m.stop())
beforeEach(() => m.reset())

const weather = [
	{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } },
	{ type: 'function' as const, function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
]

describe('openai mock: chat completions', () => {
	it('should answer with the echoed text and word-count usage', async () => {
		const r = await client.chat.completions.create({
			model: 'gpt-4o',
			messages: [
				{ role: 'system', content: 'be brief' },
				{ role: 'user', content: 'hi there' },
			],
		})
		expect(r.object).toBe('chat.completion')
		expect(r.choices[0].message.content).toBe('Hello! You said: hi there')
		expect(r.choices[0].finish_reason).toBe('stop')
		expect(r.usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 5, total_tokens: 9 })
		expect(m.requests[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions' })
		expect(m.requests[0].headers.authorization).toBe('Bearer up-key')
	})

	it('should stream pieces that the SDK assembles, with usage only when include_usage is set', async () => {
		const stream = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi there' }], stream: true })
		const chunks = []
		for await (const c of stream) chunks.push(c)
		expect(chunks.length).toBeGreaterThan(4)
		expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hello! You said: hi there')
		expect(chunks.every((c) => !('usage' in c))).toBe(true)

		const withUsage = await client.chat.completions.create({
			model: 'gpt-4o',
			messages: [{ role: 'user', content: 'hi there' }],
			stream: true,
			stream_options: { include_usage: true },
		})
		const all = []
		for await (const c of withUsage) all.push(c)
		const last = all[all.length - 1]
		expect(last.choices).toEqual([])
		expect(last.usage?.completion_tokens).toBe(5)
		expect(all.slice(0, -1).every((c) => c.usage === null)).toBe(true)
	})

	it('should stream two parallel tool calls with fragmented arguments', async () => {
		const stream = client.chat.completions.stream({ model: 'gpt-4o', messages: [{ role: 'user', content: 'weather #tools' }], tools: weather })
		const argDeltas: string[] = []
		stream.on('chunk', (c) => {
			for (const t of c.choices[0]?.delta.tool_calls ?? []) if (t.function?.arguments) argDeltas.push(t.function.arguments)
		})
		const final = await stream.finalChatCompletion()
		const calls = final.choices[0].message.tool_calls ?? []
		expect(final.choices[0].finish_reason).toBe('tool_calls')
		expect(calls.map((c) => (c.type === 'function' ? [c.function.name, JSON.parse(c.function.arguments)] : []))).toEqual([
			['get_weather', { location: 'Paris' }],
			['get_time', { city: 'Tokyo' }],
		])
		expect(argDeltas.length).toBeGreaterThanOrEqual(4)
		expect(calls[0].id).toMatch(/^call_/)
	})

	it('should accept the tool results turn and summarise the results', async () => {
		const first = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'weather #tools' }], tools: weather })
		const msg = first.choices[0].message
		const ids = (msg.tool_calls ?? []).map((c) => c.id)
		const second = await client.chat.completions.create({
			model: 'gpt-4o',
			tools: weather,
			messages: [
				{ role: 'user', content: 'weather #tools' },
				{ role: 'assistant', content: null, tool_calls: msg.tool_calls },
				{ role: 'tool', tool_call_id: ids[0], content: 'sunny' },
				{ role: 'tool', tool_call_id: ids[1], content: '14:00' },
			],
		})
		expect(second.choices[0].message.content).toBe('Tool results: sunny; 14:00')
	})

	it('should reject tool messages that answer no tool call, in OpenAI shape', async () => {
		const err = await client.chat.completions
			.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }, { role: 'tool', tool_call_id: 'call_x', content: 'r' }] })
			.catch((e: unknown) => e)
		expect(err).toBeInstanceOf(OpenAI.BadRequestError)
		expect((err as InstanceType<typeof OpenAI.BadRequestError>).message).toContain("messages with role 'tool' must be a response")
		const missing = await client.chat.completions
			.create({
				model: 'gpt-4o',
				messages: [
					{ role: 'user', content: 'hi' },
					{ role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
					{ role: 'user', content: 'and?' },
				],
			})
			.catch((e: unknown) => e)
		expect((missing as Error).message).toContain('did not have response messages: call_1')
	})

	it('should reject missing or empty messages', async () => {
		const empty = await fetch(`${m.url}/chat/completions`, {
			method: 'POST',
			headers: { authorization: 'Bearer up-key', 'content-type': 'application/json' },
			body: JSON.stringify({ model: 'gpt-4o', messages: [] }),
		})
		expect(empty.status).toBe(400)
		expect(await empty.json()).toMatchObject({ error: { type: 'invalid_request_error', param: 'messages', code: 'empty_array' } })
		const none = await fetch(`${m.url}/chat/completions`, {
			method: 'POST',
			headers: { authorization: 'Bearer up-key', 'content-type': 'application/json' },
			body: JSON.stringify({ model: 'gpt-4o' }),
		})
		expect(await none.json()).toMatchObject({ error: { code: 'missing_required_parameter' } })
	})

	it('should return 401 in OpenAI shape for a wrong key', async () => {
		const bad = new OpenAI({ apiKey: 'nope', baseURL: m.url, maxRetries: 0 })
		const err = await bad.models.list().catch((e: unknown) => e)
		expect(err).toBeInstanceOf(OpenAI.AuthenticationError)
		expect((err as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe('invalid_api_key')
	})

	it('should stream reasoning_content and count reasoning tokens when reasoning_effort is set', async () => {
		const r = await client.chat.completions.create({ model: 'o3-mini', reasoning_effort: 'low', messages: [{ role: 'user', content: 'hi there' }] })
		const msg = r.choices[0].message as typeof r.choices[0]['message'] & { reasoning_content?: string }
		expect(msg.reasoning_content).toBe('Let me think about hi there.')
		expect(r.usage?.completion_tokens_details?.reasoning_tokens).toBe(6)
		expect(r.usage?.completion_tokens).toBe(11)
		const stream = await client.chat.completions.create({ model: 'o3-mini', reasoning_effort: 'low', messages: [{ role: 'user', content: 'hi there' }], stream: true })
		let reasoning = ''
		for await (const c of stream) reasoning += (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? ''
		expect(reasoning).toBe('Let me think about hi there.')
	})

	it('should refuse a reasoning effort to a model that does not reason, as OpenAI does, in chat and in the Responses API', async () => {
		const chat = await client.chat.completions.create({ model: 'gpt-4o-mini', reasoning_effort: 'high', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)
		expect(chat).toBeInstanceOf(OpenAI.BadRequestError)
		expect((chat as InstanceType<typeof OpenAI.BadRequestError>).error).toEqual({
			message: "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
			type: 'invalid_request_error',
			param: 'reasoning_effort',
			code: 'unsupported_parameter',
		})
		const responses = await client.responses.create({ model: 'gpt-4.1', input: 'hi', reasoning: { effort: 'low' } }).catch((e: unknown) => e)
		expect((responses as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ message: "Unsupported parameter: 'reasoning.effort' is not supported with this model.", param: 'reasoning.effort' })
		// Without an effort the model answers.
		expect((await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })).choices[0].message.content).toBe('Hello! You said: hi')
	})

	it('should refuse max_tokens to a reasoning model and take max_completion_tokens, as OpenAI does', async () => {
		const refused = await client.chat.completions.create({ model: 'gpt-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)
		expect((refused as InstanceType<typeof OpenAI.BadRequestError>).error).toEqual({
			message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
			type: 'invalid_request_error',
			param: 'max_tokens',
			code: 'unsupported_parameter',
		})
		expect((await client.chat.completions.create({ model: 'o4-mini', max_completion_tokens: 100, messages: [{ role: 'user', content: 'hi' }] })).choices[0].message.content).toBe('Hello! You said: hi')
	})

	it('should stop on #length, on a stop sequence, and count images and cache', async () => {
		const len = await client.chat.completions.create({ model: 'gpt-4o', max_tokens: 3, messages: [{ role: 'user', content: 'go #length' }] })
		expect(len.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: 'Hello! You said:' } })
		const stop = await client.chat.completions.create({ model: 'gpt-4o', stop: ['STOP'], messages: [{ role: 'user', content: 'count #stop' }] })
		expect(stop.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'Hello! You said: count #stop one two ' } })
		const img = await client.chat.completions.create({
			model: 'gpt-4o',
			messages: [
				{ role: 'system', content: '#cache ' + 'x '.repeat(20) },
				{ role: 'user', content: [{ type: 'text', text: 'what is it' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
			],
		})
		expect(img.choices[0].message.content).toBe('I see 1 image. Hello! You said: what is it')
		expect(img.usage?.prompt_tokens).toBe(21 + 3 + 85)
		expect(img.usage?.prompt_tokens_details?.cached_tokens).toBe(10)
	})

	it('should list models', async () => {
		const page = await client.models.list()
		expect(page.data.map((x) => x.id)).toContain('gpt-4o')
	})
})

describe("openai mock: DeepSeek's thinking mode (deepseek-* models)", () => {
	const call = { id: 'call_1', type: 'function' as const, function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }
	const loop = (reasoning?: string): OpenAI.ChatCompletionMessageParam[] => [
		{ role: 'user', content: 'Weather? #tools' },
		{ role: 'assistant', content: null, tool_calls: [call], ...(reasoning && { reasoning_content: reasoning }) } as OpenAI.ChatCompletionMessageParam,
		{ role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
		{ role: 'user', content: 'Thanks' },
	]

	it('should think by default, and not with thinking disabled', async () => {
		const on = await client.chat.completions.create({ model: 'deepseek-v4-flash', messages: [{ role: 'user', content: 'hi' }] })
		expect((on.choices[0].message as { reasoning_content?: string }).reasoning_content).toBe('Let me think about hi.')
		const off = await client.chat.completions.create({ model: 'deepseek-v4-flash', messages: [{ role: 'user', content: 'hi' }], thinking: { type: 'disabled' } } as never)
		expect((off.choices[0].message as { reasoning_content?: string }).reasoning_content).toBeUndefined()
	})

	it('should refuse a tool-calling turn sent back without its reasoning_content, in thinking mode only, as DeepSeek does', async () => {
		const refused = await client.chat.completions.create({ model: 'deepseek-v4-flash', messages: loop() }).then(
			() => undefined,
			(e: unknown) => e,
		)
		expect(refused).toMatchObject({ status: 400, message: expect.stringContaining('The reasoning_content in the thinking mode must be passed back to the API.') })
		expect((await client.chat.completions.create({ model: 'deepseek-v4-flash', messages: loop('I should look it up.') })).choices[0].message.content).toBe('Hello! You said: Thanks')
		expect((await client.chat.completions.create({ model: 'deepseek-v4-flash', messages: loop(), thinking: { type: 'disabled' } } as never)).choices[0].message.content).toBe('Hello! You said: Thanks')
	})
})
