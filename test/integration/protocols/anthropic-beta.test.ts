/**
 * `client.beta.messages` of `@anthropic-ai/sdk`: the SDK posts to `/v1/messages?beta=true` with the betas in an
 * `anthropic-beta` header (Claude Code calls this way). Any model answers it as `/v1/messages`; Anthropic's own
 * channel gets the betas header as sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { label, lastRequest, type Matrix, MODEL, PAIRS, SETUP_MS, startMatrix } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const BETAS = ['interleaved-thinking-2025-05-14', 'fine-grained-tool-streaming-2025-05-14']

describe('client.beta.messages', () => {
	for (const [up, stream] of PAIRS) {
		it(`should answer through /v1/messages?beta=true and bill it (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const params = { model: MODEL[up], max_tokens: 100, betas: BETAS, messages: [{ role: 'user' as const, content: 'hello beta' }] }
			let text: string
			if (stream) {
				const s = acct.anthropic.beta.messages.stream(params)
				const final = await s.finalMessage()
				text = final.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
				expect(final.stop_reason).toBe('end_turn')
			} else {
				const r = await acct.anthropic.beta.messages.create(params)
				text = r.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
				expect(r.usage.output_tokens).toBeGreaterThan(0)
			}
			expect(text).toBe('Hello! You said: hello beta')
			const req = lastRequest(m.mocks[up])
			if (up === 'anthropic') expect(req.headers['anthropic-beta']).toBe(BETAS.join(','))
			expect(await m.app.balance(acct.accountId)).toBeLessThan(acct.balance)
		})
	}
})
