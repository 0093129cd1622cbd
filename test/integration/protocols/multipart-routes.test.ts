/**
 * Multipart bodies (QA non-chat endpoints, items 6 and 10): only the upload routes take them, held to MAX_UPLOAD_BYTES;
 * a JSON route sent one answers 415 in the caller's shape before anything is parsed, called or charged, so
 * MAX_JSON_BYTES cannot be passed by sending JSON fields as a form. A multipart body that cannot be parsed is named
 * as such, not as JSON.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { priceList, usageOf } from '../surface/helpers'
import { wavBytes as wav } from '../../helpers/wav'

const JSON_LIMIT = 8 * 1024
const UPLOAD_LIMIT = 64 * 1024

let app: TestApp
let oa: VendorMock
let key: string
let accountId: number

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	app = await startTestApp({
		env: { MAX_JSON_BYTES: String(JSON_LIMIT), MAX_UPLOAD_BYTES: String(UPLOAD_LIMIT) },
		config: {
			channels: [{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['text-embedding-3-small', 'whisper-1', 'gpt-4o-mini'] }],
			models: priceList([
				{ name: 'text-embedding-3-small', input_per_mtok: 0.02, output_per_mtok: 0 },
				{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 },
				{ name: 'whisper-1', per_minute: 0.006 },
			]),
		},
	})
	;({ key, accountId } = await app.account(1))
}, 60_000)
afterAll(async () => {
	await app.close()
	await oa.stop()
})

async function post(path: string, body: BodyInit, headers: Record<string, string> = {}) {
	const res = await fetch(app.url + path, { method: 'POST', headers: { authorization: `Bearer ${key}`, ...headers }, body })
	return { status: res.status, body: (await res.json()) as any }
}

describe('multipart bodies', () => {
	it('should answer 415 to a JSON route sent multipart, over the JSON limit or not, calling and charging nothing', async () => {
		oa.reset()
		for (const size of [JSON_LIMIT * 4, 10]) {
			const form = new FormData()
			form.append('model', 'text-embedding-3-small')
			form.append('input', 'x'.repeat(size))
			const r = await post('/v1/embeddings', form)
			expect(r.status).toBe(415)
			expect(r.body.error).toMatchObject({ code: 'unsupported_media_type' })
			expect(r.body.error.message).toContain('multipart/form-data')
		}
		expect(oa.requests).toHaveLength(0)
		expect(await usageOf(app, accountId)).toEqual([])
	})

	it("should answer the 415 in the caller's shape", async () => {
		const form = () => {
			const f = new FormData()
			f.append('model', 'gpt-4o-mini')
			return f
		}
		const messages = await post('/v1/messages', form(), { 'anthropic-version': '2023-06-01' })
		expect(messages.status).toBe(415)
		expect(messages.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
		const gemini = await post('/v1beta/models/gpt-4o-mini:generateContent', form())
		expect(gemini.status).toBe(415)
		expect(gemini.body.error).toMatchObject({ code: 415 })
	})

	it('should take an upload past the JSON limit on an upload route, up to the upload limit', async () => {
		const form = new FormData()
		form.append('model', 'whisper-1')
		form.append('file', new Blob([wav(JSON_LIMIT * 2)], { type: 'audio/wav' }), 'a.wav')
		const r = await post('/v1/audio/transcriptions', form)
		expect(r.status).toBe(200)
		expect(r.body.text).toContain('a.wav')
		const big = new FormData()
		big.append('model', 'whisper-1')
		big.append('file', new Blob([wav(UPLOAD_LIMIT)], { type: 'audio/wav' }), 'a.wav')
		expect((await post('/v1/audio/transcriptions', big)).status).toBe(413)
	})

	it('should name the multipart body, not JSON, when it cannot be parsed', async () => {
		const bad = await post('/v1/audio/transcriptions', '--XYZ\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1', { 'content-type': 'multipart/form-data; boundary=XYZ' })
		expect(bad.status).toBe(400)
		expect(bad.body.error.message).toBe('Malformed request body: not valid multipart/form-data')
		const none = await post('/v1/audio/transcriptions', 'model=whisper-1', { 'content-type': 'multipart/form-data' })
		expect(none.status).toBe(400)
		expect(none.body.error.message).toBe('Malformed request body: multipart/form-data without a boundary parameter in its content-type')
		const json = await post('/v1/embeddings', '{"model":', { 'content-type': 'application/json' })
		expect(json.status).toBe(400)
		expect(json.body.error).toMatchObject({ message: 'Malformed request body: not valid JSON', code: 'invalid_json' })
	})
})
