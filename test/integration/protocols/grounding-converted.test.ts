/**
 * Web search grounding for Gemini callers on other vendors' models, and its spans both ways with non-ASCII text. A
 * Gemini client's `googleSearch` tool runs as Claude's web search (or an OpenAI search model's); the answer's searches
 * and citations come back as the candidate's `groundingMetadata` (`webSearchQueries`, `groundingChunks[].web`,
 * `groundingSupports` whose `segment` indices count UTF-8 bytes of the answer's text), whole and on the stream's last
 * chunk, as Gemini sends it; `@ai-sdk/google` reads its `sources` from it. The other way, Gemini's byte offsets become character offsets in
 * Responses `url_citation` annotations and the cited text of Anthropic's citations.
 */
import { createGoogleGenerativeAI } from '@ai-sdk/google'
import { GoogleGenAI } from '@google/genai'
import { generateText, streamText } from 'ai'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { messages } from './clients'
import { type Account, MODEL, type Matrix, SETUP_MS, startMatrix } from './harness'

/**
 * A gateway model named as `@ai-sdk/google` expects a Gemini model to be (it sends `googleSearch` only for names with
 * `gemini-` in them), served by Claude.
 */
const ALIAS: string = 'gemini-default'
/** An OpenAI chat model that searches (only those take `web_search_options`). */
const SEARCHER: string = 'gpt-search-m'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		models: [
			{ name: 'claude-m', per_web_search: 0.01 } as never,
			{ name: 'gemini-m', per_web_search: 0.035 } as never,
			{ name: ALIAS, input_per_mtok: 3, output_per_mtok: 15 },
			{ name: SEARCHER, input_per_mtok: 2.5, output_per_mtok: 10 },
		],
		channels: (mocks) => [
			{ name: 'alias', type: 'anthropic', base_url: mocks.anthropic.url, api_key: 'up-anthropic', models: [ALIAS], model_map: { [ALIAS]: 'claude-sonnet-5' } },
			{ name: 'searcher', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: [SEARCHER], model_map: { [SEARCHER]: 'gpt-4o-search-preview' } },
		],
	})
}, SETUP_MS)
afterAll(() => m.close())

// Accents, CJK and an emoji (two UTF-16 units, four UTF-8 bytes) before and inside the cited span: the mocks cite the
// answer from `#cited-tail` on (Claude in a text block of its own after an uncited one, Gemini with a segment).
const ASK = 'café 中文 😀 news, then #cited-tail: résumé 東京 🎉 #search'
const ANSWER = `Hello! You said: ${ASK}`
const LEAD = ANSWER.slice(0, ANSWER.indexOf('#cited-tail'))
const CITED = ANSWER.slice(LEAD.length)
const bytes = (s: string) => Buffer.byteLength(s, 'utf8')
/** OpenAI's characters: code points, as its Python SDK slices `text[start_index:end_index]`. */
const codePoints = (s: string) => [...s].length
const sliceCodePoints = (s: string, start: number, end: number) => [...s].slice(start, end).join('')

type Grounding = {
	webSearchQueries?: string[]
	searchEntryPoint?: unknown
	groundingChunks?: Array<{ web?: { uri?: string; title?: string } }>
	groundingSupports?: Array<{ segment?: { startIndex?: number; endIndex?: number; text?: string }; groundingChunkIndices?: number[] }>
}

const genai = (key: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })

describe('Gemini googleSearch on a Claude model', () => {
	for (const stream of [false, true])
		it(`should answer with groundingMetadata from Claude's searches and citations, segments in UTF-8 bytes (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const g = genai(acct.key)
			const params = { model: MODEL.anthropic, contents: ASK, config: { tools: [{ googleSearch: {} }] } }
			let text = ''
			let grounding: Grounding | undefined
			let groundedChunks = 0
			let lastHadIt = false
			if (stream) {
				for await (const c of await g.models.generateContentStream(params)) {
					text += c.text ?? ''
					const meta = c.candidates?.[0]?.groundingMetadata
					if (meta) groundedChunks++
					grounding = meta ?? grounding
					lastHadIt = !!meta && !!c.candidates?.[0]?.finishReason
				}
			} else {
				const r = await g.models.generateContent(params)
				text = r.text ?? ''
				grounding = r.candidates?.[0]?.groundingMetadata
			}
			expect(m.mocks.anthropic.requests.at(-1)!.body).toMatchObject({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] })
			expect(text).toBe(ANSWER)
			expect(grounding).toEqual({
				webSearchQueries: ['mock query 1', 'mock query 2'],
				groundingChunks: [{ web: { uri: 'https://example.com/page-1', title: 'Page 1' } }, { web: { uri: 'https://example.com/page-2', title: 'Page 2' } }],
				groundingSupports: [{ segment: { startIndex: bytes(LEAD), endIndex: bytes(ANSWER), text: CITED }, groundingChunkIndices: [0] }],
			})
			// The segment's bytes are the cited text, as a client slicing the UTF-8 answer finds them.
			const seg = grounding!.groundingSupports![0]!.segment!
			expect(Buffer.from(text, 'utf8').subarray(seg.startIndex, seg.endIndex).toString('utf8')).toBe(CITED)
			// Streamed, it rides once on the last chunk, with finishReason, as Gemini sends its grounding.
			if (stream) expect([groundedChunks, lastHadIt]).toEqual([1, true])
		})

	for (const stream of [false, true])
		it(`should give @ai-sdk/google the searched pages as sources (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const google = createGoogleGenerativeAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1beta` })
			const params = { model: google(ALIAS), prompt: ASK, tools: { google_search: google.tools.googleSearch({}) } }
			const r = stream ? streamText(params) : await generateText(params)
			expect(await r.text).toBe(ANSWER)
			const sources = (await r.sources).map((s) => (s.sourceType === 'url' ? { url: s.url, title: s.title } : s))
			expect(sources).toEqual([
				{ url: 'https://example.com/page-1', title: 'Page 1' },
				{ url: 'https://example.com/page-2', title: 'Page 2' },
			])
		})
})

describe('Gemini googleSearch on an OpenAI search model', () => {
	// OpenAI counts annotation indices in characters (code points): the emoji are one each.
	const ask = ASK
	const answer = ANSWER
	const lead = answer.slice(0, answer.indexOf('#cited-tail'))
	for (const stream of [false, true])
		it(`should answer with groundingMetadata from the message's url_citation annotations (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const g = genai(acct.key)
			const params = { model: SEARCHER, contents: ask, config: { tools: [{ googleSearch: {} }] } }
			let text = ''
			let grounding: Grounding | undefined
			if (stream) {
				for await (const c of await g.models.generateContentStream(params)) {
					text += c.text ?? ''
					grounding = c.candidates?.[0]?.groundingMetadata ?? grounding
				}
			} else {
				const r = await g.models.generateContent(params)
				text = r.text ?? ''
				grounding = r.candidates?.[0]?.groundingMetadata
			}
			expect(m.mocks.openai.requests.at(-1)!.body).toMatchObject({ model: 'gpt-4o-search-preview', web_search_options: {} })
			expect(text).toBe(answer)
			// Chat reports no queries, only the pages its text cites.
			expect(grounding).toEqual({
				groundingChunks: [{ web: { uri: 'https://example.com/page-1', title: 'Page 1' } }],
				groundingSupports: [{ segment: { startIndex: bytes(lead), endIndex: bytes(answer), text: answer.slice(lead.length) }, groundingChunkIndices: [0] }],
			})
		})
})

describe('Anthropic web search on an OpenAI search model', () => {
	const ask = ASK
	const answer = ANSWER
	const cited = answer.slice(answer.indexOf('#cited-tail'))
	for (const stream of [false, true])
		it(`should give the citations of the message's url_citation annotations the text they span (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const a = await messages(acct.anthropic, { model: SEARCHER, max_tokens: 200, tools: [{ type: 'web_search_20250305', name: 'web_search' }] as never, messages: [{ role: 'user', content: ask }] }, stream)
			expect(m.mocks.openai.requests.at(-1)!.body).toMatchObject({ model: 'gpt-4o-search-preview', web_search_options: {} })
			expect(a.text).toBe(answer)
			const texts = (a.replay as { content: Array<Record<string, unknown>> }).content.filter((b) => b.type === 'text')
			const citations = texts.flatMap((b) => (Array.isArray(b.citations) ? (b.citations as Array<Record<string, unknown>>) : []))
			expect(citations.map((c) => [c.url, c.cited_text])).toEqual([['https://example.com/page-1', cited]])
		})
})

describe("Gemini's grounding with non-ASCII text to other protocols", () => {
	for (const stream of [false, true])
		it(`should give Responses url_citation spans in characters (code points) of the text (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const params = { model: MODEL.gemini, input: ASK, tools: [{ type: 'web_search' as const }] }
			const r = stream ? await acct.openai.responses.stream(params).finalResponse() : await acct.openai.responses.create(params)
			expect(r.output_text).toBe(ANSWER)
			const message = r.output.find((o) => o.type === 'message')
			const part = message?.type === 'message' ? message.content[0] : undefined
			const annotation = part?.type === 'output_text' ? part.annotations[0] : undefined
			expect(annotation).toMatchObject({ type: 'url_citation', start_index: codePoints(LEAD), end_index: codePoints(ANSWER) })
			const at = annotation as { start_index: number; end_index: number }
			expect(sliceCodePoints(r.output_text, at.start_index, at.end_index)).toBe(CITED)
		})

	for (const stream of [false, true])
		it(`should give chat url_citation annotations in characters (code points) of the message (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const { text, annotations } = await chatSearch(acct.openai, MODEL.gemini, stream)
			expect(m.mocks.gemini.requests.at(-1)!.body).toMatchObject({ tools: [{ googleSearch: {} }] })
			expect(text).toBe(ANSWER)
			expect(annotations).toEqual([{ type: 'url_citation', url_citation: expect.objectContaining({ start_index: codePoints(LEAD), end_index: codePoints(ANSWER) }) }])
			const at = annotations[0]!.url_citation
			expect(sliceCodePoints(text, at.start_index, at.end_index)).toBe(CITED)
		})

	for (const stream of [false, true])
		it(`should give Anthropic citations the cited text (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const a = await messages(acct.anthropic, { model: MODEL.gemini, max_tokens: 200, tools: [{ type: 'web_search_20250305', name: 'web_search' }] as never, messages: [{ role: 'user', content: ASK }] }, stream)
			expect(a.text).toBe(ANSWER)
			const texts = (a.replay as { content: Array<Record<string, unknown>> }).content.filter((b) => b.type === 'text')
			const cited = texts.filter((b) => Array.isArray(b.citations) && b.citations.length > 0)
			expect(cited.map((b) => (b.citations as Array<Record<string, unknown>>)[0]!.cited_text)).toEqual([CITED])
		})
})

describe('Claude web search with non-ASCII text to OpenAI protocols', () => {
	for (const stream of [false, true])
		it(`should give Responses url_citation spans in code points, on the text Claude cited (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const params = { model: MODEL.anthropic, input: ASK, tools: [{ type: 'web_search' as const }] }
			const r = stream ? await acct.openai.responses.stream(params).finalResponse() : await acct.openai.responses.create(params)
			expect(r.output_text).toBe(ANSWER)
			// Claude cites its block from `#cited-tail` on: each citation spans it, in the text of the part it is on (the
			// whole answer's one part, or streamed, the block's own message item), whatever page it names.
			const parts = r.output.flatMap((o) => (o.type === 'message' ? o.content : [])).flatMap((p) => (p.type === 'output_text' ? [p] : []))
			const spans = parts.flatMap((p) => (p.annotations as Array<{ start_index: number; end_index: number }>).map((a) => ({ a, text: p.text })))
			expect(spans.length).toBeGreaterThan(0)
			for (const { a, text } of spans) expect([a.end_index - a.start_index, sliceCodePoints(text, a.start_index, a.end_index)]).toEqual([codePoints(CITED), CITED])
		})

	for (const stream of [false, true])
		it(`should give chat url_citation annotations in code points, on the text Claude cited (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const { text, annotations } = await chatSearch(acct.openai, MODEL.anthropic, stream)
			expect(text).toBe(ANSWER)
			expect(annotations.length).toBeGreaterThan(0)
			for (const { url_citation: a } of annotations) expect([a.start_index, a.end_index, sliceCodePoints(text, a.start_index, a.end_index)]).toEqual([codePoints(LEAD), codePoints(ANSWER), CITED])
		})
})

type ChatAnnotation = { type: 'url_citation'; url_citation: { url: string; title: string; start_index: number; end_index: number } }

/** A chat completion with `web_search_options` asking ASK: its text and annotations (streamed: the deltas'). */
async function chatSearch(openai: Account['openai'], model: string, stream: boolean): Promise<{ text: string; annotations: ChatAnnotation[] }> {
	const params = { model, messages: [{ role: 'user' as const, content: ASK }], web_search_options: {} }
	if (!stream) {
		const r = await openai.chat.completions.create(params)
		return { text: r.choices[0]!.message.content ?? '', annotations: (r.choices[0]!.message.annotations ?? []) as ChatAnnotation[] }
	}
	let text = ''
	const annotations: ChatAnnotation[] = []
	for await (const c of await openai.chat.completions.create({ ...params, stream: true })) {
		const delta = c.choices[0]?.delta as { content?: string | null; annotations?: ChatAnnotation[] } | undefined
		text += delta?.content ?? ''
		annotations.push(...(delta?.annotations ?? []))
	}
	return { text, annotations }
}
