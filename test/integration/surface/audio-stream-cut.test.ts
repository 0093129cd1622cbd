/**
 * Speech streamed as events (`stream_format: "sse"`) that the upstream ends without its `speech.audio.done`: the client
 * is told with an error event, as a transcription is (audio.test.ts), rather than reading a clean end and keeping
 * partial audio; nothing is charged, as for any stream cut short.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { micros, priceList, usageOf } from './helpers'

let oa: VendorMock
let app: TestApp

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	app = await startTestApp({
		config: {
			channels: [{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['gpt-4o-transcribe', 'gpt-4o-mini-tts'] }],
			models: priceList([
				{ name: 'gpt-4o-transcribe', input_per_mtok: 2.5, output_per_mtok: 10, audio_input_per_mtok: 6 },
				{ name: 'gpt-4o-mini-tts', input_per_mtok: 0.6, output_per_mtok: 0.6, audio_output_per_mtok: 12 },
			]),
		},
	})
}, 60_000)

afterAll(async () => {
	await app.close()
	await oa.stop()
})

/** The account's usage rows once the stream's charge is settled (just after its end). */
async function settled(accountId: number) {
	for (let i = 0; i < 100 && (await usageOf(app, accountId)).length === 0; i++) await Bun.sleep(20)
	return usageOf(app, accountId)
}

describe('speech events cut short by the upstream', () => {
	it('should end speech streamed as events with an error event, charging nothing', async () => {
		const { key, accountId } = await app.account(1)
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		oa.faultOnce = { kind: 'cut', afterChunks: 1 }
		const res = await openai.audio.speech.create({ model: 'gpt-4o-mini-tts', input: 'hello there friend', voice: 'alloy', stream_format: 'sse' })
		const events = (await res.text()).split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as { type: string; error?: { code: string } })
		expect(events.map((e) => e.type)).not.toContain('speech.audio.done')
		expect(events.at(-1)).toMatchObject({ type: 'error', error: { type: 'api_error', code: 'upstream_cut' } })
		const rows = await settled(accountId)
		expect(rows[0]).toMatchObject({ endpoint: '/v1/audio/speech', end_reason: 'upstream_cut' })
		expect(micros(rows[0]!.cost)).toBe(0)
		expect(micros(await app.balance(accountId))).toBe(1_000_000)
	})
})
