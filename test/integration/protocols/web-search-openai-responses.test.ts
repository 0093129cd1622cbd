/**
 * Web search on OpenAI's models that do not search over Chat Completions (every GPT model but the `*-search-*` ones):
 * a converted request carrying a search (Cline's Anthropic provider always adds `web_search_20250305`, its Gemini
 * provider `googleSearch`, Claude Code's WebSearch) goes to OpenAI's Responses API with the `web_search` tool, on a
 * channel whose vendor has that API (OpenAI's own URL, or `settings.responses_api: true`). The `web_search_call` items
 * and `url_citation` annotations come back, whole and streamed, as Anthropic's `server_tool_use` +
 * `web_search_tool_result` blocks and citations, and Gemini's `groundingMetadata`; each search billed once.
 */
import { GoogleGenAI } from '@google/genai'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { messages } from './clients'
import { costMicros, type Matrix, SETUP_MS, startMatrix, UPSTREAM_MODEL, usageRows } from './harness'

/** A non-search GPT model (the matrix's), served by a channel that has the Responses API. */
const GPT = 'gpt-web'
const PER_SEARCH = 25_000

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		models: [{ name: GPT, per_web_search: 0.025 } as never],
		channels: (mocks) => [
			{ name: 'openai-responses', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: [GPT], model_map: { [GPT]: UPSTREAM_MODEL.openai }, settings: { responses_api: true } },
		],
	})
}, SETUP_MS)
afterAll(() => m.close())

// Accents, CJK and emoji before and inside the cited span (OpenAI's indices count characters, code points: an emoji is
// one, two UTF-16 units, four UTF-8 bytes); the mock cites page-1 from `#cited-tail` on.
const ASK = 'café 中文 😀 news, then #cited-tail: résumé 東京 🎉 #search'
const ANSWER = `Hello! You said: ${ASK}`
const LEAD = ANSWER.slice(0, ANSWER.indexOf('#cited-tail'))
const CITED = ANSWER.slice(LEAD.length)
const bytes = (s: string) => Buffer.byteLength(s, 'utf8')
const codePoints = (s: string) => [...s].length

/** The last request the OpenAI mock got: a Responses call with the `web_search` tool, asking for its sources. */
function expectResponsesSearch() {
	const sent = m.mocks.openai.requests.at(-1)!
	expect(sent.path).toBe('/v1/responses')
	expect(sent.body).toMatchObject({ model: UPSTREAM_MODEL.openai, tools: [{ type: 'web_search' }], include: ['web_search_call.action.sources'] })
}

/** One usage row: the tokens the client was shown plus two searches, once, and the balance down by as much. */
async function expectBilled(acct: Awaited<ReturnType<Matrix['account']>>, input: number, output: number) {
	const rows = await usageRows(m, acct.accountId)
	expect(rows).toHaveLength(1)
	const cost = costMicros({ model: GPT, input, output }) + 2 * PER_SEARCH
	expect(Math.round(rows[0]!.cost * 1e6)).toBe(cost)
	expect(Math.round((await m.app.balance(acct.accountId)) * 1e6)).toBe(Math.round(acct.balance * 1e6) - cost)
}

describe('Anthropic web_search_20250305 on a non-search GPT model', () => {
	for (const stream of [false, true])
		it(`should search through the Responses API and answer with server_tool_use, web_search_tool_result and citations (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const a = await messages(acct.anthropic, { model: GPT, max_tokens: 200, tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 5 }] as never, messages: [{ role: 'user', content: ASK }] }, stream)
			expectResponsesSearch()
			expect(a.text).toBe(ANSWER)
			const blocks = (a.replay as { content: Array<Record<string, unknown>> }).content
			expect(blocks.map((b) => b.type)).toEqual(['server_tool_use', 'web_search_tool_result', 'server_tool_use', 'web_search_tool_result', 'text'])
			const uses = blocks.filter((b) => b.type === 'server_tool_use')
			expect(uses.map((b) => b.input)).toEqual([{ query: 'first query' }, { query: 'second query' }])
			const results = blocks.filter((b) => b.type === 'web_search_tool_result')
			expect(results.map((b) => [b.tool_use_id, (b.content as Array<{ url: string }>).map((r) => r.url)])).toEqual([
				[uses[0]!.id, ['https://example.com/page-1']],
				[uses[1]!.id, ['https://example.com/page-2']],
			])
			const text = blocks.at(-1)!
			expect(text.citations).toEqual([{ type: 'web_search_result_location', url: 'https://example.com/page-1', title: 'Page 1', encrypted_index: '', cited_text: CITED }])
			await expectBilled(acct, a.usage.input, a.usage.output)
		})
})

describe('Gemini googleSearch on a non-search GPT model', () => {
	const genai = (key: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
	for (const stream of [false, true])
		it(`should search through the Responses API and answer with groundingMetadata, segments in UTF-8 bytes (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const g = genai(acct.key)
			const params = { model: GPT, contents: ASK, config: { tools: [{ googleSearch: {} }] } }
			let text = ''
			let grounding
			let usage
			if (stream) {
				for await (const c of await g.models.generateContentStream(params)) {
					text += c.text ?? ''
					grounding = c.candidates?.[0]?.groundingMetadata ?? grounding
					usage = c.usageMetadata ?? usage
				}
			} else {
				const r = await g.models.generateContent(params)
				text = r.text ?? ''
				grounding = r.candidates?.[0]?.groundingMetadata
				usage = r.usageMetadata
			}
			expectResponsesSearch()
			expect(text).toBe(ANSWER)
			expect(grounding).toEqual({
				webSearchQueries: ['first query', 'second query'],
				// OpenAI lists the pages found by URL alone.
				groundingChunks: [{ web: { uri: 'https://example.com/page-1' } }, { web: { uri: 'https://example.com/page-2' } }],
				groundingSupports: [{ segment: { startIndex: bytes(LEAD), endIndex: bytes(ANSWER), text: CITED }, groundingChunkIndices: [0] }],
			})
			await expectBilled(acct, usage!.promptTokenCount!, usage!.candidatesTokenCount!)
		})
})

describe('Chat web_search_options on a non-search GPT model', () => {
	for (const stream of [false, true])
		it(`should search through the Responses API rather than pass the chat request to a model that refuses it (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const params = { model: GPT, messages: [{ role: 'user' as const, content: ASK }], web_search_options: {} }
			let text = ''
			const annotations: unknown[] = []
			let usage
			if (stream) {
				for await (const c of await acct.openai.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } })) {
					const delta = c.choices[0]?.delta as { content?: string | null; annotations?: unknown[] } | undefined
					text += delta?.content ?? ''
					annotations.push(...(delta?.annotations ?? []))
					usage = c.usage ?? usage
				}
			} else {
				const r = await acct.openai.chat.completions.create(params)
				text = r.choices[0]!.message.content ?? ''
				annotations.push(...(r.choices[0]!.message.annotations ?? []))
				usage = r.usage
			}
			expectResponsesSearch()
			expect(text).toBe(ANSWER)
			expect(annotations).toEqual([{ type: 'url_citation', url_citation: { url: 'https://example.com/page-1', title: 'Page 1', start_index: codePoints(LEAD), end_index: codePoints(ANSWER) } }])
			await expectBilled(acct, usage!.prompt_tokens, usage!.completion_tokens)
		})
})

describe("a later turn's history on the Responses API", () => {
	it("should leave out the thinking another vendor's answer carried, which OpenAI cannot verify", async () => {
		const acct = await m.account()
		// Claude Code replays a Claude turn's signed thinking (and a converted answer's unsigned one) with the next request.
		const r = await acct.anthropic.messages.create({
			model: GPT,
			max_tokens: 200,
			tools: [{ type: 'web_search_20250305', name: 'web_search' }],
			messages: [
				{ role: 'user', content: 'hello' },
				{
					role: 'assistant',
					content: [
						{ type: 'thinking', thinking: 'The user greets me.', signature: 'EqQBCkYIBxgCKkDclaude-signature' },
						{ type: 'thinking', thinking: 'Unsigned.', signature: '' },
						{ type: 'text', text: 'Hi!' },
					],
				},
				{ role: 'user', content: ASK },
			],
		})
		expectResponsesSearch()
		const input = (m.mocks.openai.requests.at(-1)!.body as { input: Array<{ type?: string }> }).input
		expect(input.filter((i) => i.type === 'reasoning')).toEqual([])
		expect(r.content.filter((b) => b.type === 'text').map((b) => (b.type === 'text' ? b.text : '')).join('')).toBe(ANSWER)
	})
})
