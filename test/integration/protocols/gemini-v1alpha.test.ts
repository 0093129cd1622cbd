/**
 * @google/genai set to `apiVersion: 'v1alpha'` (what Google's guides set for experimental fields, such as per-part
 * `mediaResolution` on Gemini 3) is served as v1beta: the model methods for every vendor's model, a Gemini model's
 * request reaching the vendor's v1beta API as sent, and refusals in Gemini's error shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI, MediaResolution } from '@google/genai'
import { lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const alpha = (apiKey: string) => new GoogleGenAI({ apiKey, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1alpha' } })
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII='

describe('Gemini v1alpha', () => {
	it("should answer a Gemini model's generateContent, the per-part media resolution reaching the vendor's v1beta API", async () => {
		const acct = await m.account()
		const r = await alpha(acct.key).models.generateContent({
			model: MODEL.gemini,
			contents: [{ role: 'user', parts: [{ text: 'describe the pixel' }, { inlineData: { mimeType: 'image/png', data: PIXEL }, mediaResolution: { level: 'MEDIA_RESOLUTION_HIGH' } } as never] }],
			config: { mediaResolution: MediaResolution.MEDIA_RESOLUTION_LOW },
		})
		expect(r.text).toContain('describe the pixel')
		const sent = lastRequest(m.mocks.gemini)
		expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent')
		expect(sent.body.contents[0].parts[1].mediaResolution).toEqual({ level: 'MEDIA_RESOLUTION_HIGH' })
	})

	for (const up of ['openai', 'anthropic'] as const)
		it(`should stream a converted ${up} model and count its tokens`, async () => {
			const ai = alpha((await m.account()).key)
			let text = ''
			for await (const chunk of await ai.models.generateContentStream({ model: MODEL[up], contents: 'stream through alpha' })) text += chunk.text ?? ''
			expect(text).toContain('stream through alpha')
			const counted = await ai.models.countTokens({ model: MODEL[up], contents: 'count these words' })
			expect(counted.totalTokens).toBeGreaterThan(0)
		})

	it("should refuse a bad key and an unknown model in Gemini's error shape", async () => {
		const bad = await fetch(`${m.app.url}/v1alpha/models/${MODEL.gemini}:generateContent?key=sk-wrong`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ contents: [{ parts: [{ text: 'hi' }] }] }),
		})
		expect(bad.status).toBe(400)
		const badError = (await bad.json()).error
		expect(badError.status).toBe('INVALID_ARGUMENT')
		expect(badError.details[0].reason).toBe('API_KEY_INVALID')
		const acct = await m.account()
		const unknown = await alpha(acct.key)
			.models.generateContent({ model: 'no-such-model', contents: 'hi' })
			.then(() => undefined, (e: Error & { status?: number }) => e)
		expect(unknown?.status).toBe(404)
	})
})
