/**
 * POST /v1/chat/completions and /v1/messages are served by Bun's router straight to their handler when the request is
 * plain (src/http/hot-route.ts), and by the Elysia route otherwise. Whatever the request, the answer must be the one
 * the Elysia route gives: each request here goes to the listening server (the hot route) and, the same, to the app's
 * own `handle` (Elysia's pipeline only), and the two answers are compared.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createApp } from '../../../src/app'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startOpenAIMock } from '../../mocks'

let mock: Awaited<ReturnType<typeof startOpenAIMock>>
let app: TestApp
let elysia: ReturnType<typeof createApp>
let key: string
let limited: string
let accountId: number

beforeAll(async () => {
	mock = await startOpenAIMock({ apiKey: 'up-key' })
	app = await startTestApp({
		config: {
			channels: [{ name: 'mock', type: 'openai', base_url: mock.url, api_key: 'up-key', models: ['gpt-4o-mini'] }],
			models: [{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 }],
		},
		env: { MAX_JSON_BYTES: '4096' },
	})
	elysia = createApp(app.svc)
	;({ key, accountId } = await app.account(10))
	const l = await app.account(10)
	expect((await app.admin(`/api/tokens/${l.tokenId}`, { method: 'PATCH', body: { rpm_limit: 1000 } })).status).toBe(200)
	limited = l.key
}, 120_000)
afterAll(async () => {
	await app.close()
	await mock.stop()
})

type Req = { path: string; headers?: Record<string, string>; body: string }

/** The answer's status, its headers that matter, and its body (a stream's text, with ids and times taken out). */
async function seen(res: Response) {
	const text = (await res.text()).replace(/"(id|created|request_id)":\s*("[^"]*"|\d+)/g, '"$1":_')
	return { status: res.status, type: res.headers.get('content-type'), requestId: res.headers.get('x-request-id'), retryAfter: res.headers.get('retry-after'), text }
}

async function both(r: Req) {
	// The length as a client sends it (a Request made in-process has no such header).
	const init = () => ({ method: 'POST', headers: { 'x-request-id': 'req-hot-1', 'content-length': String(Buffer.byteLength(r.body)), ...r.headers }, body: r.body })
	const hot = await seen(await fetch(app.url + r.path, init()))
	const viaElysia = await seen(await elysia.handle(new Request(`http://local${r.path}`, init())))
	return { hot, viaElysia }
}

const json = { 'content-type': 'application/json' }
const bearer = (k: string) => ({ authorization: `Bearer ${k}` })
const chatBody = (extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one two three' }], ...extra })
const messagesBody = (extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 20, messages: [{ role: 'user', content: 'one two three' }], ...extra })

describe('hot routes answer as the Elysia routes do', () => {
	const cases: Array<[string, Req, number]> = [
		['a plain chat request', { path: '/v1/chat/completions', headers: { ...json, ...bearer('KEY') }, body: chatBody() }, 200],
		['a plain streamed chat request', { path: '/v1/chat/completions', headers: { ...json, ...bearer('KEY') }, body: chatBody({ stream: true }) }, 200],
		['a plain messages request', { path: '/v1/messages', headers: { ...json, 'x-api-key': 'KEY' }, body: messagesBody() }, 200],
		['a streamed messages request', { path: '/v1/messages', headers: { ...json, 'x-api-key': 'KEY' }, body: messagesBody({ stream: true }) }, 200],
		['JSON with a charset', { path: '/v1/chat/completions', headers: { 'content-type': 'application/json; charset=utf-8', ...bearer('KEY') }, body: chatBody() }, 200],
		['a key with rate limits', { path: '/v1/messages', headers: { ...json, 'x-api-key': 'LIMITED' }, body: messagesBody() }, 200],
		['a body that is not JSON', { path: '/v1/chat/completions', headers: { ...json, ...bearer('KEY') }, body: '{"model":' }, 400],
		['a body the schema refuses', { path: '/v1/chat/completions', headers: { ...json, ...bearer('KEY') }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: 'hi' }) }, 400],
		['a messages body the schema refuses', { path: '/v1/messages', headers: { ...json, 'x-api-key': 'KEY' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [] }) }, 400],
		// A JSON body sent untyped or as text is read as the JSON it is (request-guard.ts `untypedJson`).
		['another content type', { path: '/v1/chat/completions', headers: { 'content-type': 'text/plain', ...bearer('KEY') }, body: chatBody() }, 200],
		['no content type', { path: '/v1/messages', headers: { 'x-api-key': 'KEY' }, body: messagesBody() }, 200],
		['no key', { path: '/v1/chat/completions', headers: json, body: chatBody() }, 401],
		['an unknown key', { path: '/v1/messages', headers: { ...json, 'x-api-key': 'sk-unknown0000000000000000000000000000000000' }, body: messagesBody() }, 401],
		['an unknown model', { path: '/v1/chat/completions', headers: { ...json, ...bearer('KEY') }, body: chatBody({ model: 'no-such-model' }) }, 404],
		['a body over the limit', { path: '/v1/messages', headers: { ...json, 'x-api-key': 'KEY' }, body: messagesBody({ metadata: { user_id: 'x'.repeat(5000) } }) }, 413],
	]
	for (const [name, req, status] of cases)
		it(`should give the same answer to ${name}`, async () => {
			const k = (v: string) => v.replace('LIMITED', limited).replace('KEY', key)
			const r = { ...req, headers: Object.fromEntries(Object.entries(req.headers ?? {}).map(([h, v]) => [h, k(v)])) }
			const { hot, viaElysia } = await both(r)
			expect(hot.status).toBe(status)
			expect(hot).toEqual(viaElysia)
			expect(hot.requestId).toBe('req-hot-1')
		})

	it('should bill what it serves as the Elysia route does', async () => {
		const before = await app.balance(accountId)
		await both({ path: '/v1/chat/completions', headers: { ...json, ...bearer(key) }, body: chatBody() })
		const after = await app.balance(accountId)
		const spent = before - after
		expect(spent).toBeGreaterThan(0)
		// The two requests were the same: each cost half of what they spent together.
		const one = await app.balance(accountId)
		await (await fetch(`${app.url}/v1/chat/completions`, { method: 'POST', headers: { ...json, ...bearer(key) }, body: chatBody() })).text()
		expect(one - (await app.balance(accountId))).toBeCloseTo(spent / 2, 9)
	})
})
