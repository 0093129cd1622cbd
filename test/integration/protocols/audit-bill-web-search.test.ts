/**
 * Billing audit: the vendors' built-in web search, which reaches them on the same-protocol fast paths (Anthropic's
 * `web_search_*` server tool through Messages, OpenAI's `web_search` tool through Responses), is billed per search on
 * top of tokens: Anthropic reports `usage.server_tool_use.web_search_requests`, OpenAI a `web_search_call` output item
 * per call. A model listing `per_web_search` charges each search the vendor reported; one that lists none, tokens only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { countWords } from '../../mocks'
import { messages } from './clients'
import { costMicros, expectCharges, MODEL, type Matrix, SETUP_MS, startMatrix, usageRows } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({ models: [{ name: 'claude-m', per_web_search: 0.01 } as never, { name: 'gpt-m', per_web_search: 0.025 } as never] })
}, SETUP_MS)
afterAll(() => m.close())

const WEB_SEARCH = { type: 'web_search_20250305', name: 'web_search', max_uses: 5 } as const
const ASK = 'what happened today #search'

describe('Anthropic web search billed per search', () => {
	for (const stream of [false, true])
		it(`should charge per_web_search for each search the usage reports, on top of tokens (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const a = await messages(acct.anthropic, { model: MODEL.anthropic, max_tokens: 200, tools: [WEB_SEARCH], messages: [{ role: 'user', content: ASK }] } as never, stream)
			expect(a.text).toBe(`Hello! You said: ${ASK}`)
			const input = countWords(ASK)
			const rows = await usageRows(m, acct.accountId)
			expect(rows).toHaveLength(1)
			expect(rows[0]).toMatchObject({ model: MODEL.anthropic, input_tokens: input, output_tokens: a.usage.output, status: 200 })
			// The mock ran 2 searches: 2 × $0.01 on top of the tokens.
			const cost = costMicros({ model: MODEL.anthropic, input, output: a.usage.output }) + 2 * 10_000
			expect(Math.round(rows[0]!.cost * 1e6)).toBe(cost)
			expect(Math.round((await m.app.balance(acct.accountId)) * 1e6)).toBe(Math.round(acct.balance * 1e6) - cost)
		})

	it('should charge tokens only when no search ran', async () => {
		const acct = await m.account()
		const a = await messages(acct.anthropic, { model: MODEL.anthropic, max_tokens: 200, tools: [WEB_SEARCH], messages: [{ role: 'user', content: 'hello there' }] } as never, false)
		await expectCharges(m, acct, [{ model: MODEL.anthropic, input: 2, output: a.usage.output }])
	})
})

describe('OpenAI Responses web search billed per call', () => {
	for (const stream of [false, true])
		it(`should charge per_web_search for each web_search_call of the response, on top of tokens (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const params = { model: MODEL.openai, input: ASK, tools: [{ type: 'web_search' as const }] }
			const r = stream ? await acct.openai.responses.stream(params).finalResponse() : await acct.openai.responses.create(params)
			expect(r.output.filter((o) => o.type === 'web_search_call')).toHaveLength(2)
			expect(r.output_text).toBe(`Hello! You said: ${ASK}`)
			const input = r.usage!.input_tokens
			const output = r.usage!.output_tokens
			const rows = await usageRows(m, acct.accountId)
			expect(rows).toHaveLength(1)
			expect(rows[0]).toMatchObject({ model: MODEL.openai, endpoint: '/v1/responses', input_tokens: input, output_tokens: output, status: 200 })
			// 2 calls × $0.025 on top of the tokens.
			const cost = costMicros({ model: MODEL.openai, input, output }) + 2 * 25_000
			expect(Math.round(rows[0]!.cost * 1e6)).toBe(cost)
			expect(Math.round((await m.app.balance(acct.accountId)) * 1e6)).toBe(Math.round(acct.balance * 1e6) - cost)
		})
})
