/**
 * The rarely used routes (src/app-deferred.ts) live in an app built at the first request the main app has no route
 * for (src/http/deferred-app.ts). What a client sees must not change: the first and later requests are answered
 * alike, concurrent first requests all are, the request id comes back once (the client's when given), unknown paths
 * still get their 404 in the caller's shape, and a multipart body is judged by the routes that serve the path.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createApp, DEFERRED_PATHS } from '../../../src/app'
import { deferredModules } from '../../../src/app-deferred'
import { ADMIN_KEY, type TestApp, startTestApp } from '../../helpers/app'

let app: TestApp
let key: string

beforeAll(async () => {
	app = await startTestApp()
	;({ key } = await app.account(1))
}, 30_000)

afterAll(async () => {
	await app.close()
})

const get = (path: string, headers: Record<string, string> = {}) => fetch(app.url + path, { headers: { authorization: `Bearer ${key}`, ...headers } })

describe('the deferred routes', () => {
	it('should answer concurrent first requests and later ones alike', async () => {
		// GET /v1/batches (a deferred route): the account's batches, none yet.
		const first = await Promise.all(Array.from({ length: 8 }, () => get('/v1/batches')))
		const later = await get('/v1/batches')
		for (const res of [...first, later]) {
			expect(res.status).toBe(200)
			expect(((await res.json()) as { object: string; data: unknown[] }).data).toEqual([])
		}
	})

	it('should keep the request id: the client\'s when given, else one of its own, in one header', async () => {
		const given = await get('/v1/batches', { 'x-request-id': 'client-chosen-id-1' })
		expect(given.headers.get('x-request-id')).toBe('client-chosen-id-1')
		const own = await get('/v1/batches')
		const id = own.headers.get('x-request-id')
		expect(id).toMatch(/^[A-Za-z0-9._:-]+$/)
		expect(id!.includes(',')).toBe(false)
	})

	it("should answer a path no route serves with its 404 in the caller's shape", async () => {
		const openai = await get('/v1/no-such-thing')
		expect(openai.status).toBe(404)
		expect(((await openai.json()) as { error: { code: string } }).error.code).toBe('not_found')
		expect(openai.headers.get('x-request-id')).toBeTruthy()
		// An Anthropic SDK given {root}/v1 as its base URL.
		const anthropic = await fetch(`${app.url}/v1/v1/messages`, {
			method: 'POST',
			headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
			body: JSON.stringify({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'hi' }] }),
		})
		expect(anthropic.status).toBe(404)
		expect(((await anthropic.json()) as { type: string; error: { type: string } }).error.type).toBe('not_found_error')
	})

	it('should judge a multipart body by the routes that serve its path', async () => {
		const form = () => {
			const f = new FormData()
			f.append('x', 'y')
			return f
		}
		const post = (path: string) => fetch(app.url + path, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form() })
		// A deferred JSON route: 415. No route at all: 404. A deferred upload route: past the guard (its own 400 here).
		expect((await post('/v1/messages/batches')).status).toBe(415)
		expect((await post('/v1/realtime/calls')).status).toBe(404)
		const upload = await post('/v1/files')
		expect(upload.status).toBe(400)
		expect(((await upload.json()) as { error: { message: string } }).error.message).toContain('file')
	})

	it('should serve the management API and the deferred routes side by side', async () => {
		const usage = await fetch(`${app.url}/api/usage`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
		expect(usage.status).toBe(200)
		const stored = await get('/v1/chat/completions')
		expect(stored.status).toBe(200)
		expect(((await stored.json()) as { object: string }).object).toBe('list')
	})
})

describe('which app serves a path', () => {
	/** Elysia's pattern as a regex: a parameter is one segment, a wildcard the rest. */
	const pattern = (p: string) => new RegExp(`^${p.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\/:[^/]+/g, '/[^/]+').replace(/\*/g, '.*')}$`)
	/** A path the route serves: its parameters and wildcard filled in. */
	const example = (p: string) => p.replace(/:[^/]+/g, 'x1').replace(/\*/g, 'x2/x3')

	it("should leave every deferred route's requests to it: no route of the main app takes their method and path", () => {
		const main = createApp(app.svc).routes.map((r) => ({ method: r.method, re: pattern(r.path), path: r.path }))
		const deferred = deferredModules(app.svc, () => Promise.resolve(new Response())).routes
		expect(deferred.length).toBeGreaterThan(50)
		const shadowed = deferred.flatMap((d) =>
			main.filter((m) => (m.method === d.method || m.method === 'ALL' || d.method === 'ALL') && m.re.test(example(d.path))).map((m) => `${d.method} ${d.path} taken by ${m.method} ${m.path}`),
		)
		expect(shadowed).toEqual([])
		// Every deferred route's path loads them; paths of nothing (a scanner's, a doubled prefix) do not.
		expect(deferred.map((d) => example(d.path)).filter((p) => !DEFERRED_PATHS.test(p))).toEqual([])
		expect(['/favicon.ico', '/robots.txt', '/v1/v1/messages', '/v1/no-such-thing', '/v1/models/x', '/wp-login.php'].filter((p) => DEFERRED_PATHS.test(p))).toEqual([])
		// The check itself: Gemini's operations would be taken by the models list's wildcard.
		expect(main.some((m) => m.method === 'GET' && m.re.test(example('/v1beta/models/:model/operations/:id')) && m.path === '/v1beta/models/*')).toBe(true)
	})
})
