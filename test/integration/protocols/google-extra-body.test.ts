/**
 * Google's extension of chat completions for Gemini (https://ai.google.dev/gemini-api/docs/openai#thinking): a body
 * field `extra_body: {google: {thinking_config: {thinking_budget | thinking_level, include_thoughts}}}`. The OpenAI
 * Python SDK sends it for `extra_body={"extra_body": {"google": …}}` (Google's documented idiom), the JS SDK for an
 * `extra_body` param, as here. Users moving from Gemini's own OpenAI endpoint keep their thinking settings; before, the
 * gateway read nothing of it and Gemini thought at its default, thoughts hidden.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { countWords } from '../../mocks'
import { chat } from './clients'
import { expectCharges, GEMINI_3, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrixWithGemini3 } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrixWithGemini3()
}, SETUP_MS)
afterAll(() => m.close())

const answer = (text: string) => `Hello! You said: ${text}`
const thought = (text: string) => `Let me think about ${text}.`
const say = (text: string) => [{ role: 'user' as const, content: text }]
const google = (thinking_config: Record<string, unknown>) => ({ extra_body: { google: { thinking_config } } })

describe('extra_body.google.thinking_config on chat completions', () => {
	for (const stream of [false, true])
		it(`should send a Gemini 2.5 model its budget with thoughts shown, and give them back as reasoning (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const a = await chat(acct.openai, { model: MODEL.gemini, messages: say('budgeted'), ...google({ thinking_budget: 1024, include_thoughts: true }) } as never, stream)
			expect(lastRequest(m.mocks.gemini).body.generationConfig.thinkingConfig).toEqual({ includeThoughts: true, thinkingBudget: 1024 })
			expect(a.text).toBe(answer('budgeted'))
			expect(a.reasoning).toBe(thought('budgeted'))
			await expectCharges(m, acct, [{ model: MODEL.gemini, input: 1, output: countWords(thought('budgeted')) + countWords(answer('budgeted')), reasoning: countWords(thought('budgeted')) }])
		})

	it('should turn thinking off with a budget of 0', async () => {
		const acct = await m.account()
		const a = await chat(acct.openai, { model: MODEL.gemini, messages: say('no thinking'), ...google({ thinking_budget: 0 }) } as never, false)
		expect(lastRequest(m.mocks.gemini).body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 0 })
		expect(a.text).toBe(answer('no thinking'))
		expect(a.reasoning).toBe('')
	})

	it('should keep thoughts hidden when include_thoughts is false', async () => {
		const acct = await m.account()
		const a = await chat(acct.openai, { model: MODEL.gemini, messages: say('quiet'), ...google({ thinking_budget: 2048, include_thoughts: false }) } as never, true)
		expect(lastRequest(m.mocks.gemini).body.generationConfig.thinkingConfig).toEqual({ includeThoughts: false, thinkingBudget: 2048 })
		expect(a.reasoning).toBe('')
	})

	it('should send a Gemini 3 model its thinking level', async () => {
		const acct = await m.account()
		await chat(acct.openai, { model: GEMINI_3, messages: say('level'), ...google({ thinking_level: 'low', include_thoughts: true }) } as never, true)
		expect(lastRequest(m.mocks.gemini).body.generationConfig.thinkingConfig).toEqual({ includeThoughts: true, thinkingLevel: 'LOW' })
	})

	it('should give another vendor’s model the budget as its thinking', async () => {
		const acct = await m.account()
		await chat(acct.openai, { model: MODEL.anthropic, messages: say('claude budget'), max_completion_tokens: 4096, ...google({ thinking_budget: 2048 }) } as never, false)
		expect(lastRequest(m.mocks.anthropic).body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 })
	})

	it('should refuse it beside reasoning_effort, which overlaps it, with 400 and no upstream call', async () => {
		const acct = await m.account()
		const before = m.mocks.gemini.requests.length
		const err = await acct.openai.chat.completions
			.create({ model: MODEL.gemini, messages: say('both'), reasoning_effort: 'high', ...google({ thinking_budget: 1024 }) } as never)
			.catch((e: unknown) => e)
		expect(err).toBeInstanceOf(OpenAI.BadRequestError)
		expect((err as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('extra_body.google.thinking_config')
		expect(m.mocks.gemini.requests.length).toBe(before)
		await expectCharges(m, acct, [])
	})

	it('should refuse a thinking level that is not one of Gemini’s with 400 naming the field', async () => {
		const acct = await m.account()
		const err = await acct.openai.chat.completions.create({ model: MODEL.gemini, messages: say('bad level'), ...google({ thinking_level: 'extreme' }) } as never).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(OpenAI.BadRequestError)
		expect((err as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('thinking_level')
	})
})
