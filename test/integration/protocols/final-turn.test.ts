/**
 * What the last message asks, across vendors. An OpenAI chat client may end with an empty user message (OpenAI takes
 * `"content": ""`); Claude refuses empty and whitespace-only content, Gemini has no empty part, and leaving the message
 * out would end the conversation with the assistant's previous answer, which both vendors continue (a prefill)
 * instead of replying. An Anthropic client's final assistant message is such a prefill: the answer holds only the
 * continuation, which Gemini gives for a trailing model turn, DeepSeek and Mistral for a message marked `prefix: true`
 * (Mistral repeating the prefix first), and OpenAI not at all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type OpenAI from 'openai'
import { openaiAdapter } from '../../../src/providers/openai'
import type { Channel } from '../../../src/routing/catalog'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { continuation } from '../../mocks/shared/scenario'
import { chat, messages } from './clients'
import { label, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, type Upstream } from './harness'

/** OpenAI-compatible vendors with chat prefix completion, told apart by the channel setting (their URLs here are the mocks'). */
const PREFIXING = { deepseek: 'deepseek-m', mistral: 'mistral-m' } as const
type Prefixing = keyof typeof PREFIXING

let m: Matrix
const vendors = {} as Record<Prefixing, VendorMock>
beforeAll(async () => {
	vendors.deepseek = await startOpenAIMock({ apiKey: 'up-deepseek', prefix: 'continue' })
	vendors.mistral = await startOpenAIMock({ apiKey: 'up-mistral', prefix: 'echo' })
	m = await startMatrix({
		channels: () =>
			(Object.keys(PREFIXING) as Prefixing[]).map((v) => ({ name: v, type: 'openai' as const, base_url: vendors[v].url, api_key: `up-${v}`, models: [PREFIXING[v]], settings: { prefix_completion: v } })),
		models: Object.values(PREFIXING).map((name) => ({ name, input_per_mtok: 1, output_per_mtok: 2 })),
	})
}, SETUP_MS)
afterAll(async () => {
	await m.close()
	await Promise.all(Object.values(vendors).map((v) => v.stop()))
})

type Msg = OpenAI.Chat.Completions.ChatCompletionMessageParam

const endingWith = (last: string): Msg[] => [
	{ role: 'user', content: 'hi' },
	{ role: 'assistant', content: 'Hi! What can I do?' },
	{ role: 'user', content: last },
]

describe('an empty last user message', () => {
	const refused: Array<[Upstream, string, string]> = [
		['anthropic', '', 'Claude'],
		['anthropic', ' \n', 'Claude'],
		['gemini', '', 'Gemini'],
	]
	for (const [up, last, vendor] of refused)
		for (const stream of [false, true])
			it(`should be refused 400 naming it rather than have the previous answer continued (${label(up, stream)}, ${JSON.stringify(last)})`, async () => {
				const acct = await m.account()
				const before = m.mocks[up].requests.length
				const err = await chat(acct.openai, { model: MODEL[up], messages: endingWith(last) }, stream).catch((e) => e)
				expect(err.status).toBe(400)
				expect(err.error).toMatchObject({ code: 'unsupported_for_model', param: 'messages' })
				expect(String(err.error.message)).toContain(`the last user message has no content, and ${vendor} models require non-empty content`)
				expect(m.mocks[up].requests.length).toBe(before)
			})

	it('should reach OpenAI, which takes it', async () => {
		const acct = await m.account()
		const r = await chat(acct.openai, { model: MODEL.openai, messages: endingWith('') }, false)
		expect(r.text).toBe('Hello! You said: ')
	})

	it('should reach Gemini when only whitespace, which Gemini takes', async () => {
		const acct = await m.account()
		await chat(acct.openai, { model: MODEL.gemini, messages: endingWith(' ') }, false)
		expect(lastRequest(m.mocks.gemini).body.contents.at(-1)).toEqual({ role: 'user', parts: [{ text: ' ' }] })
	})

	for (const up of ['anthropic', 'gemini'] as Upstream[])
		it(`should be left out after another user message, which it adds nothing to (${up})`, async () => {
			const acct = await m.account()
			const r = await chat(acct.openai, { model: MODEL[up], messages: [...endingWith('hello there'), { role: 'user', content: '' }] }, false)
			expect(r.text).toBe('Hello! You said: hello there')
		})
})

describe("an Anthropic client's prefill", () => {
	const prefilled = (model: string) => ({
		model,
		max_tokens: 200,
		messages: [
			{ role: 'user' as const, content: 'say it' },
			{ role: 'assistant' as const, content: 'The answer is' },
		],
	})

	for (const up of ['anthropic', 'gemini'] as Upstream[])
		for (const stream of [false, true])
			it(`should be continued, the answer holding only the continuation (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const r = await messages(acct.anthropic, prefilled(MODEL[up]), stream)
				expect(r.text).toBe(continuation('The answer is'))
			})

	for (const v of Object.keys(PREFIXING) as Prefixing[])
		for (const stream of [false, true])
			it(`should be continued by ${v}'s chat prefix completion, the answer holding only the continuation (${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				const r = await messages(acct.anthropic, prefilled(PREFIXING[v]), stream)
				expect(r.text).toBe(continuation('The answer is'))
				expect(r.stop).toBe('end_turn')
				expect(lastRequest(vendors[v]).body.messages.at(-1)).toEqual({ role: 'assistant', content: 'The answer is', prefix: true })
			})

	for (const stream of [false, true])
		it(`should be refused 400 for OpenAI, which would answer afresh rather than continue (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const before = m.mocks.openai.requests.length
			const err = await messages(acct.anthropic, prefilled(MODEL.openai), stream).catch((e) => e)
			expect(err.status).toBe(400)
			expect(String(err.error?.error?.message)).toContain('the conversation ends with an assistant message for the model to continue (a prefill)')
			expect(m.mocks.openai.requests.length).toBe(before)
		})

	it('should not be taken for one when the final assistant turn calls tools (history awaiting results goes as it is)', async () => {
		const acct = await m.account()
		const err = await acct.anthropic.messages
			.create({
				model: MODEL.openai,
				max_tokens: 200,
				tools: [{ name: 'weather', input_schema: { type: 'object' } }],
				messages: [
					{ role: 'user', content: 'weather?' },
					{ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'weather', input: {} }] },
				],
			})
			.catch((e) => e)
		// OpenAI's own refusal of a call without its result, not the gateway's prefill refusal.
		expect(String(err.message)).not.toContain('a prefill')
	})
})

describe('openaiAdapter and chat prefix completion', () => {
	const ch = (baseUrl: string, settings: Record<string, unknown> = {}) => ({ baseUrl, settings }) as unknown as Channel
	it("should call DeepSeek's beta base URL for a prefill only", () => {
		expect(openaiAdapter.chatUrl(ch('https://api.deepseek.com'), 'deepseek-chat', false, true)).toBe('https://api.deepseek.com/beta/chat/completions')
		expect(openaiAdapter.chatUrl(ch('https://api.deepseek.com/v1'), 'deepseek-chat', false, true)).toBe('https://api.deepseek.com/beta/chat/completions')
		expect(openaiAdapter.chatUrl(ch('https://api.deepseek.com/v1'), 'deepseek-chat', false, false)).toBe('https://api.deepseek.com/v1/chat/completions')
		expect(openaiAdapter.chatUrl(ch('https://api.openai.com/v1'), 'gpt-4o', false, true)).toBe('https://api.openai.com/v1/chat/completions')
	})
	it('should know the vendors by their URL, and others by the setting', () => {
		expect(openaiAdapter.upstreamOptions!(ch('https://api.deepseek.com'), 'm')).toEqual({ prefix: 'continued' })
		expect(openaiAdapter.upstreamOptions!(ch('https://api.mistral.ai/v1'), 'm')).toEqual({ toolCallIds: 'alnum9', prefix: 'echoed' })
		expect(openaiAdapter.upstreamOptions!(ch('https://api.openai.com/v1'), 'm')).toEqual({})
		expect(openaiAdapter.upstreamOptions!(ch('http://vllm:8000/v1', { prefix_completion: 'mistral' }), 'm')).toEqual({ prefix: 'echoed' })
	})
})
