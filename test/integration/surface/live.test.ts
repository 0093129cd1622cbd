/**
 * Gemini's Live API through the gateway with the official @google/genai SDK (`ai.live.connect`, `httpOptions.baseUrl`
 * at the gateway) against the Live mock: text and audio turns, a tool call round trip, one usage row per turn, and
 * the refusals Google closes the socket for (a bad key, a model the gateway serves on no Gemini channel, an unknown one).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI, type LiveServerMessage, Modality, type Session } from '@google/genai'
import { countText } from '../../../src/relay/estimate'
import { DRAIN_MS } from '../../../src/relay/socket-relay'
import { type TestApp, startTestApp } from '../../helpers/app'
import { LIVE_AUDIO_USAGE, LIVE_TOOL_CALL_USAGE, LIVE_USAGE, type LiveMock, startLiveMock } from '../../mocks/gemini/live'
import { micros, priceList, usageOf } from './helpers'

let mock: LiveMock
let app: TestApp

const PRICES = { input_per_mtok: 1, output_per_mtok: 4, audio_input_per_mtok: 3, audio_output_per_mtok: 12 }

beforeAll(async () => {
	mock = await startLiveMock({ apiKey: 'up-live' })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'live', type: 'gemini', base_url: mock.url, api_key: 'up-live', models: ['gemini-live', 'gemini-live-mapped'], model_map: { 'gemini-live-mapped': 'gemini-live-upstream' } },
				{ name: 'oa', type: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'up-oa', models: ['gpt-live'] },
			],
			models: priceList([
				{ name: 'gemini-live', ...PRICES },
				{ name: 'gemini-live-mapped', ...PRICES },
				{ name: 'gpt-live', input_per_mtok: 1, output_per_mtok: 4 },
			]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app?.close()
	await mock?.stop()
})

/** A Live session through the gateway; its messages collected, `next(pred)` resolving at the first that matches. */
async function connect(key: string, model: string, config: Record<string, unknown> = { responseModalities: [Modality.TEXT] }) {
	const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: app.url } })
	const messages: LiveServerMessage[] = []
	const waiters: Array<{ pred: (m: LiveServerMessage) => boolean; resolve: (m: LiveServerMessage) => void }> = []
	let closed: (e: { code: number; reason: string }) => void = () => {}
	const closing = new Promise<{ code: number; reason: string }>((r) => (closed = r))
	const session: Session = await ai.live.connect({
		model,
		config,
		callbacks: {
			onmessage: (m) => {
				messages.push(m)
				for (const w of [...waiters]) if (w.pred(m)) waiters.splice(waiters.indexOf(w), 1) && w.resolve(m)
			},
			onclose: (e) => closed({ code: e.code, reason: e.reason }),
		},
	})
	const next = (pred: (m: LiveServerMessage) => boolean) =>
		new Promise<LiveServerMessage>((resolve) => {
			const seen = messages.find(pred)
			if (seen) resolve(seen)
			else waiters.push({ pred, resolve })
		})
	return { session, messages, next, closing }
}

const turnComplete = (m: LiveServerMessage) => m.serverContent?.turnComplete === true

/** Waits for the account's usage rows to reach `n` (a turn is billed after its last message went out). */
async function rowsOf(accountId: number, n: number, waitMs = 3_000) {
	for (const until = Date.now() + waitMs; Date.now() < until; ) {
		const rows = await usageOf(app, accountId)
		if (rows.length >= n) return rows
		await Bun.sleep(20)
	}
	return usageOf(app, accountId)
}

describe('Live API (ai.live.connect)', () => {
	it('should run a text turn relayed untouched, upstream with the channel key and model_map, and bill it from its usageMetadata', async () => {
		const { key, accountId } = await app.account(1)
		const handshakes = mock.handshakes.length
		const received = mock.received.length
		const s = await connect(key, 'gemini-live-mapped')
		s.session.sendClientContent({ turns: 'Hi', turnComplete: true })
		const done = await s.next(turnComplete)
		expect(done.usageMetadata as object).toEqual(LIVE_USAGE)
		expect(s.messages.map((m) => m.text).filter(Boolean).join('')).toBe('Hello there')
		s.session.close()
		const rows = await rowsOf(accountId, 1)
		expect(rows.map((r) => [r.endpoint, r.model, r.input_tokens, r.output_tokens, r.end_reason, r.estimated])).toEqual([
			['/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent', 'gemini-live-mapped', 30, 12, 'ok', false],
		])
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - (30 * 1 + 12 * 4))
		const hs = mock.handshakes.slice(handshakes)
		expect(hs).toHaveLength(1)
		expect(hs[0]!.headers['x-goog-api-key']).toBe('up-live')
		expect(hs[0]!.url).not.toContain(key)
		const setup = JSON.parse(mock.received[received]!)
		expect(setup.setup.model).toBe('models/gemini-live-upstream')
		expect(setup.setup.generationConfig.responseModalities).toEqual(['TEXT'])
		// The client's turn went upstream byte for byte.
		expect(JSON.parse(mock.received[received + 1]!)).toEqual({ clientContent: { turns: [{ role: 'user', parts: [{ text: 'Hi' }] }], turnComplete: true } })
	})

	/** A session with a weather tool, asked for Paris's weather: the tool call the model answers with. */
	async function weatherCall(key: string) {
		const s = await connect(key, 'gemini-live', {
			responseModalities: [Modality.TEXT],
			tools: [{ functionDeclarations: [{ name: 'get_weather', description: 'Weather of a city', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } } } }] }],
		})
		s.session.sendClientContent({ turns: 'What is the weather in Paris?', turnComplete: true })
		const call = await s.next((m) => !!m.toolCall)
		return { s, fc: call.toolCall!.functionCalls![0]! }
	}

	it('should relay a tool call and its response, and bill the turn as both generations', async () => {
		const { key, accountId } = await app.account(1)
		const { s, fc } = await weatherCall(key)
		expect([fc.name, fc.args]).toEqual(['get_weather', { city: 'Paris' }])
		s.session.sendToolResponse({ functionResponses: [{ id: fc.id, name: fc.name, response: { output: 'sunny' } }] })
		await s.next(turnComplete)
		expect(s.messages.map((m) => m.text).filter(Boolean).join('')).toBe('It is sunny')
		s.session.close()
		const rows = await rowsOf(accountId, 1)
		const input = LIVE_TOOL_CALL_USAGE.promptTokenCount + LIVE_USAGE.promptTokenCount
		const output = LIVE_TOOL_CALL_USAGE.responseTokenCount + LIVE_USAGE.responseTokenCount
		expect(rows.map((r) => [r.input_tokens, r.output_tokens, r.end_reason])).toEqual([[input, output, 'ok']])
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - (input * 1 + output * 4))
	})

	it('should bill the answer after a tool response as estimated when the upstream cuts it, besides the reported tool call', async () => {
		const { key, accountId } = await app.account(1)
		const { s, fc } = await weatherCall(key)
		// The answer after the tool response: its first part, then the upstream closes (1011) before any usageMetadata of it.
		s.session.sendToolResponse({ functionResponses: [{ id: fc.id, name: fc.name, response: { output: 'mock:hangup' } }] })
		expect((await s.closing).code).toBe(1011)
		expect(s.messages.map((m) => m.text).filter(Boolean).join('')).toBe('It is ')
		const rows = await rowsOf(accountId, 1)
		expect(rows.map((r) => [r.end_reason, r.status, r.estimated])).toEqual([['upstream_cut', 502, true]])
		// The tool call's generation as reported, once; the answer after it as estimated: as its prompt, the conversation
		// the tool call's generation saw and wrote plus the tool response the client sent; as its output, what was seen of it.
		const sent = mock.received.map((f) => JSON.parse(f)).find((f) => f.toolResponse?.functionResponses?.[0]?.id === fc.id)
		const input = LIVE_TOOL_CALL_USAGE.promptTokenCount + (LIVE_TOOL_CALL_USAGE.promptTokenCount + LIVE_TOOL_CALL_USAGE.responseTokenCount + countText(JSON.stringify(sent.toolResponse)))
		const output = LIVE_TOOL_CALL_USAGE.responseTokenCount + countText('It is ')
		expect(rows.map((r) => [r.input_tokens, r.output_tokens])).toEqual([[input, output]])
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - (input * 1 + output * 4))
	})

	it('should bill each turn as its own row, audio tokens at the audio prices', async () => {
		const { key, accountId } = await app.account(1)
		const s = await connect(key, 'gemini-live', { responseModalities: [Modality.AUDIO] })
		s.session.sendClientContent({ turns: 'Hi', turnComplete: true })
		await s.next(turnComplete)
		expect(s.messages.some((m) => m.data)).toBe(true)
		const before = s.messages.length
		s.session.sendClientContent({ turns: 'Again', turnComplete: true })
		await s.next((m) => turnComplete(m) && s.messages.indexOf(m) >= before)
		s.session.close()
		const rows = await rowsOf(accountId, 2)
		expect(rows.map((r) => [r.input_tokens, r.output_tokens, r.end_reason])).toEqual([
			[50, 110, 'ok'],
			[50, 110, 'ok'],
		])
		const u = LIVE_AUDIO_USAGE
		const turn = 30 * 1 + 20 * 3 + 10 * 4 + 100 * 12
		expect(u.promptTokenCount + u.responseTokenCount).toBe(160)
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 2 * turn)
	})

	it('should refuse a bad key with a close 1007, as Google does, before anything goes upstream', async () => {
		const handshakes = mock.handshakes.length
		const err = await connect('sk-not-a-key', 'gemini-live').then(
			() => undefined,
			(e: Error) => e,
		)
		expect(err?.message).toContain('(code 1007)')
		expect(err?.message).toContain('API key not valid. Please pass a valid API key.')
		expect(mock.handshakes.length).toBe(handshakes)
	})

	it('should refuse a model served by no Gemini channel, and an unknown one, with a close 1008 and nothing charged', async () => {
		const { key, accountId } = await app.account(1)
		const handshakes = mock.handshakes.length
		const openai = await connect(key, 'gpt-live').catch((e: Error) => e)
		expect((openai as Error).message).toContain('(code 1008)')
		expect((openai as Error).message).toContain('served only by Gemini channels')
		const unknown = await connect(key, 'gemini-nope').catch((e: Error) => e)
		expect((unknown as Error).message).toBe(
			'Live connection closed before setup completed (code 1008): models/gemini-nope is not found for API version v1, or is not supported for bidiGenerateContent.',
		)
		expect(mock.handshakes.length).toBe(handshakes)
		expect(await usageOf(app, accountId)).toEqual([])
		expect(micros(await app.balance(accountId))).toBe(1_000_000)
	})

	it('should refuse a model the key may not use, or a balance that cannot cover a turn, with a close 1008 and nothing charged', async () => {
		const handshakes = mock.handshakes.length
		const limited = await app.account(1, { allowed_models: ['gemini-live-mapped'] } as Record<string, unknown>)
		const notAllowed = await connect(limited.key, 'gemini-live').catch((e: Error) => e)
		expect((notAllowed as Error).message).toBe('Live connection closed before setup completed (code 1008): This API key may not use model "gemini-live"')
		const broke = await app.account(0)
		const poor = await connect(broke.key, 'gemini-live').catch((e: Error) => e)
		expect((poor as Error).message).toContain('(code 1008)')
		expect(mock.handshakes.length).toBe(handshakes)
		expect(await usageOf(app, limited.accountId)).toEqual([])
		expect(await usageOf(app, broke.accountId)).toEqual([])
	})

	it('should wait upstream for the usage of a turn the client left, then bill what was seen as client_abort', async () => {
		const { key, accountId } = await app.account(1)
		const closed = mock.closed.length
		const s = await connect(key, 'gemini-live')
		s.session.sendClientContent({ turns: 'mock:hold', turnComplete: true })
		await s.next((m) => !!m.text)
		s.session.close()
		// The mock never completes a held turn: the gateway waits DRAIN_MS for it, then estimates.
		const rows = await rowsOf(accountId, 1, DRAIN_MS + 3_000)
		expect(rows.map((r) => [r.end_reason, r.status, r.estimated])).toEqual([['client_abort', 200, true]])
		expect(rows[0]!.output_tokens).toBeGreaterThan(0)
		expect(mock.closed.length).toBe(closed + 1)
	}, 20_000)

	it('should tell the client of an upstream cut mid-turn with its close code and bill the turn as estimated', async () => {
		const { key, accountId } = await app.account(1)
		const s = await connect(key, 'gemini-live')
		s.session.sendClientContent({ turns: 'mock:hangup', turnComplete: true })
		expect((await s.closing).code).toBe(1011)
		const rows = await rowsOf(accountId, 1)
		expect(rows.map((r) => [r.end_reason, r.status, r.estimated])).toEqual([['upstream_cut', 502, true]])
		expect(rows[0]!.output_tokens).toBeGreaterThan(0)
		expect(micros(await app.balance(accountId))).toBeLessThan(1_000_000)
	})
})
