/**
 * OpenAI's `n` (several choices), through the official SDK: an OpenAI channel gives them (the body goes upstream as
 * written), billed from the vendor's usage, which counts the completion tokens of every choice; the reservation and a
 * lowered cap cover every choice, so a small balance still cannot be overspent; with MCP servers the gateway runs
 * (one conversation) they are refused with 400 naming `n` before anything is reserved or sent. Other vendors' choices:
 * choices-converted.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { countWords } from '../../mocks'
import { expectCharges, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, usageRows } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const PROMPT = 'Give me a short greeting'
/** The mock's answer to PROMPT, as words (its plan echoes a fixed reply; counted from what came back). */
const words = (text: string | null | undefined) => countWords(text ?? '')

describe('n > 1 (several choices)', () => {
	it('should give every choice from an OpenAI channel and bill the tokens of all of them, non-streamed', async () => {
		const acct = await m.account()
		const r = await acct.openai.chat.completions.create({ model: MODEL.openai, n: 3, messages: [{ role: 'user', content: PROMPT }] })
		expect(r.choices.map((c) => c.index)).toEqual([0, 1, 2])
		expect(lastRequest(m.mocks.openai).body.n).toBe(3)
		const each = words(r.choices[0]!.message.content)
		expect(each).toBeGreaterThan(0)
		expect(r.usage!.completion_tokens).toBe(3 * each)
		await expectCharges(m, acct, [{ model: MODEL.openai, input: countWords(PROMPT), output: 3 * each }])
	})

	it('should stream every choice by its index and bill all of them', async () => {
		const acct = await m.account()
		const stream = await acct.openai.chat.completions.create({ model: MODEL.openai, n: 2, stream: true, messages: [{ role: 'user', content: PROMPT }] })
		const text: string[] = ['', '']
		const finished: Array<string | null> = [null, null]
		for await (const chunk of stream) {
			for (const c of chunk.choices) {
				text[c.index] += c.delta.content ?? ''
				if (c.finish_reason) finished[c.index] = c.finish_reason
			}
		}
		expect(finished).toEqual(['stop', 'stop'])
		expect(text[1]).toBe(text[0]!)
		// The client did not ask for usage: the gateway asked for it, billed from it and kept it from the client.
		expect(lastRequest(m.mocks.openai).body.stream_options).toEqual({ include_usage: true })
		await expectCharges(m, acct, [{ model: MODEL.openai, input: countWords(PROMPT), output: 2 * words(text[0]) }])
	})

	it('should lower the cap so that every choice fits what the balance covers', async () => {
		// $0.0002 at $0.60 per million output tokens covers ~330 output tokens in all (less the input).
		const acct = await m.account(0.0002)
		await acct.openai.chat.completions.create({ model: MODEL.openai, n: 4, max_tokens: 5000, messages: [{ role: 'user', content: PROMPT }] })
		const cap = lastRequest(m.mocks.openai).body.max_tokens as number
		expect(cap).toBeGreaterThan(16)
		// Four choices at the cap, and the input, within the balance (micro-USD: 0.15 and 0.6 per token).
		expect(Math.ceil(4 * cap * 0.6 + countWords(PROMPT) * 0.15)).toBeLessThanOrEqual(200)
		expect(4 * (cap + 1) * 0.6).toBeGreaterThan(200 - 10)
		const [row] = await usageRows(m, acct.accountId)
		expect(row!.cost).toBeLessThanOrEqual(0.0002)
	})

	it('should refuse n > 1 with MCP servers the gateway connects to (it runs one conversation), charging nothing', async () => {
		const acct = await m.account()
		const before = m.mocks.anthropic.requests.length
		const mcp_servers = [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'tools' }]
		const err = await acct.openai.chat.completions.create({ model: MODEL.anthropic, n: 2, messages: [{ role: 'user', content: PROMPT }], mcp_servers } as never).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(OpenAI.BadRequestError)
		expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('n')
		expect((err as Error).message).toContain('MCP')
		expect(m.mocks.anthropic.requests.length).toBe(before)
		expect(await usageRows(m, acct.accountId)).toEqual([])
		expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
	})

	it('should refuse an n that is not a whole number from 1 to 128', async () => {
		const acct = await m.account()
		for (const n of [0, 1.5, 129]) {
			const err = await acct.openai.chat.completions.create({ model: MODEL.openai, n, messages: [{ role: 'user', content: PROMPT }] }).catch((e: unknown) => e)
			expect(err).toBeInstanceOf(OpenAI.BadRequestError)
			expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('n')
		}
	})
})
