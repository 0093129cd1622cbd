import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI, { toFile } from 'openai'
import type { TranscriptionDiarized, TranscriptionStreamEvent } from 'openai/resources/audio/transcriptions'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { transcriptionOp } from '../../../src/modules/audio/transcriptions'
import { micros, priceList, usageOf } from './helpers'
import { mp3Cbr } from '../../unit/audio/audio-files'
import { wav } from '../../helpers/wav'

let oa: VendorMock
let slow: VendorMock
let app: TestApp
const config = (url: string, slowUrl: string) => ({
	channels: [
		{ name: 'oa', type: 'openai' as const, base_url: url, api_key: 'up-oa', models: ['whisper-1', 'gpt-4o-transcribe', 'tts-1', 'whisper-large-v3', 'gpt-4o-transcribe-diarize'] },
		{ name: 'slow', type: 'openai' as const, base_url: slowUrl, api_key: 'up-oa', models: ['tts-slow'], model_map: { 'tts-slow': 'tts-1' } },
	],
	models: priceList([
		{ name: 'whisper-1', per_minute: 0.006 },
		{ name: 'gpt-4o-transcribe', input_per_mtok: 2.5, output_per_mtok: 10 },
		{ name: 'gpt-4o-transcribe-diarize', input_per_mtok: 2.5, output_per_mtok: 10 },
		// Served as Groq serves it: `json` without usage or duration.
		{ name: 'whisper-large-v3', per_minute: 0.006 },
		{ name: 'tts-1', per_mchar: 15 },
		{ name: 'tts-slow', per_mchar: 15 },
	]),
})

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	slow = await startOpenAIMock({ apiKey: 'up-oa', chunkDelayMs: 60 })
	app = await startTestApp({ config: config(oa.url, slow.url), env: { MAX_UPLOAD_BYTES: String(2 * 1024 * 1024) } })
}, 30_000)

afterAll(async () => {
	await app.close()
	await oa.stop()
	await slow.stop()
})

/** The account's usage rows once `n` are written (a streamed answer is settled after its body ends). */
async function waitForRows(accountId: number, n: number) {
	for (let i = 0; i < 100; i++) {
		const rows = await usageOf(app, accountId)
		if (rows.length >= n) return rows
		await Bun.sleep(20)
	}
	return usageOf(app, accountId)
}

describe('POST /v1/audio/transcriptions', () => {
	it('should forward the file unchanged and bill verbose_json duration per minute', async () => {
		const { key, accountId } = await app.account(1)
		oa.reset()
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		const r = await openai.audio.transcriptions.create({ file: await toFile(wav(30), 'meeting.wav', { type: 'audio/wav' }), model: 'whisper-1', response_format: 'verbose_json', language: 'en', temperature: 0.2 })
		expect(r.text).toBe('Transcript of meeting.wav.')
		expect(r.duration).toBe(30)
		const sent = oa.requests[0]!.body as Record<string, unknown>
		expect(sent.file).toMatchObject({ filename: 'meeting.wav', size: 44 + 30 * 32000 })
		expect(sent).toMatchObject({ model: 'whisper-1', response_format: 'verbose_json', language: 'en', temperature: '0.2' })
		expect(oa.requests[0]!.headers.authorization).toBe('Bearer up-oa')
		// 30 s at $0.006/min = $0.003
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 3000)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ endpoint: '/v1/audio/transcriptions', cost: 0.003, estimated: false })
	})

	it('should answer text as text, asking the upstream for json (which carries the duration)', async () => {
		const { key, accountId } = await app.account(1)
		oa.reset()
		const form = new FormData()
		form.append('file', new File([wav(12)], 'a.wav', { type: 'audio/wav' }))
		form.append('model', 'whisper-1')
		form.append('response_format', 'text')
		const res = await fetch(`${app.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form })
		expect(res.status).toBe(200)
		expect(res.headers.get('content-type')).toContain('text/plain')
		expect(await res.text()).toBe('Transcript of a.wav.\n')
		expect((oa.requests[0]!.body as { response_format: string }).response_format).toBe('json')
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 1200)
	})

	it('should answer srt and vtt as the upstream wrote them, billing the last cue', async () => {
		const { key, accountId } = await app.account(1)
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		const srt = await openai.audio.transcriptions.create({ file: await toFile(wav(20), 'b.wav'), model: 'whisper-1', response_format: 'srt' })
		expect(String(srt)).toContain('00:00:00,000 --> 00:00:20,000')
		const vtt = await openai.audio.transcriptions.create({ file: await toFile(wav(20), 'b.wav'), model: 'whisper-1', response_format: 'vtt' })
		expect(String(vtt)).toStartWith('WEBVTT')
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 2 * 2000)
	})

	it('should price a token-billed model by the usage tokens', async () => {
		const { key, accountId } = await app.account(1)
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		const r = await openai.audio.transcriptions.create({ file: await toFile(wav(30), 'c.wav'), model: 'gpt-4o-transcribe' })
		expect(r.text).toBe('Transcript of c.wav.')
		// 300 audio tokens × $2.5/M + 3 text tokens × $10/M = 750 + 30 micro-USD
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 780)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ input_tokens: 300, output_tokens: 3 })
	})

	it('should charge an MP3 by the duration its frames give when the upstream reports none (not the 16 kbit/s bound)', async () => {
		const { key, accountId, tokenId } = await app.account(1)
		oa.reset()
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		// 60 s at 128 kbit/s: 960,000 bytes, which the hold's bound (2,000 B/s) would take for 8 minutes.
		const mp3 = mp3Cbr(60)
		const r = await openai.audio.transcriptions.create({ file: await toFile(mp3, 'talk.mp3', { type: 'audio/mpeg' }), model: 'whisper-large-v3' })
		expect(r.text).toBe('Transcript of talk.mp3.')
		expect(r).not.toHaveProperty('usage')
		const form = oa.requests[0]!.form!
		expect(form.get('response_format')).toBe('json')
		expect(new Uint8Array(await (form.get('file') as File).arrayBuffer())).toEqual(mp3)
		// 60 s at $0.006/min = $0.006, read from the file: not estimated.
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 6000)
		const rows = await usageOf(app, accountId)
		expect(rows).toHaveLength(1)
		expect(rows[0]).toMatchObject({ model: 'whisper-large-v3', cost: 0.006, estimated: false, end_reason: 'ok' })
		expect((await app.admin(`/api/tokens/${tokenId}`)).body.reserved).toBe(0)
	})

	it('should charge a WAV by its header when the upstream reports no duration', async () => {
		const { key, accountId } = await app.account(1)
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		await openai.audio.transcriptions.create({ file: await toFile(wav(3), 'short.wav', { type: 'audio/wav' }), model: 'whisper-large-v3' })
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 300)
		expect((await usageOf(app, accountId))[0]).toMatchObject({ cost: 0.0003, estimated: false })
	})

	it('should charge a file it cannot read at 128 kbit/s and mark the row estimated', async () => {
		const { key, accountId, tokenId } = await app.account(1)
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		// 160,000 bytes that are no format read here (a WebM, say): 10 s at 16,000 B/s.
		const bytes = new Uint8Array(160_000).map((_, i) => (i * 7919) % 251)
		await openai.audio.transcriptions.create({ file: await toFile(bytes, 'clip.webm', { type: 'audio/webm' }), model: 'whisper-large-v3' })
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 1000)
		expect((await usageOf(app, accountId))[0]).toMatchObject({ cost: 0.001, estimated: true })
		expect((await app.admin(`/api/tokens/${tokenId}`)).body.reserved).toBe(0)
	})

	it('should accept diarized_json and relay it with chunking_strategy and known speakers', async () => {
		const { key, accountId } = await app.account(1)
		oa.reset()
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		// The SDK types the answer by response_format only for its own literal overloads: this one is a diarized transcript.
		const r = (await openai.audio.transcriptions.create({
			file: await toFile(wav(40), 'call.wav', { type: 'audio/wav' }),
			model: 'gpt-4o-transcribe-diarize',
			response_format: 'diarized_json',
			chunking_strategy: 'auto',
			known_speaker_names: ['agent', 'customer'],
			known_speaker_references: ['data:audio/wav;base64,AAAA', 'data:audio/wav;base64,BBBB'],
		})) as unknown as TranscriptionDiarized
		expect(r.duration).toBe(40)
		expect(r.segments.map((s) => [s.type, s.speaker])).toEqual([
			['transcript.text.segment', 'agent'],
			['transcript.text.segment', 'customer'],
		])
		const form = oa.requests[0]!.form!
		expect(form.get('response_format')).toBe('diarized_json')
		expect(form.get('chunking_strategy')).toBe('auto')
		expect(form.getAll('known_speaker_names[]')).toEqual(['agent', 'customer'])
		expect(form.getAll('known_speaker_references[]')).toEqual(['data:audio/wav;base64,AAAA', 'data:audio/wav;base64,BBBB'])
		// 400 audio tokens × $2.5/M + 3 text tokens × $10/M = 1000 + 30 micro-USD
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 1030)
		expect((await usageOf(app, accountId))[0]).toMatchObject({ input_tokens: 400, output_tokens: 3, estimated: false })
	})

	it('should answer 413 past the upload limit, without calling the upstream', async () => {
		const { key, accountId } = await app.account(1)
		oa.reset()
		const form = new FormData()
		form.append('file', new File([wav(70)], 'big.wav'))
		form.append('model', 'whisper-1')
		const res = await fetch(`${app.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form })
		expect(res.status).toBe(413)
		expect(((await res.json()) as { error: { type: string } }).error.type).toBeString()
		expect(oa.requests).toHaveLength(0)
		expect(await app.balance(accountId)).toBe(1)
	})

	it('should refuse a file past the limit even when no content-length announced it', async () => {
		const { key } = await app.account(1)
		const token = await app.svc.keys.authenticate(key)
		const ctx = { svc: app.svc, token, requestId: 'req_test_413', startedAt: Date.now(), signal: new AbortController().signal }
		const file = new File([wav(2)], 'a.wav')
		await expect(transcriptionOp(ctx, { file, model: 'whisper-1' }, 1000)).rejects.toMatchObject({ status: 413, param: 'file' })
	})

	it('should stream a gpt-4o transcription to the SDK and bill the usage of its done event', async () => {
		const { key, accountId } = await app.account(1)
		oa.reset()
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		const stream = await openai.audio.transcriptions.create({ file: await toFile(wav(30), 'talk.wav'), model: 'gpt-4o-transcribe', stream: true })
		const events: TranscriptionStreamEvent[] = []
		for await (const e of stream) events.push(e)
		const deltas = events.flatMap((e) => (e.type === 'transcript.text.delta' ? [e.delta] : []))
		expect(deltas.length).toBeGreaterThan(1)
		const done = events.at(-1)
		expect(done).toMatchObject({ type: 'transcript.text.done', text: 'Transcript of talk.wav.', usage: { type: 'tokens', input_tokens: 300, output_tokens: 3 } })
		expect(deltas.join('')).toBe('Transcript of talk.wav.')
		expect(oa.requests[0]!.body).toMatchObject({ model: 'gpt-4o-transcribe', stream: 'true' })
		// 300 input tokens at $2.50/M + 3 output tokens at $10/M = 750 + 30 micro-USD, as the done event's usage says.
		const rows = await waitForRows(accountId, 1)
		expect(rows[0]).toMatchObject({ endpoint: '/v1/audio/transcriptions', input_tokens: 300, output_tokens: 3, cost: 0.00078, estimated: false, end_reason: 'ok', stream: true })
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 780)
	})

	it('should answer whisper-1 with stream=true as the upstream does (JSON, streaming ignored) and bill its duration', async () => {
		const { key, accountId } = await app.account(1)
		const form = new FormData()
		form.append('file', new File([wav(30)], 'a.wav'))
		form.append('model', 'whisper-1')
		form.append('stream', 'true')
		const res = await fetch(`${app.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form })
		expect(res.status).toBe(200)
		expect(await res.json()).toMatchObject({ text: 'Transcript of a.wav.' })
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 3000)
	})

	for (const abrupt of [false, true]) {
		it(`should charge nothing for a streamed transcription the upstream ${abrupt ? 'resets' : 'ends'} before its done event`, async () => {
			const { key, accountId } = await app.account(1)
			oa.faultOnce = { kind: 'cut', afterChunks: 2, abrupt }
			const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
			const stream = await openai.audio.transcriptions.create({ file: await toFile(wav(30), 'talk.wav'), model: 'gpt-4o-transcribe', stream: true })
			const events: TranscriptionStreamEvent[] = []
			const read = (async () => {
				for await (const e of stream) events.push(e)
			})()
			// A reset fails the client's body too, so the SDK knows its transcript is broken; a clean end gets the error
			// event the SDK raises (it would otherwise keep a partial transcript as the whole).
			if (abrupt) await expect(read).rejects.toThrow()
			else await expect(read).rejects.toThrow('the upstream stream ended before the transcript was completed')
			expect(events.some((e) => e.type === 'transcript.text.done')).toBe(false)
			const rows = await waitForRows(accountId, 1)
			expect(rows[0]).toMatchObject({ cost: 0, end_reason: 'upstream_cut' })
			expect(micros(await app.balance(accountId))).toBe(1_000_000)
		})
	}

	it('should answer 400 for a missing file or a bad response_format', async () => {
		const { key } = await app.account(1)
		const noFile = new FormData()
		noFile.append('model', 'whisper-1')
		const a = await fetch(`${app.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: noFile })
		expect(a.status).toBe(400)
		const bad = new FormData()
		bad.append('file', new File([wav(1)], 'a.wav'))
		bad.append('model', 'whisper-1')
		bad.append('response_format', 'xml')
		const b = await fetch(`${app.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: bad })
		expect(b.status).toBe(400)
		const badStream = new FormData()
		badStream.append('file', new File([wav(1)], 'a.wav'))
		badStream.append('model', 'gpt-4o-transcribe')
		badStream.append('stream', 'yes')
		const c = await fetch(`${app.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: badStream })
		expect(c.status).toBe(400)
		expect(((await c.json()) as { error: { param: string } }).error.param).toBe('stream')
	})
})

describe('POST /v1/audio/speech', () => {
	it('should stream the audio with the upstream content type and bill per character', async () => {
		const { key, accountId } = await app.account(1)
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		const res = await openai.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'hello there world', response_format: 'wav' })
		expect(res.headers.get('content-type')).toBe('audio/wav')
		const bytes = new Uint8Array(await res.arrayBuffer())
		expect(String.fromCharCode(...bytes.slice(0, 4))).toBe('RIFF')
		expect(bytes.length).toBe(44 + 24000 * 0.75 * 2)
		// 17 characters at $15 per million = 255 micro-USD
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 255)
	})

	it('should pass the first bytes on before the upstream has finished', async () => {
		const { key } = await app.account(1)
		const started = Date.now()
		const res = await fetch(`${app.url}/v1/audio/speech`, {
			method: 'POST',
			headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
			body: JSON.stringify({ model: 'tts-slow', voice: 'alloy', input: 'one two three four five six seven eight', response_format: 'pcm' }),
		})
		const reader = res.body!.getReader()
		const first = await reader.read()
		const firstAt = Date.now() - started
		let total = first.value!.length
		for (let r = await reader.read(); !r.done; r = await reader.read()) total += r.value.length
		const doneAt = Date.now() - started
		expect(total).toBe(24000 * 2 * 2)
		// 24 chunks of 4 KiB, 60 ms apart upstream: the first must not wait for the last.
		expect(doneAt - firstAt).toBeGreaterThan(600)
	})

	it('should pass a custom voice (`{id}`, OpenAI custom voices) on as sent', async () => {
		const { key } = await app.account(1)
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		const res = await openai.audio.speech.create({ model: 'tts-1', voice: { id: 'voice_1234' }, input: 'custom voice here', response_format: 'wav' })
		expect(res.status).toBe(200)
		expect(String.fromCharCode(...new Uint8Array(await res.arrayBuffer()).slice(0, 4))).toBe('RIFF')
		expect((oa.requests.findLast((r) => r.path === '/v1/audio/speech')!.body as { voice: unknown }).voice).toEqual({ id: 'voice_1234' })
	})

	it('should reject a bad speed, an empty input or a voice that is neither a name nor an id with 400', async () => {
		const { key } = await app.account(1)
		for (const body of [
			{ model: 'tts-1', voice: 'alloy', input: 'x', speed: 9 },
			{ model: 'tts-1', voice: 'alloy', input: '' },
			{ model: 'tts-1', voice: {}, input: 'x' },
			{ model: 'tts-1', voice: { id: '' }, input: 'x' },
		]) {
			const res = await fetch(`${app.url}/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
			expect(res.status).toBe(400)
		}
	})
})
