import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type TestApp, startTestApp } from '../../helpers/app'
import { type SunoMock, startSunoMock } from '../../mocks/tasks'
import { startTaskPoller } from '../../../src/tasks/poller'
import { call, micros, priceList, usageOf } from './helpers'

let up: SunoMock
let app: TestApp

beforeAll(async () => {
	up = await startSunoMock({ apiKey: 'up-suno', steps: 2 })
	app = await startTestApp({
		config: {
			channels: [{ name: 'suno', type: 'musicsvc', base_url: up.url, api_key: 'up-suno', models: ['suno_music', 'suno_lyrics'] }],
			models: priceList([
				{ name: 'suno_music', per_request: 0.1 },
				{ name: 'suno_lyrics', per_request: 0.01 },
			]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await up.stop()
})

const spent = async (accountId: number) => 1_000_000 - micros(await app.balance(accountId))
const music = (key: string, body: Record<string, unknown>) => call(app, key, '/suno/submit/music', { body })

describe('/suno/submit', () => {
	it('should submit music with the channel key, relay the answer and charge suno_music', async () => {
		const { key, accountId } = await app.account(1)
		up.reset()
		const r = await music(key, { prompt: 'a song about the sea', mv: 'chirp-v3-5', tags: 'folk' })
		expect(r.status).toBe(200)
		expect(r.body.code).toBe('success')
		expect(typeof r.body.data).toBe('string')
		expect(up.requests[0]!.headers.authorization).toBe('Bearer up-suno')
		expect(up.requests[0]!.body).toMatchObject({ prompt: 'a song about the sea', mv: 'chirp-v3-5', tags: 'folk' })
		expect(await spent(accountId)).toBe(100_000)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ model: 'suno_music', endpoint: '/suno/submit/music' })
	})

	it('should charge lyrics at their own price', async () => {
		const { key, accountId } = await app.account(1)
		const r = await call(app, key, '/suno/submit/lyrics', { body: { prompt: 'rain' } })
		expect(r.body.code).toBe('success')
		expect(await spent(accountId)).toBe(10_000)
	})

	it('should not charge a job the upstream refuses, in its body or with an HTTP error', async () => {
		const { key, accountId } = await app.account(1)
		const refused = await music(key, { prompt: 'bad #reject' })
		expect(refused.status).toBe(200)
		expect(refused.body.code).toBe('fail')
		const invalid = await music(key, { title: 'no prompt' })
		expect(invalid.status).toBe(400)
		expect(await spent(accountId)).toBe(0)
	})

	it('should answer 400 for an unknown action and 404 for a continuation of someone else\'s task', async () => {
		const a = await app.account(1)
		const b = await app.account(1)
		expect((await call(app, a.key, '/suno/submit/video', { body: { prompt: 'x' } })).status).toBe(400)
		const id = (await music(a.key, { prompt: 'original' })).body.data as string
		const stolen = await music(b.key, { prompt: 'continue', task_id: id, continue_clip_id: `${id}-0`, continue_at: 60 })
		expect(stolen.status).toBe(404)
		const own = await music(a.key, { prompt: 'continue', task_id: id, continue_clip_id: `${id}-0`, continue_at: 60 })
		expect(own.body.code).toBe('success')
	})
})

describe('/suno/fetch', () => {
	it('should fetch only the caller\'s task and record its completion', async () => {
		const { key } = await app.account(1)
		const other = await app.account(1)
		const id = (await music(key, { prompt: 'waltz' })).body.data as string
		expect((await call(app, other.key, `/suno/fetch/${id}`)).status).toBe(404)
		expect((await call(app, key, `/suno/fetch/${id}`)).body.data).toMatchObject({ task_id: id, status: 'IN_PROGRESS', progress: '50%' })
		const done = await call(app, key, `/suno/fetch/${id}`)
		expect(done.body.data).toMatchObject({ status: 'SUCCESS', progress: '100%' })
		expect(done.body.data.data[0].audio_url).toContain('.mp3')
		const [task] = await app.svc.db.sql.query<{ status: string }>(`SELECT status FROM tasks WHERE upstream_id = $1`, [id])
		expect(task!.status).toBe('completed')
	})

	it('should leave other accounts\' ids out of a batch fetch', async () => {
		const a = await app.account(1)
		const b = await app.account(1)
		const mine = (await music(a.key, { prompt: 'mine' })).body.data as string
		const theirs = (await music(b.key, { prompt: 'theirs' })).body.data as string
		const r = await call(app, a.key, '/suno/fetch', { body: { ids: [mine, theirs, 'unknown'] } })
		expect(r.body.code).toBe('success')
		expect(r.body.data.map((t: { task_id: string }) => t.task_id)).toEqual([mine])
	})

	it('should refund a failed task once, from client fetches and the poller alike', async () => {
		const { key, accountId } = await app.account(1)
		const id = (await music(key, { prompt: 'doomed #fail' })).body.data as string
		expect(await spent(accountId)).toBe(100_000)
		const p = startTaskPoller(app.svc, { intervalMs: 60_000, idleMs: 0 })
		try {
			await p.tick()
			await Bun.sleep(5)
			await Promise.all([p.tick(), call(app, key, `/suno/fetch/${id}`), call(app, key, '/suno/fetch', { body: { ids: [id] } })])
		} finally {
			await p.stop()
		}
		const r = await call(app, key, `/suno/fetch/${id}`)
		expect(r.body.data).toMatchObject({ status: 'FAILURE', fail_reason: 'generation failed' })
		expect(await spent(accountId)).toBe(0)
		expect((await usageOf(app, accountId)).filter((x) => x.end_reason === 'refund')).toHaveLength(1)
	})
})
