/**
 * `@anthropic-ai/sdk`'s message threads (beta `message-threads-2026-08-12`) through the gateway, for every vendor:
 * `client.beta.messages.toolRunner()` and `client.beta.messages.thread()` create a thread on the first turn and then
 * send only the new messages with `thread: {type: 'continue', previous_message_id}`
 * (https://platform.claude.com/docs/en/build-with-claude/message-threads). Claude keeps the thread; a converted model
 * has no thread to continue, so the gateway must answer as Anthropic does for a lost thread (404, `error.details.
 * error_code: 'thread_not_found'`), on which the SDK replays the whole conversation, rather than answer the new
 * messages alone (the conversation silently lost) or let the vendor refuse a tool result without its call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { betaZodTool } from '@anthropic-ai/sdk/helpers/beta/zod'
import { z } from 'zod/v4'
import { countWords } from '../../mocks'
import { expectCharges, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, UPSTREAMS, usageRows } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

/** A reply's blocks as text (a text block's text, else its type). */
const texts = (content: Array<{ type: string; text?: string }>) => content.map((b) => (b.type === 'text' ? b.text : b.type))

const weather = betaZodTool({ name: 'weather', description: 'weather in a city', inputSchema: z.object({ city: z.string() }), run: async ({ city }) => `sunny in ${city}` })

describe('Anthropic SDK toolRunner (message threads)', () => {
	for (const up of UPSTREAMS)
		for (const stream of [false, true])
			it(`should run the tool loop to its answer and bill each model call once (${up} upstream, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				const runner = acct.anthropic.beta.messages.toolRunner({ model: MODEL[up], max_tokens: 500, messages: [{ role: 'user', content: 'weather please #tools' }], tools: [weather], stream })
				const final = await runner.runUntilDone()
				expect(texts(final.content)).toEqual(['Tool results: sunny in Paris; sunny in Tokyo'])
				expect(final.stop_reason).toBe('end_turn')
				// The second call read the whole conversation: the question, the two calls and their results.
				const results = countWords('sunny in Paris') + countWords('sunny in Tokyo')
				const rows = (await usageRows(m, acct.accountId)).filter((r) => r.status === 200)
				expect(rows.map((r) => [r.input_tokens, r.output_tokens])).toEqual([
					[3, 4],
					[3 + results, countWords('Tool results: sunny in Paris; sunny in Tokyo')],
				])
				if (up === 'anthropic') expect(lastRequest(m.mocks.anthropic).body.thread).toMatchObject({ type: 'continue' })
				else expect(JSON.stringify(lastRequest(m.mocks[up]).body)).toContain('weather please #tools')
			})
})

describe('Anthropic SDK thread helper', () => {
	for (const up of UPSTREAMS)
		it(`should answer a later turn with the earlier ones in view, never the new message alone (${up} upstream)`, async () => {
			const acct = await m.account()
			const thread = acct.anthropic.beta.messages.thread({ model: MODEL[up], max_tokens: 200, system: 'be brief' })
			const first = await thread.send({ role: 'user', content: 'my name is Bob' })
			expect(texts(first.content)).toEqual(['Hello! You said: my name is Bob'])
			const second = await thread.send({ role: 'user', content: 'what is my name' })
			expect(texts(second.content)).toEqual(['Hello! You said: what is my name'])
			// The upstream counted the system prompt, the first turn and its answer as the second turn's input.
			const input2 = countWords('be brief my name is Bob Hello! You said: my name is Bob what is my name')
			const rows = (await usageRows(m, acct.accountId)).filter((r) => r.status === 200)
			expect(rows.map((r) => r.input_tokens)).toEqual([countWords('be brief my name is Bob'), input2])
			expect(second.usage.input_tokens).toBe(input2)
		})

	it('should give a lost Claude thread to the SDK as Anthropic words it (404, error_code thread_not_found), and charge nothing', async () => {
		const acct = await m.account()
		const err = await acct.anthropic.beta.messages
			.create({ model: MODEL.anthropic, max_tokens: 100, messages: [{ role: 'user', content: 'and then?' }], thread: { type: 'continue', previous_message_id: 'msg_gone' }, betas: ['message-threads-2026-08-12'] })
			.catch((e: unknown) => e)
		expect(err).toBeInstanceOf(Anthropic.NotFoundError)
		expect((err as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({ type: 'error', error: { type: 'not_found_error', details: { error_code: 'thread_not_found' } } })
		expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
	})

	for (const up of ['openai', 'gemini'] as const)
		it(`should answer a thread continue for a converted model with thread_not_found before any upstream call (${up} upstream)`, async () => {
			const acct = await m.account()
			const before = m.mocks[up].requests.length
			const err = await acct.anthropic.beta.messages
				.create({ model: MODEL[up], max_tokens: 100, messages: [{ role: 'user', content: 'and then?' }], thread: { type: 'continue', previous_message_id: 'msg_any' }, betas: ['message-threads-2026-08-12'] })
				.catch((e: unknown) => e)
			expect(err).toBeInstanceOf(Anthropic.NotFoundError)
			expect((err as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({ error: { type: 'not_found_error', details: { error_code: 'thread_not_found' } } })
			expect(m.mocks[up].requests.length).toBe(before)
			expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
			// A create is an ordinary request for a converted model (it keeps no thread; the next continue replays).
			const other = await m.account()
			const ok = await other.anthropic.beta.messages.create({ model: MODEL[up], max_tokens: 100, messages: [{ role: 'user', content: 'hello there' }], thread: { type: 'create' }, betas: ['message-threads-2026-08-12'] })
			expect(texts(ok.content)).toEqual(['Hello! You said: hello there'])
			expect(JSON.stringify(lastRequest(m.mocks[up]).body)).not.toContain('thread')
			await expectCharges(m, other, [{ model: MODEL[up], input: 2, output: countWords('Hello! You said: hello there') }])
		})
})
