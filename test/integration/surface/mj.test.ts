import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type TestApp, startTestApp } from '../../helpers/app'
import { type MidjourneyMock, startMidjourneyMock } from '../../mocks/tasks'
import { startTaskPoller } from '../../../src/tasks/poller'
import { call, micros, priceList, usageOf } from './helpers'

let up: MidjourneyMock
let app: TestApp

beforeAll(async () => {
	up = await startMidjourneyMock({ apiKey: 'up-mj', steps: 2 })
	app = await startTestApp({
		config: {
			channels: [{ name: 'mj', type: 'imgsvc', base_url: up.url, api_key: 'up-mj', models: ['mj_*'], settings: { extra_task_paths: ['GET /mj/other/list'] } }],
			models: priceList([
				{ name: 'mj_imagine', per_request: 0.05 },
				{ name: 'mj_upscale', per_request: 0.02 },
				{ name: 'mj_variation', per_request: 0.04 },
				{ name: 'mj_action', per_request: 0.03 },
				{ name: 'mj_blend', per_request: 0.05 },
				{ name: 'mj_describe', per_request: 0.01 },
			]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await up.stop()
})

/** What midjourney clients send: the gateway key in `mj-api-secret`. */
const mj = (key: string, path: string, body?: unknown) => call(app, 'unused', path, { body, headers: { authorization: '', 'mj-api-secret': key } })
const imagine = (key: string, prompt: string) => mj(key, '/mj/submit/imagine', { prompt })
const spent = async (accountId: number) => 1_000_000 - micros(await app.balance(accountId))

describe('/mj/submit', () => {
	it('should submit with the channel secret, answer the proxy body as is and charge mj_imagine', async () => {
		const { key, accountId } = await app.account(1)
		up.reset()
		const r = await imagine(key, 'a lighthouse')
		expect(r.status).toBe(200)
		expect(r.body).toMatchObject({ code: 1, description: 'Submit success' })
		expect(typeof r.body.result).toBe('string')
		expect(up.requests[0]!.headers['mj-api-secret']).toBe('up-mj')
		expect(up.requests[0]!.path).toBe('/mj/submit/imagine')
		expect(await spent(accountId)).toBe(50_000)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ model: 'mj_imagine', endpoint: '/mj/submit/imagine', cost: 0.05 })
	})

	it('should accept the key as a Bearer token too, and charge a queued job (code 22)', async () => {
		const { key, accountId } = await app.account(1)
		const r = await call(app, key, '/mj/submit/imagine', { body: { prompt: 'busy #queue' } })
		expect(r.body.code).toBe(22)
		expect(await spent(accountId)).toBe(50_000)
	})

	it('should pass a refusal (banned prompt) back uncharged and record no task', async () => {
		const { key, accountId } = await app.account(1)
		const r = await imagine(key, 'something #banned')
		expect(r.status).toBe(200)
		expect(r.body.code).toBe(24)
		expect(await spent(accountId)).toBe(0)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ cost: 0, end_reason: 'rejected' })
	})

	it('should price follow-ups by action and refuse to act on another account\'s task', async () => {
		const { key, accountId } = await app.account(1)
		const other = await app.account(1)
		const parent = (await imagine(key, 'mountains')).body.result as string
		const up1 = await mj(key, '/mj/submit/action', { taskId: parent, customId: `MJ::JOB::upsample::1::${parent}` })
		expect(up1.body.code).toBe(1)
		const v1 = await mj(key, '/mj/submit/simple-change', { content: `${parent} V2` })
		expect(v1.body.code).toBe(1)
		const reroll = await mj(key, '/mj/submit/change', { taskId: parent, action: 'REROLL', index: 0 })
		expect(reroll.body.code).toBe(1)
		expect(await spent(accountId)).toBe(50_000 + 20_000 + 40_000 + 30_000)
		// The same upscale again: the proxy answers 21 with the existing task, which is not charged twice.
		const again = await mj(key, '/mj/submit/action', { taskId: parent, customId: `MJ::JOB::upsample::1::${parent}` })
		expect(again.body).toMatchObject({ code: 21, result: up1.body.result })
		expect(await spent(accountId)).toBe(140_000)
		const stolen = await mj(other.key, '/mj/submit/action', { taskId: parent, customId: `MJ::JOB::upsample::2::${parent}` })
		expect(stolen.status).toBe(404)
		expect(1_000_000 - micros(await app.balance(other.accountId))).toBe(0)
	})

	it('should charge a modal job once: the action that waits for its window, not the modal submit that confirms the same task', async () => {
		const { key, accountId } = await app.account(1)
		const parent = (await imagine(key, 'a harbour')).body.result as string
		// A custom zoom waits for a modal: the proxy answers 21 with a new task, which is the job (charged as mj_action).
		const zoom = await mj(key, '/mj/submit/action', { taskId: parent, customId: `MJ::CustomZoom::${parent}` })
		expect(zoom.body).toMatchObject({ code: 21, description: 'Waiting for window confirm' })
		const id = zoom.body.result as string
		expect((await mj(key, `/mj/task/${id}/fetch`)).body.status).toBe('MODAL')
		expect(await spent(accountId)).toBe(50_000 + 30_000)
		// The modal submits that same task: the proxy's answer is relayed as it is, and nothing more is charged.
		const modal = await mj(key, '/mj/submit/modal', { taskId: id, prompt: 'a harbour --ar 1:1 --zoom 1.5' })
		expect(modal.status).toBe(200)
		expect(modal.body).toMatchObject({ code: 1, result: id })
		expect(await spent(accountId)).toBe(50_000 + 30_000)
		const rows = await usageOf(app, accountId)
		expect(rows.map((r) => [r.endpoint, r.cost, r.end_reason])).toEqual([
			['/mj/submit/imagine', 0.05, 'ok'],
			['/mj/submit/action', 0.03, 'ok'],
			['/mj/submit/modal', 0, 'existing_task'],
		])
		// The task runs on as the caller's, to its end.
		let task = (await mj(key, `/mj/task/${id}/fetch`)).body
		for (let i = 0; i < 3 && task.status !== 'SUCCESS'; i++) task = (await mj(key, `/mj/task/${id}/fetch`)).body
		expect(task.status).toBe('SUCCESS')
	})

	it('should pass uploads through unbilled', async () => {
		const { key, accountId } = await app.account(1)
		const r = await mj(key, '/mj/submit/upload-discord-images', { base64Array: ['data:image/png;base64,AAAA'] })
		expect(r.body.code).toBe(1)
		expect(r.body.result).toHaveLength(1)
		expect(await spent(accountId)).toBe(0)
	})

	it('should answer 401 without a key and 402 without balance', async () => {
		expect((await mj('', '/mj/submit/imagine', { prompt: 'x' })).status).toBe(401)
		const { key } = await app.account(0.01)
		expect((await imagine(key, 'x')).status).toBe(402)
	})
})

describe('/mj/task', () => {
	it('should fetch only the caller\'s tasks and follow them to completion', async () => {
		const { key } = await app.account(1)
		const other = await app.account(1)
		const id = (await imagine(key, 'forest')).body.result as string
		expect((await mj(other.key, `/mj/task/${id}/fetch`)).status).toBe(404)
		expect((await mj(key, `/mj/task/${id}/fetch`)).body).toMatchObject({ id, status: 'IN_PROGRESS', progress: '50%' })
		const done = await mj(key, `/mj/task/${id}/fetch`)
		expect(done.body).toMatchObject({ status: 'SUCCESS', progress: '100%' })
		expect(done.body.imageUrl).toContain(id)
		const [task] = await app.svc.db.sql.query<{ status: string }>(`SELECT status FROM tasks WHERE upstream_id = $1`, [id])
		expect(task!.status).toBe('completed')
	})

	it('should refund a failed task once, whoever sees the failure', async () => {
		const { key, accountId } = await app.account(1)
		const id = (await imagine(key, 'doomed #fail')).body.result as string
		await mj(key, `/mj/task/${id}/fetch`)
		const seen = await Promise.all([mj(key, `/mj/task/${id}/fetch`), mj(key, '/mj/task/list-by-condition', { ids: [id] }), mj(key, `/mj/task/${id}/fetch`)])
		expect(seen[0]!.body.status).toBe('FAILURE')
		expect(await spent(accountId)).toBe(0)
		expect((await usageOf(app, accountId)).filter((r) => r.end_reason === 'refund')).toHaveLength(1)
	})

	it('should leave other accounts\' tasks out of list-by-condition and list', async () => {
		const a = await app.account(1)
		const b = await app.account(1)
		const mine = (await imagine(a.key, 'mine')).body.result as string
		const theirs = (await imagine(b.key, 'theirs')).body.result as string
		const byCondition = await mj(a.key, '/mj/task/list-by-condition', { ids: [mine, theirs] })
		expect(byCondition.body.map((t: { id: string }) => t.id)).toEqual([mine])
		const list = await mj(a.key, '/mj/task/list')
		expect(list.body.map((t: { id: string }) => t.id)).toEqual([mine])
		const queue = await mj(b.key, '/mj/task/queue')
		expect(queue.body.map((t: { id: string }) => t.id)).toEqual([theirs])
	})

	it("should refuse a list body that is not JSON (a form, XML) with 415 in midjourney-proxy's shape", async () => {
		// Elysia reads a form, and application/xml as one too, into an object without `ids`: an empty list, answered 200.
		const { key } = await app.account(1)
		for (const path of ['/mj/task/list-by-condition', '/mj/task/list-by-ids'])
			for (const [type, body] of [
				['application/x-www-form-urlencoded', 'a=b&c=d'],
				['application/xml', '<ids/>'],
			]) {
				const res = await fetch(`${app.url}${path}`, { method: 'POST', headers: { 'mj-api-secret': key, 'content-type': type! }, body })
				expect({ path, type, status: res.status }).toEqual({ path, type, status: 415 })
				expect(await res.json()).toMatchObject({ code: 4, result: null, properties: { error_code: 'unsupported_media_type' } })
			}
		expect((await mj(key, '/mj/task/list-by-ids', { ids: [] })).status).toBe(200)
	})

	it('should be finished by the background poller when nobody fetches', async () => {
		const { key } = await app.account(1)
		const id = (await imagine(key, 'unattended')).body.result as string
		const p = startTaskPoller(app.svc, { intervalMs: 60_000, idleMs: 0 })
		try {
			await p.tick()
			await Bun.sleep(5)
			await p.tick()
		} finally {
			await p.stop()
		}
		const [task] = await app.svc.db.sql.query<{ status: string; progress: number }>(`SELECT status, progress FROM tasks WHERE upstream_id = $1`, [id])
		expect(task).toMatchObject({ status: 'completed', progress: 100 })
	})

	it('should refuse a path not written plainly, sending nothing upstream and charging nothing', async () => {
		// midjourney-proxy's server (Tomcat) collapses `//` and drops `;…`: these would be an unbilled imagine and a
		// fetch of a task the ownership check never saw.
		const { key, accountId } = await app.account(1)
		up.reset()
		for (const path of ['/mj//submit/imagine', '/mj/submit//imagine', '/mj/task;x/1712000000000/fetch', '/mj//task/1712000000000/fetch', '/mj/%2e%2e/submit/imagine']) {
			const r = await mj(key, path, { prompt: 'free castle' })
			expect(r.status).toBe(404)
			// `/mj/%2e%2e/…` is `/submit/imagine` once the URL is parsed: no longer a Midjourney path, so OpenAI's shape.
			if (path.includes('%2e')) expect(r.body.error.code).toBe('not_found')
			else expect(r.body).toMatchObject({ code: 3, result: null, properties: { error_code: 'not_found' } })
		}
		expect(up.requests).toHaveLength(0)
		expect(await spent(accountId)).toBe(0)
		expect(await usageOf(app, accountId)).toEqual([])
	})

	it("should pass a path the channel's operator added through with the channel secret", async () => {
		const { key } = await app.account(1)
		up.reset()
		const r = await mj(key, '/mj/other/list?x=1')
		expect(r.status).toBe(404)
		expect(up.requests[0]).toMatchObject({ path: '/mj/other/list', query: { x: '1' } })
		expect(up.requests[0]!.headers['mj-api-secret']).toBe('up-mj')
	})
})
