/**
 * OpenAI's Videos API as the official `openai` SDK calls it (`client.videos.*` with `baseURL: {root}/v1`):
 * `/v1/videos`, `/v1/videos/{id}`, `/v1/videos/{id}/content?variant=`, `/v1/videos/{id}/remix`
 * (developers.openai.com/api/reference/resources/videos), served as the gateway's own billed tasks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI, { NotFoundError } from 'openai'
import type { Video, VideoCreateParams } from 'openai/resources/videos'
import { type TestApp, startTestApp } from '../../helpers/app'
import { SPRITESHEET_BYTES, startVideoMock, THUMBNAIL_BYTES, VIDEO_BYTES, type VideoMock } from '../../mocks/tasks'
import { call, micros, priceList, usageOf } from './helpers'

let a: VideoMock
let b: VideoMock
let app: TestApp

beforeAll(async () => {
	a = await startVideoMock({ apiKey: 'up-a', steps: 2 })
	b = await startVideoMock({ apiKey: 'up-b', steps: 2 })
	app = await startTestApp({
		config: {
			channels: [
				// Both serve sora-2; `vid-a` is tried first.
				{ name: 'vid-a', type: 'video', base_url: a.url, api_key: 'up-a', models: ['sora-2', 'sora-2-pro', 'sora-alias'], model_map: { 'sora-alias': 'sora-2' }, priority: 0 },
				{ name: 'vid-b', type: 'video', base_url: b.url, api_key: 'up-b', models: ['sora-2'], priority: 1 },
			],
			models: priceList([
				{ name: 'sora-2', per_second: 0.1 },
				{ name: 'sora-alias', per_second: 0.1 },
				{ name: 'sora-2-pro', per_request: 0.05, per_second: 0.3, per_second_1792x1024: 0.5 },
			]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await a.stop()
	await b.stop()
})

const sdk = (key: string) => new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })

/** What the SDK's `videos.createAndPoll` helper does (openai-node 6.x): create, then retrieve until terminal. */
async function createAndPoll(openai: OpenAI, body: VideoCreateParams): Promise<Video> {
	let video = await openai.videos.create(body)
	for (let i = 0; i < 10 && (video.status === 'queued' || video.status === 'in_progress'); i++) video = await openai.videos.retrieve(video.id)
	return video
}

const refunds = async (accountId: number) => (await usageOf(app, accountId)).filter((r) => r.end_reason === 'refund')

describe('POST /v1/videos (client.videos.create)', () => {
	it("should answer OpenAI's Video object with the gateway's id, forward the SDK's multipart and charge on acceptance", async () => {
		const { key, accountId } = await app.account(2)
		a.reset()
		const video = await sdk(key).videos.create({ model: 'sora-alias', prompt: 'a cat on a skateboard', seconds: '8', size: '1280x720' })
		expect(Object.keys(video).sort()).toEqual(
			['completed_at', 'created_at', 'error', 'expires_at', 'id', 'model', 'object', 'progress', 'prompt', 'remixed_from_video_id', 'seconds', 'size', 'status'].sort(),
		)
		expect(video).toMatchObject({
			object: 'video',
			model: 'sora-alias',
			status: 'queued',
			progress: 0,
			completed_at: null,
			expires_at: null,
			prompt: 'a cat on a skateboard',
			seconds: '8',
			size: '1280x720',
			remixed_from_video_id: null,
			error: null,
		})
		expect(video.id).toStartWith('video_')
		expect(a.videos.has(video.id)).toBe(false)
		expect(Math.abs(video.created_at - Date.now() / 1000)).toBeLessThan(60)
		const sent = a.requests[0]!
		expect(sent.path).toBe('/v1/videos')
		expect(sent.headers['content-type']).toStartWith('multipart/form-data; boundary=')
		expect(sent.form!.get('model')).toBe('sora-2')
		expect(sent.form!.get('seconds')).toBe('8')
		expect(micros(await app.balance(accountId))).toBe(2_000_000 - 800_000)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ model: 'sora-alias', endpoint: '/v1/videos', cost: 0.8, end_reason: 'ok' })
	})

	it('should price by size and per_request, with 4 seconds by default', async () => {
		const { key, accountId } = await app.account(3)
		const video = await sdk(key).videos.create({ model: 'sora-2-pro', prompt: 'waves', size: '1792x1024' })
		expect(video.seconds).toBe('4')
		expect(micros(await app.balance(accountId))).toBe(3_000_000 - 50_000 - 4 * 500_000)
	})

	it('should default the model to sora-2, as OpenAI does when the body names none', async () => {
		const { key, accountId } = await app.account(2)
		a.reset()
		const video = await sdk(key).videos.create({ prompt: 'no model named' })
		expect(video.model).toBe('sora-2')
		expect(a.requests[0]!.form!.get('model')).toBe('sora-2')
		expect(micros(await app.balance(accountId))).toBe(2_000_000 - 400_000)
	})

	it('should forward a prompt written as JSON as the text it is (the SDK sends multipart)', async () => {
		// Structured prompts are a common way to direct a shot; a form field is text whatever it looks like.
		const { key } = await app.account(2)
		a.reset()
		const prompt = '{"shot": "wide", "subject": "a cat on a skateboard", "camera": ["dolly", "pan"]}'
		const video = await sdk(key).videos.create({ model: 'sora-2', prompt })
		expect(video.prompt).toBe(prompt)
		expect(a.requests[0]!.form!.get('prompt')).toBe(prompt)
		const list = await sdk(key).videos.create({ model: 'sora-2', prompt: '["a cat", "a dog"]' })
		expect(list.prompt).toBe('["a cat", "a dog"]')
	})

	it("should pass an upstream refusal on in OpenAI's error shape, uncharged", async () => {
		const { key, accountId } = await app.account(2)
		const err = await sdk(key)
			.videos.create({ model: 'sora-2', prompt: 'something #reject' })
			.catch((e) => e)
		expect(err).toBeInstanceOf(OpenAI.BadRequestError)
		expect(err.error).toMatchObject({ message: expect.stringContaining('moderation') })
		expect(await app.balance(accountId)).toBe(2)
	})
})

describe('GET /v1/videos/{id} (retrieve, createAndPoll) and its content', () => {
	it('should poll the upstream until completed, then serve the video, the thumbnail and the spritesheet', async () => {
		const { key, accountId } = await app.account(2)
		const openai = sdk(key)
		const video = await createAndPoll(openai, { model: 'sora-2', prompt: 'a dog', seconds: '4' })
		expect(video).toMatchObject({ status: 'completed', progress: 100, error: null, prompt: 'a dog', seconds: '4', size: '720x1280' })
		expect(video.completed_at).toBeNumber()
		expect(video.expires_at).toBeNumber()
		const mp4 = await openai.videos.downloadContent(video.id)
		expect(mp4.headers.get('content-type')).toBe('video/mp4')
		expect(new Uint8Array(await mp4.arrayBuffer())).toEqual(VIDEO_BYTES)
		const thumb = await openai.videos.downloadContent(video.id, { variant: 'thumbnail' })
		expect(thumb.headers.get('content-type')).toBe('image/webp')
		expect(new Uint8Array(await thumb.arrayBuffer())).toEqual(THUMBNAIL_BYTES)
		const sprites = await openai.videos.downloadContent(video.id, { variant: 'spritesheet' })
		expect(sprites.headers.get('content-type')).toBe('image/jpeg')
		expect(new Uint8Array(await sprites.arrayBuffer())).toEqual(SPRITESHEET_BYTES)
		// Polls and downloads are not charged.
		expect(micros(await app.balance(accountId))).toBe(2_000_000 - 400_000)
	})

	it('should serve the content of a video that finished since the last poll', async () => {
		const { key } = await app.account(2)
		const openai = sdk(key)
		const video = await openai.videos.create({ model: 'sora-2', prompt: 'quick' })
		await openai.videos.retrieve(video.id)
		// The upstream finishes at its next read, which the download itself makes.
		const mp4 = await openai.videos.downloadContent(video.id)
		expect(new Uint8Array(await mp4.arrayBuffer())).toEqual(VIDEO_BYTES)
	})

	it("should refuse a download before the video completed, in OpenAI's error shape", async () => {
		const { key } = await app.account(2)
		const video = await sdk(key).videos.create({ model: 'sora-2', prompt: 'slow' })
		const r = await call(app, key, `/v1/videos/${video.id}/content`)
		expect(r.status).toBe(409)
		expect(r.body.error).toMatchObject({ code: 'video_not_ready', type: 'invalid_request_error' })
		const bad = await call(app, key, `/v1/videos/${video.id}/content?variant=poster`)
		expect(bad.status).toBe(400)
		expect(bad.body.error.type).toBe('invalid_request_error')
	})

	it('should fail and refund a failed video once, with the Video error set', async () => {
		const { key, accountId } = await app.account(2)
		const video = await createAndPoll(sdk(key), { model: 'sora-2', prompt: 'doomed #fail' })
		expect(video).toMatchObject({ status: 'failed', completed_at: null, error: { code: 'video_generation_failed', message: 'The video could not be generated.' } })
		await sdk(key).videos.retrieve(video.id)
		expect(await app.balance(accountId)).toBe(2)
		expect(await refunds(accountId)).toHaveLength(1)
	})

	it('should show a task made through /v1/video/generations too (one task, two APIs)', async () => {
		const { key } = await app.account(2)
		const made = await call(app, key, '/v1/video/generations', { body: { model: 'sora-2', prompt: 'old route', seconds: 8 } })
		expect(made.status).toBe(200)
		const video = await sdk(key).videos.retrieve(made.body.id)
		expect(video).toMatchObject({ id: made.body.id, object: 'video', prompt: 'old route', seconds: '8', status: 'in_progress' })
	})

	it("should answer 404 to another account for retrieve, content, delete and remix, touching nothing", async () => {
		const owner = await app.account(2)
		const other = await app.account(2)
		const video = await createAndPoll(sdk(owner.key), { model: 'sora-2', prompt: 'private' })
		a.reset()
		const openai = sdk(other.key)
		for (const attempt of [
			() => openai.videos.retrieve(video.id),
			() => openai.videos.downloadContent(video.id),
			() => openai.videos.delete(video.id),
			() => openai.videos.remix(video.id, { prompt: 'mine now' }),
		])
			expect(await attempt().catch((e) => e)).toBeInstanceOf(NotFoundError)
		expect(a.requests).toHaveLength(0)
		expect(await app.balance(other.accountId)).toBe(2)
		expect((await sdk(owner.key).videos.retrieve(video.id)).status).toBe('completed')
	})
})

describe('GET /v1/videos (client.videos.list)', () => {
	it("should list only the account's videos, newest first, paging with after/limit as the SDK does", async () => {
		const { key } = await app.account(2)
		const other = await app.account(2)
		const openai = sdk(key)
		await sdk(other.key).videos.create({ model: 'sora-2', prompt: 'not yours' })
		const made: string[] = []
		for (const prompt of ['one', 'two', 'three']) made.push((await openai.videos.create({ model: 'sora-2', prompt })).id)
		const page = await call(app, key, '/v1/videos?limit=2')
		expect(page.status).toBe(200)
		expect(page.body).toMatchObject({ object: 'list', has_more: true, first_id: made[2], last_id: made[1] })
		expect(page.body.data.map((v: Video) => v.id)).toEqual([made[2], made[1]])
		expect(page.body.data[0]).toMatchObject({ object: 'video', prompt: 'three', error: null, remixed_from_video_id: null })
		const all: string[] = []
		for await (const v of openai.videos.list({ limit: 2 })) all.push(v.id)
		expect(all).toEqual([...made].reverse())
		const asc: string[] = []
		for await (const v of openai.videos.list({ order: 'asc', limit: 1 })) asc.push(v.id)
		expect(asc).toEqual(made)
		const empty = await call(app, (await app.account(1)).key, '/v1/videos')
		expect(empty.body).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false })
	})
})

describe('DELETE /v1/videos/{id} (client.videos.delete)', () => {
	it('should delete a completed video upstream and here, after which it is not found', async () => {
		const { key } = await app.account(2)
		const openai = sdk(key)
		const video = await createAndPoll(openai, { model: 'sora-2', prompt: 'to delete' })
		const upstreamId = [...a.videos.keys()].pop()!
		a.reset()
		expect(await openai.videos.delete(video.id)).toEqual({ id: video.id, object: 'video.deleted', deleted: true })
		expect(a.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`DELETE /v1/videos/${upstreamId}`])
		expect(a.videos.has(upstreamId)).toBe(false)
		expect(await openai.videos.retrieve(video.id).catch((e) => e)).toBeInstanceOf(NotFoundError)
		expect(await openai.videos.delete(video.id).catch((e) => e)).toBeInstanceOf(NotFoundError)
		expect([...(await openai.videos.list()).data].map((v) => v.id)).not.toContain(video.id)
	})

	it('should refuse to delete a video still being generated, and keep it (and its charge) as it is', async () => {
		const { key, accountId } = await app.account(2)
		const openai = sdk(key)
		const video = await openai.videos.create({ model: 'sora-2', prompt: 'busy', seconds: '4' })
		const err = await openai.videos.delete(video.id).catch((e) => e)
		expect(err).toBeInstanceOf(OpenAI.BadRequestError)
		expect((await openai.videos.retrieve(video.id)).id).toBe(video.id)
		expect(micros(await app.balance(accountId))).toBe(2_000_000 - 400_000)
	})
})

describe('POST /v1/videos/{id}/remix (client.videos.remix)', () => {
	it('should remix on the channel that made the source, as a new billed task of the same model', async () => {
		const { key, accountId } = await app.account(3)
		const openai = sdk(key)
		// The source goes to vid-b: vid-a refuses the submit with a 503.
		a.fault = { kind: 'status', status: 503 }
		let source: Video
		try {
			source = await openai.videos.create({ model: 'sora-2', prompt: 'a cat', seconds: '8', size: '1280x720' })
		} finally {
			a.fault = undefined
		}
		for (let i = 0; i < 3 && source.status !== 'completed'; i++) source = await openai.videos.retrieve(source.id)
		expect(source.status).toBe('completed')
		const upstreamSource = [...b.videos.keys()].pop()!
		a.reset()
		b.reset()
		const remix = await openai.videos.remix(source.id, { prompt: 'the cat takes a bow' })
		expect(remix).toMatchObject({ object: 'video', model: 'sora-2', status: 'queued', prompt: 'the cat takes a bow', seconds: '8', size: '1280x720', remixed_from_video_id: source.id })
		expect(remix.id).toStartWith('video_')
		expect(remix.id).not.toBe(source.id)
		expect(a.requests).toHaveLength(0)
		expect(b.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`POST /v1/videos/${upstreamSource}/remix`])
		expect(b.requests[0]!.body).toEqual({ prompt: 'the cat takes a bow' })
		// 8 s × $0.10 for the source, and again for the remix.
		expect(micros(await app.balance(accountId))).toBe(3_000_000 - 2 * 800_000)
		const rows = await usageOf(app, accountId)
		expect(rows.at(-1)).toMatchObject({ model: 'sora-2', endpoint: '/v1/videos/{id}/remix', cost: 0.8, end_reason: 'ok' })
		const done = await createAndPollId(openai, remix.id)
		expect(done).toMatchObject({ status: 'completed', remixed_from_video_id: source.id })
		expect(new Uint8Array(await (await openai.videos.downloadContent(remix.id)).arrayBuffer())).toEqual(VIDEO_BYTES)
	})

	it('should pass on the refusal to remix an unfinished video, uncharged', async () => {
		const { key, accountId } = await app.account(2)
		const openai = sdk(key)
		const source = await openai.videos.create({ model: 'sora-2', prompt: 'not yet', seconds: '4' })
		const err = await openai.videos.remix(source.id, { prompt: 'again' }).catch((e) => e)
		expect(err).toBeInstanceOf(OpenAI.BadRequestError)
		expect(micros(await app.balance(accountId))).toBe(2_000_000 - 400_000)
	})
})

async function createAndPollId(openai: OpenAI, id: string): Promise<Video> {
	let video = await openai.videos.retrieve(id)
	for (let i = 0; i < 10 && (video.status === 'queued' || video.status === 'in_progress'); i++) video = await openai.videos.retrieve(id)
	return video
}
