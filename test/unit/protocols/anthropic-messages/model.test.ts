import { describe, expect, it } from 'bun:test'
import { Elysia } from 'elysia'
import { AnthropicRequest } from '../../../../src/protocols/anthropic-messages/model'
import { fixtureJson } from './helpers'

/** The schema as the HTTP route uses it: Elysia validates the body and keeps additional properties. */
const app = new Elysia().post('/v1/messages', ({ body }) => body, { body: AnthropicRequest })
const post = (body: unknown) =>
	app.handle(
		new Request('http://localhost/v1/messages', {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify(body),
		}),
	)
const base = { model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] }

describe('AnthropicRequest schema', () => {
	it('should accept a full agent request and keep unknown fields and blocks', async () => {
		const fixture = await fixtureJson<Record<string, unknown>>('request-agent.json')
		const res = await post(fixture)
		expect(res.status).toBe(200)
		expect(await res.json()).toEqual(fixture)
	})

	it.each([
		['a missing max_tokens', { model: 'm', messages: base.messages }],
		['a max_tokens of 0 (Anthropic takes at least 1)', { ...base, max_tokens: 0 }],
		['a bad role', { ...base, messages: [{ role: 'tool', content: 'x' }] }],
		['a text block without text', { ...base, messages: [{ role: 'user', content: [{ type: 'text' }] }] }],
		['a tool_result without tool_use_id', { ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] }],
		['an unknown tool_choice', { ...base, tool_choice: { type: 'sometimes' } }],
		['a thinking budget below 1024', { ...base, thinking: { type: 'enabled', budget_tokens: 10 } }],
		['a temperature above 1', { ...base, temperature: 2 }],
		['empty messages', { ...base, messages: [] }],
	])('should reject %s', async (_, body) => {
		expect((await post(body)).status).toBeGreaterThanOrEqual(400)
	})

	it('should accept block types it does not model (document, search_result, server tools)', async () => {
		const res = await post({
			...base,
			messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } }] }],
			tools: [{ type: 'web_search_20250305', name: 'web_search' }],
		})
		expect(res.status).toBe(200)
	})
})
