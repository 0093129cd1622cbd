/**
 * Thinking and sampling settings of other protocols' clients sent to Claude's newer generations, through the official
 * SDKs against the Anthropic mock, which answers as Anthropic documents (platform.claude.com/docs/en/about-claude/models/
 * migration-guide#migrating-to-claude-opus-4-7): Claude Opus 4.7 and later refuse a thinking budget ("thinking.type.enabled
 * is not supported for this model") and sampling settings ("`temperature` is deprecated for this model."); Claude Fable
 * and Opus 5.5 always think and refuse `thinking: {type: 'disabled'}`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import { chat } from './clients'
import { lastRequest, type Matrix, SETUP_MS, startMatrix } from './harness'

/** Gateway names of a Claude that takes adaptive thinking only, and of one that always thinks. */
const ADAPTIVE = 'claude-adaptive'
const ALWAYS = 'claude-always'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		models: [ADAPTIVE, ALWAYS].map((name) => ({ name, input_per_mtok: 5, output_per_mtok: 25 })),
		channels: (mocks) => [
			{
				name: 'claude-new',
				type: 'anthropic',
				base_url: mocks.anthropic.url,
				api_key: 'up-anthropic',
				models: [ADAPTIVE, ALWAYS],
				model_map: { [ADAPTIVE]: 'claude-opus-4-7', [ALWAYS]: 'claude-fable-5-1' },
			},
		],
	})
}, SETUP_MS)
afterAll(() => m.close())

const say = (text: string) => [{ role: 'user' as const, content: text }]
const answer = (text: string) => `Hello! You said: ${text}`
const thought = (text: string) => `Let me think about ${text}.`

describe('Claude Opus 4.7 and later from other protocols', () => {
	for (const stream of [false, true])
		it(`should ask an OpenAI client's reasoning effort as adaptive thinking with that effort, leaving out its temperature (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const a = await chat(acct.openai, { model: ADAPTIVE, messages: say('adaptive'), reasoning_effort: 'high', temperature: 0.3, max_completion_tokens: 8000 }, stream)
			expect(a.text).toBe(answer('adaptive'))
			expect(a.reasoning).toBe(thought('adaptive'))
			const sent = lastRequest(m.mocks.anthropic).body
			expect(sent.model).toBe('claude-opus-4-7')
			expect([sent.thinking, sent.output_config, sent.temperature, sent.max_tokens]).toEqual([{ type: 'adaptive' }, { effort: 'high' }, undefined, 8000])
		})

	it("should ask a Gemini client's thinking budget as the effort it stands for, leaving out its temperature and topP", async () => {
		const acct = await m.account()
		const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
		const r = await ai.models.generateContent({
			model: ADAPTIVE,
			contents: 'budget',
			config: { temperature: 0.5, topP: 0.8, maxOutputTokens: 9000, thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } },
		})
		expect(r.text).toBe(answer('budget'))
		const sent = lastRequest(m.mocks.anthropic).body
		expect([sent.thinking, sent.output_config, sent.temperature, sent.top_p]).toEqual([{ type: 'adaptive' }, { effort: 'low' }, undefined, undefined])
	})

	it("should leave thinking to a model that always thinks when an OpenAI client turns reasoning off, rather than have it refused", async () => {
		const acct = await m.account()
		const a = await chat(acct.openai, { model: ALWAYS, messages: say('always on'), reasoning_effort: 'none' as 'low' }, false)
		expect(a.text).toBe(answer('always on'))
		const sent = lastRequest(m.mocks.anthropic).body
		expect(sent.model).toBe('claude-fable-5-1')
		expect(sent.thinking).toBeUndefined()
	})
})
