import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startVideoMock, VIDEO_BYTES, type VideoMock } from '../../mocks/tasks'
import { startTaskPoller } from '../../../src/tasks/poller'
import { call, micros, priceList, usageOf } from './helpers'

let up: VideoMock
let first: VideoMock
let app: TestApp

beforeAll(async () => {
	up = await startVideoMock({ apiKey: 'up-video', steps: 2 })
	first = await startVideoMock({ apiKey: 'up-first' })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'vid', type: 'video', base_url: up.url, api_key: 'up-video', models: ['sora-2', 'sora-2-pro', 'sora-2-twice', 'sora-ref'], model_map: { 'sora-ref': 'sora-2' }, priority: 1 },
				// Tried first for sora-2-twice, with a short first-byte timeout.
				{ name: 'vid-first', type: 'video', base_url: first.url, api_key: 'up-first', models: ['sora-2-twice'], priority: 0, settings: { timeouts: { first_byte_ms: 300 } } },
			],
			models: priceList([
				{ name: 'sora-2', per_second: 0.1 },
				{ name: 'sora-ref', per_second: 0.1 },
				{ name: 'sora-2-twice', per_request: 0.1 },
				{ name: 'sora-2-pro', per_request: 0.05, per_second: 0.3, per_second_1792x1024: 0.5 },
			]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await up.stop()
	await first.stop()
})

const submit = (key: string, body: Record<string, unknown>) => call(app, key, '/v1/video/generations', { body })
const poll = (key: string, id: string) => call(app, key, `/v1/video/generations/${id}`)
const refunds = async (accountId: number) => (await usageOf(app, accountId)).filter((r) => r.end_reason === 'refund')

describe('POST /v1/video/generations', () => {
	it('should create a task with its own id, forward seconds as OpenAI string and charge on acceptance', async () => {
		const { key, accountId } = await app.account(2)
		up.reset()
		const r = await submit(key, { model: 'sora-2', prompt: 'a cat on a skateboard', seconds: 8, size: '1280x720' })
		expect(r.status).toBe(200)
		expect(r.body).toMatchObject({ object: 'video', model: 'sora-2', status: 'queued', progress: 0, seconds: '8', size: '1280x720' })
		expect(r.body.id).toStartWith('video_')
		expect(up.videos.has(r.body.id)).toBe(false)
		expect(up.requests[0]!.body).toEqual({ model: 'sora-2', prompt: 'a cat on a skateboard', seconds: '8', size: '1280x720' })
		expect(up.requests[0]!.headers.authorization).toBe('Bearer up-video')
		expect(micros(await app.balance(accountId))).toBe(2_000_000 - 800_000)
	})

	it('should price by size and per_request, with 4 seconds by default', async () => {
		const { key, accountId } = await app.account(3)
		const r = await submit(key, { model: 'sora-2-pro', prompt: 'waves', size: '1792x1024' })
		expect(r.status).toBe(200)
		expect(micros(await app.balance(accountId))).toBe(3_000_000 - 50_000 - 4 * 500_000)
	})

	it('should accept duration as an alias of seconds', async () => {
		const { key } = await app.account(2)
		up.reset()
		const r = await submit(key, { model: 'sora-2', prompt: 'rain', duration: 12 })
		expect(r.status).toBe(200)
		expect((up.requests[0]!.body as { seconds: string; duration?: number }).seconds).toBe('12')
		expect((up.requests[0]!.body as { duration?: number }).duration).toBeUndefined()
	})

	it('should pass an upstream refusal through as a 4xx and charge nothing', async () => {
		const { key, accountId } = await app.account(2)
		const r = await submit(key, { model: 'sora-2', prompt: 'something #reject' })
		expect(r.status).toBe(400)
		expect(r.body.error.message).toContain('moderation')
		expect(await app.balance(accountId)).toBe(2)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ cost: 0, end_reason: 'error' })
	})

	it('should fail over when the first channel refuses with a 5xx, and charge once', async () => {
		const { key, accountId } = await app.account(2)
		first.fault = { kind: 'status', status: 503 }
		up.reset()
		try {
			const r = await submit(key, { model: 'sora-2-twice', prompt: 'again' })
			expect(r.status).toBe(200)
		} finally {
			first.fault = undefined
		}
		expect(up.requests).toHaveLength(1)
		expect(micros(await app.balance(accountId))).toBe(2_000_000 - 100_000)
	})

	it('should not submit elsewhere after a timeout, when the first upstream may have taken the job', async () => {
		const { key, accountId } = await app.account(2)
		first.reset()
		first.fault = { kind: 'slow', firstByteMs: 1500 }
		up.reset()
		try {
			const r = await submit(key, { model: 'sora-2-twice', prompt: 'slow one' })
			expect(r.status).toBe(504)
		} finally {
			first.fault = undefined
		}
		expect(first.requests).toHaveLength(1)
		expect(up.requests).toHaveLength(0)
		expect(await app.balance(accountId)).toBe(2)
	})

	it('should forward a multipart submit as multipart, the input_reference file intact and the model mapped', async () => {
		const { key, accountId, tokenId } = await app.account(2)
		up.reset()
		// A real PNG header followed by bytes that are not valid UTF-8, so any text round trip would show.
		const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...Array.from({ length: 3000 }, (_, i) => (i * 37 + 200) % 256)])
		const form = new FormData()
		form.append('model', 'sora-ref')
		form.append('prompt', 'a cat')
		form.append('seconds', '8')
		form.append('size', '1280x720')
		form.append('input_reference', new File([png], 'first frame.png', { type: 'image/png' }))
		const res = await fetch(`${app.url}/v1/video/generations`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form })
		const body = (await res.json()) as { id: string; status: string; seconds: string }
		expect(res.status).toBe(200)
		expect(body).toMatchObject({ status: 'queued', seconds: '8' })
		const sent = up.requests[0]!
		expect(sent.headers['content-type']).toStartWith('multipart/form-data; boundary=')
		expect(sent.form!.get('model')).toBe('sora-2')
		expect(sent.form!.get('prompt')).toBe('a cat')
		expect(sent.form!.get('seconds')).toBe('8')
		expect(sent.form!.get('size')).toBe('1280x720')
		const ref = sent.form!.get('input_reference') as File
		expect(ref).toBeInstanceOf(File)
		expect(ref.name).toBe('first frame.png')
		expect(ref.type).toBe('image/png')
		expect(new Uint8Array(await ref.arrayBuffer())).toEqual(png)
		// 8 s × $0.10, charged once; nothing left reserved.
		expect(micros(await app.balance(accountId))).toBe(2_000_000 - 800_000)
		const rows = await usageOf(app, accountId)
		expect(rows).toHaveLength(1)
		expect(rows[0]).toMatchObject({ model: 'sora-ref', cost: 0.8, status: 200, end_reason: 'ok' })
		expect((await app.admin(`/api/tokens/${tokenId}`)).body.reserved).toBe(0)
	})

	it('should take duration as text in a multipart submit (form fields are strings)', async () => {
		const { key } = await app.account(2)
		up.reset()
		const form = new FormData()
		form.append('model', 'sora-2')
		form.append('prompt', 'rain')
		form.append('duration', '12')
		const res = await fetch(`${app.url}/v1/video/generations`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form })
		expect(res.status).toBe(200)
		expect(up.requests[0]!.form!.get('seconds')).toBe('12')
		expect(up.requests[0]!.form!.get('duration')).toBeNull()
	})

	it('should keep a JSON input_reference ({ image_url }) as JSON', async () => {
		const { key } = await app.account(2)
		up.reset()
		const r = await submit(key, { model: 'sora-2', prompt: 'a dog', input_reference: { image_url: 'https://example.com/f.png' } })
		expect(r.status).toBe(200)
		expect(up.requests[0]!.headers['content-type']).toBe('application/json')
		expect(up.requests[0]!.body).toEqual({ model: 'sora-2', prompt: 'a dog', input_reference: { image_url: 'https://example.com/f.png' } })
	})

	it('should reject a bad size or seconds with 400', async () => {
		const { key } = await app.account(2)
		expect((await submit(key, { model: 'sora-2', prompt: 'x', size: 'huge' })).status).toBe(400)
		expect((await submit(key, { model: 'sora-2', prompt: 'x', seconds: -3 })).status).toBe(400)
		expect((await submit(key, { model: 'sora-2', prompt: 'x', seconds: 'soon' })).status).toBe(400)
	})
})

describe('GET /v1/video/generations/{id}', () => {
	it('should map polls to the upstream task and give a URL that streams the video when completed', async () => {
		const { key } = await app.account(2)
		const { body } = await submit(key, { model: 'sora-2', prompt: 'a dog' })
		const first = await poll(key, body.id)
		expect(first.body).toMatchObject({ id: body.id, status: 'in_progress', progress: 50 })
		expect(first.body.url).toBeUndefined()
		const done = await poll(key, body.id)
		expect(done.body).toMatchObject({ status: 'completed', progress: 100, url: `${app.url}/v1/video/generations/${body.id}/content` })
		const video = await fetch(done.body.url, { headers: { authorization: `Bearer ${key}` } })
		expect(video.status).toBe(200)
		expect(video.headers.get('content-type')).toBe('video/mp4')
		expect(new Uint8Array(await video.arrayBuffer())).toEqual(VIDEO_BYTES)
		// A terminal task is answered from the database: no more upstream polls.
		const polls = up.videos.get([...up.videos.keys()].pop()!)!.polls
		await poll(key, body.id)
		expect(up.videos.get([...up.videos.keys()].pop()!)!.polls).toBe(polls)
	})

	it('should answer 404 to another account, for the task and its content', async () => {
		const owner = await app.account(2)
		const other = await app.account(2)
		const { body } = await submit(owner.key, { model: 'sora-2', prompt: 'private' })
		expect((await poll(other.key, body.id)).status).toBe(404)
		expect((await call(app, other.key, `/v1/video/generations/${body.id}/content`)).status).toBe(404)
		expect((await poll(owner.key, body.id)).status).toBe(200)
	})

	it('should answer 409 for the content of a video not yet done', async () => {
		const { key } = await app.account(2)
		const { body } = await submit(key, { model: 'sora-2', prompt: 'slow' })
		const r = await call(app, key, `/v1/video/generations/${body.id}/content`)
		expect(r.status).toBe(409)
		expect(r.body.error.code).toBe('video_not_ready')
	})

	it('should refund a failed task exactly once, however many polls see the failure', async () => {
		const { key, accountId } = await app.account(2)
		const { body } = await submit(key, { model: 'sora-2', prompt: 'doomed #fail', seconds: 4 })
		expect(micros(await app.balance(accountId))).toBe(2_000_000 - 400_000)
		await poll(key, body.id)
		const all = await Promise.all(Array.from({ length: 6 }, () => poll(key, body.id)))
		for (const r of all) expect(r.body).toMatchObject({ status: 'failed', error: { code: 'video_generation_failed', message: 'The video could not be generated.' } })
		await poll(key, body.id)
		expect(await app.balance(accountId)).toBe(2)
		const rows = await refunds(accountId)
		expect(rows).toHaveLength(1)
		expect(rows[0]).toMatchObject({ cost: -0.4, endpoint: '/v1/video/generations' })
	})

	it('should treat a failed poll as no news, not as a failure', async () => {
		const { key, accountId } = await app.account(2)
		const { body } = await submit(key, { model: 'sora-2', prompt: 'patient' })
		up.fault = { kind: 'status', status: 500 }
		try {
			const r = await poll(key, body.id)
			expect(r.status).toBe(200)
			expect(r.body.status).toBe('queued')
		} finally {
			up.fault = undefined
		}
		up.fault = { kind: 'refuse' }
		try {
			expect((await poll(key, body.id)).body.status).toBe('queued')
		} finally {
			up.fault = undefined
		}
		await poll(key, body.id)
		expect((await poll(key, body.id)).body.status).toBe('completed')
		expect(micros(await app.balance(accountId))).toBe(2_000_000 - 400_000)
	})
})

describe('startTaskPoller', () => {
	it('should finish tasks nobody polls, and refund the failures once across overlapping pollers', async () => {
		const { key, accountId } = await app.account(2)
		const ok = (await submit(key, { model: 'sora-2', prompt: 'unattended' })).body.id as string
		const bad = (await submit(key, { model: 'sora-2', prompt: 'unattended #fail' })).body.id as string
		const a = startTaskPoller(app.svc, { intervalMs: 60_000, idleMs: 0 })
		const b = startTaskPoller(app.svc, { intervalMs: 60_000, idleMs: 0 })
		try {
			for (let i = 0; i < 3; i++) await Promise.all([a.tick(), b.tick()])
		} finally {
			await a.stop()
			await b.stop()
		}
		expect((await poll(key, ok)).body.status).toBe('completed')
		expect((await poll(key, bad)).body.status).toBe('failed')
		expect(micros(await app.balance(accountId))).toBe(2_000_000 - 400_000)
		expect(await refunds(accountId)).toHaveLength(1)
	})

	it('should fail and refund a task its upstream never finishes, past the maximum age', async () => {
		const { key, accountId } = await app.account(2)
		const id = (await submit(key, { model: 'sora-2', prompt: 'lost' })).body.id as string
		up.fault = { kind: 'status', status: 404 }
		const p = startTaskPoller(app.svc, { intervalMs: 60_000, idleMs: 0, maxAgeMs: 1 })
		try {
			await Bun.sleep(5)
			expect(await p.tick()).toBeGreaterThanOrEqual(1)
		} finally {
			up.fault = undefined
			await p.stop()
		}
		const r = await poll(key, id)
		expect(r.body).toMatchObject({ status: 'failed', error: { message: expect.stringContaining('timed out') } })
		expect(await app.balance(accountId)).toBe(2)
	})

	it('should still settle a task its upstream finished while nobody polled, when first polled past the maximum age (a restart after a long stop)', async () => {
		const { key, accountId } = await app.account(2)
		const id = (await submit(key, { model: 'sora-2', prompt: 'made while we were down', seconds: 4 })).body.id as string
		// The upstream finished the video meanwhile: its next read says completed.
		const job = [...up.videos.values()].find((t) => t.prompt === 'made while we were down')!
		job.polls = job.steps
		const p = startTaskPoller(app.svc, { intervalMs: 60_000, idleMs: 0, maxAgeMs: 1 })
		try {
			await Bun.sleep(5)
			expect(await p.tick()).toBeGreaterThanOrEqual(1)
		} finally {
			await p.stop()
		}
		const r = await poll(key, id)
		expect(r.body).toMatchObject({ status: 'completed', progress: 100 })
		// Charged once on acceptance, never refunded: the video was delivered.
		expect(micros(await app.balance(accountId))).toBe(2_000_000 - 400_000)
		expect(await refunds(accountId)).toEqual([])
	})
})
