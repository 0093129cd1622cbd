/**
 * OpenAI's JSON mode needs the word: "'messages' must contain the word 'json' in some form, to use 'response_format'
 * of type 'json_object'" (400; the Responses API says the same of its input). A Gemini client's
 * `responseMimeType: application/json` without a schema is JSON mode and needs no such word: an OpenAI model gets the
 * instruction added. An OpenAI client's own request goes as written, for the vendor to judge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import { type Account, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, UPSTREAM_MODEL } from './harness'

const RESP = 'gpt-resp'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		models: [{ name: RESP, input_per_mtok: 1, output_per_mtok: 2 }],
		channels: (mocks) => [
			{ name: 'openai-responses', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: [RESP], model_map: { [RESP]: UPSTREAM_MODEL.openai }, settings: { responses_api: true } },
		],
	})
}, SETUP_MS)
afterAll(() => m.close())

const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
const config = { responseMimeType: 'application/json' }

describe('JSON mode from a Gemini client to OpenAI models', () => {
	for (const stream of [false, true])
		for (const [model, api] of [
			[MODEL.openai, 'chat completions'],
			[RESP, 'Responses, searching the web'],
		] as const)
			it(`should answer JSON, the instruction asking for it added (${api}, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				const ai = genai(acct)
				// A converted request reaches OpenAI's Responses API when it searches the web (providers/openai.ts).
				const params = { model, contents: 'pick a city', config: model === RESP ? { ...config, tools: [{ googleSearch: {} }] } : config }
				let text = ''
				if (stream) for await (const c of await ai.models.generateContentStream(params)) text += c.text ?? ''
				else text = (await ai.models.generateContent(params)).text ?? ''
				expect(JSON.parse(text)).toEqual({})
				const b = lastRequest(m.mocks.openai).body
				if (model === RESP) {
					expect(b.text.format).toEqual({ type: 'json_object' })
					expect(b.instructions).toContain('JSON')
				} else {
					expect(b.response_format).toEqual({ type: 'json_object' })
					expect(b.messages[0]).toEqual({ role: 'system', content: expect.stringContaining('JSON') })
				}
				expect(await m.app.balance(acct.accountId)).toBeLessThan(acct.balance)
			})

	it('should add nothing when the conversation already asks for JSON', async () => {
		const acct = await m.account()
		const r = await genai(acct).models.generateContent({ model: MODEL.openai, contents: 'pick a city, as json', config: { ...config, systemInstruction: 'Be brief.' } })
		expect(JSON.parse(r.text ?? '')).toEqual({})
		expect(lastRequest(m.mocks.openai).body.messages).toEqual([
			{ role: 'system', content: 'Be brief.' },
			{ role: 'user', content: 'pick a city, as json' },
		])
	})

	it("should pass an OpenAI client's JSON mode as written, the vendor's 400 reaching it", async () => {
		const acct = await m.account()
		const err = await acct.openai.chat.completions
			.create({ model: MODEL.openai, messages: [{ role: 'user', content: 'pick a city' }], response_format: { type: 'json_object' } })
			.catch((e: unknown) => e)
		expect(err).toBeInstanceOf(OpenAI.BadRequestError)
		expect((err as InstanceType<typeof OpenAI.BadRequestError>).message).toContain("must contain the word 'json'")
		expect(lastRequest(m.mocks.openai).body.messages).toEqual([{ role: 'user', content: 'pick a city' }])
		expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
	})
})
