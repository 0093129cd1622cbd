/**
 * Thinking another protocol's client asks of a Gemini 3 model goes as its thinking level, through the official OpenAI
 * SDK against the Gemini mock, which answers as Google documents (ai.google.dev/gemini-api/docs/thinking): Gemini 3 Pro
 * takes the levels low and high, cannot turn thinking off (a budget of 0 is refused), and a level beside a budget is a 400.
 * The other way, a Gemini client's level reaches an OpenAI reasoning model as the nearest effort it takes (o4-mini
 * refuses minimal: "Unsupported value: 'minimal' is not supported with the 'o4-mini' model.").
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI, ThinkingLevel } from '@google/genai'
import { chat } from './clients'
import { GEMINI_3, lastRequest, type Matrix, SETUP_MS, startMatrixWithGemini3, THINKER, THINKER_UPSTREAM } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrixWithGemini3()
}, SETUP_MS)
afterAll(() => m.close())

const say = (text: string) => [{ role: 'user' as const, content: text }]
const thinkingConfig = () => lastRequest(m.mocks.gemini).body.generationConfig?.thinkingConfig

describe('reasoning to Gemini 3 Pro from an OpenAI client', () => {
	for (const stream of [false, true])
		it(`should send a reasoning effort as the nearest level Gemini 3 Pro takes (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const a = await chat(acct.openai, { model: GEMINI_3, messages: say('medium effort'), reasoning_effort: 'medium' }, stream)
			expect(a.text).toContain('medium effort')
			expect(thinkingConfig()).toEqual({ includeThoughts: true, thinkingLevel: 'HIGH' })
		})

	it('should answer reasoning_effort none at the lowest level rather than a budget of 0 Gemini 3 Pro refuses', async () => {
		const acct = await m.account()
		const a = await chat(acct.openai, { model: GEMINI_3, messages: say('no effort'), reasoning_effort: 'none' as 'low' }, false)
		expect(a.text).toContain('no effort')
		expect(thinkingConfig()).toEqual({ thinkingLevel: 'LOW' })
	})
})

describe('a Gemini client’s thinking level to an OpenAI reasoning model', () => {
	it('should send MINIMAL to o4-mini as low, the least effort it takes', async () => {
		const acct = await m.account()
		const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
		const r = await ai.models.generateContent({ model: THINKER.openai, contents: 'minimal thought', config: { thinkingConfig: { thinkingLevel: ThinkingLevel.MINIMAL } } })
		expect(r.text).toContain('minimal thought')
		const sent = lastRequest(m.mocks.openai).body
		expect([sent.model, sent.reasoning_effort]).toEqual([THINKER_UPSTREAM, 'low'])
	})
})
