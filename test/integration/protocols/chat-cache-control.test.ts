/**
 * Claude's prompt caching from an OpenAI chat client. Claude caches only at the breakpoints a request marks
 * (`cache_control`), and clients that offer Claude through an OpenAI-compatible API mark them the way OpenRouter and
 * LiteLLM take them: on a content part (https://openrouter.ai/docs/features/prompt-caching), on a whole message or on
 * a tool (LiteLLM). Without them reaching Claude a long agent conversation pays the full input price on every turn.
 * Gemini (implicit caching) and OpenAI (automatic) have no such field, so nothing of it goes to Gemini.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type OpenAI from 'openai'
import { label, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const EPHEMERAL = { type: 'ephemeral' }
const HOUR = { type: 'ephemeral', ttl: '1h' }

/** A Cline-like turn: breakpoints (four, Claude's most) on a tool, the system prompt, a tool result and an image. */
const params = (model: string) =>
	({
		model,
		tools: [
			{ type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } },
			{ type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }, cache_control: HOUR },
		],
		messages: [
			{ role: 'system', content: [{ type: 'text', text: 'You are a coding agent.', cache_control: HOUR }] },
			{ role: 'user', content: 'weather in Paris' },
			{ role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
			{ role: 'tool', tool_call_id: 'call_1', content: 'sunny', cache_control: EPHEMERAL },
			{ role: 'assistant', content: 'It is sunny.' },
			{
				role: 'user',
				content: [
					{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' }, cache_control: EPHEMERAL },
					{ type: 'text', text: 'and now?' },
					{ type: 'text', text: 'thanks', cache_control: { type: 'persistent' } },
				],
			},
		],
	}) as unknown as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming

async function send(client: OpenAI, model: string, stream: boolean): Promise<string> {
	if (!stream) return (await client.chat.completions.create(params(model))).choices[0]!.message.content ?? ''
	let text = ''
	for await (const c of await client.chat.completions.create({ ...params(model), stream: true })) text += c.choices[0]?.delta.content ?? ''
	return text
}

describe('cache_control from an OpenAI chat client', () => {
	for (const stream of [false, true])
		it(`should mark Claude's blocks, tools and system prompt where the client put its breakpoints (${label('anthropic', stream)})`, async () => {
			const acct = await m.account()
			expect(await send(acct.openai, MODEL.anthropic, stream)).toBe('I see 1 image. Hello! You said: and now? thanks')
			const b = lastRequest(m.mocks.anthropic).body
			expect(b.system).toEqual([{ type: 'text', text: 'You are a coding agent.', cache_control: HOUR }])
			expect(b.tools.map((t: { cache_control?: unknown }) => t.cache_control)).toEqual([undefined, HOUR])
			expect(b.messages).toEqual([
				{ role: 'user', content: [{ type: 'text', text: 'weather in Paris' }] },
				{ role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'weather', input: { city: 'Paris' } }] },
				{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: 'sunny' }], cache_control: EPHEMERAL }] },
				{ role: 'assistant', content: [{ type: 'text', text: 'It is sunny.' }] },
				{
					role: 'user',
					content: [
						{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' }, cache_control: EPHEMERAL },
						{ type: 'text', text: 'and now?' },
						{ type: 'text', text: 'thanks' },
					],
				},
			])
		})

	it("should mark the last part of a message that carries the breakpoint itself (LiteLLM's form), with its ttl", async () => {
		const acct = await m.account()
		const messages = [
			{ role: 'developer', content: 'Be brief.', cache_control: HOUR },
			{ role: 'user', content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }], cache_control: { type: 'ephemeral', ttl: '5m' } },
			{ role: 'assistant', content: 'ok', cache_control: EPHEMERAL },
			{ role: 'user', content: 'three' },
		] as unknown as OpenAI.Chat.Completions.ChatCompletionMessageParam[]
		await acct.openai.chat.completions.create({ model: MODEL.anthropic, messages })
		const b = lastRequest(m.mocks.anthropic).body
		expect(b.system).toEqual([{ type: 'text', text: 'Be brief.', cache_control: HOUR }])
		expect(b.messages).toEqual([
			{ role: 'user', content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two', cache_control: { type: 'ephemeral', ttl: '5m' } }] },
			{ role: 'assistant', content: [{ type: 'text', text: 'ok', cache_control: EPHEMERAL }] },
			{ role: 'user', content: [{ type: 'text', text: 'three' }] },
		])
	})

	for (const stream of [false, true])
		it(`should send Gemini no breakpoint, and OpenAI the body as written (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			expect(await send(acct.openai, MODEL.gemini, stream)).toBe('I see 1 image. Hello! You said: and now? thanks')
			expect(JSON.stringify(lastRequest(m.mocks.gemini).body)).not.toContain('cache')
			await send(acct.openai, MODEL.openai, stream)
			expect(lastRequest(m.mocks.openai).body.messages[0]).toEqual({ role: 'system', content: [{ type: 'text', text: 'You are a coding agent.', cache_control: HOUR }] })
		})
})
