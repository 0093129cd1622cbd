/**
 * Citations for Interactions callers on converted answers. The request's `google_search` tool runs as the serving
 * vendor's web search (Claude's server tool, an OpenAI search model's, Gemini's grounding through generateContent), and
 * the answer's citations come back as `url_citation` annotations of the `model_output` step's text, their
 * `start_index` / `end_index` counting UTF-8 bytes of that text (https://ai.google.dev/api/interactions-api#URLCitation:
 * "measured in bytes"); streamed, as `text_annotation_delta` deltas of the step once its text is whole. The streamed
 * interaction kept for `GET` has the steps the whole answer has. `@ai-sdk/google`'s `google.interactions` reads its
 * `sources` from them.
 */
import { createGoogleGenerativeAI } from '@ai-sdk/google'
import { GoogleGenAI } from '@google/genai'
import { generateText, streamText } from 'ai'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { costMicros, MODEL, type Matrix, PRICE, SETUP_MS, startMatrix, usageRows } from './harness'

/** An OpenAI chat model that searches (only those take `web_search_options`). */
const SEARCHER = 'gpt-search-m'
PRICE[SEARCHER] = { input: 2.5, output: 10 }

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		models: [{ name: 'claude-m', per_web_search: 0.01 } as never, { name: 'gemini-m', per_web_search: 0.035 } as never, { name: SEARCHER, input_per_mtok: PRICE[SEARCHER]!.input, output_per_mtok: PRICE[SEARCHER]!.output }],
		channels: (mocks) => [{ name: 'searcher', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: [SEARCHER], model_map: { [SEARCHER]: 'gpt-4o-search-preview' } }],
	})
}, SETUP_MS)
afterAll(() => m.close())

// Accents, CJK and emoji before and inside the cited span: the mocks cite the answer from `#cited-tail` on (Claude in a
// text block of its own after an uncited one, Gemini with a byte segment, OpenAI in code points).
const ASK = 'café 中文 😀 news, then #cited-tail: résumé 東京 🎉 #search'
const ANSWER = `Hello! You said: ${ASK}`
const LEAD = ANSWER.slice(0, ANSWER.indexOf('#cited-tail'))
const bytes = (s: string) => Buffer.byteLength(s, 'utf8')

const SOURCE: Record<string, { url: string; title: string }> = {
	[MODEL.anthropic]: { url: 'https://example.com/page-1', title: 'Page 1' },
	[MODEL.gemini]: { url: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/mock-1', title: 'example.com' },
	[SEARCHER]: { url: 'https://example.com/page-1', title: 'Page 1' },
}

/** Micro-USD the searches of one answer add: the Claude mock runs two, Gemini 2.5 bills a grounded prompt once, no price for the searcher. */
const SEARCH_COST: Record<string, number> = { [MODEL.anthropic]: 2 * 10_000, [MODEL.gemini]: 35_000, [SEARCHER]: 0 }

type Event = { event_type: string; index?: number; step?: Record<string, any>; delta?: Record<string, any>; interaction?: Record<string, any> }

const genai = (key: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })

describe('Interactions google_search on other vendors, citations as url_citation annotations', () => {
	for (const model of [MODEL.anthropic, MODEL.gemini, SEARCHER])
		it(`should annotate ${model}'s cited text in UTF-8 bytes, whole and streamed alike`, async () => {
			const acct = await m.account()
			const ai = genai(acct.key)
			const params = { model, input: ASK, tools: [{ type: 'google_search' }] }
			const whole = (await ai.interactions.create(params as never)) as unknown as { id: string; steps: unknown[] }
			const annotation = { type: 'url_citation', ...SOURCE[model], start_index: bytes(LEAD), end_index: bytes(ANSWER) }
			expect(whole.steps).toEqual([{ type: 'model_output', content: [{ type: 'text', text: ANSWER, annotations: [annotation] }] }])
			// The annotated bytes are the cited words, as a client slicing the UTF-8 text finds them.
			expect(Buffer.from(ANSWER).subarray(annotation.start_index, annotation.end_index).toString()).toBe(ANSWER.slice(LEAD.length))

			const events: Event[] = []
			for await (const e of (await ai.interactions.create({ ...params, stream: true } as never)) as unknown as AsyncIterable<Event>) events.push(e)
			expect(events.filter((e) => e.event_type === 'step.start').map((e) => e.index)).toEqual([0])
			expect(events.filter((e) => e.event_type === 'step.delta' && e.delta?.type === 'text').map((e) => e.delta!.text).join('')).toBe(ANSWER)
			expect(events.filter((e) => e.delta?.type === 'text_annotation_delta').map((e) => [e.index, e.delta!.annotations])).toEqual([[0, [annotation]]])
			const kept = (await ai.interactions.get(events[0]!.interaction!.id)) as unknown as { steps: unknown[] }
			expect(kept.steps.slice(1)).toEqual(whole.steps) // after the user_input step
			// Its events made again from the kept interaction (GET ?stream=true) carry the annotations as the live stream did.
			const replay = await fetch(`${m.app.url}/v1beta/interactions/${whole.id}?stream=true`, { headers: { 'x-goog-api-key': acct.key } })
			const replayed = (await replay.text()).split('\n').flatMap((l) => (l.startsWith('data: {') ? [JSON.parse(l.slice(6)) as Event] : []))
			expect(replayed.filter((e) => e.delta?.type === 'text_annotation_delta').map((e) => [e.index, e.delta!.annotations])).toEqual([[0, [annotation]]])
			// Billed as the search it ran, once per answer, whole and streamed.
			const rows = await usageRows(m, acct.accountId)
			expect(rows.map((r) => Math.round(r.cost * 1e6))).toEqual(rows.map((r) => costMicros({ model, input: r.input_tokens, output: r.output_tokens }) + SEARCH_COST[model]!))
			expect(rows).toHaveLength(2)
		})

	for (const stream of [false, true])
		it(`should give @ai-sdk/google's google.interactions the cited pages as sources (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const google = createGoogleGenerativeAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1beta` })
			const params = { model: google.interactions(MODEL.anthropic), prompt: ASK, tools: { google_search: google.tools.googleSearch({}) }, maxRetries: 0 }
			const r = stream ? streamText(params) : await generateText(params)
			expect(await r.text).toBe(ANSWER)
			expect((await r.sources).map((s) => (s.sourceType === 'url' ? { url: s.url, title: s.title } : s))).toEqual([SOURCE[MODEL.anthropic]])
		})
})
