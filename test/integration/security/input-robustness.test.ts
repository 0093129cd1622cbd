/**
 * A careless or hostile client's bodies, paths and headers on the model routes: each gets a clear 4xx in the caller's
 * protocol shape, quickly, never a 500 and never a charge. Pathologically nested JSON once held the event loop for
 * 21 s per 200 KB request and then answered 500 (raw-json.ts MAX_JSON_DEPTH).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { MODELS, post, type SecApp, startSecApp } from './setup'

let app: SecApp
let acct: { accountId: number; key: string }
beforeAll(async () => {
	app = await startSecApp()
	acct = await app.account(5)
}, 60_000)
afterAll(() => app?.close())

const headers = () => ({ authorization: `Bearer ${acct.key}`, 'x-api-key': acct.key, 'x-goog-api-key': acct.key, 'anthropic-version': '2023-06-01' })

/** The error shape each route answers in. */
const ROUTES: Array<[string, 'openai' | 'anthropic' | 'gemini', (extra: Record<string, unknown>) => unknown]> = [
	['/v1/chat/completions', 'openai', (x) => ({ model: MODELS.openai, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }], ...x })],
	['/v1/messages', 'anthropic', (x) => ({ model: MODELS.anthropic, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }], ...x })],
	['/v1/responses', 'openai', (x) => ({ model: MODELS.openai, max_output_tokens: 5, input: 'hi', ...x })],
	['/v1/embeddings', 'openai', (x) => ({ model: MODELS.openai, input: 'hi', ...x })],
	['/v1/messages/count_tokens', 'anthropic', (x) => ({ model: MODELS.anthropic, messages: [{ role: 'user', content: 'hi' }], ...x })],
	[`/v1beta/models/${MODELS.gemini}:generateContent`, 'gemini', (x) => ({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], ...x })],
]

function expectShape(shape: 'openai' | 'anthropic' | 'gemini', body: any) {
	if (shape === 'anthropic') expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
	else if (shape === 'gemini') expect(body).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } })
	else expect(body).toMatchObject({ error: { type: 'invalid_request_error' } })
}

async function expectUncharged() {
	await app.svc.ledger.flush()
	expect(await app.balance(acct.accountId)).toBe(5)
}

describe('deeply nested JSON', () => {
	const deepArray = (n: number) => '['.repeat(n) + ']'.repeat(n)
	for (const [path, shape, body] of ROUTES) {
		it(`should refuse a 100,000-level body at once with 400 (${path})`, async () => {
			const t0 = Date.now()
			const r = await post(app.url + path, headers(), deepArray(100_000))
			expect({ path, status: r.status }).toEqual({ path, status: 400 })
			expectShape(shape, r.json)
			expect(Date.now() - t0).toBeLessThan(2000)
		})
		it(`should refuse a valid request carrying a 100,000-level value with 400 (${path})`, async () => {
			const deep = JSON.stringify(body({})).replace(/}$/, `,"metadata":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`)
			const t0 = Date.now()
			const r = await post(app.url + path, headers(), deep)
			expect({ path, status: r.status }).toEqual({ path, status: 400 })
			expect(Date.now() - t0).toBeLessThan(2000)
		})
	}
	it('should refuse it on the management API too', async () => {
		const res = await fetch(`${app.url}/api/accounts`, { method: 'POST', headers: { authorization: 'Bearer sec-admin-key-a1b2c3d4e5f6', 'content-type': 'application/json' }, body: deepArray(100_000) })
		expect(res.status).toBe(400)
	})
	it('should refuse a chunked (unsized) deep body too', async () => {
		const bytes = new TextEncoder().encode(deepArray(100_000))
		const stream = new ReadableStream({
			start(c) {
				for (let i = 0; i < bytes.length; i += 16_384) c.enqueue(bytes.subarray(i, i + 16_384))
				c.close()
			},
		})
		const res = await fetch(`${app.url}/v1/responses`, { method: 'POST', headers: { ...headers(), 'content-type': 'application/json' }, body: stream })
		expect(res.status).toBe(400)
	})
	it('should still serve bodies with brackets inside strings and ordinary nesting', async () => {
		const r = await post(app.url + '/v1/chat/completions', headers(), { model: MODELS.openai, max_tokens: 5, messages: [{ role: 'user', content: `${'['.repeat(5000)} \\" ${'{'.repeat(5000)}` }], metadata: { a: 'b' } })
		expect(r.status).toBe(200)
		await app.svc.ledger.flush()
		// That one is charged; put the balance back for the other tests.
		const now = await app.balance(acct.accountId)
		await app.admin(`/api/accounts/${acct.accountId}/credit`, { body: { amount: Number((5 - now).toFixed(6)) } })
	})
	it('should have charged nothing for refused bodies', expectUncharged)
})

describe('model names and paths', () => {
	const names = ['../../etc/passwd', 'a\r\nx-injected: 1', 'mödel-😀', 'x'.repeat(10_000), '', 'sec-gpt\u0000', '%2e%2e%2f']
	for (const [path, , body] of ROUTES.slice(0, 5))
		it(`should answer strange model names with a 4xx and no injected header (${path})`, async () => {
			for (const model of names) {
				const r = await post(app.url + path, headers(), body({ model }))
				expect({ model: model.slice(0, 20), ok: r.status >= 400 && r.status < 500 }).toEqual({ model: model.slice(0, 20), ok: true })
				expect(r.headers.get('x-injected')).toBeNull()
			}
		})
	it('should not let a Gemini model path climb out of /v1beta/models', async () => {
		for (const m of ['..%2F..%2Fapi%2Fchannels:generateContent', '%2e%2e/%2e%2e/api/channels', 'sec-gemini%0d%0aX-Injected:1:generateContent', 'sec-gemini::generateContent', `${encodeURIComponent('😀')}:generateContent`]) {
			const r = await post(`${app.url}/v1beta/models/${m}`, headers(), { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] })
			expect({ m, ok: r.status >= 400 && r.status < 500 }).toEqual({ m, ok: true })
			expect(r.text).not.toContain('base_url')
			expect(r.headers.get('x-injected')).toBeNull()
		}
	})
	it('should not echo a request id that would split headers, nor an oversized one', async () => {
		for (const rid of ['x'.repeat(10_000), 'a b', '<script>']) {
			const r = await post(`${app.url}/v1/chat/completions`, { ...headers(), 'x-request-id': rid }, { model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] })
			expect(r.headers.get('x-request-id')).not.toBe(rid)
		}
	})
	it('should have charged nothing', expectUncharged)
})

describe('content types and query strings', () => {
	for (const [path, shape, body] of ROUTES)
		it(`should answer odd content types with a 4xx in its shape (${path})`, async () => {
			for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x']) {
				const r = await post(app.url + path, { ...headers(), 'content-type': ct }, JSON.stringify(body({})))
				expect({ ct, ok: (r.status >= 400 && r.status < 500) || r.status === 200 }).toEqual({ ct, ok: true })
				if (r.status !== 200) expect(r.json).toBeDefined()
				void shape
			}
		})
	it('should not be confused by repeated, unknown or malformed query parameters', async () => {
		for (const [path] of ROUTES) {
			const r = await post(`${app.url}${path}${path.includes('?') ? '&' : '?'}a=1&a=2&key=zz&alt=sse&%zz&model=x`, headers(), ROUTES.find((x) => x[0] === path)![2]({}))
			expect({ path, status: r.status < 500 }).toEqual({ path, status: true })
		}
	})
})

describe('many slow clients', () => {
	it('should keep answering while 200 clients trickle their headers', async () => {
		const { port } = new URL(app.url)
		const sockets = await Promise.all(
			Array.from({ length: 200 }, () =>
				Bun.connect({ hostname: '127.0.0.1', port: Number(port), socket: { data() {}, error() {} } }).then((s) => {
					s.write('POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 100000\r\n')
					return s
				}),
			),
		)
		try {
			const t0 = Date.now()
			const r = await fetch(`${app.url}/health`)
			expect(r.status).toBeLessThan(500)
			expect(Date.now() - t0).toBeLessThan(2000)
		} finally {
			for (const s of sockets) s.end()
		}
	})
})
