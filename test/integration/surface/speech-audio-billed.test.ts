/**
 * POST /v1/audio/speech for plain audio of a model priced by tokens (gpt-4o-mini-tts): the gateway asks the upstream
 * for `stream_format: "sse"`, hands the client the decoded audio as each delta arrives, and charges the usage of
 * `speech.audio.done` (input text tokens and audio output tokens), which raw audio does not report. Falls back to
 * relaying (and charging the input of) plain audio from a vendor that ignores `stream_format`, and to plain audio on a
 * channel with `settings.speech_sse: false` or for a model priced per character.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import { createOpenAI } from '@ai-sdk/openai'
import { generateSpeech } from 'ai'
import OpenAI from 'openai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { expectLedgerInvariant, ledgerTotals } from '../resilience/invariant'
import { micros, priceList, usageOf } from './helpers'

let oa: VendorMock
let slow: VendorMock
let ignoring: VendorMock
let refusing: VendorMock
let app: TestApp

// gpt-4o-mini-tts: text input $0.60, audio output $12 per million tokens (OpenAI's price list).
const tokenPriced = (name: string) => ({ name, input_per_mtok: 0.6, output_per_mtok: 0.6, audio_output_per_mtok: 12 })

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	slow = await startOpenAIMock({ apiKey: 'up-oa', chunkDelayMs: 60 })
	ignoring = await startOpenAIMock({ apiKey: 'up-oa', speechStreamFormat: 'ignore' })
	refusing = await startOpenAIMock({ apiKey: 'up-oa', speechStreamFormat: 'reject' })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['gpt-4o-mini-tts', 'tts-1', 'tts-1-hd'], model_map: { 'tts-tok': 'tts-1', 'tts-hd-tok': 'tts-1-hd-1106' } },
				// An Azure-style deployment name for tts-1-hd: the name asked for tells it.
				{ name: 'deployed', type: 'openai', base_url: refusing.url, api_key: 'up-oa', models: ['tts-1-hd-1106'], model_map: { 'tts-1-hd-1106': 'speech-prod' } },
				{ name: 'slow', type: 'openai', base_url: slow.url, api_key: 'up-oa', models: ['slow-tts'], model_map: { 'slow-tts': 'gpt-4o-mini-tts' } },
				{ name: 'ignoring', type: 'openai', base_url: ignoring.url, api_key: 'up-oa', models: ['compat-tts'], model_map: { 'compat-tts': 'gpt-4o-mini-tts' } },
				{ name: 'refusing', type: 'openai', base_url: refusing.url, api_key: 'up-oa', models: ['strict-tts'], model_map: { 'strict-tts': 'gpt-4o-mini-tts' }, settings: { speech_sse: false } },
			],
			models: priceList([tokenPriced('gpt-4o-mini-tts'), tokenPriced('slow-tts'), tokenPriced('compat-tts'), tokenPriced('strict-tts'), { name: 'tts-1', per_mchar: 15 }, { name: 'tts-1-hd', per_request: 0.01 }, tokenPriced('tts-tok'), tokenPriced('tts-hd-tok'), tokenPriced('tts-1-hd-1106')]),
		},
	})
}, 60_000)

afterAll(async () => {
	await app.close()
	for (const m of [oa, slow, ignoring, refusing]) await m.stop()
})

beforeEach(() => {
	for (const m of [oa, slow, ignoring, refusing]) {
		m.reset()
		m.fault = undefined
		m.faultOnce = undefined
	}
})

const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })

/** The plain audio the upstream makes for this speech, asked of it directly. */
async function upstreamAudio(mock: VendorMock, body: Record<string, unknown>): Promise<{ type: string | null; bytes: Uint8Array<ArrayBuffer> }> {
	const res = await fetch(`${mock.url}/audio/speech`, { method: 'POST', headers: { authorization: 'Bearer up-oa', 'content-type': 'application/json' }, body: JSON.stringify(body) })
	expect(res.headers.get('content-type')).not.toContain('text/event-stream')
	return { type: res.headers.get('content-type'), bytes: new Uint8Array(await res.arrayBuffer()) }
}

/** The account's usage rows once `n` are written (the charge is settled after the audio's end). */
async function rowsOf(accountId: number, n = 1) {
	for (let i = 0; i < 100; i++) {
		const rows = await usageOf(app, accountId)
		if (rows.length >= n) return rows
		await Bun.sleep(20)
	}
	return usageOf(app, accountId)
}

const sentBody = (m: VendorMock) => m.requests.at(-1)!.body as Record<string, unknown>

describe('plain-audio speech of a model priced by tokens', () => {
	it('should give the openai SDK the decoded mp3 and charge the input and audio tokens of speech.audio.done', async () => {
		const { key, accountId } = await app.account(1)
		const want = await upstreamAudio(oa, { model: 'gpt-4o-mini-tts', voice: 'alloy', input: 'hello there friend' })
		oa.reset()
		const res = await client(key).audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'alloy', input: 'hello there friend' })
		expect(res.headers.get('content-type')).toBe('audio/mpeg')
		expect(new Uint8Array(await res.arrayBuffer())).toEqual(want.bytes)
		expect(sentBody(oa)).toMatchObject({ model: 'gpt-4o-mini-tts', stream_format: 'sse' })
		// The mock's done event: 3 input tokens, 15 audio tokens. 3 × $0.60/M + 15 × $12/M = 1.8 + 180 → 182 micro-USD.
		const rows = await rowsOf(accountId)
		expect(rows).toHaveLength(1)
		expect(rows[0]).toMatchObject({ endpoint: '/v1/audio/speech', input_tokens: 3, output_tokens: 15, estimated: false, end_reason: 'ok' })
		expect(micros(rows[0]!.cost)).toBe(182)
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 182)
	})

	it('should answer every response_format with its bytes and the content type OpenAI gives it', async () => {
		const { key } = await app.account(1)
		for (const format of ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const) {
			const want = await upstreamAudio(oa, { model: 'gpt-4o-mini-tts', voice: 'alloy', input: 'one two three four five', response_format: format })
			const res = await client(key).audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'alloy', input: 'one two three four five', response_format: format })
			expect([format, res.headers.get('content-type')]).toEqual([format, want.type])
			expect(new Uint8Array(await res.arrayBuffer())).toEqual(want.bytes)
		}
	})

	it('should work with the Vercel AI SDK generateSpeech and bill the audio tokens', async () => {
		const { key, accountId } = await app.account(1)
		const r = await generateSpeech({ model: createOpenAI({ apiKey: key, baseURL: `${app.url}/v1` }).speech('gpt-4o-mini-tts'), text: 'hello there friend', voice: 'alloy', outputFormat: 'wav' })
		expect(r.audio.mediaType).toBe('audio/wav')
		expect(new Uint8Array(r.audio.uint8Array)).toEqual((await upstreamAudio(oa, { model: 'gpt-4o-mini-tts', voice: 'alloy', input: 'hello there friend', response_format: 'wav' })).bytes)
		const [row] = await rowsOf(accountId)
		expect(row).toMatchObject({ input_tokens: 3, output_tokens: 15, estimated: false })
		expect(micros(row!.cost)).toBe(182)
	})

	it('should pass each delta on as it arrives, holding the audio while it streams', async () => {
		const { key, accountId } = await app.account(1)
		const input = 'one two three four five six seven eight'
		const started = Date.now()
		const res = await fetch(`${app.url}/v1/audio/speech`, {
			method: 'POST',
			headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
			body: JSON.stringify({ model: 'slow-tts', voice: 'alloy', input, response_format: 'pcm' }),
		})
		expect(res.headers.get('content-type')).toBe('audio/pcm')
		const reader = res.body!.getReader()
		const first = await reader.read()
		const firstAt = Date.now() - started
		// While it streams, the hold covers the audio too: 39 characters × 2 audio tokens at $12/M = 936 micro-USD,
		// plus the input's 8 tokens at $0.60/M (4.8 → 5).
		expect((await ledgerTotals(app.svc.db.sql, app.svc.ledger)).inUse).toBe(941)
		let total = first.value!.length
		for (let r = await reader.read(); !r.done; r = await reader.read()) total += r.value.length
		const doneAt = Date.now() - started
		expect(total).toBe(24000 * 2 * 2)
		// 24 deltas of 4 KiB, 60 ms apart upstream: the first must not wait for the last.
		expect(doneAt - firstAt).toBeGreaterThan(600)
		const [row] = await rowsOf(accountId)
		// 8 input tokens, 40 audio tokens: 4.8 + 480 → 485 micro-USD.
		expect(row).toMatchObject({ input_tokens: 8, output_tokens: 40, estimated: false, end_reason: 'ok' })
		expect(micros(row!.cost)).toBe(485)
		expect((await expectLedgerInvariant(app.svc.db.sql, app.svc.ledger)).inUse).toBe(0)
	})
})

describe('plain-audio speech that is not converted', () => {
	it('should relay the plain audio of a vendor that ignores stream_format and charge the input alone', async () => {
		const { key, accountId } = await app.account(1)
		const want = await upstreamAudio(ignoring, { model: 'gpt-4o-mini-tts', voice: 'alloy', input: 'hello there friend', response_format: 'wav' })
		ignoring.reset()
		const res = await client(key).audio.speech.create({ model: 'compat-tts', voice: 'alloy', input: 'hello there friend', response_format: 'wav' })
		expect(res.headers.get('content-type')).toBe('audio/wav')
		expect(new Uint8Array(await res.arrayBuffer())).toEqual(want.bytes)
		expect(sentBody(ignoring).stream_format).toBe('sse')
		const [row] = await rowsOf(accountId)
		// The input's 3 tokens at $0.60/M, estimated: the audio came without usage.
		expect(row).toMatchObject({ input_tokens: 3, estimated: true, end_reason: 'ok' })
		expect(micros(row!.cost)).toBe(2)
	})

	it('should not send stream_format on a channel with speech_sse false (a vendor that refuses it)', async () => {
		const { key, accountId } = await app.account(1)
		const res = await client(key).audio.speech.create({ model: 'strict-tts', voice: 'alloy', input: 'hello there friend' })
		expect(res.headers.get('content-type')).toBe('audio/mpeg')
		expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0)
		expect(sentBody(refusing).stream_format).toBeUndefined()
		const [row] = await rowsOf(accountId)
		expect(row).toMatchObject({ input_tokens: 3, estimated: true })
		expect(micros(row!.cost)).toBe(2)
	})

	it('should send tts-1 (priced per character; OpenAI refuses sse for it) as asked', async () => {
		const { key, accountId } = await app.account(1)
		const res = await client(key).audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'hello there world' })
		expect(res.headers.get('content-type')).toBe('audio/mpeg')
		expect(sentBody(oa).stream_format).toBeUndefined()
		expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0)
		await rowsOf(accountId)
		// 17 characters at $15 per million.
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 255)
	})

	// A price list that gives tts-1 a price per token (a copy of gpt-4o-mini-tts's line) must not make a plain call the
	// 400 OpenAI answers tts-1 asked for events.
	for (const [model, upstream] of [['tts-tok', 'tts-1'], ['tts-hd-tok', 'tts-1-hd-1106']]) {
		it(`should send ${upstream} priced by tokens as asked (OpenAI refuses sse for it) and charge its input`, async () => {
			const { key, accountId } = await app.account(1)
			const res = await client(key).audio.speech.create({ model, voice: 'alloy', input: 'hello there friend' })
			expect(res.headers.get('content-type')).toBe('audio/mpeg')
			expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0)
			expect(sentBody(oa)).toMatchObject({ model: upstream })
			expect(sentBody(oa).stream_format).toBeUndefined()
			const [row] = await rowsOf(accountId)
			expect(row).toMatchObject({ input_tokens: 3, estimated: true, end_reason: 'ok' })
			expect(micros(row!.cost)).toBe(2)
		})
	}

	it('should send a deployment of tts-1-hd priced by tokens as asked, its name told by the one asked for', async () => {
		const { key, accountId } = await app.account(1)
		const res = await client(key).audio.speech.create({ model: 'tts-1-hd-1106', voice: 'alloy', input: 'hello there friend' })
		expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0)
		expect(sentBody(refusing)).toMatchObject({ model: 'speech-prod' })
		expect(sentBody(refusing).stream_format).toBeUndefined()
		const [row] = await rowsOf(accountId)
		expect(row).toMatchObject({ input_tokens: 3, estimated: true, end_reason: 'ok' })
	})

	it('should send tts-1-hd priced per request alone as asked: no token price for events to tell', async () => {
		const { key, accountId } = await app.account(1)
		const res = await client(key).audio.speech.create({ model: 'tts-1-hd', voice: 'alloy', input: 'hello there world' })
		expect(res.headers.get('content-type')).toBe('audio/mpeg')
		expect(sentBody(oa).stream_format).toBeUndefined()
		expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0)
		await rowsOf(accountId)
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 10_000)
	})
})

describe('plain-audio speech of a model served unpriced (ALLOW_UNPRICED_MODELS)', () => {
	// The README's way to try the gateway before writing prices: tts-1, the openai SDK's usual speech model, must answer
	// its audio, not OpenAI's 400 for an `sse` stream_format nothing would be billed from.
	let open: TestApp
	beforeAll(async () => {
		open = await startTestApp({ env: { ALLOW_UNPRICED_MODELS: 'true' }, config: { channels: [{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['tts-*', 'gpt-4o-mini-tts'] }], models: [] } })
	}, 60_000)
	afterAll(() => open?.close())

	for (const model of ['tts-1', 'gpt-4o-mini-tts']) {
		it(`should send ${model} as asked and answer its audio at no charge`, async () => {
			const { key, accountId } = await open.account(1)
			const res = await new OpenAI({ apiKey: key, baseURL: `${open.url}/v1`, maxRetries: 0 }).audio.speech.create({ model, voice: 'alloy', input: 'hello there world' })
			expect(res.headers.get('content-type')).toBe('audio/mpeg')
			expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0)
			expect(sentBody(oa).stream_format).toBeUndefined()
			for (let i = 0; i < 100 && (await usageOf(open, accountId)).length === 0; i++) await Bun.sleep(20)
			expect(micros(await open.balance(accountId))).toBe(1_000_000)
		})
	}
})

describe('converted speech that does not end', () => {
	it('should settle a client that leaves mid-audio at the input and the audio such an input usually makes, and hold nothing after', async () => {
		const { key, accountId } = await app.account(1)
		const res = await client(key).audio.speech.create({ model: 'slow-tts', voice: 'alloy', input: 'one two three four five six seven eight', response_format: 'pcm' })
		const reader = res.body!.getReader()
		await reader.read()
		await reader.cancel()
		const [row] = await rowsOf(accountId)
		// The done event never came: the input's 8 tokens at $0.60/M (4.8) and, estimated, the audio of 39 characters at
		// 1,250 tokens a minute of ~900 characters (55 tokens at $12/M: 660), not the input alone (which a client
		// leaving just before the end would otherwise pay for the whole audio).
		expect(row).toMatchObject({ end_reason: 'client_abort', input_tokens: 8, output_tokens: 55, estimated: true })
		expect(micros(row!.cost)).toBe(665)
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 665)
		for (let i = 0; i < 50 && slow.aborts.length === 0; i++) await Bun.sleep(20)
		expect(slow.aborts).toHaveLength(1)
		expect((await expectLedgerInvariant(app.svc.db.sql, app.svc.ledger)).inUse).toBe(0)
	})

	it('should settle a client that leaves events it asked for (stream_format sse) before the done event the same way', async () => {
		const { key, accountId } = await app.account(1)
		const res = await client(key).audio.speech.create({ model: 'slow-tts', voice: 'alloy', input: 'one two three four five six seven eight', response_format: 'pcm', stream_format: 'sse' })
		expect(res.headers.get('content-type')).toContain('text/event-stream')
		const reader = res.body!.getReader()
		await reader.read()
		await reader.cancel()
		const [row] = await rowsOf(accountId)
		expect(row).toMatchObject({ end_reason: 'client_abort', input_tokens: 8, output_tokens: 55, estimated: true })
		expect(micros(row!.cost)).toBe(665)
		expect((await expectLedgerInvariant(app.svc.db.sql, app.svc.ledger)).inUse).toBe(0)
	})

	for (const [how, fault] of [
		['ends', { kind: 'cut', afterChunks: 1 }],
		['resets', { kind: 'cut', afterChunks: 1, abrupt: true }],
		['sends an error event', { kind: 'midstream', afterChunks: 1 }],
	] as const) {
		it(`should fail the client's body and charge nothing when the upstream ${how} before speech.audio.done`, async () => {
			const { key, accountId } = await app.account(1)
			oa.faultOnce = fault
			const res = await client(key).audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'alloy', input: 'one two three four five six seven eight', response_format: 'pcm' })
			const read = await res.arrayBuffer().then(
				(b) => b.byteLength,
				(e: unknown) => e,
			)
			expect(read).toBeInstanceOf(Error)
			const [row] = await rowsOf(accountId)
			expect(row).toMatchObject({ end_reason: 'upstream_cut' })
			expect(micros(row!.cost)).toBe(0)
			expect(micros(await app.balance(accountId))).toBe(1_000_000)
			expect((await expectLedgerInvariant(app.svc.db.sql, app.svc.ledger)).inUse).toBe(0)
		})
	}
})
