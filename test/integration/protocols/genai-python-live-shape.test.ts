/**
 * Google's Gen AI SDK for Python, `google-genai` 2.25.0, on the parts genai-python-shape.test.ts leaves out: the Live
 * API (`client.aio.live.connect`), Batch Mode (`client.batches`) and the ephemeral-token call (`client.auth_tokens`),
 * with `genai.Client(api_key='sk-…', http_options={'base_url': root, 'api_version': 'v1beta'})`. The frames were
 * recorded from the SDK itself, run against this gateway and its mocks (the Live mock's `received` frames, the
 * vendor mocks' recorded requests).
 *
 * Live: the SDK opens `wss://{host}/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent`
 * (it replaces the base URL's scheme with `wss` and always passes an SSL context, so the gateway must be reached over
 * TLS) with the key in `x-goog-api-key`, sends the setup in lowerCamel (`generationConfig`, `sessionResumption`,
 * `contextWindowCompression`), but then every client message under its snake_case name, as text frames:
 * `client_content`, `realtime_input` (inner `activityStart`, `activityEnd`, `audioStreamEnd` in lowerCamel, an audio
 * blob as `{data, mime_type}` in pydantic's URL-safe base64) and `tool_response` (with `functionResponses`). Google's
 * proto-JSON parser takes both spellings; the gateway must read both for the turns it has to estimate.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type TestApp, startTestApp } from '../../helpers/app'
import { LIVE_AUDIO_USAGE, LIVE_TOOL_CALL_USAGE, LIVE_USAGE, type LiveMock, startLiveMock } from '../../mocks/gemini/live'
import { startGeminiMock } from '../../mocks'
import { micros, priceList, usageOf } from '../surface/helpers'

let live: LiveMock
let gemini: Awaited<ReturnType<typeof startGeminiMock>>
let app: TestApp

const PRICES = { input_per_mtok: 1, output_per_mtok: 4, audio_input_per_mtok: 3, audio_output_per_mtok: 12 }
const SDK = 'google-genai-sdk/2.25.0 gl-python/3.11.7'
const PATH = '/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent'

beforeAll(async () => {
	live = await startLiveMock({ apiKey: 'up-live' })
	gemini = await startGeminiMock({ apiKey: 'up-gemini' })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'live', type: 'gemini', base_url: live.url, api_key: 'up-live', models: ['gemini-live'] },
				{ name: 'ge', type: 'gemini', base_url: gemini.url, api_key: 'up-gemini', models: ['gemini-m'], model_map: { 'gemini-m': 'gemini-2.5-flash' } },
			],
			models: priceList([
				{ name: 'gemini-live', ...PRICES },
				{ name: 'gemini-m', input_per_mtok: 0.3, output_per_mtok: 2.5 },
			]),
		},
	})
}, 60_000)

afterAll(async () => {
	await app?.close()
	await live?.stop()
	await gemini?.stop()
})

type Obj = Record<string, any>

/** A Live socket opened as the SDK opens it (websockets' client, the key in `x-goog-api-key`); server messages parsed as they come. */
async function session(key: string) {
	const ws = new WebSocket(app.url.replace(/^http/, 'ws') + PATH, { headers: { 'x-goog-api-key': key, 'user-agent': SDK, 'x-goog-api-client': SDK } } as any)
	ws.binaryType = 'arraybuffer'
	const messages: Obj[] = []
	const waiters: Array<{ pred: (m: Obj) => boolean; resolve: (m: Obj) => void }> = []
	const closing = new Promise<{ code: number; reason: string }>((resolve) => ws.addEventListener('close', (e) => resolve({ code: e.code, reason: e.reason })))
	ws.addEventListener('message', (e) => {
		const m = JSON.parse(typeof e.data === 'string' ? e.data : new TextDecoder().decode(e.data as ArrayBuffer))
		messages.push(m)
		for (const w of [...waiters]) if (w.pred(m)) waiters.splice(waiters.indexOf(w), 1) && w.resolve(m)
	})
	await new Promise<void>((resolve, reject) => {
		ws.addEventListener('open', () => resolve())
		ws.addEventListener('error', () => reject(new Error('socket error')))
	})
	const next = (pred: (m: Obj) => boolean) =>
		new Promise<Obj>((resolve) => {
			const seen = messages.find(pred)
			if (seen) resolve(seen)
			else waiters.push({ pred, resolve })
		})
	const send = (msg: Obj) => ws.send(JSON.stringify(msg))
	return { ws, messages, next, closing, send }
}

/** The setup as `live.connect(model=…, config=LiveConnectConfig(response_modalities=[…], …))` writes it. */
const setup = (modality: 'TEXT' | 'AUDIO', extra: Obj = {}) => ({ setup: { model: 'models/gemini-live', generationConfig: { responseModalities: [modality] }, ...extra } })

const turnComplete = (m: Obj) => m.serverContent?.turnComplete === true

async function rowsOf(accountId: number, n: number, waitMs = 3_000) {
	for (const until = Date.now() + waitMs; Date.now() < until; ) {
		const rows = await usageOf(app, accountId)
		if (rows.length >= n) return rows
		await Bun.sleep(20)
	}
	return usageOf(app, accountId)
}

/** pydantic's base64 of bytes, as the SDK writes a Blob's `data`: URL-safe with padding. */
const pydanticBase64 = (bytes: Uint8Array) => {
	const s = Buffer.from(bytes).toString('base64url')
	return s.padEnd(Math.ceil(s.length / 4) * 4, '=')
}

/** A long earlier exchange, so that what the client sent weighs in an estimate. */
const HISTORY = [
	{ parts: [{ text: 'Tell me about the history of the printing press in Europe, from Gutenberg to the industrial presses of the nineteenth century. '.repeat(8) }], role: 'user' },
	{ parts: [{ text: 'Sure.' }], role: 'model' },
]

describe('google-genai (Python) Live API: client messages in snake_case', () => {
	it('should estimate a cut turn from the client_content the SDK sent, as from clientContent', async () => {
		const rows: Array<[number, string, boolean]> = []
		for (const spelling of ['clientContent', 'client_content']) {
			const { key, accountId } = await app.account(1)
			const s = await session(key)
			s.send(setup('TEXT'))
			await s.next((m) => m.setupComplete !== undefined)
			// `session.send_client_content(turns=[…], turn_complete=True)`; the mock hangs up on the last turn's text.
			s.send({ [spelling]: { turns: [...HISTORY, { parts: [{ text: 'mock:hangup' }], role: 'user' }], turnComplete: true } })
			expect((await s.closing).code).toBe(1011)
			const [row] = await rowsOf(accountId, 1)
			rows.push([row!.input_tokens, row!.end_reason, row!.estimated])
		}
		// The history alone is over 150 tokens: before the fix, the snake_case turn was estimated at 0 input tokens.
		expect(rows[0]![0]).toBeGreaterThan(150)
		expect(rows[1]).toEqual(rows[0]!)
		expect(rows[1]).toEqual([rows[0]![0], 'upstream_cut', true])
	})

	it('should estimate realtime_input audio at the rate its mime_type names', async () => {
		// One second of 24 kHz PCM16: 48,000 bytes, 32 tokens (it would read as 1.5 s, 48 tokens, at the 16 kHz default).
		const audio = pydanticBase64(new Uint8Array(48_000).fill(1))
		const inputs: Record<string, number> = {}
		for (const variant of ['none', 'realtimeInput', 'realtime_input']) {
			const { key, accountId } = await app.account(1)
			const s = await session(key)
			s.send(setup('TEXT'))
			await s.next((m) => m.setupComplete !== undefined)
			const rt = variant === 'none' ? 'realtimeInput' : variant
			// `session.send_realtime_input(audio=Blob(data=…, mime_type='audio/pcm;rate=24000'))`
			if (variant === 'realtimeInput') s.send({ realtimeInput: { audio: { data: audio, mimeType: 'audio/pcm;rate=24000' } } })
			if (variant === 'realtime_input') s.send({ realtime_input: { audio: { data: audio, mime_type: 'audio/pcm;rate=24000' } } })
			// `session.send_realtime_input(text=…)`: the mock hangs up, so the turn is estimated from what was sent.
			s.send({ [rt]: { text: 'mock:hangup' } })
			expect((await s.closing).code).toBe(1011)
			const rows = await rowsOf(accountId, 1)
			expect(rows.map((r) => [r.end_reason, r.estimated])).toEqual([['upstream_cut', true]])
			inputs[variant] = rows[0]!.input_tokens
		}
		expect(inputs.realtimeInput).toBe(inputs.none! + 32)
		// Before the fix the snake_case message was not read at all (no audio, no text: 0 input tokens).
		expect(inputs.realtime_input).toBe(inputs.realtimeInput!)
	})
})

describe('google-genai (Python) Live API: sessions as the SDK runs them', () => {
	it('should relay a text turn, the setup with sessionResumption and contextWindowCompression as sent, and bill the reported usage', async () => {
		const { key, accountId } = await app.account(1)
		const received = live.received.length
		const s = await session(key)
		const sent = setup('TEXT', { sessionResumption: {}, contextWindowCompression: { slidingWindow: {} } })
		s.send(sent)
		await s.next((m) => m.setupComplete !== undefined)
		s.send({ client_content: { turns: [{ parts: [{ text: 'Hi' }], role: 'user' }], turnComplete: true } })
		const done = await s.next(turnComplete)
		expect(done.usageMetadata).toEqual(LIVE_USAGE)
		expect(s.messages.flatMap((m) => m.serverContent?.modelTurn?.parts ?? []).map((p: Obj) => p.text).join('')).toBe('Hello there')
		s.ws.close(1000)
		expect(JSON.parse(live.received[received]!)).toEqual(sent)
		const rows = await rowsOf(accountId, 1)
		expect(rows.map((r) => [r.endpoint, r.input_tokens, r.output_tokens, r.end_reason, r.estimated])).toEqual([[PATH, 30, 12, 'ok', false]])
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - (30 * 1 + 12 * 4))
	})

	it('should answer manual activity detection (activityStart, audio, activityEnd) with audio and bill it at the audio prices', async () => {
		const { key, accountId } = await app.account(1)
		const s = await session(key)
		s.send(setup('AUDIO'))
		await s.next((m) => m.setupComplete !== undefined)
		s.send({ realtime_input: { activityStart: {} } })
		s.send({ realtime_input: { audio: { data: pydanticBase64(new Uint8Array(3200).fill(1)), mime_type: 'audio/pcm;rate=16000' } } })
		s.send({ realtime_input: { activityEnd: {} } })
		const done = await s.next(turnComplete)
		expect(done.usageMetadata).toEqual(LIVE_AUDIO_USAGE)
		expect(s.messages.some((m) => m.serverContent?.modelTurn?.parts?.[0]?.inlineData?.mimeType === 'audio/pcm;rate=24000')).toBe(true)
		s.ws.close(1000)
		const rows = await rowsOf(accountId, 1)
		expect(rows.map((r) => [r.input_tokens, r.output_tokens, r.end_reason])).toEqual([[50, 110, 'ok']])
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - (30 * 1 + 20 * 3 + 10 * 4 + 100 * 12))
	})

	it('should relay a tool call and the tool_response the SDK sends, billing the turn as both generations', async () => {
		const { key, accountId } = await app.account(1)
		const s = await session(key)
		const fn = { description: 'w', name: 'get_weather', parameters: { properties: { city: { type: 'STRING' } }, type: 'OBJECT' } }
		s.send(setup('TEXT', { tools: [{ functionDeclarations: [fn] }] }))
		await s.next((m) => m.setupComplete !== undefined)
		s.send({ client_content: { turns: [{ parts: [{ text: 'weather in Paris?' }], role: 'user' }], turnComplete: true } })
		const call = (await s.next((m) => !!m.toolCall)).toolCall.functionCalls[0]
		s.send({ tool_response: { functionResponses: [{ id: call.id, name: call.name, response: { output: 'sunny' } }] } })
		await s.next(turnComplete)
		expect(s.messages.flatMap((m) => m.serverContent?.modelTurn?.parts ?? []).map((p: Obj) => p.text).join('')).toBe('It is sunny')
		s.ws.close(1000)
		const input = LIVE_TOOL_CALL_USAGE.promptTokenCount + LIVE_USAGE.promptTokenCount
		const output = LIVE_TOOL_CALL_USAGE.responseTokenCount + LIVE_USAGE.responseTokenCount
		const rows = await rowsOf(accountId, 1)
		expect(rows.map((r) => [r.input_tokens, r.output_tokens, r.end_reason])).toEqual([[input, output, 'ok']])
	})

	it('should close a session on an empty balance with 1008 and its reason (the SDK raises APIError "1008 None. …"), nothing charged', async () => {
		const { key, accountId } = await app.account(0)
		const handshakes = live.handshakes.length
		const s = await session(key)
		s.send(setup('TEXT'))
		const closed = await s.closing
		expect(closed.code).toBe(1008)
		expect(closed.reason).toContain('balance')
		expect(live.handshakes.length).toBe(handshakes)
		expect(await usageOf(app, accountId)).toEqual([])
	})
})

describe('google-genai (Python) batches and auth tokens', () => {
	const headers = (key: string) => ({ 'content-type': 'application/json', 'x-goog-api-key': key, 'user-agent': SDK, 'x-goog-api-client': SDK })

	it("should create a batch from the SDK's inline requests and hide it from another account (404 on get, cancel, delete)", async () => {
		const a = await app.account(5)
		const b = await app.account(5)
		// `client.batches.create(model='gemini-m', src=[{'contents': […]}, {…, 'config': {'max_output_tokens': 50}}], config={'display_name': 'py'})`
		const body = {
			batch: {
				displayName: 'py',
				inputConfig: {
					requests: {
						requests: [
							{ request: { contents: [{ parts: [{ text: 'hi' }], role: 'user' }] } },
							{ request: { contents: [{ parts: [{ text: 'yo' }], role: 'user' }], generationConfig: { maxOutputTokens: 50 } } },
						],
					},
				},
			},
		}
		const created = await fetch(`${app.url}/v1beta/models/gemini-m:batchGenerateContent`, { method: 'POST', headers: headers(a.key), body: JSON.stringify(body) })
		expect(created.status).toBe(200)
		const op = (await created.json()) as Obj
		const name: string = op.name ?? op.metadata?.name
		expect(name).toMatch(/^batches\//)
		for (const [method, suffix] of [
			['GET', ''],
			['POST', ':cancel'],
			['DELETE', ''],
		] as const) {
			const r = await fetch(`${app.url}/v1beta/${name}${suffix}`, { method, headers: headers(b.key) })
			expect([method, r.status, ((await r.json()) as Obj).error?.status]).toEqual([method, 404, 'NOT_FOUND'])
		}
		const own = await fetch(`${app.url}/v1beta/${name}`, { headers: headers(a.key) })
		expect(own.status).toBe(200)
	})

	it('should answer auth_tokens.create (ephemeral Live tokens, not minted here) with a Google-shaped 404', async () => {
		const { key } = await app.account(1)
		const r = await fetch(`${app.url}/v1beta/auth_tokens`, { method: 'POST', headers: headers(key), body: JSON.stringify({ uses: 1 }) })
		expect(r.status).toBe(404)
		expect(((await r.json()) as Obj).error).toMatchObject({ code: 404, status: 'NOT_FOUND' })
	})
})

describe('google-genai (Python) Live API: a bad key', () => {
	it('should be refused with 1007 on the setup, not before it (else the SDK raises a bare ConnectionClosedError from its send)', async () => {
		const handshakes = live.handshakes.length
		const s = await session('sk-not-a-key')
		// The SDK sends its setup once the handshake is done; a close already on its way makes that send raise.
		await Bun.sleep(200)
		expect(s.ws.readyState).toBe(WebSocket.OPEN)
		s.send(setup('TEXT'))
		const closed = await s.closing
		expect([closed.code, closed.reason]).toEqual([1007, 'API key not valid. Please pass a valid API key.'])
		expect(live.handshakes.length).toBe(handshakes)
	})
})
