/**
 * The official `openai` SDK's Realtime client against the gateway. The SDK builds only `wss:` URLs from its
 * `baseURL`, so the gateway listens here with TLS too (test/fixtures/tls's self-signed certificate; the `ws`
 * transport, `openai/realtime/ws`, takes `rejectUnauthorized: false`).
 */
import { afterAll, beforeAll, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { OpenAIRealtimeWS } from 'openai/realtime/ws'
import type { TestApp } from '../../helpers/app'
import { REALTIME_USAGE, type RealtimeMock } from '../../mocks/openai/realtime'
import { type RealtimeRig, startRealtimeRig, stopRealtimeRig } from './realtime-rig'
import { micros, priceList, usageOf } from './helpers'

let rt: RealtimeMock
let app: TestApp
let tls: RealtimeRig['tls']
let rig: RealtimeRig | undefined

beforeAll(async () => {
	rig = await startRealtimeRig((url) => ({
		channels: [
			{
				name: 'rt',
				type: 'openai',
				base_url: url,
				api_key: 'up-rt',
				models: ['gpt-realtime'],
			},
		],
		models: priceList([
			{
				name: 'gpt-realtime',
				input_per_mtok: 4,
				output_per_mtok: 16,
				cache_read_per_mtok: 0.4,
				audio_input_per_mtok: 32,
				audio_output_per_mtok: 64,
			},
		]),
	}))
	;({ rt, app, tls } = rig)
}, 30_000)

afterAll(() => stopRealtimeRig(rig))

it('should run a Realtime session with the official SDK client and bill its response', async () => {
	const { key, accountId } = await app.account(1)
	const client = new OpenAI({
		apiKey: key,
		baseURL: `https://127.0.0.1:${tls.server!.port}/v1`,
	})
	const rtc = new OpenAIRealtimeWS({ model: 'gpt-realtime', options: { rejectUnauthorized: false } }, client)
	const events: string[] = []
	rtc.on('event', (e) => void events.push(e.type))
	const session = await new Promise<any>((resolve, reject) => {
		rtc.on('session.created', resolve)
		rtc.on('error', reject)
	})
	expect(session.session.model).toBe('gpt-realtime')
	rtc.send({ type: 'response.create' })
	const done = await new Promise<any>((resolve) => rtc.on('response.done', resolve))
	expect(done.response.usage).toEqual(REALTIME_USAGE)
	expect(events).toEqual([
		'session.created',
		'response.created',
		'response.output_audio.delta',
		'response.output_audio.delta',
		'response.output_audio_transcript.delta',
		'response.done',
	])
	rtc.close()
	const cost = 10 * 4 + 70 * 32 + 40 * 0.4 + 50 * 16 + 200 * 64
	for (let i = 0; i < 100 && micros(await app.balance(accountId)) !== 1_000_000 - cost; i++) await Bun.sleep(20)
	expect(micros(await app.balance(accountId))).toBe(1_000_000 - cost)
	expect((await usageOf(app, accountId)).map((r) => r.endpoint)).toEqual(['/v1/realtime'])
})
