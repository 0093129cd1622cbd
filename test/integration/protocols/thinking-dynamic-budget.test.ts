/**
 * `thinking: {type: "enabled", budget_tokens: -1}` on /v1/messages: Gemini's "dynamic" budget, which opencode sends
 * through @ai-sdk/anthropic for Gemini and GPT models (its `high` variant, its title requests). Those models think at
 * their default depth instead of the request being refused; Claude refuses it itself, as Anthropic does, and a budget
 * under 1024 is still the gateway's 400.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, THINKER } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const ask = (model: string, budget: number) => ({
	model,
	max_tokens: 4096,
	messages: [{ role: 'user' as const, content: 'think about it' }],
	thinking: { type: 'enabled' as const, budget_tokens: budget },
})

describe('a thinking budget of -1 (dynamic)', () => {
	for (const stream of [false, true]) {
		it(`should let a Gemini model think at its default depth (${stream ? 'stream' : 'JSON'})`, async () => {
			const { anthropic } = await m.account()
			const r = stream ? await anthropic.messages.stream(ask(MODEL.gemini, -1)).finalMessage() : await anthropic.messages.create(ask(MODEL.gemini, -1))
			expect(r.content.some((b) => b.type === 'text' && b.text.includes('think about it'))).toBe(true)
			expect(lastRequest(m.mocks.gemini).body.generationConfig.thinkingConfig).toMatchObject({ includeThoughts: true })
		})

		it(`should leave a GPT reasoning model at its default effort (${stream ? 'stream' : 'JSON'})`, async () => {
			const { anthropic } = await m.account()
			const r = stream ? await anthropic.messages.stream(ask(THINKER.openai, -1)).finalMessage() : await anthropic.messages.create(ask(THINKER.openai, -1))
			expect(r.content.some((b) => b.type === 'text' && b.text.includes('think about it'))).toBe(true)
			// No effort sent: OpenAI's default (medium) applies.
			expect(lastRequest(m.mocks.openai).body).not.toHaveProperty('reasoning_effort')
		})
	}

	it("should leave Claude to refuse it, as Anthropic does, and still refuse a budget under 1024 itself", async () => {
		const { anthropic } = await m.account()
		const claude = await anthropic.messages.create(ask(MODEL.anthropic, -1)).then(() => undefined, (e: unknown) => e)
		expect(claude).toBeInstanceOf(Anthropic.BadRequestError)
		const small = await anthropic.messages.create(ask(MODEL.gemini, 512)).then(() => undefined, (e: unknown) => e)
		expect(small).toBeInstanceOf(Anthropic.BadRequestError)
		expect((small as Error).message).toContain('thinking.budget_tokens')
	})
})
