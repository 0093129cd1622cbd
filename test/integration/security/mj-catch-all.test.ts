/**
 * The `/mj/*` catch-all forwards the proxy's other routes with the channel's secret, so it must not reach what would
 * show one account another's tasks, nor the proxy's own administration. trueai-org/midjourney-proxy answers
 * `POST /mj/task/list-by-ids` (list-by-condition under another name) with any task by id, and serves `/mj/admin/*`
 * (Discord accounts, users, every task, logs, restart; `GET /mj/admin/current` even answers the caller's secret).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type TestApp, startTestApp } from '../../helpers/app'
import { type MidjourneyMock, startMidjourneyMock } from '../../mocks/tasks'

let up: MidjourneyMock
let app: TestApp

beforeAll(async () => {
	up = await startMidjourneyMock({ apiKey: 'up-mj-secret', steps: 2 })
	app = await startTestApp({
		config: { channels: [{ name: 'mj', type: 'imgsvc', base_url: up.url, api_key: 'up-mj-secret', models: ['mj_*'] }], models: [{ name: 'mj_imagine', per_request: 0.01 }] as never },
	})
}, 30_000)
afterAll(async () => {
	await app?.close()
	await up?.stop()
})

async function mj(key: string, path: string, body?: unknown) {
	const res = await fetch(`${app.url}${path}`, { method: body === undefined ? 'GET' : 'POST', headers: { 'mj-api-secret': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
	const text = await res.text()
	return { status: res.status, text, body: (() => { try { return JSON.parse(text) } catch { return undefined } })() }
}

describe('the /mj catch-all', () => {
	it("should answer list-by-ids with the caller's own tasks only", async () => {
		const a = await app.account(1)
		const b = await app.account(1)
		const mine = (await mj(a.key, '/mj/submit/imagine', { prompt: 'mine' })).body.result as string
		const theirs = (await mj(b.key, '/mj/submit/imagine', { prompt: 'theirs' })).body.result as string
		expect(typeof theirs).toBe('string')
		const r = await mj(a.key, '/mj/task/list-by-ids', { ids: [mine, theirs] })
		expect(r.status).toBe(200)
		expect(r.body.map((t: { id: string }) => t.id)).toEqual([mine])
	})

	for (const [method, path] of [
		['GET', '/mj/admin/current'],
		['POST', '/mj/admin/restart'],
		['POST', '/mj/admin/tasks'],
		['GET', '/mj/admin'],
		['POST', '/mj/task/list'],
		['GET', '/mj/task/anything'],
	] as const)
		it(`should not forward ${method} ${path}`, async () => {
			const { key } = await app.account(1)
			up.reset()
			const r = await mj(key, path, method === 'POST' ? {} : undefined)
			expect({ status: r.status, forwarded: up.requests.map((q) => q.path) }).toEqual({ status: 404, forwarded: [] })
			expect(r.body).toMatchObject({ code: 3, properties: { error_code: 'not_found' } })
		})

	it("should still forward the proxy's other routes", async () => {
		const { key } = await app.account(1)
		up.reset()
		await mj(key, '/mj/account/list')
		expect(up.requests.map((q) => q.path)).toEqual(['/mj/account/list'])
	})
})
