/**
 * Webhook URLs in task submits: midjourney-proxy POSTs a task to its `notifyHook`, the Suno API to its `notify_hook`,
 * from the upstream's own network. A caller must not aim them at private, loopback or metadata addresses (in any
 * spelling), which the SSRF guard refuses for URLs the gateway fetches itself; a public one goes through untouched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type TestApp, startTestApp } from '../../helpers/app'
import { type MidjourneyMock, startMidjourneyMock, startSunoMock, type SunoMock } from '../../mocks/tasks'
import { call, micros, priceList } from '../surface/helpers'

let mj: MidjourneyMock
let suno: SunoMock
let app: TestApp

beforeAll(async () => {
	mj = await startMidjourneyMock({ apiKey: 'up-mj', steps: 2 })
	suno = await startSunoMock({ apiKey: 'up-suno', steps: 2 })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'mj', type: 'imgsvc', base_url: mj.url, api_key: 'up-mj', models: ['mj_*'] },
				{ name: 'suno', type: 'musicsvc', base_url: suno.url, api_key: 'up-suno', models: ['suno_*'] },
			],
			models: priceList([
				{ name: 'mj_imagine', per_request: 0.05 },
				{ name: 'suno_music', per_request: 0.1 },
			]),
		},
	})
}, 30_000)
afterAll(async () => {
	await app.close()
	await mj.stop()
	await suno.stop()
})

const PRIVATE = [
	'http://169.254.169.254/latest/meta-data/',
	'http://127.0.0.1:8080/admin',
	'http://localhost/hook',
	'http://2130706433/hook',
	'http://0x7f.1/hook',
	'http://[::ffff:10.0.0.1]/hook',
	'http://10.0.0.5/hook',
	'file:///etc/passwd',
	'gopher://127.0.0.1:6379/_FLUSHALL',
]

describe('midjourney notifyHook', () => {
	for (const hook of PRIVATE)
		it(`should refuse ${hook} with 400, send nothing upstream and charge nothing`, async () => {
			const { key, accountId } = await app.account(1)
			mj.reset()
			const r = await call(app, key, '/mj/submit/imagine', { body: { prompt: 'a lighthouse', notifyHook: hook } })
			expect(r.status).toBe(400)
			expect(JSON.stringify(r.body)).toContain('notifyHook')
			expect(mj.requests.length).toBe(0)
			expect(micros(await app.balance(accountId))).toBe(1_000_000)
		})

	it('should refuse it on an action and a face swap too', async () => {
		const { key } = await app.account(1)
		mj.reset()
		for (const [path, body] of [
			['/mj/submit/action', { taskId: 'x', customId: 'MJ::JOB::upsample::1::x', notifyHook: 'http://169.254.169.254/' }],
			['/mj/insight-face/swap', { sourceBase64: 'data:image/png;base64,AA==', targetBase64: 'data:image/png;base64,AA==', notifyHook: 'http://127.0.0.1/' }],
		] as const) {
			const r = await call(app, key, path, { body })
			expect(r.status).toBe(400)
		}
		expect(mj.requests.length).toBe(0)
	})

	it('should pass a public hook through as sent', async () => {
		const { key } = await app.account(1)
		mj.reset()
		const r = await call(app, key, '/mj/submit/imagine', { body: { prompt: 'a lighthouse', notifyHook: 'https://203.0.113.9/mj-hook' } })
		expect(r.status).toBe(200)
		expect(JSON.parse(mj.requests[0]!.text!).notifyHook).toBe('https://203.0.113.9/mj-hook')
	})
})

describe('suno notify_hook', () => {
	it('should refuse a private hook with 400 and send nothing upstream', async () => {
		const { key, accountId } = await app.account(1)
		suno.reset()
		const r = await call(app, key, '/suno/submit/music', { body: { prompt: 'a song', notify_hook: 'http://169.254.169.254/latest/' } })
		expect(r.status).toBe(400)
		expect(suno.requests.length).toBe(0)
		expect(micros(await app.balance(accountId))).toBe(1_000_000)
	})

	it('should pass a public hook through', async () => {
		const { key } = await app.account(1)
		suno.reset()
		const r = await call(app, key, '/suno/submit/music', { body: { prompt: 'a song', notify_hook: 'https://203.0.113.9/suno' } })
		expect(r.status).toBe(200)
		expect(JSON.parse(suno.requests[0]!.text!).notify_hook).toBe('https://203.0.113.9/suno')
	})
})
