/**
 * A refusal of another vendor's model (OpenAI's `refusal`, Gemini's SAFETY) reaches an Anthropic client as Claude's
 * does: `stop_reason: "refusal"` with `stop_details` `{type: "refusal", category, explanation}` (the Message, and the
 * stream's `message_delta`), category and explanation null as the API sends them for a refusal without a named policy
 * category. promptfoo flags a response as refused (its `guardrails`) only when `stop_details` is there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { REFUSAL_TEXT } from '../../mocks'
import { type Matrix, MODEL, SETUP_MS, startMatrix, type Upstream } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const REFUSED = { type: 'refusal' as const, category: null, explanation: null }

describe("an Anthropic client of another vendor's refusal", () => {
	for (const up of ['openai', 'gemini'] as Upstream[])
		for (const stream of [false, true])
			it(`should get stop_details with the refusal (${up}, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				const params = { model: MODEL[up], max_tokens: 200, messages: [{ role: 'user' as const, content: 'something bad #refusal' }] }
				let delta: unknown
				const msg = stream
					? await acct.anthropic.messages
							.stream(params)
							.on('streamEvent', (e) => {
								if (e.type === 'message_delta') delta = e.delta
							})
							.finalMessage()
					: await acct.anthropic.messages.create(params)
				expect(msg.stop_reason).toBe('refusal')
				expect(msg.stop_details).toEqual(REFUSED)
				if (up === 'openai') expect(msg.content).toEqual([expect.objectContaining({ type: 'text', text: REFUSAL_TEXT })])
				if (stream) expect(delta).toEqual({ stop_reason: 'refusal', stop_sequence: null, stop_details: REFUSED })
			})

	it('should not describe an answer that was not refused', async () => {
		const acct = await m.account()
		const msg = await acct.anthropic.messages.create({ model: MODEL.openai, max_tokens: 200, messages: [{ role: 'user', content: 'hello' }] })
		expect(msg.stop_reason).toBe('end_turn')
		expect(msg.stop_details ?? null).toBeNull()
	})
})
