import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI, { toFile } from 'openai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { wavFile } from '../../unit/audio/audio-files'
import { micros, priceList, usageOf } from './helpers'

let oa: VendorMock
let app: TestApp

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	app = await startTestApp({
		config: {
			channels: [{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['whisper-1', 'translator'], model_map: { translator: 'whisper-1' } }],
			models: priceList([
				{ name: 'whisper-1', per_minute: 0.006 },
				{ name: 'translator', per_minute: 0.006 },
			]),
		},
		env: { MAX_UPLOAD_BYTES: String(2 * 1024 * 1024) },
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await oa.stop()
})

describe('POST /v1/audio/translations', () => {
	it('should forward the form unchanged to the upstream translations endpoint and bill the duration per minute', async () => {
		const { key, accountId } = await app.account(1)
		oa.reset()
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		const r = await openai.audio.translations.create({ file: await toFile(wavFile(30), 'interview.wav', { type: 'audio/wav' }), model: 'whisper-1', prompt: 'An interview.', temperature: 0.3 })
		expect(r).toEqual({ text: 'Translation of interview.wav.' })
		expect(oa.requests[0]!.path).toBe('/v1/audio/translations')
		const sent = oa.requests[0]!.body as Record<string, unknown>
		expect(sent.file).toMatchObject({ filename: 'interview.wav', size: wavFile(30).length })
		expect(sent).toMatchObject({ model: 'whisper-1', prompt: 'An interview.', temperature: '0.3', response_format: 'json' })
		// 30 s (from the WAV header: OpenAI's json translation reports no duration) at $0.006/min = $0.003
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 3000)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ model: 'whisper-1', endpoint: '/v1/audio/translations', cost: 0.003, status: 200, estimated: false })
	})

	it('should forward a prompt that looks like JSON as the text it is', async () => {
		const { key } = await app.account(1)
		oa.reset()
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		const prompt = '["Kubernetes", "kubectl", "etcd"]'
		await openai.audio.translations.create({ file: await toFile(wavFile(5), 'talk.wav'), model: 'whisper-1', prompt })
		expect((oa.requests[0]!.body as Record<string, unknown>).prompt).toBe(prompt)
	})

	it('should answer text as text and bill srt/vtt by their last cue', async () => {
		const { key, accountId } = await app.account(1)
		oa.reset()
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		const text = await openai.audio.translations.create({ file: await toFile(wavFile(10), 'a.wav'), model: 'whisper-1', response_format: 'text' })
		expect(String(text)).toBe('Translation of a.wav.\n')
		expect((oa.requests[0]!.body as { response_format: string }).response_format).toBe('json')
		const srt = await openai.audio.translations.create({ file: await toFile(wavFile(20), 'b.wav'), model: 'whisper-1', response_format: 'srt' })
		expect(String(srt)).toContain('00:00:00,000 --> 00:00:20,000')
		const vtt = await openai.audio.translations.create({ file: await toFile(wavFile(20), 'b.wav'), model: 'whisper-1', response_format: 'vtt' })
		expect(String(vtt)).toStartWith('WEBVTT')
		// 10 s + 20 s + 20 s at $0.006/min
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 1000 - 2000 - 2000)
	})

	it('should bill verbose_json by the duration the upstream reports, under the model name the client asked for', async () => {
		const { key, accountId } = await app.account(1)
		oa.reset()
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		// Not a format the gateway reads: only the upstream's figure (160,000 B at the mock's 16,000 B/s = 10 s) is exact.
		const r = await openai.audio.translations.create({ file: await toFile(new Uint8Array(160_000).fill(7), 'voice.amr'), model: 'translator', response_format: 'verbose_json' })
		expect(r).toMatchObject({ language: 'english', duration: 10, text: 'Translation of voice.amr.' })
		expect((oa.requests[0]!.body as { model: string }).model).toBe('whisper-1')
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 1000)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ model: 'translator', endpoint: '/v1/audio/translations', estimated: false })
	})

	it('should answer 413 past the upload limit and 400 for a bad response_format, without calling the upstream', async () => {
		const { key, accountId } = await app.account(1)
		oa.reset()
		const big = new FormData()
		big.append('file', new File([wavFile(70)], 'big.wav'))
		big.append('model', 'whisper-1')
		const a = await fetch(`${app.url}/v1/audio/translations`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: big })
		expect(a.status).toBe(413)
		const bad = new FormData()
		bad.append('file', new File([wavFile(1)], 'a.wav'))
		bad.append('model', 'whisper-1')
		bad.append('response_format', 'diarized_json')
		const b = await fetch(`${app.url}/v1/audio/translations`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: bad })
		expect(b.status).toBe(400)
		expect(((await b.json()) as { error: { param?: string; message: string } }).error.message).toContain('response_format')
		expect(oa.requests).toHaveLength(0)
		expect(await app.balance(accountId)).toBe(1)
	})
})
