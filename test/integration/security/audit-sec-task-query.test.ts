/**
 * The Midjourney and Suno routes forward the caller's path and query to the task service: the catch-alls, the billed
 * submits and the paths of one of the caller's tasks. A client that also puts its gateway key in the query (`?key=`,
 * as Gemini clients do and the gateway reads on Gemini routes) must not see it handed to the upstream, a third party's
 * server; other query parameters still pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type TestApp, startTestApp } from '../../helpers/app'
import { type MidjourneyMock, startMidjourneyMock, startSunoMock, type SunoMock } from '../../mocks/tasks'

let mj: MidjourneyMock
let suno: SunoMock
let app: TestApp
let key: string

beforeAll(async () => {
	mj = await startMidjourneyMock({ apiKey: 'up-mj', steps: 1 })
	suno = await startSunoMock({ apiKey: 'up-suno', steps: 1 })
	app = await startTestApp({
		config: {
			channels: [
				// The catch-alls forward only what the operator added to the allow list (passthrough/task-routes.ts).
				{ name: 'mj', type: 'imgsvc', base_url: mj.url, api_key: 'up-mj', models: ['mj_*'], settings: { extra_task_paths: ['GET /mj/other/list'] } },
				{ name: 'suno', type: 'musicsvc', base_url: suno.url, api_key: 'up-suno', models: ['suno_*'], settings: { extra_task_paths: ['GET /suno/feed/abc'] } },
			],
			models: [{ name: 'mj_imagine', per_request: 0.01 }, { name: 'suno_music', per_request: 0.01 }] as never,
		},
	})
	key = (await app.account(10)).key
}, 30_000)
afterAll(async () => {
	await app.close()
	await mj.stop()
	await suno.stop()
})

describe('the caller key in a task-service query string', () => {
	for (const [name, path, headers, mock] of [
		['midjourney', '/mj/other/list', (k: string) => ({ 'mj-api-secret': k }), () => mj],
		['suno', '/suno/feed/abc', (k: string) => ({ authorization: `Bearer ${k}` }), () => suno],
	] as const)
		it(`should not reach the upstream, while other parameters do (${name})`, async () => {
			const m = mock()
			const before = m.requests.length
			await fetch(`${app.url}${path}?key=${key}&page=2`, { headers: headers(key) })
			const sent = m.requests.slice(before)
			expect(sent.length).toBe(1)
			expect(JSON.stringify(sent[0])).not.toContain(key)
			expect(sent[0]!.query).toEqual({ page: '2' })
		})
})

describe('the caller key in the query of a submit or of one of its tasks', () => {
	it('should not reach the upstream (Midjourney imagine, image-seed; Suno music)', async () => {
		const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
		const q = `?key=${key}&page=2`
		const mjBefore = mj.requests.length
		const sunoBefore = suno.requests.length
		const submitted = (await (await fetch(`${app.url}/mj/submit/imagine${q}`, { method: 'POST', headers: auth, body: JSON.stringify({ prompt: 'a fox' }) })).json()) as { result: string }
		await fetch(`${app.url}/mj/task/${submitted.result}/image-seed${q}`, { headers: auth })
		await fetch(`${app.url}/suno/submit/music${q}`, { method: 'POST', headers: auth, body: JSON.stringify({ prompt: 'a song' }) })
		const sent = [...mj.requests.slice(mjBefore), ...suno.requests.slice(sunoBefore)]
		expect(sent.map((r) => r.path)).toEqual(['/mj/submit/imagine', `/mj/task/${submitted.result}/image-seed`, '/suno/submit/music'])
		for (const r of sent) {
			expect(JSON.stringify(r)).not.toContain(key)
			expect(r.query).toEqual({ page: '2' })
		}
	})
})
