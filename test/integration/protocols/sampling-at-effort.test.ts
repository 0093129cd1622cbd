/**
 * A sampling temperature sent to OpenAI's GPT-5.1 and later: they take `temperature` and `top_p` at reasoning effort
 * none, their default, and refuse them at any other (platform.openai.com/docs/guides/latest-model; the mock answers
 * so). The gateway leaves them out only where the model would refuse them, through its own protocol (the fast path)
 * and through another (converted), so a client's sampling is not silently dropped where it counts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type Account, lastRequest, type Matrix, SETUP_MS, startMatrixWithCatalogModel } from './harness'

const GPT = 'gpt-5.2'
let m: Matrix
let acct: Account
beforeAll(async () => {
	m = await startMatrixWithCatalogModel(GPT)
	acct = await m.account(10)
}, SETUP_MS)
afterAll(() => m.close())

const sent = () => lastRequest(m.mocks.openai).body

describe('sampling to GPT-5.2, by reasoning effort', () => {
	it('should pass an OpenAI client’s temperature and top_p at the default effort (none), and leave them out at another', async () => {
		const none = await acct.openai.chat.completions.create({ model: GPT, messages: [{ role: 'user', content: 'hi' }], temperature: 0.2, top_p: 0.9 })
		expect(none.choices[0]!.message.content).toBeTruthy()
		expect([sent().temperature, sent().top_p, sent().reasoning_effort]).toEqual([0.2, 0.9, undefined])
		const high = await acct.openai.chat.completions.create({ model: GPT, messages: [{ role: 'user', content: 'hi' }], temperature: 0.2, reasoning_effort: 'high' })
		expect(high.choices[0]!.message.content).toBeTruthy()
		expect([sent().temperature, sent().reasoning_effort]).toEqual([undefined, 'high'])
	})

	it('should give an Anthropic client’s temperature with thinking off as effort none, and leave it out with thinking on', async () => {
		// This SDK's types have no temperature any more (Claude's newest models refuse it); older clients still send it.
		const ask = (extra: Record<string, unknown>) =>
			acct.anthropic.messages.create({ model: GPT, max_tokens: 2000, messages: [{ role: 'user', content: 'hi' }], ...extra } as unknown as Parameters<typeof acct.anthropic.messages.create>[0]) as Promise<{ content: unknown[] }>
		const off = await ask({ temperature: 0.3, thinking: { type: 'disabled' } })
		expect(off.content.length).toBeGreaterThan(0)
		expect([sent().temperature, sent().reasoning_effort]).toEqual([0.3, 'none'])
		const on = await ask({ temperature: 1, thinking: { type: 'enabled', budget_tokens: 1024 } })
		expect(on.content.length).toBeGreaterThan(0)
		expect(sent().temperature).toBeUndefined()
		expect(sent().reasoning_effort).not.toBe('none')
	})
})
