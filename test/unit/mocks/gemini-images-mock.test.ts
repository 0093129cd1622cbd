/** The Gemini mock's image making: image models' IMAGE output from generateContent, and Imagen's :predict refusals. */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI, Modality } from '@google/genai'
import { startGeminiMock, type VendorMock } from '../../mocks'
import { IMAGE_BYTES } from '../../mocks/gemini/predict'

let m: VendorMock
let ai: GoogleGenAI

beforeAll(async () => {
	m = await startGeminiMock({ apiKey: 'up-key' })
	ai = new GoogleGenAI({ apiKey: 'up-key', httpOptions: { baseUrl: m.url, retryOptions: { attempts: 1 } } })
})
afterAll(() => m.stop())

const post = async (model: string, method: string, body: unknown) => {
	const res = await fetch(`${m.url}/v1beta/models/${model}:${method}`, { method: 'POST', headers: { 'x-goog-api-key': 'up-key', 'content-type': 'application/json' }, body: JSON.stringify(body) })
	return { status: res.status, body: (await res.json()) as any }
}
const imageCall = (model: string, generationConfig: Record<string, unknown>, text = 'a fox') => post(model, 'generateContent', { contents: [{ role: 'user', parts: [{ text }] }], generationConfig })

describe('gemini mock: image models', () => {
	it('should answer an inlineData image with its IMAGE tokens, as @google/genai reads it', async () => {
		const r = await ai.models.generateContent({ model: 'gemini-2.5-flash-image', contents: 'a red fox', config: { responseModalities: [Modality.IMAGE] } })
		const part = r.candidates?.[0]?.content?.parts?.[0]
		expect(part?.inlineData?.mimeType).toBe('image/png')
		expect(new Uint8Array(Buffer.from(part?.inlineData?.data ?? '', 'base64'))).toEqual(new Uint8Array(IMAGE_BYTES))
		expect(r.usageMetadata).toMatchObject({ promptTokenCount: 3, candidatesTokenCount: 1290, candidatesTokensDetails: [{ modality: 'IMAGE', tokenCount: 1290 }] })
	})

	it('should think on Gemini 3 (a draft thought image only with includeThoughts) and count 2000 tokens for a 4K image', async () => {
		const r = await imageCall('gemini-3-pro-image-preview', { responseModalities: ['IMAGE'], imageConfig: { imageSize: '4K' }, thinkingConfig: { includeThoughts: true } })
		expect(r.status).toBe(200)
		const parts = r.body.candidates[0].content.parts
		expect(parts.map((p: { thought?: boolean }) => p.thought === true)).toEqual([true, false])
		expect(r.body.usageMetadata).toMatchObject({ candidatesTokenCount: 2000, thoughtsTokenCount: 200 })
	})

	it('should refuse candidateCount over 1, an unknown aspect ratio and an imageSize the model lacks; #noimage makes none', async () => {
		const many = await imageCall('gemini-2.5-flash-image', { responseModalities: ['IMAGE'], candidateCount: 2 })
		expect([many.status, many.body.error.message]).toEqual([400, 'Multiple candidates is not enabled for models/gemini-2.5-flash-image'])
		expect((await imageCall('gemini-2.5-flash-image', { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '7:3' } })).status).toBe(400)
		expect((await imageCall('gemini-2.5-flash-image', { responseModalities: ['IMAGE'], imageConfig: { imageSize: '2K' } })).status).toBe(400)
		const none = await imageCall('gemini-2.5-flash-image', { responseModalities: ['IMAGE'] }, 'a fox #noimage')
		expect(none.body.candidates[0]).toEqual({ finishReason: 'IMAGE_SAFETY', index: 0 })
	})
})

describe('gemini mock: Imagen :predict', () => {
	it('should refuse an aspect ratio Imagen lacks, and imageSize on Imagen 4 Fast or beyond 2K', async () => {
		const predict = (model: string, parameters: Record<string, unknown>) => post(model, 'predict', { instances: [{ prompt: 'a fox' }], parameters })
		expect((await predict('imagen-4.0-generate-001', { sampleCount: 1, aspectRatio: '3:2' })).status).toBe(400)
		expect((await predict('imagen-4.0-fast-generate-001', { sampleCount: 1, imageSize: '2K' })).status).toBe(400)
		expect((await predict('imagen-4.0-generate-001', { sampleCount: 1, imageSize: '4K' })).status).toBe(400)
		const ok = await predict('imagen-4.0-generate-001', { sampleCount: 1, aspectRatio: '16:9', imageSize: '2K' })
		expect([ok.status, ok.body.predictions.length]).toEqual([200, 1])
		const two = await predict('imagen-4.0-generate-001', { sampleCount: 2, includeRaiReason: true })
		expect(two.body.predictions).toHaveLength(2)
		const withheld = await post('imagen-4.0-generate-001', 'predict', { instances: [{ prompt: 'a crowd #filterall' }], parameters: { sampleCount: 2 } })
		expect(withheld.body).toEqual({ predictions: [] })
	})
})
