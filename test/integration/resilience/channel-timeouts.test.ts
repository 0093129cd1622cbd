/**
 * A channel's `settings.timeouts` honoured to the millisecond it configures, through the official SDKs (QA operator
 * report item 7). They used to ride on Bun's fetch `timeout`, a socket idle timeout on a coarse clock: `idle_ms`
 * 1500 and 4000 both cut a stalled stream at 8 s, 20000 at 24 s; and, since it also runs before the headers, a short
 * `idle_ms` cut a slow first byte (a non-streamed answer, sent whole when ready) long before `first_byte_ms`.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { startAnthropicMock, startOpenAIMock, type VendorMock } from '../../mocks'
import { startTestApp, type TestApp } from '../../helpers/app'
import { usageOf } from './rig'

const KEY = { openai: 'up-openai-timeouts-01', anthropic: 'up-anthropic-timeouts-02' }
const IDLE_MS = 1_500
const FIRST_BYTE_MS = 1_200
const PRICE = { input_per_mtok: 1, output_per_mtok: 2 }
/**
 * The shared clock ticks every 50 ms: a cut is at most two ticks late; the rest is room for a loaded machine (CI runs
 * two test files at once). Still well short of Bun's own 8 s step, which these tests tell apart from the setting.
 */
const SLACK_MS = 2_500

/**
 * An upstream that announces its answer's length, sends half of it and goes silent: a server of raw sockets, since
 * Bun's own drops a Content-Length given with a streamed body.
 */
const sizedStall = Bun.listen({
	hostname: '127.0.0.1',
	port: 0,
	socket: {
		data(socket) {
			socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 400\r\n\r\n{"id":"chatcmpl-sized","object":')
		},
	},
})

let openai: VendorMock
let anthropic: VendorMock
let app: TestApp
let key: string

beforeAll(async () => {
	openai = await startOpenAIMock({ apiKey: KEY.openai })
	anthropic = await startAnthropicMock({ apiKey: KEY.anthropic })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'oa-idle', type: 'openai', base_url: openai.url, api_key: KEY.openai, models: ['oa-idle'], model_map: { 'oa-idle': 'gpt-4o-mini' }, settings: { timeouts: { idle_ms: IDLE_MS } } },
				{ name: 'an-idle', type: 'anthropic', base_url: anthropic.url, api_key: KEY.anthropic, models: ['an-idle'], model_map: { 'an-idle': 'claude-sonnet-5' }, settings: { timeouts: { idle_ms: IDLE_MS } } },
				{ name: 'oa-first', type: 'openai', base_url: openai.url, api_key: KEY.openai, models: ['oa-first'], model_map: { 'oa-first': 'gpt-4o-mini' }, settings: { timeouts: { first_byte_ms: FIRST_BYTE_MS } } },
				{ name: 'oa-sized', type: 'openai', base_url: `http://127.0.0.1:${sizedStall.port}/v1`, api_key: KEY.openai, models: ['oa-sized'], settings: { timeouts: { first_byte_ms: FIRST_BYTE_MS, idle_ms: IDLE_MS } } },
				{
					name: 'oa-both',
					type: 'openai',
					base_url: openai.url,
					api_key: KEY.openai,
					models: ['oa-both', 'oa-both-instruct', 'oa-both-mod', 'oa-both-tts'],
					model_map: { 'oa-both': 'gpt-4o-mini', 'oa-both-instruct': 'gpt-3.5-turbo-instruct', 'oa-both-mod': 'omni-moderation-latest', 'oa-both-tts': 'tts-1' },
					settings: { timeouts: { first_byte_ms: FIRST_BYTE_MS, idle_ms: IDLE_MS } },
				},
			],
			models: [
				{ name: 'oa-idle', ...PRICE },
				{ name: 'an-idle', ...PRICE },
				{ name: 'oa-first', ...PRICE },
				{ name: 'oa-both', ...PRICE },
				{ name: 'oa-both-instruct', ...PRICE },
				{ name: 'oa-both-mod', ...PRICE },
				{ name: 'oa-sized', ...PRICE },
				{ name: 'oa-both-tts', per_mchar: 15 },
			],
		},
	})
	key = (await app.account(10)).key
}, 60_000)
afterAll(async () => {
	await app.close()
	await openai.stop()
	await anthropic.stop()
	sizedStall.stop(true)
})
beforeEach(() => {
	openai.reset()
	anthropic.reset()
})

const TEXT = 'one two three four five six seven eight'

describe('settings.timeouts.idle_ms', () => {
	it('should cut a stream that goes silent after content at idle_ms, not at Bun’s 8 s step (OpenAI SDK)', async () => {
		openai.fault = { kind: 'stall', afterChunks: 3 }
		const client = new OpenAI({ baseURL: `${app.url}/v1`, apiKey: key, maxRetries: 0 })
		const stream = await client.chat.completions.create(
			{ model: 'oa-idle', messages: [{ role: 'user', content: TEXT }], stream: true },
			{ headers: { 'x-request-id': 'idle-openai' } },
		)
		let text = ''
		let lastChunkAt = 0
		let failure: unknown
		try {
			for await (const chunk of stream) {
				text += chunk.choices[0]?.delta?.content ?? ''
				lastChunkAt = performance.now()
			}
		} catch (e) {
			failure = e
		}
		const silentFor = performance.now() - lastChunkAt
		// The mid-stream error frame reaches the SDK as an APIError.
		expect(failure).toBeInstanceOf(OpenAI.APIError)
		expect(text.length).toBeGreaterThan(0)
		expect(`Hello! You said: ${TEXT}`.startsWith(text)).toBe(true)
		expect(silentFor).toBeGreaterThanOrEqual(IDLE_MS - 50)
		expect(silentFor).toBeLessThan(IDLE_MS + SLACK_MS)
		const rows = await usageOf(app, 'idle-openai')
		expect(rows.map((r) => r.end_reason)).toEqual(['upstream_cut'])
		expect(rows[0]!.cost).toBeGreaterThan(0)
		// The upstream call was let go (its connection closed), not left open.
		const deadline = Date.now() + 2_000
		while (openai.aborts.length === 0 && Date.now() < deadline) await Bun.sleep(10)
		expect(openai.aborts.length).toBe(1)
	}, 30_000)

	it('should cut a silent Anthropic stream at idle_ms with event: error (Anthropic SDK)', async () => {
		anthropic.fault = { kind: 'stall', afterChunks: 4 }
		const client = new Anthropic({ baseURL: app.url, apiKey: key, maxRetries: 0 })
		const stream = client.messages.stream({ model: 'an-idle', max_tokens: 100, messages: [{ role: 'user', content: TEXT }] })
		let text = ''
		let lastEventAt = 0
		let failure: unknown
		try {
			for await (const ev of stream) {
				if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text
				lastEventAt = performance.now()
			}
		} catch (e) {
			failure = e
		}
		const silentFor = performance.now() - lastEventAt
		expect(failure).toBeInstanceOf(Anthropic.APIError)
		expect(text.length).toBeGreaterThan(0)
		expect(silentFor).toBeGreaterThanOrEqual(IDLE_MS - 50)
		expect(silentFor).toBeLessThan(IDLE_MS + SLACK_MS)
	}, 30_000)

	it('should end a stream silent before any content at idle_ms', async () => {
		// Only the first chunk (the assistant role, no text), then silence.
		openai.fault = { kind: 'stall', afterChunks: 1 }
		const client = new OpenAI({ baseURL: `${app.url}/v1`, apiKey: key, maxRetries: 0 })
		const started = performance.now()
		// The prefetch window (1 s) gives up waiting first, so the caller has its headers when idle_ms runs out.
		const stream = await client.chat.completions.create({ model: 'oa-idle', messages: [{ role: 'user', content: TEXT }], stream: true })
		let failure: unknown
		try {
			for await (const _ of stream) {
				// nothing comes
			}
		} catch (e) {
			failure = e
		}
		const took = performance.now() - started
		expect(failure).toBeInstanceOf(OpenAI.APIError)
		expect(took).toBeGreaterThanOrEqual(IDLE_MS - 50)
		expect(took).toBeLessThan(IDLE_MS + SLACK_MS)
	}, 30_000)

	it('should not count a slow first byte against a short idle_ms (a non-streamed answer comes whole)', async () => {
		// Past Bun's coarse step for a 1.5 s socket timeout (it fired at 8 s): the answer must still arrive.
		openai.faultOnce = { kind: 'slow', firstByteMs: 9_000 }
		const client = new OpenAI({ baseURL: `${app.url}/v1`, apiKey: key, maxRetries: 0, timeout: 30_000 })
		const r = await client.chat.completions.create({ model: 'oa-idle', messages: [{ role: 'user', content: 'slow but fine' }] })
		expect(r.choices[0]!.message.content).toBe('Hello! You said: slow but fine')
	}, 30_000)
})

describe('settings.timeouts.first_byte_ms', () => {
	it('should answer 504 at first_byte_ms when the headers do not come', async () => {
		openai.faultOnce = { kind: 'slow', firstByteMs: 5_000 }
		const client = new OpenAI({ baseURL: `${app.url}/v1`, apiKey: key, maxRetries: 0 })
		const started = performance.now()
		const err = (await client.chat.completions.create({ model: 'oa-first', messages: [{ role: 'user', content: TEXT }] }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>
		const took = performance.now() - started
		expect(err).toBeInstanceOf(OpenAI.APIError)
		expect(err.status).toBe(504)
		expect(took).toBeGreaterThanOrEqual(FIRST_BYTE_MS - 50)
		expect(took).toBeLessThan(FIRST_BYTE_MS + SLACK_MS)
	}, 30_000)
})

describe('a non-streamed answer whose body stalls', () => {
	// A body read whole is watched for silence as a stream is: cut at idle_ms (not at Bun's socket timeout, seconds
	// later on its coarse clock), the upstream did not answer in time: a 504 in the caller's shape (OpenAI
	// `timeout_error`), charged nothing, not the 502 of a broken answer. Chat and completions are read by their relays,
	// embeddings by its batch pool, moderations by the passthrough routes.
	const cases = [
		{ route: 'chat/completions', call: (c: OpenAI, id: string) => c.chat.completions.create({ model: 'oa-both', messages: [{ role: 'user', content: TEXT }] }, { headers: { 'x-request-id': id } }) },
		{ route: 'completions', call: (c: OpenAI, id: string) => c.completions.create({ model: 'oa-both-instruct', prompt: TEXT }, { headers: { 'x-request-id': id } }) },
		{ route: 'embeddings', call: (c: OpenAI, id: string) => c.embeddings.create({ model: 'oa-both', input: TEXT }, { headers: { 'x-request-id': id } }) },
		{ route: 'moderations', call: (c: OpenAI, id: string) => c.moderations.create({ model: 'oa-both-mod', input: TEXT }, { headers: { 'x-request-id': id } }) },
		// Its length announced (read natively, not chunk by chunk): the whole of it must come within idle_ms.
		{ route: 'chat/completions (sized)', call: (c: OpenAI, id: string) => c.chat.completions.create({ model: 'oa-sized', messages: [{ role: 'user', content: TEXT }] }, { headers: { 'x-request-id': id } }) },
	]
	it(`should answer 504 timeout_error at idle_ms on ${cases.map((c) => `/v1/${c.route}`).join(', ')}, charging nothing`, async () => {
		openai.fault = { kind: 'stall', afterChunks: 0 }
		const client = new OpenAI({ baseURL: `${app.url}/v1`, apiKey: key, maxRetries: 0, timeout: 30_000 })
		await Promise.all(
			cases.map(async (c) => {
				const id = `body-stall-${c.route.replace(/\W+/g, '-')}`
				const started = performance.now()
				const err = (await c.call(client, id).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>
				const took = performance.now() - started
				expect(err).toBeInstanceOf(OpenAI.APIError)
				expect([c.route, err.status, err.type, err.code]).toEqual([c.route, 504, 'timeout_error', 'upstream_timeout'])
				expect(took).toBeGreaterThanOrEqual(IDLE_MS - 50)
				expect(took).toBeLessThan(IDLE_MS + SLACK_MS)
				const rows = await usageOf(app, id)
				expect(rows.map((r) => [r.status, r.cost, r.end_reason])).toEqual([[504, 0, 'error']])
			}),
		)
	}, 30_000)

	// Speech is piped to the caller as it comes: its headers and first bytes are out when the body stalls, so the
	// caller's read fails. (The mock writes its headers with the first chunk.)
	it('should cut piped speech audio whose body stalls at idle_ms', async () => {
		openai.fault = { kind: 'stall', afterChunks: 1 }
		const client = new OpenAI({ baseURL: `${app.url}/v1`, apiKey: key, maxRetries: 0, timeout: 30_000 })
		const res = await client.audio.speech.create({ model: 'oa-both-tts', voice: 'alloy', input: TEXT, response_format: 'wav' })
		const started = performance.now()
		const read = await res.arrayBuffer().then(
			() => 'read whole',
			(e: unknown) => `failed: ${(e as Error).name}`,
		)
		const took = performance.now() - started
		expect(read).toStartWith('failed')
		expect(took).toBeLessThan(IDLE_MS + SLACK_MS)
	}, 30_000)
})
