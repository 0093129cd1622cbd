/**
 * What a `@google/genai` caller asks Gemini to answer in, that no other vendor's chat API can give back through the
 * conversion: spoken audio (`responseModalities: ['AUDIO']`, `speechConfig`), generated images
 * (`responseModalities: [..., 'IMAGE']`) and a bare enum value (`responseMimeType: 'text/x.enum'`;
 * https://ai.google.dev/gemini-api/docs/structured-output#generating-enums). For a model another vendor serves they
 * were dropped, and the caller got plain text with a 200 and was charged for it; like Gemini's built-in tools they
 * are now refused with a 400 naming the field before anything is sent or charged (WIRE-NOTES #8), and still reach
 * Gemini as written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ApiError, type GenerateContentConfig, GoogleGenAI, Modality, Type } from '@google/genai'
import { type Account, lastRequest, type Matrix, MODEL, PAIRS, SETUP_MS, startMatrix } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })

const CASES: Array<[string, GenerateContentConfig, string]> = [
	['spoken audio', { responseModalities: [Modality.AUDIO], speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Kore' } } } }, 'generationConfig.responseModalities'],
	['a voice alone', { speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Kore' } } } }, 'generationConfig.speechConfig'],
	['an image', { responseModalities: [Modality.TEXT, Modality.IMAGE] }, 'generationConfig.responseModalities'],
	['an enum value', { responseMimeType: 'text/x.enum', responseSchema: { type: Type.STRING, enum: ['drums', 'guitar'] } }, 'generationConfig.responseMimeType'],
]

async function generate(ai: GoogleGenAI, model: string, config: GenerateContentConfig, stream: boolean) {
	const params = { model, contents: 'which instrument?', config }
	if (!stream) return ai.models.generateContent(params)
	const chunks = []
	for await (const c of await ai.models.generateContentStream(params)) chunks.push(c)
	return chunks.at(-1)
}

describe('@google/genai output kinds only Gemini gives', () => {
	for (const [up, stream] of PAIRS)
		for (const [what, config, field] of CASES) {
			const mode = stream ? 'generateContentStream' : 'generateContent'
			if (up === 'gemini') {
				it(`should pass ${what} to Gemini as written (${mode})`, async () => {
					const acct = await m.account()
					await generate(genai(acct), MODEL[up], config, stream)
					const cfg = lastRequest(m.mocks.gemini).body.generationConfig
					const key = field.split('.')[1]!
					expect(cfg[key]).toEqual((config as Record<string, unknown>)[key])
				})
				continue
			}
			it(`should refuse ${what} with a 400 naming ${field} rather than answer text (${up} upstream, ${mode})`, async () => {
				const acct = await m.account()
				const before = m.mocks[up].requests.length
				const err = await generate(genai(acct), MODEL[up], config, stream).catch((e: unknown) => e)
				expect(err).toBeInstanceOf(ApiError)
				expect((err as ApiError).status).toBe(400)
				const { error } = JSON.parse((err as ApiError).message.slice((err as ApiError).message.indexOf('{'))) as { error: { status: string; message: string } }
				expect(error.status).toBe('INVALID_ARGUMENT')
				expect(error.message).toContain(field)
				expect(error.message).toContain(MODEL[up])
				expect(m.mocks[up].requests.length).toBe(before)
				expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
			})
		}

	it('should still answer a model of another vendor asked for text only, or for JSON', async () => {
		const acct = await m.account()
		for (const up of ['openai', 'anthropic'] as const) {
			const text = await genai(acct).models.generateContent({ model: MODEL[up], contents: 'hello', config: { responseModalities: [Modality.TEXT], responseMimeType: 'text/plain' } })
			expect(text.text).toBe('Hello! You said: hello')
			const json = await genai(acct).models.generateContent({ model: MODEL[up], contents: 'hello', config: { responseMimeType: 'application/json', responseSchema: { type: Type.OBJECT, properties: { word: { type: Type.STRING } } } } })
			expect(JSON.parse(json.text ?? '')).toEqual({ word: 'hello' })
		}
	})
})
