/**
 * A body trickled in (a byte every 100 ms: Bun's idle timeout starts again at every byte, so it never fires) held a
 * connection and a request as long as its client liked. BODY_READ_TIMEOUT_MS bounds the whole body's arrival: past it
 * the caller gets 408 in its protocol's shape and the connection is closed, on every kind of route (the hot chat
 * routes, Elysia's JSON routes, Gemini's native ones, the task passthroughs, multipart uploads, the management API, a
 * chunked body), with no upstream called and nothing reserved or charged. A slow body that does arrive in time is
 * served as before. Raw TCP clients, since no SDK sends a body this slowly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN_KEY, MODELS, type SecApp, startSecApp } from './setup'

const DEADLINE_MS = 800

let app: SecApp
let port: number
beforeAll(async () => {
	app = await startSecApp({ BODY_READ_TIMEOUT_MS: String(DEADLINE_MS) })
	port = Number(new URL(app.url).port)
}, 60_000)
afterAll(() => app?.close())

type Answer = { status: number; headers: Record<string, string>; body: any; closedAfterMs: number; sent: number }

/**
 * Sends the head at once, then `body` a piece every `everyMs` (`chunked`: each piece as a chunk), until the server
 * closes the connection or the body is sent; resolves with what came back once the socket closes.
 */
function trickle(path: string, headers: Record<string, string>, body: string, opts: { everyMs?: number; piece?: number; chunked?: boolean } = {}): Promise<Answer> {
	const { everyMs = 100, piece = 1, chunked = false } = opts
	const head = { host: `127.0.0.1:${port}`, ...headers, ...(chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(Buffer.byteLength(body)) }) }
	let raw = ''
	let sent = 0
	let closed = false
	const started = performance.now()
	return new Promise<Answer>((resolve, reject) => {
		Bun.connect({
			hostname: '127.0.0.1',
			port,
			socket: {
				open(s) {
					s.write(`POST ${path} HTTP/1.1\r\n${Object.entries(head).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`)
					const timer = setInterval(() => {
						if (closed || sent >= body.length) return clearInterval(timer)
						const next = body.slice(sent, sent + piece)
						sent += next.length
						s.write(chunked ? `${next.length.toString(16)}\r\n${next}\r\n${sent >= body.length ? '0\r\n\r\n' : ''}` : next)
					}, everyMs)
				},
				data: (_s, d) => void (raw += d.toString()),
				close() {
					closed = true
					const [top, text = ''] = raw.split('\r\n\r\n', 2) as [string, string?]
					const [statusLine = '', ...lines] = top.split('\r\n')
					const hs = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
					let parsed: unknown = text
					try {
						parsed = JSON.parse(text)
					} catch {}
					resolve({ status: Number(statusLine.split(' ')[1]), headers: hs, body: parsed, closedAfterMs: performance.now() - started, sent })
				},
				error: (_s, e) => reject(e),
			},
		}).catch(reject)
	})
}

const chat = (model: string) => JSON.stringify({ model, max_tokens: 5, messages: [{ role: 'user', content: 'a body sent one byte at a time' }] })
const gemini = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'a body sent one byte at a time' }] }] })

const OPENAI_408 = { error: { type: 'timeout_error', code: 'request_timeout', message: expect.stringContaining(`within ${DEADLINE_MS} ms`) } }

describe('a body trickled in past BODY_READ_TIMEOUT_MS', () => {
	const json = { 'content-type': 'application/json' }
	const cases: Array<{ name: string; path: string; headers: (key: string) => Record<string, string>; body: string; shape: unknown; chunked?: boolean }> = [
		{ name: 'chat (hot route)', path: '/v1/chat/completions', headers: (k) => ({ ...json, authorization: `Bearer ${k}` }), body: chat(MODELS.openai), shape: OPENAI_408 },
		{ name: 'chat, chunked', path: '/v1/chat/completions', headers: (k) => ({ ...json, authorization: `Bearer ${k}` }), body: chat(MODELS.openai), shape: OPENAI_408, chunked: true },
		{
			name: 'messages (hot route)',
			path: '/v1/messages',
			headers: (k) => ({ ...json, 'x-api-key': k, 'anthropic-version': '2023-06-01' }),
			body: chat(MODELS.anthropic),
			shape: { type: 'error', error: { type: 'timeout_error', message: expect.stringContaining('BODY_READ_TIMEOUT_MS') } },
		},
		{ name: 'gemini native', path: `/v1beta/models/${MODELS.gemini}:generateContent`, headers: (k) => ({ ...json, 'x-goog-api-key': k }), body: gemini, shape: { error: { code: 408, status: 'DEADLINE_EXCEEDED' } } },
		{ name: 'responses', path: '/v1/responses', headers: (k) => ({ ...json, authorization: `Bearer ${k}` }), body: JSON.stringify({ model: MODELS.openai, input: 'slow' }), shape: OPENAI_408 },
		{
			name: 'multipart upload',
			path: '/v1/audio/transcriptions',
			headers: (k) => ({ 'content-type': 'multipart/form-data; boundary=b0undary', authorization: `Bearer ${k}` }),
			body: '--b0undary\r\ncontent-disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n--b0undary--\r\n',
			shape: OPENAI_408,
		},
		{ name: 'midjourney passthrough', path: '/mj/submit/imagine', headers: (k) => ({ ...json, authorization: `Bearer ${k}` }), body: JSON.stringify({ prompt: 'a slow cat' }), shape: { code: 4, result: null, properties: { error_code: 'request_timeout' } } },
		{
			name: 'responses, past 1 KB (read ahead for its nesting)',
			path: '/v1/responses',
			headers: (k) => ({ ...json, authorization: `Bearer ${k}` }),
			body: JSON.stringify({ model: MODELS.openai, input: 'slow '.repeat(300) }),
			shape: OPENAI_408,
		},
		{ name: 'suno submit', path: '/suno/submit/music', headers: (k) => ({ ...json, authorization: `Bearer ${k}` }), body: JSON.stringify({ prompt: 'a slow song' }), shape: { code: 'request_timeout', data: null } },
		// Its body is optional: Elysia parses it with errors caught, and the route would test the channel without it.
		{ name: 'a route whose body is optional', path: '/api/channels/1/test', headers: () => ({ ...json, authorization: `Bearer ${ADMIN_KEY}` }), body: JSON.stringify({ model: MODELS.openai }), shape: OPENAI_408 },
		{ name: 'management API', path: '/api/accounts', headers: () => ({ ...json, authorization: `Bearer ${ADMIN_KEY}` }), body: JSON.stringify({ name: 'slow', balance: 1 }), shape: OPENAI_408 },
	]
	// The deadlines run out together: every case's body starts trickling at once, and each test reads its own answer.
	let answers: Array<Promise<{ acct: { accountId: number }; before: number; a: Answer }>>
	beforeAll(() => {
		for (const m of Object.values(app.mocks)) m.reset()
		answers = cases.map(async (c) => {
			const acct = await app.account(5)
			const before = await app.balance(acct.accountId)
			return { acct, before, a: await trickle(c.path, c.headers(acct.key), c.body, { chunked: c.chunked }) }
		})
		for (const p of answers) p.catch(() => {}) // each test awaits its own, and fails with it
	})

	for (const [i, c] of cases.entries())
		it(`should answer 408 in the caller's shape and close the connection, calling and charging nothing (${c.name})`, async () => {
			const { acct, before, a } = await answers[i]!
			expect(a.status).toBe(408)
			expect(a.body).toMatchObject(c.shape as object)
			expect(a.headers.connection).toBe('close')
			expect(a.headers['x-request-id']).toBeTruthy()
			// Answered once the deadline passed (within its sweep's step), and the rest of the body never sent.
			expect(a.closedAfterMs).toBeGreaterThanOrEqual(DEADLINE_MS)
			expect(a.closedAfterMs).toBeLessThan(DEADLINE_MS + 1_500)
			expect(a.sent).toBeLessThan(c.body.length)
			// No upstream called by any of the cases.
			await Promise.allSettled(answers)
			expect(Object.values(app.mocks).map((m) => m.requests.length)).toEqual([0, 0, 0])
			await app.svc.ledger.flush()
			expect(await app.balance(acct.accountId)).toBe(before)
			expect((await app.admin(`/api/usage?account_id=${acct.accountId}`)).body.data).toEqual([])
			expect((await app.admin('/api/accounts')).body.data.map((x: { name: string }) => x.name)).not.toContain('slow')
			expect(app.svc.bodyReads.waiting).toBe(0)
		}, 20_000)

	it('should serve a body that comes slowly in pieces but in full before the deadline', async () => {
		const acct = await app.account(5)
		const body = chat(MODELS.openai)
		const a = await trickle('/v1/chat/completions', { 'content-type': 'application/json', authorization: `Bearer ${acct.key}`, connection: 'close' }, body, {
			everyMs: 150,
			piece: Math.ceil(body.length / 3),
		})
		expect(a.status).toBe(200)
		expect(a.body.choices[0].message.content).toBe('Hello! You said: a body')
		expect(a.sent).toBe(body.length)
	}, 20_000)
})

/**
 * A caller without a good key is refused before its body is read: Elysia parses a body before the routes' key check,
 * and a large body may take minutes, so a caller with no key held a connection that long (one address filled the
 * process's file descriptors; QA, security pass).
 */
describe('a body from a caller without a good key', () => {
	const json = { 'content-type': 'application/json' }
	const OPENAI_401 = { error: { type: 'invalid_request_error' } }
	const cases: Array<{ name: string; path: string; headers: Record<string, string>; body: string; code: string; shape: unknown; status?: number }> = [
		{ name: 'chat (hot route), no key', path: '/v1/chat/completions', headers: json, body: chat(MODELS.openai), code: 'missing_api_key', shape: OPENAI_401 },
		{ name: 'chat (hot route), a wrong key', path: '/v1/chat/completions', headers: { ...json, authorization: 'Bearer sk-not-a-key-of-ours' }, body: chat(MODELS.openai), code: 'invalid_api_key', shape: OPENAI_401 },
		{ name: 'messages (hot route), no key', path: '/v1/messages', headers: { ...json, 'anthropic-version': '2023-06-01' }, body: chat(MODELS.anthropic), code: '', shape: { type: 'error', error: { type: 'authentication_error' } } },
		{ name: 'gemini native, a wrong key', path: `/v1beta/models/${MODELS.gemini}:generateContent`, headers: { ...json, 'x-goog-api-key': 'sk-not-a-key-of-ours' }, body: gemini, code: '', shape: { error: { code: 400, status: 'INVALID_ARGUMENT', details: expect.arrayContaining([expect.objectContaining({ reason: 'API_KEY_INVALID' })]) } }, status: 400 },
		{ name: 'responses, no key', path: '/v1/responses', headers: json, body: JSON.stringify({ model: MODELS.openai, input: 'slow' }), code: 'missing_api_key', shape: OPENAI_401 },
		{ name: 'multipart upload, no key', path: '/v1/audio/transcriptions', headers: { 'content-type': 'multipart/form-data; boundary=b0undary' }, body: '--b0undary\r\ncontent-disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n--b0undary--\r\n', code: 'missing_api_key', shape: OPENAI_401 },
		{ name: 'midjourney passthrough, no key', path: '/mj/submit/imagine', headers: json, body: JSON.stringify({ prompt: 'a slow cat' }), code: '', shape: { code: 4 } },
	]
	for (const c of cases)
		it(`should answer the key refusal in the caller's shape at once, reading none of the body (${c.name})`, async () => {
			for (const m of Object.values(app.mocks)) m.reset()
			// A byte every 100 ms: the whole body would take seconds, the deadline 800 ms.
			const a = await trickle(c.path, c.headers, c.body)
			// 401, but in Gemini's shape what Google answers (400 for a wrong key).
			expect(a.status).toBe(c.status ?? 401)
			expect(a.body).toMatchObject(c.shape as object)
			if (c.code) expect(a.body.error.code).toBe(c.code)
			expect(a.closedAfterMs).toBeLessThan(DEADLINE_MS / 2)
			expect(a.sent).toBeLessThan(5)
			expect(Object.values(app.mocks).map((m) => m.requests.length)).toEqual([0, 0, 0])
		}, 20_000)
})
