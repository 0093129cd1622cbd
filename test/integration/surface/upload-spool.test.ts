/**
 * Upload bodies of 1 MiB or more are written to a file as they arrive (src/http/body-spool.ts) rather than taken into
 * memory by Bun's `request.blob()`, whose copies held every other request for 80–90 ms on a 20 MB file. What a user
 * sees must not change: the file reaches the vendor byte for byte with its declared type, a body without a length
 * too, and the spool keeps nothing once the answer has gone, whether the upload was served, refused or cut off.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readdir } from 'node:fs/promises'
import OpenAI, { toFile } from 'openai'
import { spoolDir } from '../../../src/http/body-spool'
import { type TestApp, startTestApp } from '../../helpers/app'
import { wavBytes } from '../../helpers/wav'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { priceList } from './helpers'

const DEADLINE_MS = 500

let oa: VendorMock
let app: TestApp
beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	app = await startTestApp({
		config: { channels: [{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['whisper-1'] }], models: priceList([{ name: 'whisper-1', per_minute: 0.006 }]) },
		env: { BODY_READ_TIMEOUT_MS: String(DEADLINE_MS) },
	})
}, 30_000)
afterAll(async () => {
	await app.close()
	await oa.stop()
})

/** This process's spooled files (the app runs in it). */
const ours = async () => (await readdir(spoolDir()).catch(() => [] as string[])).filter((name) => name.startsWith(`${process.pid}-`))

/** This process's spooled files once none is left, or what is left after 2 s (the hook runs just after the answer). */
async function leftOver(): Promise<string[]> {
	for (let i = 0; i < 100; i++) {
		const left = await ours()
		if (left.length === 0) return left
		await Bun.sleep(20)
	}
	return ours()
}

/** A WAV of `bytes` of noise (not silence: a relay that lost or moved a piece would not go unseen). */
function noisyWav(bytes: number): Uint8Array<ArrayBuffer> {
	const out = wavBytes(bytes)
	for (let i = 44; i < out.length; i += 65_536) crypto.getRandomValues(out.subarray(i, Math.min(i + 65_536, out.length)))
	return out
}

const sha256 = async (b: Blob | Uint8Array) => new Bun.CryptoHasher('sha256').update(b instanceof Blob ? await b.bytes() : b).digest('hex')

describe('upload bodies spooled to a file', () => {
	it('should send a large file on byte for byte from a spooled file, and remove it once answered', async () => {
		const { key } = await app.account(1)
		oa.reset()
		const audio = noisyWav(3 * 1024 * 1024)
		// The vendor takes its time answering: the file is there while the upload is in flight.
		oa.faultOnce = { kind: 'slow', firstByteMs: 400 }
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		const answer = openai.audio.transcriptions.create({ file: await toFile(audio, 'talk', { type: 'audio/wav' }), model: 'whisper-1', response_format: 'json' })
		let during: string[] = []
		for (let i = 0; i < 200 && oa.requests.length === 0; i++) await Bun.sleep(10)
		during = await ours()
		expect((await answer).text).toBe('Transcript of talk.')
		expect(during).toHaveLength(1)
		expect(await leftOver()).toEqual([])
		const sent = oa.requests[0]!.form!.get('file') as File
		expect(sent.type).toBe('audio/wav')
		expect(sent.size).toBe(audio.length)
		expect(await sha256(sent)).toBe(await sha256(audio))
	})

	it('should remove the file once the answer has gone, not when the request is collected', async () => {
		const { key } = await app.account(1)
		oa.reset()
		const form = new FormData()
		form.append('model', 'whisper-1')
		form.append('file', new File([noisyWav(1_500_000)], 'held.wav', { type: 'audio/wav' }))
		// Served in this process, the Request held here: it cannot be collected, so only the answer can remove its file.
		const request = new Request(`${app.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form })
		const res = await app.handle(request)
		expect(res.status).toBe(200)
		expect(((await res.json()) as { text: string }).text).toBe('Transcript of held.wav.')
		expect(await leftOver()).toEqual([])
		expect(request.method).toBe('POST')
	})

	it("should remove both files of an Azure deployment's upload (the form as it came, and as the /v1 request)", async () => {
		const { key } = await app.account(1)
		oa.reset()
		const form = new FormData()
		form.append('file', new File([noisyWav(1_500_000)], 'azure.wav', { type: 'audio/wav' }))
		const request = new Request(`${app.url}/openai/deployments/whisper-1/audio/transcriptions?api-version=2024-10-21`, { method: 'POST', headers: { 'api-key': key }, body: form })
		const res = await app.handle(request)
		expect(res.status).toBe(200)
		expect(((await res.json()) as { text: string }).text).toBe('Transcript of azure.wav.')
		expect(oa.requests[0]!.form!.get('model')).toBe('whisper-1')
		expect(await leftOver()).toEqual([])
		expect(request.method).toBe('POST')
	})

	it('should spool a body sent without a length (chunked) and serve it', async () => {
		const { key } = await app.account(1)
		oa.reset()
		const audio = noisyWav(2 * 1024 * 1024)
		const form = new FormData()
		form.append('model', 'whisper-1')
		form.append('file', new File([audio], 'chunked.wav', { type: 'audio/wav' }))
		const encoded = new Response(form)
		const type = encoded.headers.get('content-type')!
		const bytes = await encoded.bytes()
		// A stream of unknown length: fetch sends it chunked.
		const body = new ReadableStream<Uint8Array>({
			start(c) {
				for (let i = 0; i < bytes.length; i += 100_000) c.enqueue(bytes.slice(i, i + 100_000))
				c.close()
			},
		})
		const res = await fetch(`${app.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': type }, body, duplex: 'half' } as RequestInit)
		expect(res.status).toBe(200)
		expect(((await res.json()) as { text: string }).text).toBe('Transcript of chunked.wav.')
		expect(await sha256(oa.requests[0]!.form!.get('file') as File)).toBe(await sha256(audio))
		expect(await leftOver()).toEqual([])
	})

	it('should leave no file behind an upload it refuses', async () => {
		const { key } = await app.account(1)
		oa.reset()
		// 300 parts (256 at most) around 1.5 MB of audio: read into the spool, then refused by the part limit.
		const form = new FormData()
		form.append('model', 'whisper-1')
		form.append('file', new File([noisyWav(1_500_000)], 'a.wav', { type: 'audio/wav' }))
		for (let i = 0; i < 300; i++) form.append(`x${i}`, 'y')
		const res = await fetch(`${app.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form })
		expect(res.status).toBe(413)
		expect(((await res.json()) as { error: { code: string } }).error.code).toBe('too_many_parts')
		expect(oa.requests).toHaveLength(0)
		expect(await leftOver()).toEqual([])
	})

	it('should remove what came of a large body whose client went away before sending it all', async () => {
		const { key } = await app.account(1)
		oa.reset()
		const boundary = 'spoolboundary'
		const head = `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`
		const sent = Buffer.concat([Buffer.from(head), Buffer.alloc(1_500_000 - head.length, 1)])
		const port = Number(new URL(app.url).port)
		let sawFile = false
		await new Promise<void>((resolve) => {
			Bun.connect({
				hostname: '127.0.0.1',
				port,
				socket: {
					open(s) {
						s.write(`POST /v1/audio/transcriptions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${key}\r\ncontent-type: multipart/form-data; boundary=${boundary}\r\ncontent-length: ${3_000_000}\r\n\r\n`)
						s.write(sent)
						// Half the declared body sent; once the gateway is writing it to a file, the client leaves.
						setTimeout(async () => {
							sawFile = (await ours()).length === 1
							s.end()
						}, 300)
					},
					data() {},
					close: () => resolve(),
				},
			})
		})
		expect(sawFile).toBe(true)
		expect(await leftOver()).toEqual([])
		expect(oa.requests).toHaveLength(0)
	})

	it('should answer 408 to a large body that stops arriving, and remove what came of it', async () => {
		const { key } = await app.account(1)
		oa.reset()
		const boundary = 'spoolboundary'
		const head = `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`
		// Declared 1.2 MiB (the deadline grows by 1.6 s for the 0.2 MiB past 1 MiB); 1.1 MiB sent, then nothing.
		const length = Math.round(1.2 * 1024 * 1024)
		const sent = Buffer.concat([Buffer.from(head), Buffer.alloc(Math.round(1.1 * 1024 * 1024) - head.length, 1)])
		const port = Number(new URL(app.url).port)
		const started = performance.now()
		let sawFile = false
		const answer = await new Promise<string>((resolve) => {
			let raw = ''
			Bun.connect({
				hostname: '127.0.0.1',
				port,
				socket: {
					open(s) {
						s.write(`POST /v1/audio/transcriptions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${key}\r\ncontent-type: multipart/form-data; boundary=${boundary}\r\ncontent-length: ${length}\r\n\r\n`)
						s.write(sent)
						setTimeout(async () => void (sawFile = (await ours()).length === 1), 300)
					},
					data: (_s, d) => void (raw += d.toString()),
					close: () => resolve(raw),
				},
			})
		})
		const took = performance.now() - started
		expect(answer.split(' ')[1]).toBe('408')
		expect(answer).toContain('request_timeout')
		// The body's 2.1 s (DEADLINE_MS and 1.6 s for its length), and the sweep's step: not the 60 s an idle socket gets.
		expect(took).toBeGreaterThan(1_500)
		expect(took).toBeLessThan(10_000)
		expect(sawFile).toBe(true)
		expect(oa.requests).toHaveLength(0)
		expect(await leftOver()).toEqual([])
	})
})
