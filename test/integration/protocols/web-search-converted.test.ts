/**
 * Web search across protocols: a Responses client's built-in `web_search` tool (Codex CLI sends one on every request)
 * runs at whichever vendor serves the model, instead of a 400. To Claude it goes as the `web_search_20250305` server
 * tool; the answer's `server_tool_use` + `web_search_tool_result` blocks come back as `web_search_call` items and its
 * `web_search_result_location` citations as `url_citation` annotations, whole and streamed (with the
 * `response.web_search_call.*` and `response.output_text.annotation.added` events), and the searches the usage
 * reports (`server_tool_use.web_search_requests`) are billed once, at the model's `per_web_search`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { messages } from './clients'
import { costMicros, MODEL, type Matrix, SETUP_MS, startMatrix, usageRows } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({ models: [{ name: 'claude-m', per_web_search: 0.01 } as never, { name: 'gemini-m', per_web_search: 0.035 } as never] })
}, SETUP_MS)
afterAll(() => m.close())

const ASK = 'what happened today #search'
const ANSWER = `Hello! You said: ${ASK}`

describe('Responses web_search on a Claude model', () => {
	for (const stream of [false, true])
		it(`should run Claude's web search and answer with web_search_call items and url_citation annotations, billed per search (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const params = { model: MODEL.anthropic, input: ASK, tools: [{ type: 'web_search' as const }] }
			const seen: string[] = []
			let r
			if (stream) {
				const s = acct.openai.responses.stream(params)
				s.on('event', (e) => seen.push(e.type))
				r = await s.finalResponse()
			} else r = await acct.openai.responses.create(params)
			const searches = r.output.filter((o) => o.type === 'web_search_call')
			expect(searches).toHaveLength(2)
			expect(searches[0]).toMatchObject({ type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'mock query 1', sources: [{ type: 'url', url: 'https://example.com/page-1' }] } })
			expect(r.output_text).toBe(ANSWER)
			const message = r.output.find((o) => o.type === 'message')
			expect(message?.type === 'message' && message.content[0]).toMatchObject({ annotations: [{ type: 'url_citation', url: 'https://example.com/page-1', title: 'Page 1', start_index: 0, end_index: ANSWER.length }] })
			if (stream) {
				for (const t of ['response.web_search_call.in_progress', 'response.web_search_call.searching', 'response.web_search_call.completed', 'response.output_text.annotation.added']) expect(seen).toContain(t)
				expect(seen.indexOf('response.output_text.annotation.added')).toBeLessThan(seen.indexOf('response.output_text.done'))
			}
			const input = r.usage!.input_tokens
			const output = r.usage!.output_tokens
			const rows = await usageRows(m, acct.accountId)
			expect(rows).toHaveLength(1)
			// The mock ran 2 searches: 2 × $0.01 on top of the tokens, once.
			const cost = costMicros({ model: MODEL.anthropic, input, output }) + 2 * 10_000
			expect(Math.round(rows[0]!.cost * 1e6)).toBe(cost)
			expect(Math.round((await m.app.balance(acct.accountId)) * 1e6)).toBe(Math.round(acct.balance * 1e6) - cost)
		})

	it('should send the search to Claude with the limit and domains the client set, and force it when tool_choice names it', async () => {
		const acct = await m.account()
		const r = await acct.openai.responses.create({
			model: MODEL.anthropic,
			input: ASK,
			max_tool_calls: 1,
			tool_choice: { type: 'web_search_preview' },
			tools: [{ type: 'web_search_preview', user_location: { type: 'approximate', city: 'Paris', country: 'FR' } }],
		})
		// max_tool_calls 1 → max_uses 1: the mock ran one search.
		expect(r.output.filter((o) => o.type === 'web_search_call')).toHaveLength(1)
		const sent = m.mocks.anthropic.requests.at(-1)!.body as Record<string, unknown>
		expect(sent.tools).toEqual([{ type: 'web_search_20250305', name: 'web_search', max_uses: 1, user_location: { type: 'approximate', city: 'Paris', country: 'FR' } }])
		expect(sent.tool_choice).toEqual({ type: 'tool', name: 'web_search' })
	})

	it('should take back a turn that holds a web_search_call item and cited text (Codex replays them as input)', async () => {
		const acct = await m.account()
		const first = await acct.openai.responses.create({ model: MODEL.anthropic, input: ASK, tools: [{ type: 'web_search' }] })
		const r = await acct.openai.responses.create({
			model: MODEL.anthropic,
			tools: [{ type: 'web_search' }],
			input: [{ role: 'user', content: ASK }, ...(first.output as never[]), { role: 'user', content: 'thanks' }],
		})
		expect(r.output_text).toBe('Hello! You said: thanks')
	})
})

describe('Responses web_search on a Gemini model', () => {
	for (const stream of [false, true])
		it(`should ground the answer with Google Search and answer with a web_search_call item and url_citation annotations, billed per grounded prompt (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const params = { model: MODEL.gemini, input: ASK, tools: [{ type: 'web_search' as const }] }
			const r = stream ? await acct.openai.responses.stream(params).finalResponse() : await acct.openai.responses.create(params)
			expect(m.mocks.gemini.requests.at(-1)!.body).toMatchObject({ tools: [{ googleSearch: {} }] })
			const searches = r.output.filter((o) => o.type === 'web_search_call')
			// The mock's grounding: two queries and an empty one (not a search), one web source.
			expect(searches).toEqual([
				{
					id: expect.stringMatching(/^ws_/),
					type: 'web_search_call',
					status: 'completed',
					action: { type: 'search', query: 'what happened today latest', queries: ['what happened today latest', 'what happened today explained'], sources: [{ type: 'url', url: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/mock-1' }] },
				} as never,
			])
			expect(r.output_text).toBe(ANSWER)
			const message = r.output.find((o) => o.type === 'message')
			expect(message?.type === 'message' && message.content[0]).toMatchObject({
				annotations: [{ type: 'url_citation', url: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/mock-1', title: 'example.com', start_index: 0, end_index: ANSWER.length }],
			})
			const rows = await usageRows(m, acct.accountId)
			expect(rows).toHaveLength(1)
			// Gemini 2.5 bills one search per grounded prompt: $0.035 once, on top of the tokens.
			const cost = costMicros({ model: MODEL.gemini, input: r.usage!.input_tokens, output: r.usage!.output_tokens }) + 35_000
			expect(Math.round(rows[0]!.cost * 1e6)).toBe(cost)
		})
})

describe('Chat web_search_options on other vendors', () => {
	it("should run Claude's web search and give its citations as the message's url_citation annotations, billed per search", async () => {
		const acct = await m.account()
		const r = await acct.openai.chat.completions.create({ model: MODEL.anthropic, messages: [{ role: 'user', content: ASK }], web_search_options: { user_location: { type: 'approximate', approximate: { city: 'Paris' } } } })
		expect(m.mocks.anthropic.requests.at(-1)!.body).toMatchObject({ tools: [{ type: 'web_search_20250305', name: 'web_search', user_location: { type: 'approximate', city: 'Paris' } }] })
		expect(r.choices[0]!.message.content).toBe(ANSWER)
		expect(r.choices[0]!.message.annotations).toEqual([{ type: 'url_citation', url_citation: { url: 'https://example.com/page-1', title: 'Page 1', start_index: 0, end_index: ANSWER.length } }])
		const rows = await usageRows(m, acct.accountId)
		expect(Math.round(rows[0]!.cost * 1e6)).toBe(costMicros({ model: MODEL.anthropic, input: r.usage!.prompt_tokens, output: r.usage!.completion_tokens }) + 2 * 10_000)
	})

	it("should stream Claude's citations as a delta of annotations after the text, spans into the whole message", async () => {
		const acct = await m.account()
		// Claude cites the answer's tail, in a text block after an uncited one: the span starts past the first block.
		const ask = 'café 中文 news, then #cited-tail #search'
		const answer = `Hello! You said: ${ask}`
		const stream = await acct.openai.chat.completions.create({ model: MODEL.anthropic, messages: [{ role: 'user', content: ask }], web_search_options: {}, stream: true })
		let text = ''
		const annotations: unknown[] = []
		let textAfter = false
		for await (const c of stream) {
			const delta = c.choices[0]?.delta as { content?: string | null; annotations?: unknown[] } | undefined
			if (delta?.content && annotations.length) textAfter = true
			text += delta?.content ?? ''
			annotations.push(...(delta?.annotations ?? []))
		}
		expect(text).toBe(answer)
		const start = answer.indexOf('#cited-tail')
		expect(annotations).toEqual([{ type: 'url_citation', url_citation: { url: 'https://example.com/page-1', title: 'Page 1', start_index: start, end_index: answer.length } }])
		expect(textAfter).toBe(false)
	})

	it('should refuse a search for an OpenAI chat model that cannot search, saying which can', async () => {
		const acct = await m.account()
		const before = m.mocks.openai.requests.length
		const err = (await acct.anthropic.messages
			.create({ model: MODEL.openai, max_tokens: 100, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [{ role: 'user', content: ASK }] })
			.catch((e: unknown) => e)) as { status: number; message: string }
		expect(err.status).toBe(400)
		expect(err.message).toContain('only the search models (gpt-4o-search-preview, gpt-4o-mini-search-preview, gpt-5-search-api) search the web')
		expect(m.mocks.openai.requests.length).toBe(before)
	})
})

describe('Anthropic web search on a Gemini model', () => {
	for (const stream of [false, true])
		it(`should ground with Google Search and answer with server_tool_use, web_search_tool_result and cited text (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const a = await messages(acct.anthropic, { model: MODEL.gemini, max_tokens: 200, tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }] as never, messages: [{ role: 'user', content: ASK }] }, stream)
			expect(m.mocks.gemini.requests.at(-1)!.body).toMatchObject({ tools: [{ googleSearch: {} }] })
			expect(a.text).toBe(ANSWER)
			const blocks = (a.replay as { content: Array<Record<string, unknown>> }).content
			// Streamed, Gemini reports its grounding on the last chunk, after the text: the search blocks follow it.
			const order = stream ? ['text', 'server_tool_use', 'web_search_tool_result'] : ['server_tool_use', 'web_search_tool_result', 'text']
			expect(blocks.map((b) => b.type)).toEqual(order)
			const [use, result, text] = ['server_tool_use', 'web_search_tool_result', 'text'].map((t) => blocks.find((b) => b.type === t)!)
			expect(use).toMatchObject({ name: 'web_search', input: { query: 'what happened today latest | what happened today explained' } })
			expect(result).toMatchObject({ tool_use_id: use!.id, content: [{ type: 'web_search_result', url: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/mock-1', title: 'example.com' }] })
			expect(text!.citations).toEqual([{ type: 'web_search_result_location', url: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/mock-1', title: 'example.com', encrypted_index: '', cited_text: ANSWER }])
		})
})
