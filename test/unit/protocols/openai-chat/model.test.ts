import { describe, expect, it } from 'bun:test'
import { Elysia } from 'elysia'
import { openaiChat } from '../../../../src/protocols/openai-chat'
import { OpenAIChatRequest } from '../../../../src/protocols/openai-chat/model'

/** The schema as the chat route uses it: as the Elysia body validator. */
const app = new Elysia().post('/v1/chat/completions', ({ body }) => openaiChat.decodeRequest(body), { body: OpenAIChatRequest })

const post = (body: unknown) =>
	app.handle(new Request('http://localhost/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }))

describe('openai-chat OpenAIChatRequest schema', () => {
	it('should accept a full request with vendor fields it does not know', async () => {
		const res = await post({
			model: 'gpt-4o',
			messages: [
				{ role: 'developer', content: 'Be brief.' },
				{ role: 'user', content: [{ type: 'text', text: 'Hi' }, { type: 'image_url', image_url: { url: 'https://x.test/a.png' } }], name: 'ann' },
				{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
				{ role: 'tool', tool_call_id: 'c', content: 'ok' },
			],
			tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
			tool_choice: { type: 'function', function: { name: 'f' } },
			response_format: { type: 'json_object' },
			reasoning_effort: 'minimal',
			stream_options: { include_usage: true },
			seed: 1,
			prediction: { type: 'content', content: 'x' },
		})
		expect(res.status).toBe(200)
		expect(await res.json()).toMatchObject({ model: 'gpt-4o', seed: 1, extra: { __protocol: 'openai-chat', prediction: { type: 'content', content: 'x' } } })
	})

	it('should reject a bad role, a bad tool_choice, a missing model and an empty messages array', async () => {
		const user = [{ role: 'user', content: 'Hi' }]
		for (const body of [
			{ model: 'm', messages: [{ role: 'robot', content: 'x' }] },
			{ model: 'm', messages: user, tool_choice: 'any' },
			{ messages: user },
			{ model: 'm', messages: [] },
			{ model: 'm', messages: [{ role: 'tool', content: 'x' }] },
		])
			expect((await post(body)).status).toBe(422) // Elysia's validation status: the schema, not decodeRequest, refused it
	})
})

describe('openaiChat codec', () => {
	it('should be named for its protocol and expose every codec operation', () => {
		expect(openaiChat.name).toBe('openai-chat')
		for (const op of ['decodeRequest', 'encodeRequest', 'decodeResponse', 'encodeResponse', 'decodeStream', 'encodeStream', 'encodeError', 'encodeStreamError', 'usageOf'] as const)
			expect(typeof openaiChat[op]).toBe('function')
	})
})
