/**
 * Integer settings as operators write them: a blank value (a compose file's `TASK_MAX_AGE_MS=`) means the default,
 * and one that is not an integer (`15s`) stops the start naming the variable, as PORT does. Before, the task poller
 * read them with Number(): blank was 0 (every open task failed and refunded at its first poll, the poller running
 * back to back) and `15s` NaN (a timer firing every millisecond).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startUntilExit } from '../../helpers/start-process'
import { startVideoMock, type VideoMock } from '../../mocks/tasks'
import { startTaskPoller } from '../../../src/tasks/poller'
import { call } from '../surface/helpers'


let up: VideoMock
let app: TestApp

beforeAll(async () => {
	up = await startVideoMock({ apiKey: 'up-video', steps: 50 })
	app = await startTestApp({
		env: { TASK_POLL_INTERVAL_MS: '', TASK_MAX_AGE_MS: ' ', SHUTDOWN_GRACE_MS: '' },
		config: {
			channels: [{ name: 'vid', type: 'video', base_url: up.url, api_key: 'up-video', models: ['sora-2'] }],
			models: [{ name: 'sora-2', per_request: 0.25 }],
		},
	})
}, 60_000)

afterAll(async () => {
	await app.close()
	await up.stop()
})

const start = (env: Record<string, string>) => startUntilExit('audit-op-env', env)

describe('integer settings', () => {
	it('should take a blank TASK_POLL_INTERVAL_MS and TASK_MAX_AGE_MS as their defaults: a fresh task runs on, polled every 15 s', async () => {
		expect(app.svc.env).toMatchObject({ taskPollIntervalMs: 15_000, taskMaxAgeMs: 24 * 3_600_000, shutdownGraceMs: 30_000 })
		const { key, accountId } = await app.account(1)
		const sub = await call(app, key, '/v1/video/generations', { body: { model: 'sora-2', prompt: 'a lighthouse at dusk' } })
		expect(sub.status).toBe(200)
		const polls = () => up.requests.filter((r) => r.method === 'GET').length
		const before = polls()
		// The timer of a poller started with the settings: nothing is due within its first 15 s.
		const idle = startTaskPoller(app.svc)
		await Bun.sleep(300)
		await idle.stop()
		expect(polls()).toBe(before)
		// A round now (as one 15 s later would): the task is polled and runs on, neither failed nor refunded.
		const p = startTaskPoller(app.svc, { idleMs: 0 })
		try {
			expect(await p.tick()).toBe(1)
		} finally {
			await p.stop()
		}
		expect(polls()).toBe(before + 1)
		const task = await call(app, key, `/v1/video/generations/${sub.body.id}`)
		expect(task.body.status).not.toBe('failed')
		expect(await app.balance(accountId)).toBe(0.75)
	})

	it('should refuse to start on a setting that is not a whole number of milliseconds, naming it', async () => {
		for (const [name, value] of [['TASK_POLL_INTERVAL_MS', '15s'], ['TASK_MAX_AGE_MS', '0'], ['SHUTDOWN_GRACE_MS', '30s']] as const) {
			const r = await start({ [name]: value })
			expect(r.code).toBe(1)
			expect(r.stderr).toContain(`${name} must be`)
			expect(r.stderr).toContain(`got "${value}"`)
		}
	}, 60_000)
})
