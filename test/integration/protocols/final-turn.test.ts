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
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { chat } from './clients'
import { label, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, type Upstream } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

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
