/**
 * The `/mj/*` and `/suno/*` catch-alls forward with the channel's secret, so they must not reach what would show one
 * account another's tasks, nor the services' own accounts and administration: they forward only the paths a channel's
 * operator added (`settings.extra_task_paths`), to such channels (the allow list itself: task-allow-list.test.ts).
 * trueai-org/midjourney-proxy answers `POST /mj/task/list-by-ids` (list-by-condition under another name) with any task
 * by id and serves `/mj/admin/*` (Discord accounts, users, every task, logs, restart; `GET /mj/admin/current` answers
 * the caller's secret); novicezk's `/mj/account/list` answers each Discord account with its userToken; Suno-API's
 * `GET /suno/account` answers its Suno session cookie and JWT.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type TestApp, startTestApp } from '../../helpers/app'
import { type MidjourneyMock, startMidjourneyMock, startSunoMock, type SunoMock } from '../../mocks/tasks'

let up: MidjourneyMock
let upExtra: MidjourneyMock
let suno: SunoMock
let app: TestApp

beforeAll(async () => {
	up = await startMidjourneyMock({ apiKey: 'up-mj-secret', steps: 2 })
	upExtra = await startMidjourneyMock({ apiKey: 'up-mj-extra', steps: 2 })
	suno = await startSunoMock({ apiKey: 'up-suno-secret', steps: 2 })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'mj', type: 'imgsvc', base_url: up.url, api_key: 'up-mj-secret', models: ['mj_*'] },
				// Tried after the first for everything else: an extra path goes to the channels that list it, and only there.
				{ name: 'mj-extra', type: 'imgsvc', base_url: upExtra.url, api_key: 'up-mj-extra', models: ['mj_*'], priority: 1, settings: { extra_task_paths: ['GET /mj/other/list', 'POST /mj/notify/status'] } },
				{ name: 'suno', type: 'musicsvc', base_url: suno.url, api_key: 'up-suno-secret', models: ['suno_*'], settings: { extra_task_paths: ['GET /suno/other/list'] } },
			],
			models: [{ name: 'mj_imagine', per_request: 0.01 }] as never,
		},
	})
}, 30_000)
afterAll(async () => {
	await app?.close()
	await up?.stop()
	await upExtra?.stop()
	await suno?.stop()
})

async function mj(key: string, path: string, body?: unknown) {
	const res = await fetch(`${app.url}${path}`, { method: body === undefined ? 'GET' : 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
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
		['GET', '/mj/account/list'],
		['GET', '/mj/account/1/fetch'],
		['POST', '/mj/account/1/settings'],
	] as const)
		it(`should not forward ${method} ${path}`, async () => {
			const { key } = await app.account(1)
			up.reset()
			const r = await mj(key, path, method === 'POST' ? {} : undefined)
			expect({ status: r.status, forwarded: up.requests.map((q) => q.path) }).toEqual({ status: 404, forwarded: [] })
			expect(r.body).toMatchObject({ code: 3, properties: { error_code: 'not_found' } })
		})

	it('should forward the paths an operator added, as listed, to the channel that lists them', async () => {
		const { key } = await app.account(1)
		up.reset()
		upExtra.reset()
		await mj(key, '/mj/other/list?page=2')
		await mj(key, '/mj/notify/status', { ok: true })
		expect(upExtra.requests.map((q) => `${q.method} ${q.path} ${q.headers['mj-api-secret']}`)).toEqual(['GET /mj/other/list up-mj-extra', 'POST /mj/notify/status up-mj-extra'])
		expect(upExtra.requests[0]!.query).toEqual({ page: '2' })
		expect(up.requests).toEqual([])
	})

	for (const [method, path] of [
		['POST', '/mj/other/list'],
		['GET', '/mj/notify/status'],
		['GET', '/mj/other/list/'],
		['GET', '/mj/Other/list'],
		['GET', '/mj/other'],
		['GET', '/mj/other/list/more'],
	] as const)
		it(`should not forward ${method} ${path}, which no channel lists`, async () => {
			const { key } = await app.account(1)
			up.reset()
			upExtra.reset()
			const r = await mj(key, path, method === 'POST' ? {} : undefined)
			expect({ status: r.status, forwarded: [...up.requests, ...upExtra.requests].map((q) => q.path) }).toEqual({ status: 404, forwarded: [] })
			expect(r.body).toMatchObject({ code: 3, properties: { error_code: 'not_found' } })
		})
})

describe('the /suno catch-all', () => {
	for (const [method, path] of [
		['GET', '/suno/account'],
		['POST', '/suno/fetch/abc'],
		['GET', '/suno/fetch'],
	] as const)
		it(`should not forward ${method} ${path}`, async () => {
			const { key } = await app.account(1)
			suno.reset()
			const r = await mj(key, path, method === 'POST' ? {} : undefined)
			expect({ status: r.status, forwarded: suno.requests.map((q) => q.path) }).toEqual({ status: 404, forwarded: [] })
			expect(r.body).toMatchObject({ code: 'not_found', data: null })
		})

	it('should forward the paths an operator added, and no other', async () => {
		const { key } = await app.account(1)
		suno.reset()
		await mj(key, '/suno/other/list')
		const other = await mj(key, '/suno/other/lists')
		expect({ status: other.status, forwarded: suno.requests.map((q) => `${q.method} ${q.path}`) }).toEqual({ status: 404, forwarded: ['GET /suno/other/list'] })
	})
})
