import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'

import { startAnthropicMock, thinkingSignature, type VendorMock } from '../../mocks'

let m: VendorMock
let client: Anthropic

beforeAll(async () => {
	m = await startAnthropicMock({ apiKey: 'up-key' })
	client = new Anthropic({ apiKey: 'up-key', baseURL: m.url, maxRetries: 0 })
})
afterAll(() => m.stop())
beforeEach(() => m.reset())

const tools = [
	{ name: 'get_weather', input_schema: { type: 'object' as const, properties: { location: { type: 'string' } } } },
	{ name: 'get_time', input_schema: { type: 'object' as const, properties: {} } },
]

/** Raw POST, for requests the SDK's types would not let us send. */
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
	fetch(`${m.url}${path}`, {
		method: 'POST',
		headers: { 'x-api-key': 'up-key', 'anthropic-version': '2023-06-01', 'content-type': 'application/json', ...headers },
		body: JSON.stringify(body),
	})

describe('anthropic mock: messages', () => {
	it('should refuse input tokens plus max_tokens over the context window, as the API does', async () => {
		const messages = [{ role: 'user', content: 'hello '.repeat(149_999) }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'hi' }]
		const over = await post('/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 64_000, messages })
		expect(over.status).toBe(400)
		expect(((await over.json()) as { error: unknown }).error).toEqual({
			type: 'invalid_request_error',
			message: 'input length and `max_tokens` exceed context limit: 150001 + 64000 > 200000, decrease input length or `max_tokens` and try again',
		})
		const ok = await post('/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 49_999, messages })
		expect(((await ok.json()) as { usage: { input_tokens: number } }).usage.input_tokens).toBe(150_001)
		// The 1M window: Sonnet 4.6 has it, Sonnet 4.5 with the context-1m beta.
		expect((await post('/v1/messages', { model: 'claude-sonnet-4-6', max_tokens: 64_000, messages })).status).toBe(200)
		expect((await post('/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 64_000, messages }, { 'anthropic-beta': 'context-1m-2025-08-07' })).status).toBe(200)
	})

	it('should answer with a text block and usage', async () => {
		const r = await client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 100, system: 'be brief', messages: [{ role: 'user', content: 'hi there' }] })
		expect(r.content).toEqual([{ type: 'text', text: 'Hello! You said: hi there' }] as typeof r.content)
		expect(r.stop_reason).toBe('end_turn')
		expect(r.usage).toMatchObject({ input_tokens: 4, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 })
		// SDK 1.x sends API version 2026-10-21 and the key as a Bearer token.
		expect(m.requests[0].headers['anthropic-version']).toBe('2026-10-21')
		expect(m.requests[0].headers.authorization).toBe('Bearer up-key')
	})

	it('should stream event-framed blocks with message_start usage and cumulative message_delta usage', async () => {
		const stream = client.messages.stream({ model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi there' }] })
		const types: string[] = []
		stream.on('streamEvent', (e) => types.push(e.type))
		const final = await stream.finalMessage()
		expect(final.content).toMatchObject([{ type: 'text', text: 'Hello! You said: hi there' }])
		expect(final.usage.output_tokens).toBe(5)
		expect(final.usage.input_tokens).toBe(2)
		expect(types[0]).toBe('message_start')
		expect(types.slice(-2)).toEqual(['message_delta', 'message_stop'])
		const raw = await (await post('/v1/messages', { model: 'claude-haiku-4-5', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'hi' }] })).text()
		expect(raw).toContain('event: ping\ndata: {"type":"ping"}')
		expect(raw).toStartWith('event: message_start\ndata: ')
		expect(raw).not.toContain('[DONE]')
		const data = raw
			.split('\n')
			.filter((l) => l.startsWith('data: '))
			.map((l) => JSON.parse(l.slice(6)) as { type: string; message?: { usage: object }; usage?: object })
		expect(data[0].message?.usage).toMatchObject({ input_tokens: 1, output_tokens: 1 })
		expect(data.find((d) => d.type === 'message_delta')?.usage).toMatchObject({ input_tokens: 1, output_tokens: 4 })
	})

	it('should stream thinking with its signature when thinking is enabled', async () => {
		const stream = client.messages.stream({
			model: 'claude-haiku-4-5',
			max_tokens: 2048,
			thinking: { type: 'enabled', budget_tokens: 1024 },
			messages: [{ role: 'user', content: 'hi there' }],
		})
		const final = await stream.finalMessage()
		expect(final.content[0]).toEqual({ type: 'thinking', thinking: 'Let me think about hi there.', signature: thinkingSignature('Let me think about hi there.') })
		expect(final.content[0].type === 'thinking' && final.content[0].signature).toStartWith('++//')
		expect(final.usage.output_tokens).toBe(11)
	})

	it('should stream two tool_use blocks whose input the SDK parses, then accept the results', async () => {
		const final = await client.messages.stream({ model: 'claude-haiku-4-5', max_tokens: 100, tools, messages: [{ role: 'user', content: 'weather #tools' }] }).finalMessage()
		expect(final.stop_reason).toBe('tool_use')
		const uses = final.content.filter((b) => b.type === 'tool_use')
		expect(uses.map((u) => [u.name, u.input])).toEqual([
			['get_weather', { location: 'Paris' }],
			['get_time', { city: 'Tokyo' }],
		])
		const next = await client.messages.create({
			model: 'claude-haiku-4-5',
			max_tokens: 100,
			tools,
			messages: [
				{ role: 'user', content: 'weather #tools' },
				{ role: 'assistant', content: final.content },
				{ role: 'user', content: uses.map((u, i) => ({ type: 'tool_result' as const, tool_use_id: u.id, content: i ? '9am' : 'rain' })) },
			],
		})
		expect(next.content[0]).toMatchObject({ type: 'text', text: 'Tool results: rain; 9am' })
	})

	it('should reject a tool_result without a matching tool_use, and a tool_use left unanswered', async () => {
		const orphan = await client.messages
			.create({
				model: 'claude-haiku-4-5',
				max_tokens: 100,
				messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'r' }] }],
			})
			.catch((e: unknown) => e)
		expect(orphan).toBeInstanceOf(Anthropic.BadRequestError)
		expect((orphan as Error).message).toContain('unexpected `tool_use_id` found in `tool_result` blocks: toolu_x')
		const unanswered = await post('/v1/messages', {
			model: 'claude-haiku-4-5',
			max_tokens: 100,
			messages: [
				{ role: 'user', content: 'hi' },
				{ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: {} }] },
				{ role: 'user', content: 'and?' },
			],
		})
		expect(((await unanswered.json()) as { error: { message: string } }).error.message).toContain('`tool_use` ids were found without `tool_result` blocks')
	})

	it('should require thinking first in the tool loop and the issued signature on replay', async () => {
		const thinking = { type: 'enabled', budget_tokens: 1024 }
		const first = await client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, tools, messages: [{ role: 'user', content: 'w #tools' }] })
		const uses = first.content.filter((b) => b.type === 'tool_use')
		const results = { role: 'user', content: uses.map((u) => ({ type: 'tool_result', tool_use_id: u.id, content: 'ok' })) }
		const ask = (assistant: unknown[]) =>
			post('/v1/messages', { model: 'claude-haiku-4-5', max_tokens: 2048, thinking, tools, messages: [{ role: 'user', content: 'w #tools' }, { role: 'assistant', content: assistant }, results] })
		expect((await ask(first.content)).status).toBe(200)
		const noThinking = await ask(uses)
		expect(((await noThinking.json()) as { error: { message: string } }).error.message).toContain('Expected `thinking` or `redacted_thinking`, but found `tool_use`')
		const forged = await ask([{ ...first.content[0], thinking: 'edited' }, ...uses])
		expect(((await forged.json()) as { error: { message: string } }).error.message).toContain('Invalid `signature` in `thinking` block')
	})

	it('should validate max_tokens, temperature and the thinking budget in Anthropic shape', async () => {
		const cases: [unknown, string][] = [
			[{ model: 'c', messages: [{ role: 'user', content: 'hi' }] }, 'max_tokens: Field required'],
			[{ model: 'c', max_tokens: 10, temperature: 1.5, messages: [{ role: 'user', content: 'hi' }] }, 'temperature: Input should be less than or equal to 1'],
			[{ model: 'c', max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 500 }, messages: [{ role: 'user', content: 'hi' }] }, 'greater than or equal to 1024'],
			[{ model: 'c', max_tokens: 1024, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'hi' }] }, '`max_tokens` must be greater than `thinking.budget_tokens`'],
		]
		for (const [body, message] of cases) {
			const r = await post('/v1/messages', body)
			expect(r.status).toBe(400)
			const err = (await r.json()) as { type: string; error: { type: string; message: string } }
			expect(err.type).toBe('error')
			expect(err.error.type).toBe('invalid_request_error')
			expect(err.error.message).toContain(message)
		}
	})

	it('should reject sampling parameters under API version 2026-10-21 only', async () => {
		const body = { model: 'c', max_tokens: 10, temperature: 1, messages: [{ role: 'user', content: 'hi' }] }
		const v2026 = await post('/v1/messages', body, { 'anthropic-version': '2026-10-21' })
		expect(v2026.status).toBe(400)
		expect(((await v2026.json()) as { error: { message: string } }).error.message).toBe('temperature: Extra inputs are not permitted')
		expect((await post('/v1/messages', body)).status).toBe(200)
	})

	it('should return a signature-only thinking block when display is omitted, and accept it back', async () => {
		const thinking = { type: 'enabled', budget_tokens: 1024, display: 'omitted' }
		const r = await post('/v1/messages', { model: 'c', max_tokens: 2048, thinking, stream: true, messages: [{ role: 'user', content: 'hi' }] })
		const text = await r.text()
		expect(text).not.toContain('thinking_delta')
		expect(text).toContain('signature_delta')
		const first = (await (await post('/v1/messages', { model: 'c', max_tokens: 2048, thinking, messages: [{ role: 'user', content: 'hi' }] })).json()) as { content: { thinking: string; signature: string }[] }
		expect(first.content[0]).toMatchObject({ thinking: '', signature: thinkingSignature('Let me think about hi.') })
		const replay = await post('/v1/messages', {
			model: 'c',
			max_tokens: 2048,
			thinking,
			messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: first.content }, { role: 'user', content: 'more' }],
		})
		expect(replay.status).toBe(200)
	})

	it('should require anthropic-version and a valid x-api-key', async () => {
		const noVersion = await fetch(`${m.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': 'up-key' }, body: '{}' })
		expect(noVersion.status).toBe(400)
		expect(((await noVersion.json()) as { error: { message: string } }).error.message).toBe('anthropic-version: header is required')
		const err = await new Anthropic({ apiKey: 'nope', baseURL: m.url, maxRetries: 0 }).models.list().catch((e: unknown) => e)
		expect(err).toBeInstanceOf(Anthropic.AuthenticationError)
		const viaHeader = await fetch(`${m.url}/v1/models`, { headers: { 'x-api-key': 'up-key', 'anthropic-version': '2023-06-01' } })
		expect(viaHeader.status).toBe(200)
		const wrong = await fetch(`${m.url}/v1/models`, { headers: { 'x-api-key': 'bad', 'anthropic-version': '2023-06-01' } })
		expect(await wrong.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } })
	})

	it('should report stop sequences, max_tokens and cache reads the Anthropic way', async () => {
		const stop = await client.messages.create({ model: 'c', max_tokens: 100, stop_sequences: ['STOP'], messages: [{ role: 'user', content: 'count #stop' }] })
		expect(stop).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'STOP', content: [{ text: 'Hello! You said: count #stop one two ' }] })
		const len = await client.messages.create({ model: 'c', max_tokens: 3, messages: [{ role: 'user', content: 'go #length' }] })
		expect(len.stop_reason).toBe('max_tokens')
		const cached = await client.messages.create({ model: 'c', max_tokens: 100, system: '#cache ' + 'x '.repeat(20), messages: [{ role: 'user', content: 'hi' }] })
		expect(cached.usage).toMatchObject({ input_tokens: 22 - 10, cache_read_input_tokens: 10, cache_creation_input_tokens: 0 })
	})

	it('should count tokens and list models', async () => {
		const count = await client.messages.countTokens({
			model: 'c',
			system: 'be brief',
			messages: [{ role: 'user', content: [{ type: 'text', text: 'hi there' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] }],
		})
		expect(count.input_tokens).toBe(4 + 85)
		const models = await client.models.list()
		expect(models.data.map((x) => x.id)).toContain('claude-haiku-4-5')
	})
})
