/**
 * Billing audit: the vendors' built-in web search, which reaches them on the same-protocol fast paths (Anthropic's
 * `web_search_*` server tool through Messages, OpenAI's `web_search` tool through Responses), is billed per search on
 * top of tokens: Anthropic reports `usage.server_tool_use.web_search_requests`, OpenAI a `web_search_call` output item
 * per call. A model listing `per_web_search` charges each search the vendor reported; one that lists none, tokens only.
 * Gemini's Google Search grounding (a `googleSearch` tool, through the Gemini API's own SDK) likewise: Google bills
 * Gemini 3 models per distinct non-empty query in `groundingMetadata.webSearchQueries`, Gemini 2.5 per grounded
 * prompt (one per answer that was grounded); before, grounding was not billed at all.
 */
import { GoogleGenAI } from '@google/genai'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { countWords } from '../../mocks'
import { messages } from './clients'
import { costMicros, expectCharges, MODEL, type Matrix, SETUP_MS, startMatrix, usageRows } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		models: [
			{ name: 'claude-m', per_web_search: 0.01 } as never,
			{ name: 'gpt-m', per_web_search: 0.025 } as never,
			{ name: 'gemini-m', per_web_search: 0.035 } as never,
			{ name: GEMINI3, input_per_mtok: 0.3, output_per_mtok: 2.5, per_web_search: 0.014 } as never,
		],
		channels: (mocks) => [{ name: 'g3', type: 'gemini', base_url: mocks.gemini.url, api_key: 'up-gemini', models: [GEMINI3], model_map: { [GEMINI3]: 'gemini-3-pro-preview' } }],
	})
}, SETUP_MS)
afterAll(() => m.close())

/** A Gemini 3 model (billed per query), priced as gemini-m for its tokens. */
const GEMINI3 = 'gemini3-m'

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

describe('Gemini Search grounding billed as web searches', () => {
	const ask = async (key: string, model: string, stream: boolean, text = ASK) => {
		const g = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
		const params = { model, contents: text, config: { tools: [{ googleSearch: {} }] } }
		if (!stream) return g.models.generateContent(params)
		let last: Awaited<ReturnType<typeof g.models.generateContent>> | undefined
		let answer = ''
		let grounding: unknown
		for await (const c of await g.models.generateContentStream(params)) {
			last = c
			answer += c.text ?? ''
			grounding ??= c.candidates?.[0]?.groundingMetadata
		}
		return { ...last!, text: answer, candidates: [{ ...last!.candidates![0], groundingMetadata: grounding }] }
	}

	const cases = [
		{ model: MODEL.gemini, what: 'Gemini 2.5: one per grounded prompt', searches: 1, price: 35_000 },
		{ model: GEMINI3, what: 'Gemini 3: one per distinct non-empty query', searches: 2, price: 14_000 },
	]
	for (const c of cases)
		for (const stream of [false, true])
			it(`should charge per_web_search on top of tokens (${c.what}, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				const r = (await ask(acct.key, c.model, stream)) as any
				expect(r.text).toBe(`Hello! You said: ${ASK}`)
				// The mock's grounding, as the SDK gives it: two queries and an empty one.
				expect(r.candidates[0].groundingMetadata.webSearchQueries).toHaveLength(3)
				const input = r.usageMetadata.promptTokenCount
				const output = r.usageMetadata.candidatesTokenCount + (r.usageMetadata.thoughtsTokenCount ?? 0)
				const rows = await usageRows(m, acct.accountId)
				expect(rows).toHaveLength(1)
				expect(rows[0]).toMatchObject({ model: c.model, input_tokens: input, output_tokens: output, status: 200 })
				const cost = costMicros({ model: MODEL.gemini, input, output }) + c.searches * c.price
				expect(Math.round(rows[0]!.cost * 1e6)).toBe(cost)
				expect(Math.round((await m.app.balance(acct.accountId)) * 1e6)).toBe(Math.round(acct.balance * 1e6) - cost)
			})

	it('should charge tokens only when the answer was not grounded', async () => {
		const acct = await m.account()
		const r = (await ask(acct.key, GEMINI3, false, 'hello there')) as any
		expect(r.candidates[0].groundingMetadata).toBeUndefined()
		const rows = await usageRows(m, acct.accountId)
		expect(rows).toHaveLength(1)
		expect(Math.round(rows[0]!.cost * 1e6)).toBe(costMicros({ model: MODEL.gemini, input: r.usageMetadata.promptTokenCount, output: r.usageMetadata.candidatesTokenCount }))
	})
})

