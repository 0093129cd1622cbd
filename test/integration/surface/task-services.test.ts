/**
 * Task services as their clients call them (fetch with the key in `mj-api-secret` or Bearer), from an outside QA
 * pass: midjourney-proxy-plus's face swap billed and recorded, `allowed_models` on every /mj and /suno route, task
 * polls not counted against `rpm_limit`, and the gateway's own errors in each service's shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type TestApp, startTestApp } from '../../helpers/app'
import { type MidjourneyMock, type SunoMock, type VideoMock, startMidjourneyMock, startSunoMock, startVideoMock } from '../../mocks/tasks'
import { call, micros, priceList, usageOf } from './helpers'

let mjUp: MidjourneyMock
let sunoUp: SunoMock
let videoUp: VideoMock
let app: TestApp

beforeAll(async () => {
	mjUp = await startMidjourneyMock({ apiKey: 'up-mj', steps: 2 })
	sunoUp = await startSunoMock({ apiKey: 'up-suno', steps: 2 })
	videoUp = await startVideoMock({ apiKey: 'up-video', steps: 1 })
	app = await startTestApp({
		env: { MAX_JSON_BYTES: '65536' },
		config: {
			channels: [
				{ name: 'mj', type: 'imgsvc', base_url: mjUp.url, api_key: 'up-mj', models: ['mj_*'] },
				{ name: 'suno', type: 'musicsvc', base_url: sunoUp.url, api_key: 'up-suno', models: ['suno_music', 'suno_lyrics'] },
				{ name: 'vid', type: 'video', base_url: videoUp.url, api_key: 'up-video', models: ['sora-2'] },
			],
			models: priceList([
				{ name: 'mj_imagine', per_request: 0.05 },
				{ name: 'mj_action', per_request: 0.03 },
				{ name: 'mj_swap_face', per_request: 0.04 },
				{ name: 'suno_music', per_request: 0.1 },
				{ name: 'suno_lyrics', per_request: 0.01 },
				{ name: 'sora-2', per_second: 0.1 },
			]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await mjUp.stop()
	await sunoUp.stop()
	await videoUp.stop()
})

/** What midjourney clients send: the gateway key in `mj-api-secret`. */
const mj = (key: string, path: string, body?: unknown) => call(app, 'unused', path, { body, headers: { authorization: '', 'mj-api-secret': key } })
const spent = async (accountId: number) => 1_000_000 - micros(await app.balance(accountId))
const swap = (key: string) => mj(key, '/mj/insight-face/swap', { sourceBase64: 'data:image/png;base64,AAAA', targetBase64: 'data:image/png;base64,BBBB' })

/** A key on a new $1 account with the given limits. */
async function keyWith(limits: { rpm_limit?: number; allowed_models?: string[] }) {
	const { key, accountId, tokenId } = await app.account(1)
	expect((await app.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body: limits })).status).toBe(200)
	return { key, accountId }
}

const tasksOf = (accountId: number) => app.svc.db.sql.query<{ kind: string; model: string; upstream_id: string; cost: string }>(`SELECT kind, model, upstream_id, cost FROM tasks WHERE account_id = $1`, [accountId])

describe('POST /mj/insight-face/swap', () => {
	it('should charge mj_swap_face when the proxy accepts, record the task and let only its submitter fetch it', async () => {
		const { key, accountId } = await app.account(1)
		const other = await app.account(1)
		mjUp.reset()
		const r = await swap(key)
		expect(r.status).toBe(200)
		expect(r.body).toMatchObject({ code: 1, description: 'Submit success' })
		const id = r.body.result as string
		expect(mjUp.requests[0]).toMatchObject({ path: '/mj/insight-face/swap' })
		expect(mjUp.requests[0]!.headers['mj-api-secret']).toBe('up-mj')
		expect(await spent(accountId)).toBe(40_000)
		expect(await usageOf(app, accountId)).toEqual([expect.objectContaining({ model: 'mj_swap_face', endpoint: '/mj/insight-face/swap', cost: 0.04, status: 200, end_reason: 'ok' })])
		expect(await tasksOf(accountId)).toEqual([expect.objectContaining({ kind: 'mj', model: 'mj_swap_face', upstream_id: id })])
		const fetched = await mj(key, `/mj/task/${id}/fetch`)
		expect(fetched.status).toBe(200)
		expect(fetched.body).toMatchObject({ id, action: 'SWAP_FACE' })
		const stolen = await mj(other.key, `/mj/task/${id}/fetch`)
		expect(stolen.status).toBe(404)
		expect(stolen.body).toEqual({ code: 3, description: `No Midjourney task "${id}"`, result: null, properties: { error_code: 'task_not_found' } })
	})

	it('should not charge a swap the proxy refuses, nor record a task', async () => {
		const { key, accountId } = await app.account(1)
		const r = await mj(key, '/mj/insight-face/swap', { sourceBase64: 'data:image/png;base64,AAAA' })
		expect(r.status).toBe(200)
		expect(r.body.code).toBe(4)
		expect(await spent(accountId)).toBe(0)
		expect(await usageOf(app, accountId)).toEqual([expect.objectContaining({ model: 'mj_swap_face', cost: 0, end_reason: 'rejected' })])
		expect(await tasksOf(accountId)).toEqual([])
	})

	it('should refuse the swap with 402 and send nothing upstream when the balance cannot pay it', async () => {
		const { key, accountId } = await app.account(0.01)
		mjUp.reset()
		const r = await swap(key)
		expect(r.status).toBe(402)
		expect(r.body).toMatchObject({ code: 4, result: null, properties: { error_code: 'insufficient_quota' } })
		expect(mjUp.requests).toHaveLength(0)
		expect(micros(await app.balance(accountId))).toBe(10_000)
	})
})

describe('allowed_models on /mj and /suno', () => {
	it('should refuse every Midjourney route to a key that may use no Midjourney model, uploads included', async () => {
		const { key } = await keyWith({ allowed_models: ['gpt-4o-mini'] })
		mjUp.reset()
		for (const [path, body] of [
			['/mj/submit/upload-discord-images', { base64Array: ['data:image/png;base64,AAAA'] }],
			['/mj/task/list', undefined],
			['/mj/account/list', undefined],
			['/mj/insight-face/swap', { sourceBase64: 'a', targetBase64: 'b' }],
		] as const) {
			const r = await mj(key, path, body)
			expect(r.status).toBe(403)
			expect(r.body).toMatchObject({ code: 4, result: null, properties: { error_code: 'model_not_allowed' } })
		}
		expect(mjUp.requests).toHaveLength(0)
	})

	it('should let a key allowed one Midjourney model upload, and still check each job against its own model', async () => {
		const { key, accountId } = await keyWith({ allowed_models: ['mj_imagine'] })
		const upload = await mj(key, '/mj/submit/upload-discord-images', { base64Array: ['data:image/png;base64,AAAA'] })
		expect(upload.status).toBe(200)
		expect((await mj(key, '/mj/submit/imagine', { prompt: 'allowed' })).body.code).toBe(1)
		const swapped = await swap(key)
		expect(swapped.status).toBe(403)
		expect(swapped.body.properties.error_code).toBe('model_not_allowed')
		expect(await spent(accountId)).toBe(50_000)
	})

	it('should refuse Suno routes to a key that may use no Suno model, in Suno\'s shape', async () => {
		const { key } = await keyWith({ allowed_models: ['mj_*'] })
		sunoUp.reset()
		for (const [path, body] of [
			['/suno/fetch', { ids: ['x'] }],
			['/suno/fetch/x', undefined],
			['/suno/other', { a: 1 }],
		] as const) {
			const r = await call(app, key, path, { body })
			expect(r.status).toBe(403)
			expect(r.body).toMatchObject({ code: 'model_not_allowed', data: null })
		}
		expect(sunoUp.requests).toHaveLength(0)
	})
})

describe('rpm_limit and task polls', () => {
	it('should count Midjourney submits but not fetches and lists', async () => {
		const { key } = await keyWith({ rpm_limit: 2 })
		const id = (await mj(key, '/mj/submit/imagine', { prompt: 'one' })).body.result as string
		for (let i = 0; i < 4; i++) expect((await mj(key, `/mj/task/${id}/fetch`)).status).toBe(200)
		expect((await mj(key, '/mj/task/list')).status).toBe(200)
		expect((await mj(key, '/mj/task/queue')).status).toBe(200)
		expect((await mj(key, '/mj/task/list-by-condition', { ids: [id] })).status).toBe(200)
		expect((await mj(key, '/mj/submit/imagine', { prompt: 'two' })).body.code).toBe(1)
		const third = await mj(key, '/mj/submit/imagine', { prompt: 'three' })
		expect(third.status).toBe(429)
		expect(third.res.headers.get('retry-after')).toMatch(/^\d+$/)
		expect(third.body).toMatchObject({ code: 23, result: null, properties: { error_code: 'rate_limit_exceeded' } })
	})

	it('should count Suno submits but not fetches', async () => {
		const { key } = await keyWith({ rpm_limit: 2 })
		const id = (await call(app, key, '/suno/submit/lyrics', { body: { prompt: 'one' } })).body.data as string
		for (let i = 0; i < 3; i++) expect((await call(app, key, `/suno/fetch/${id}`)).status).toBe(200)
		expect((await call(app, key, '/suno/fetch', { body: { ids: [id] } })).status).toBe(200)
		expect((await call(app, key, '/suno/submit/lyrics', { body: { prompt: 'two' } })).body.code).toBe('success')
		const third = await call(app, key, '/suno/submit/lyrics', { body: { prompt: 'three' } })
		expect(third.status).toBe(429)
		expect(third.body).toMatchObject({ code: 'rate_limit_exceeded', data: null })
	})

	it('should count video submits but not polls or downloads', async () => {
		const { key } = await keyWith({ rpm_limit: 2 })
		const id = (await call(app, key, '/v1/video/generations', { body: { model: 'sora-2', prompt: 'a fox', seconds: 4 } })).body.id as string
		let status = ''
		for (let i = 0; i < 4 && status !== 'completed'; i++) status = (await call(app, key, `/v1/video/generations/${id}`)).body.status
		expect(status).toBe('completed')
		expect((await call(app, key, `/v1/video/generations/${id}/content`)).status).toBe(200)
		expect((await call(app, key, `/v1/video/generations/${id}`)).status).toBe(200)
		expect((await call(app, key, '/v1/video/generations', { body: { model: 'sora-2', prompt: 'again', seconds: 4 } })).status).toBe(200)
		const third = await call(app, key, '/v1/video/generations', { body: { model: 'sora-2', prompt: 'third', seconds: 4 } })
		expect(third.status).toBe(429)
		expect(third.body.error.code).toBe('rate_limit_exceeded')
	})
})

describe('gateway errors in the task services\' shapes', () => {
	it('should answer Midjourney clients in midjourney-proxy\'s shape with honest statuses', async () => {
		const noKey = await mj('', '/mj/submit/imagine', { prompt: 'x' })
		expect(noKey.status).toBe(401)
		expect(noKey.body).toMatchObject({ code: 4, result: null, properties: { error_code: 'missing_api_key' } })
		expect(noKey.body.description).toContain('mj-api-secret')
		const badKey = await mj('sk-not-a-key-0000000000000000000000', '/mj/task/list')
		expect(badKey.status).toBe(401)
		expect(badKey.body).toMatchObject({ code: 4, properties: { error_code: 'invalid_api_key' } })

		const { key } = await app.account(0.01)
		const poor = await mj(key, '/mj/submit/imagine', { prompt: 'x' })
		expect(poor.status).toBe(402)
		expect(poor.body).toMatchObject({ code: 4, result: null, properties: { error_code: 'insufficient_quota' } })
		expect(typeof poor.body.description).toBe('string')

		const big = await mj(key, '/mj/submit/imagine', { prompt: 'x'.repeat(70_000) })
		expect(big.status).toBe(413)
		expect(big.body).toMatchObject({ code: 4, result: null, properties: { error_code: 'request_too_large' } })

		const rich = await app.account(1)
		mjUp.faultOnce = { kind: 'status', status: 500 }
		const down = await mj(rich.key, '/mj/submit/imagine', { prompt: 'x' })
		expect(down.status).toBe(502)
		expect(down.body).toMatchObject({ code: 9, result: null })
		expect(await spent(rich.accountId)).toBe(0)
	})

	it('should answer Suno clients in new-api\'s task shape with honest statuses', async () => {
		const noKey = await call(app, '', '/suno/submit/music', { body: { prompt: 'x' }, headers: { authorization: '' } })
		expect(noKey.status).toBe(401)
		expect(noKey.body).toMatchObject({ code: 'missing_api_key', data: null })

		const { key } = await app.account(0.01)
		const poor = await call(app, key, '/suno/submit/music', { body: { prompt: 'x' } })
		expect(poor.status).toBe(402)
		expect(poor.body).toMatchObject({ code: 'insufficient_quota', data: null })
		expect(typeof poor.body.message).toBe('string')

		const unknown = await call(app, key, '/suno/fetch/nope')
		expect(unknown.status).toBe(404)
		expect(unknown.body).toEqual({ code: 'task_not_found', message: 'No Suno task "nope"', data: null })

		const action = await call(app, key, '/suno/submit/video', { body: { prompt: 'x' } })
		expect(action.status).toBe(400)
		expect(action.body).toMatchObject({ code: 'invalid_request_error', data: null })

		const rich = await app.account(1)
		sunoUp.faultOnce = { kind: 'status', status: 503 }
		const down = await call(app, rich.key, '/suno/submit/music', { body: { prompt: 'x' } })
		expect(down.status).toBe(503)
		expect(down.body).toMatchObject({ code: expect.any(String), message: expect.any(String), data: null })
		expect(await spent(rich.accountId)).toBe(0)
	})
})
