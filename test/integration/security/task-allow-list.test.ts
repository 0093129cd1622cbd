/**
 * `/mj/*` and `/suno/*` forward an allow list (src/passthrough/task-routes.ts): the routes midjourney-proxy, its forks
 * and new-api document for clients, each reaching the upstream as before. Anything else (the proxies' accounts and
 * administration under any spelling, a route a new proxy version adds, a path written with a trailing slash, an
 * encoded `/`, dot segments or `//`) is 404 in the service's error shape, and the mock shows nothing was sent: it
 * would go with the operator's secret, driven by any key holder. ASP.NET (trueai-org's proxy) matches routes without
 * regard to case, so `/mj/Admin/current` is its admin API as much as `/mj/admin/current` is.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type TestApp, startTestApp } from '../../helpers/app'
import { rawPieces } from '../../helpers/raw-pieces'
import { type MidjourneyMock, startMidjourneyMock, startSunoMock, type SunoMock } from '../../mocks/tasks'
import { call, priceList, usageOf } from '../surface/helpers'

let up: MidjourneyMock
let suno: SunoMock
let app: TestApp

beforeAll(async () => {
	up = await startMidjourneyMock({ apiKey: 'up-mj-secret', steps: 1 })
	suno = await startSunoMock({ apiKey: 'up-suno-secret', steps: 1 })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'mj', type: 'imgsvc', base_url: up.url, api_key: 'up-mj-secret', models: ['mj_*'] },
				{ name: 'suno', type: 'musicsvc', base_url: suno.url, api_key: 'up-suno-secret', models: ['suno_*'] },
			],
			models: priceList(['mj_imagine', 'mj_upscale', 'mj_variation', 'mj_blend', 'mj_describe', 'mj_action', 'mj_swap_face', 'suno_music', 'suno_lyrics'].map((name) => ({ name, per_request: 0.01 }))),
		},
	})
}, 30_000)
afterAll(async () => {
	await app?.close()
	await up?.stop()
	await suno?.stop()
})

const PNG = 'data:image/png;base64,AAAA'

/** A call the way the service's clients make it; `sent` is what the mocks received meanwhile. */
async function send(key: string, method: string, path: string, body?: unknown) {
	const before = { mj: up.requests.length, suno: suno.requests.length }
	const r = await call(app, key, path, { method, body: method === 'GET' || method === 'DELETE' ? undefined : (body ?? {}) })
	const sent = [...up.requests.slice(before.mj), ...suno.requests.slice(before.suno)].map((q) => `${q.method} ${q.path}`)
	return { status: r.status, body: r.body, sent }
}

/** A finished imagine of the caller's, for the routes that act on one. */
async function finishedImagine(key: string): Promise<string> {
	const id = (await send(key, 'POST', '/mj/submit/imagine', { prompt: 'a lighthouse' })).body.result as string
	expect((await send(key, 'GET', `/mj/task/${id}/fetch`)).body.status).toBe('SUCCESS')
	return id
}

describe('the Midjourney routes on the list', () => {
	it('should forward each submit that creates a task, charged under its model', async () => {
		const { key, accountId } = await app.account(10)
		const parent = await finishedImagine(key)
		const submits: Array<[string, Record<string, unknown>]> = [
			['blend', { base64Array: [PNG, PNG] }],
			['describe', { base64: PNG }],
			['shorten', { prompt: 'a very long prompt about a lighthouse' }],
			['change', { taskId: parent, action: 'UPSCALE', index: 1 }],
			['simple-change', { content: `${parent} V1` }],
			['action', { taskId: parent, customId: `MJ::JOB::reroll::0::${parent}::SOLO` }],
			['video', { taskId: parent, index: 1 }],
			['video', { image: 'https://example.com/a.png', prompt: 'it moves' }],
			['edits', { image: PNG, prompt: 'make it red' }],
			['edit', { image: PNG, prompt: 'make it blue' }],
			['retexture', { image: PNG, prompt: 'in marble' }],
		]
		for (const [action, body] of submits) {
			const r = await send(key, 'POST', `/mj/submit/${action}`, body)
			expect({ action, status: r.status, code: r.body.code, sent: r.sent }).toEqual({ action, status: 200, code: 1, sent: [`POST /mj/submit/${action}`] })
		}
		const models = (await usageOf(app, accountId)).map((u) => u.model)
		expect(models).toEqual(['mj_imagine', 'mj_blend', 'mj_describe', 'mj_action', 'mj_upscale', 'mj_variation', 'mj_action', 'mj_action', 'mj_action', 'mj_action', 'mj_action', 'mj_action'])
	})

	it('should forward a modal that confirms a zoom, the face swap and the unbilled upload', async () => {
		const { key } = await app.account(10)
		const parent = await finishedImagine(key)
		const zoom = await send(key, 'POST', '/mj/submit/action', { taskId: parent, customId: `MJ::CustomZoom::${parent}` })
		expect(zoom.body.code).toBe(21)
		const modal = await send(key, 'POST', '/mj/submit/modal', { taskId: zoom.body.result, prompt: 'a lighthouse --zoom 1.5' })
		expect({ code: modal.body.code, sent: modal.sent }).toEqual({ code: 1, sent: ['POST /mj/submit/modal'] })
		const swap = await send(key, 'POST', '/mj/insight-face/swap', { sourceBase64: PNG, targetBase64: PNG })
		expect({ code: swap.body.code, sent: swap.sent }).toEqual({ code: 1, sent: ['POST /mj/insight-face/swap'] })
		const upload = await send(key, 'POST', '/mj/submit/upload-discord-images', { base64Array: [PNG] })
		expect({ code: upload.body.code, sent: upload.sent }).toEqual({ code: 1, sent: ['POST /mj/submit/upload-discord-images'] })
	})

	it("should forward the reads and the cancel of the caller's own task", async () => {
		const { key } = await app.account(10)
		const id = await finishedImagine(key)
		const seed = await send(key, 'GET', `/mj/task/${id}/image-seed`)
		expect({ status: seed.status, code: seed.body.code, sent: seed.sent }).toEqual({ status: 200, code: 1, sent: [`GET /mj/task/${id}/image-seed`] })
		expect((await send(key, 'POST', '/mj/task/list-by-condition', { ids: [id] })).body.map((t: { id: string }) => t.id)).toEqual([id])
		expect((await send(key, 'POST', '/mj/task/list-by-ids', { ids: [id] })).body.map((t: { id: string }) => t.id)).toEqual([id])
		expect((await send(key, 'GET', '/mj/task/list')).body.map((t: { id: string }) => t.id)).toEqual([id])
		const running = (await send(key, 'POST', '/mj/submit/imagine', { prompt: 'to be cancelled' })).body.result as string
		expect((await send(key, 'GET', '/mj/task/queue')).body.map((t: { id: string }) => t.id)).toEqual([running])
		const cancel = await send(key, 'POST', `/mj/task/${running}/cancel`)
		expect({ status: cancel.status, sent: cancel.sent }).toEqual({ status: 200, sent: [`POST /mj/task/${running}/cancel`] })
		expect((await send(key, 'GET', `/mj/task/${running}/fetch`)).body.status).toBe('FAILURE')
	})
})

describe('the Suno routes on the list', () => {
	it('should forward the submits and the reads of the caller\'s tasks', async () => {
		const { key, accountId } = await app.account(10)
		const music = await send(key, 'POST', '/suno/submit/music', { prompt: 'a sea shanty', tags: 'folk' })
		const lyrics = await send(key, 'POST', '/suno/submit/lyrics', { prompt: 'a sea shanty' })
		expect([music.sent, lyrics.sent]).toEqual([['POST /suno/submit/music'], ['POST /suno/submit/lyrics']])
		const one = await send(key, 'GET', `/suno/fetch/${music.body.data}`)
		expect({ status: one.body.data.status, sent: one.sent }).toEqual({ status: 'SUCCESS', sent: [`GET /suno/fetch/${music.body.data}`] })
		const both = await send(key, 'POST', '/suno/fetch', { ids: [music.body.data, lyrics.body.data] })
		expect(both.body.data.map((t: { task_id: string }) => t.task_id).sort()).toEqual([music.body.data, lyrics.body.data].sort())
		expect((await usageOf(app, accountId)).map((u) => u.model)).toEqual(['suno_music', 'suno_lyrics'])
	})
})

describe('a Midjourney route not on the list', () => {
	const fixed: Array<[string, string]> = [
		['GET', '/mj/other/list'],
		['POST', '/mj/notify'],
		['GET', '/mj/image/1712000000000'],
		['GET', '/mj/admin/current'],
		['GET', '/mj/Admin/current'],
		['POST', '/mj/ADMIN/restart'],
		['GET', '/mj/admin/'],
		['GET', '/mj/account/list'],
		['GET', '/mj/Account/list'],
		['POST', '/mj/account/1/settings'],
		['GET', '/mj/Task/list'],
		['POST', '/mj/TASK/list-by-condition'],
		['GET', '/mj/task/list/'],
		['POST', '/mj/submit/show'],
		['POST', '/mj/submit/something-new'],
		['POST', '/mj/submit/IMAGINE'],
		['POST', '/mj/submit/Imagine'],
		['POST', '/mj/submit/imagine/'],
		['GET', '/mj/submit/imagine'],
		['POST', '/mj/submit'],
		['POST', '/mj/insight-face/video-swap'],
		['POST', '/mj/insight-face/other'],
		['POST', '/mj/insight-face/swap/'],
		['GET', '/mj/adm%69n/current'],
		['POST', '/mj/submit%2Fimagine'],
		['POST', '/mj/submit/imagine%2F..%2Fshow'],
		['GET', '/mj//admin/current'],
		['POST', '/mj/submit//imagine'],
		['GET', '/mj/./other/list'],
	]
	for (const [method, path] of fixed)
		it(`should answer ${method} ${path} 404 in midjourney-proxy's shape, sending nothing`, async () => {
			const { key, accountId } = await app.account(1)
			const r = await send(key, method, path, method === 'POST' ? { prompt: 'free castle', base64Array: [PNG, PNG] } : undefined)
			expect({ status: r.status, sent: r.sent }).toEqual({ status: 404, sent: [] })
			expect(r.body).toMatchObject({ code: 3, result: null, properties: { error_code: 'not_found' } })
			expect(await usageOf(app, accountId)).toEqual([])
		})

	// Paths of one of the caller's own tasks: only the reads and the cancel its proxy documents, as written.
	for (const [method, op] of [
		['GET', 'anything'],
		['DELETE', 'fetch'],
		['POST', 'image-seed'],
		['GET', 'cancel'],
		['GET', 'IMAGE-SEED'],
		['GET', 'image-seed/'],
		['GET', 'fetch/'],
		['GET', 'image-seed/x'],
	] as const)
		it(`should answer ${method} /mj/task/{own id}/${op} 404, sending nothing`, async () => {
			const { key } = await app.account(1)
			const id = (await send(key, 'POST', '/mj/submit/imagine', { prompt: 'mine' })).body.result as string
			const r = await send(key, method, `/mj/task/${id}/${op}`)
			expect({ status: r.status, sent: r.sent }).toEqual({ status: 404, sent: [] })
			expect(r.body).toMatchObject({ code: 3, properties: { error_code: 'not_found' } })
		})
})

describe('a Suno route not on the list', () => {
	for (const [method, path] of [
		['GET', '/suno/other/list'],
		['GET', '/suno/feed/abc'],
		['GET', '/suno/account'],
		['GET', '/suno/Account'],
		['GET', '/suno/FETCH/abc'],
		['GET', '/suno/account/'],
		['POST', '/suno/submit'],
		['GET', '/suno/submit/music'],
		['POST', '/suno/submit/music/extra'],
		['POST', '/suno/submit/music/'],
		['GET', '/suno/fetch/abc/'],
		['DELETE', '/suno/fetch/abc'],
		['POST', '/suno/submit%2Fmusic'],
		['GET', '/suno//fetch/abc'],
	] as const)
		it(`should answer ${method} ${path} 404 in new-api's task shape, sending nothing`, async () => {
			const { key, accountId } = await app.account(1)
			const r = await send(key, method, path, method === 'POST' ? { prompt: 'a free song' } : undefined)
			expect({ status: r.status, sent: r.sent }).toEqual({ status: 404, sent: [] })
			expect(r.body).toMatchObject({ code: 'not_found', data: null })
			expect(await usageOf(app, accountId)).toEqual([])
		})
})

describe('dot segments sent as they are', () => {
	// fetch() resolves `..` before sending; a raw client need not, so the server's own reading of them is what counts.
	for (const path of ['/suno/../api', '/suno/%2e%2e/api', '/mj/%2E%2E/admin/current', '/suno/x/../account', '/mj/submit/../admin/current', '/mj/x/../other/list', '/suno/x/../other'])
		it(`should not forward GET ${path}`, async () => {
			const { key } = await app.account(1)
			const before = up.requests.length + suno.requests.length
			const port = Number(new URL(app.url).port)
			const pieces = await rawPieces(port, `GET ${path} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: Bearer ${key}\r\nconnection: close\r\n\r\n`)
			expect(pieces.map((p) => p.text).join('')).toMatch(/^HTTP\/1\.1 404 /)
			expect(up.requests.length + suno.requests.length).toBe(before)
		})
})
