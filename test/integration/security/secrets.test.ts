/**
 * Secret hygiene: requests that fail every way an upstream can fail (a refused key, a 5xx, a body that echoes the
 * key, a malformed or cut answer, a timeout, a refused connection), over every client protocol and the passthrough
 * relays. Neither the caller's answer (body and headers) nor any log line may carry an upstream key, ADMIN_KEY or
 * SECRET_KEY; logs may not carry the caller's key either. And what reaches the upstream carries the channel's key
 * only: never the caller's key, cookie or proxy credentials.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Fault, VendorMock } from '../../mocks'
import { ADMIN_KEY, MODELS, post, SECRET_KEY, type SecApp, startSecApp, UPSTREAM } from './setup'

let app: SecApp
let caller: { accountId: number; key: string }
beforeAll(async () => {
	// A breaker that opens only after many failures: every case below must reach the upstream.
	app = await startSecApp({ BREAKER_THRESHOLD: '100000' })
	// A short first-byte timeout on every channel, so `slow` is a timeout.
	for (const ch of (await app.admin('/api/channels')).body.data) {
		const r = await app.admin(`/api/channels/${ch.id}`, { method: 'PATCH', body: { settings: { timeouts: { first_byte_ms: 400, idle_ms: 400 } } } })
		if (r.status !== 200) throw new Error(JSON.stringify(r.body))
	}
	caller = await app.account(50)
}, 60_000)
afterAll(() => app?.close())

async function enableAll() {
	for (const ch of (await app.admin('/api/channels')).body.data) if (ch.status !== 'enabled') await app.admin(`/api/channels/${ch.id}/enable`, { method: 'POST' })
}

type Vendor = keyof typeof UPSTREAM
type Call = { name: string; vendor: Vendor; path: string; auth: 'bearer' | 'x-api-key' | 'goog'; body: (model: string) => unknown; model?: string }

const text = 'one two three'
const CALLS: Call[] = [
	...(['openai', 'anthropic', 'gemini'] as Vendor[]).flatMap((vendor): Call[] => [
		{ name: `chat→${vendor}`, vendor, path: '/v1/chat/completions', auth: 'bearer', body: (model) => ({ model, max_tokens: 20, messages: [{ role: 'user', content: text }] }) },
		{ name: `chat stream→${vendor}`, vendor, path: '/v1/chat/completions', auth: 'bearer', body: (model) => ({ model, max_tokens: 20, stream: true, messages: [{ role: 'user', content: text }] }) },
		{ name: `messages→${vendor}`, vendor, path: '/v1/messages', auth: 'x-api-key', body: (model) => ({ model, max_tokens: 20, messages: [{ role: 'user', content: text }] }) },
		{ name: `responses→${vendor}`, vendor, path: '/v1/responses', auth: 'bearer', body: (model) => ({ model, max_output_tokens: 20, input: text }) },
	]),
	{ name: 'gemini native→gemini', vendor: 'gemini', path: `/v1beta/models/${MODELS.gemini}:generateContent`, auth: 'goog', body: () => ({ contents: [{ role: 'user', parts: [{ text }] }] }) },
	{ name: 'gemini native stream→gemini', vendor: 'gemini', path: `/v1beta/models/${MODELS.gemini}:streamGenerateContent?alt=sse`, auth: 'goog', body: () => ({ contents: [{ role: 'user', parts: [{ text }] }] }) },
	{ name: 'embeddings→openai', vendor: 'openai', path: '/v1/embeddings', auth: 'bearer', body: (model) => ({ model, input: text }) },
	{ name: 'moderations→openai', vendor: 'openai', path: '/v1/moderations', auth: 'bearer', body: (model) => ({ model, input: text }) },
	{ name: 'images→openai', vendor: 'openai', path: '/v1/images/generations', auth: 'bearer', body: (model) => ({ model, prompt: text }) },
	{ name: 'speech→openai', vendor: 'openai', path: '/v1/audio/speech', auth: 'bearer', body: (model) => ({ model, input: text, voice: 'alloy' }) },
]

/** Every credential a careless client sends, in every place one might be taken from. */
function callerHeaders(c: Call, key: string): Record<string, string> {
	const own: Record<string, string> = c.auth === 'bearer' ? { authorization: `Bearer ${key}` } : c.auth === 'x-api-key' ? { 'x-api-key': key, 'anthropic-version': '2023-06-01' } : { 'x-goog-api-key': key }
	return { ...own, cookie: `sb_session=${key}; other=1`, 'proxy-authorization': `Basic ${btoa(`u:${key}`)}`, 'x-forwarded-for': '10.9.8.7' }
}

const FAULTS: Array<[string, (v: Vendor) => Fault]> = [
	['an upstream 401 that echoes the key', (v) => ({ kind: 'status', status: 401, body: { error: { message: `Incorrect API key provided: ${UPSTREAM[v]}`, type: 'invalid_request_error', code: 'invalid_api_key' } } })],
	['an upstream 500 that echoes the key', (v) => ({ kind: 'status', status: 500, body: `internal error while using key ${UPSTREAM[v]} (bearer ${UPSTREAM[v]})` })],
	['an upstream 400 that echoes the key', (v) => ({ kind: 'status', status: 400, body: { error: { message: `bad request for key=${UPSTREAM[v]}`, type: 'invalid_request_error' } } })],
	['a malformed answer', () => ({ kind: 'malformed' })],
	['a cut answer', () => ({ kind: 'cut', afterChunks: 1 })],
	['a first-byte timeout', () => ({ kind: 'slow', firstByteMs: 2000 })],
	['a connection reset mid-answer', () => ({ kind: 'cut', afterChunks: 1, abrupt: true })],
	['an upstream error event mid-stream', () => ({ kind: 'midstream', afterChunks: 1 })],
]

const SECRETS = [...Object.values(UPSTREAM), ADMIN_KEY, SECRET_KEY]

function leaks(hay: string, needles: string[]): string[] {
	return needles.filter((n) => hay.includes(n) || hay.includes(n.slice(0, 12)))
}

describe('secrets in failed answers and logs', () => {
	for (const c of CALLS)
		for (const [what, fault] of FAULTS)
			it(`should leak nothing on ${what} (${c.name})`, async () => {
				const mock: VendorMock = app.mocks[c.vendor]
				mock.reset()
				await enableAll() // a refused key disables its channel
				mock.fault = fault(c.vendor)
				const logStart = app.logs.length
				const model = c.model ?? MODELS[c.vendor]
				const r = await post(app.url + c.path, callerHeaders(c, caller.key), c.body(model)).catch((e) => ({ status: 0, headers: new Headers(), text: String(e), json: undefined }))
				mock.fault = undefined
				expect({ call: c.name, reached: mock.requests.length > 0 }).toEqual({ call: c.name, reached: true })
				await Bun.sleep(30) // log lines written after the answer (settlement, stream end)
				const seen = `${r.text}\n${JSON.stringify([...r.headers])}`
				expect({ call: c.name, leaked: leaks(seen, SECRETS) }).toEqual({ call: c.name, leaked: [] })
				const logs = app.logs.slice(logStart).join('\n')
				expect({ call: c.name, leakedToLog: leaks(logs, [...SECRETS, caller.key]) }).toEqual({ call: c.name, leakedToLog: [] })
				// 0: a relayed body cut after its headers went out (audio bytes) reaches the client cut too.
				expect(r.status).not.toBe(500)
			})
})

describe('what reaches the upstream', () => {
	for (const c of CALLS)
		it(`should send the channel's key and none of the caller's credentials (${c.name})`, async () => {
			const mock = app.mocks[c.vendor]
			mock.reset()
			await enableAll()
			await post(app.url + c.path, callerHeaders(c, caller.key), c.body(c.model ?? MODELS[c.vendor]))
			expect(mock.requests.length).toBeGreaterThan(0)
			for (const req of mock.requests) {
				const sent = JSON.stringify({ h: req.headers, q: req.query, p: req.path, b: req.text })
				expect({ call: c.name, callerKey: sent.includes(caller.key) }).toEqual({ call: c.name, callerKey: false })
				for (const h of ['cookie', 'proxy-authorization', 'x-forwarded-for']) expect({ call: c.name, h, sent: h in req.headers }).toEqual({ call: c.name, h, sent: false })
			}
		})
})

describe('keys the management API and refusals show', () => {
	it("should never return a channel's upstream key, in the list or one by one", async () => {
		const list = await app.admin('/api/channels')
		const one = await Promise.all(list.body.data.map((c: { id: number }) => app.admin(`/api/channels/${c.id}`)))
		expect(leaks(JSON.stringify([list.body, one.map((r) => r.body)]), SECRETS)).toEqual([])
	})

	it('should not echo a refused key in the answer or the log, in any protocol', async () => {
		// A careless client pastes its upstream key where the gateway key goes.
		const logStart = app.logs.length
		for (const c of [CALLS[0]!, CALLS[2]!, CALLS.find((x) => x.auth === 'goog')!]) {
			const r = await post(app.url + c.path, callerHeaders(c, UPSTREAM.openai), c.body(MODELS[c.vendor]))
			// Gemini's shape answers a wrong key as Google does: 400 API_KEY_INVALID.
			expect({ call: c.name, status: r.status }).toEqual({ call: c.name, status: c.auth === 'goog' ? 400 : 401 })
			expect(leaks(`${r.text}${JSON.stringify([...r.headers])}`, [UPSTREAM.openai])).toEqual([])
		}
		expect(leaks(app.logs.slice(logStart).join('\n'), [UPSTREAM.openai])).toEqual([])
	})
})
