/**
 * A non-streamed answer sends its headers only once it is whole, and a reasoning model, a large image or a long
 * transcript can take minutes. The gateway's wait for an upstream's headers (`first_byte_ms`, 2 minutes by default)
 * is meant for a stream's; applied to a whole answer it cut the answer the vendor was still making (and billed), and
 * failed over to pay for it again. A non-streamed call now waits `answer_ms` (10 minutes by default, as the vendors'
 * SDKs do; a `first_byte_ms` the operator set still applies to it when `answer_ms` is not set).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import { toFile } from 'openai'
import { channelTimeouts, DEFAULT_ANSWER_MS } from '../../../src/relay/upstream-fetch'
import { wav } from '../../helpers/wav'
import { type Matrix, SETUP_MS, startMatrix, usageRows } from './harness'

const SLOW_MS = 2_000
/** Models of channels that wait 1 s for a stream's headers and 10 s for a whole answer. */
const SPLIT = { openai: 'gpt-split', anthropic: 'claude-split', gemini: 'gemini-split', whisper: 'whisper-split' }

let m: Matrix
beforeAll(async () => {
	const timeouts = { first_byte_ms: 1_000, answer_ms: 10_000 }
	m = await startMatrix({
		channels: (mocks) => [
			{ name: 'oa-split', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: [SPLIT.openai, SPLIT.whisper], model_map: { [SPLIT.openai]: 'gpt-4o-mini', [SPLIT.whisper]: 'whisper-1' }, settings: { timeouts } },
			{ name: 'an-split', type: 'anthropic', base_url: mocks.anthropic.url, api_key: 'up-anthropic', models: [SPLIT.anthropic], model_map: { [SPLIT.anthropic]: 'claude-sonnet-4-6' }, settings: { timeouts } },
			{ name: 'ge-split', type: 'gemini', base_url: mocks.gemini.url, api_key: 'up-gemini', models: [SPLIT.gemini], model_map: { [SPLIT.gemini]: 'gemini-2.5-flash' }, settings: { timeouts } },
		],
		models: [
			...[SPLIT.openai, SPLIT.anthropic, SPLIT.gemini].map((name) => ({ name, input_per_mtok: 1, output_per_mtok: 2 })),
			{ name: SPLIT.whisper, per_minute: 0.006 },
		],
	})
}, SETUP_MS)
afterAll(() => m.close())

const slowUpstreams = () => {
	for (const mock of Object.values(m.mocks)) mock.fault = { kind: 'slow', firstByteMs: SLOW_MS }
}
const fastUpstreams = () => {
	for (const mock of Object.values(m.mocks)) mock.fault = undefined
}

describe('a whole answer slower than a stream may be to start', () => {
	it('should be waited for on every protocol and route, and billed once', async () => {
		const acct = await m.account()
		const calls = () => m.mocks.openai.requests.length + m.mocks.anthropic.requests.length + m.mocks.gemini.requests.length
		const before = calls()
		slowUpstreams()
		try {
			const [chat, message, response, generated, transcript] = await Promise.all([
				acct.openai.chat.completions.create({ model: SPLIT.anthropic, messages: [{ role: 'user', content: 'think long' }] }),
				acct.anthropic.messages.create({ model: SPLIT.openai, max_tokens: 64, messages: [{ role: 'user', content: 'think long' }] }),
				acct.openai.responses.create({ model: SPLIT.gemini, input: 'think long' }),
				new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } }).models.generateContent({ model: SPLIT.gemini, contents: 'think long' }),
				acct.openai.audio.transcriptions.create({ model: SPLIT.whisper, file: await toFile(wav(3), 'memo.wav', { type: 'audio/wav' }) }),
			])
			expect(chat.choices[0]!.message.content).toContain('think long')
			expect(message.content[0]).toMatchObject({ type: 'text' })
			expect(response.output_text).toContain('think long')
			expect(generated.text).toContain('think long')
			expect(transcript.text).toContain('memo.wav')
		} finally {
			fastUpstreams()
		}
		const rows = await usageRows(m, acct.accountId)
		expect(rows.map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
		// Each answer asked for once: no call was cut and sent again.
		expect(calls() - before).toBe(5)
	}, 30_000)

	it('should still fail a stream whose headers come later than first_byte_ms', async () => {
		const acct = await m.account()
		slowUpstreams()
		try {
			const streamed = await acct.openai.chat.completions.create({ model: SPLIT.openai, messages: [{ role: 'user', content: 'streamed' }], stream: true }).catch((e: { status?: number }) => e)
			expect((streamed as { status?: number }).status).toBe(504)
		} finally {
			fastUpstreams()
		}
	}, 30_000)

	it('should wait 10 minutes for a whole answer by default, or a first_byte_ms the operator set', () => {
		expect(DEFAULT_ANSWER_MS).toBe(600_000)
		expect(channelTimeouts({}, 'answer')).toEqual({ firstByteMs: 600_000, idleMs: 300_000 })
		expect(channelTimeouts({}, 'headers')).toEqual({ firstByteMs: 120_000, idleMs: 300_000 })
		expect(channelTimeouts({ timeouts: { first_byte_ms: 30_000 } }, 'answer').firstByteMs).toBe(30_000)
		expect(channelTimeouts({ timeouts: { first_byte_ms: 30_000, answer_ms: 900_000 } }, 'answer').firstByteMs).toBe(900_000)
		expect(channelTimeouts({ timeouts: { answer_ms: 900_000 } }, 'headers').firstByteMs).toBe(120_000)
	})
})
