/**
 * Structured logs without secrets (issue 4, WIRE-NOTES #17): a real server process at LOG_LEVEL=debug is driven
 * through successes, failovers, bad keys, Gemini `?key=` auth and an upstream that echoes the channel's key in its
 * error; every stdout line is a JSON object, and no caller key, upstream key, ADMIN_KEY or SECRET_KEY appears in it.
 * Nor does the upstream key reach the caller in an error body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { auth, body, ENDPOINT } from './rig'
import { ADMIN_KEY, deploy, type Deployment, SECRET_KEY, type Server } from './server-process'

const GOOD_UPSTREAM_KEY = 'up-good-Secret-7f3a9c1e5b'
/** Not sk- shaped, so no pattern can catch it: only knowing the value can. */
const LEAKY_UPSTREAM_KEY = 'AIzaLeakyUpstreamKey-93kd8s7a6d5f'

let mock: VendorMock
let leaky: ReturnType<typeof Bun.serve>
let dep: Deployment
let server: Server

beforeAll(async () => {
	mock = await startOpenAIMock({ apiKey: GOOD_UPSTREAM_KEY })
	// A careless vendor (or proxy) that repeats the credentials it was given in its error message.
	leaky = Bun.serve({
		hostname: '127.0.0.1',
		port: 0,
		fetch: (req) => Response.json({ error: { message: `invalid credentials: ${req.headers.get('authorization')?.slice(7)}`, type: 'auth' } }, { status: 401 }),
	})
	dep = await deploy(
		{
			channels: [
				{ name: 'leaky', type: 'openai', base_url: `http://127.0.0.1:${leaky.port}/v1`, api_key: LEAKY_UPSTREAM_KEY, models: ['logged', 'leaky-only'], priority: 0 },
				{ name: 'good', type: 'openai', base_url: mock.url, api_key: GOOD_UPSTREAM_KEY, models: ['logged', 'gemini-logged'], model_map: { logged: 'gpt-4o-mini' }, priority: 1 },
			],
			models: [
				{ name: 'logged', input_per_mtok: 1, output_per_mtok: 2 },
				{ name: 'leaky-only', input_per_mtok: 1, output_per_mtok: 2 },
				{ name: 'gemini-logged', input_per_mtok: 1, output_per_mtok: 2 },
			],
		},
		{ LOG_LEVEL: 'debug' },
	)
	server = await dep.start()
}, 60_000)
afterAll(async () => {
	await dep.close()
	await mock.stop()
	leaky.stop(true)
})

describe('logs', () => {
	it('should write only JSON lines and never a key', async () => {
		const acct = await dep.admin(server, '/api/accounts', { name: 'logs', balance: 5 })
		const tok = await dep.admin(server, '/api/tokens', { account_id: acct.id, name: 'k' })
		const key: string = tok.key
		const post = (path: string, b: unknown, headers: Record<string, string>) =>
			fetch(server.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(b) })

		// A failover past the leaky channel (which the gateway then disables), streaming and not.
		for (const stream of [false, true]) expect((await post(ENDPOINT.chat, body('logged', 'hello', stream), auth('chat', key))).status).toBe(200)
		// Bad caller keys, in every place a key can be sent.
		const bogus = 'sk-bogusCallerKey1234567890'
		expect((await post(ENDPOINT.chat, body('logged', 'x', false), auth('chat', bogus))).status).toBe(401)
		expect((await post(ENDPOINT.messages, body('logged', 'x', false), auth('messages', bogus))).status).toBe(401)
		const gem = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }
		await post(`/v1beta/models/gemini-logged:generateContent?key=${key}`, gem, {})
		await post(`/v1beta/models/gemini-logged:generateContent?key=${bogus}`, gem, {})
		// A malformed body and an unknown model.
		await fetch(server.url + ENDPOINT.chat, { method: 'POST', headers: { 'content-type': 'application/json', ...auth('chat', key) }, body: '{not json' })
		await post(ENDPOINT.chat, body('nope', 'x', false), auth('chat', key))
		// Admin calls, right and wrong.
		await fetch(`${server.url}/api/channels`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
		await fetch(`${server.url}/api/channels`, { headers: { authorization: 'Bearer wrong-admin-key-123456789' } })

		server.proc.kill('SIGTERM')
		expect(await server.exited).toBe(0)
		const out = server.output()
		const lines = out.split('\n').filter((l) => l.trim())
		expect(lines.length).toBeGreaterThan(3)
		for (const l of lines) expect(() => JSON.parse(l)).not.toThrow()
		expect(out).toContain('upstream attempt failed')
		for (const secret of [key, key.slice(3), bogus, GOOD_UPSTREAM_KEY, LEAKY_UPSTREAM_KEY, ADMIN_KEY, SECRET_KEY]) expect(out).not.toContain(secret)
		expect(server.errors()).not.toContain(LEAKY_UPSTREAM_KEY)
	}, 60_000)

	it('should not show the channel key to the caller when the upstream echoes it', async () => {
		server = await dep.start()
		// The leaky channel was disabled by the first test; enable it again for a caller with no fallback.
		const ch = (await dep.admin(server, '/api/channels')).data.find((c: { name: string }) => c.name === 'leaky')
		await dep.admin(server, `/api/channels/${ch.id}/enable`, {})
		const tok = (await dep.admin(server, '/api/tokens')).data[0]
		const { key } = await dep.admin(server, `/api/tokens/${tok.id}/key`)
		const res = await fetch(server.url + ENDPOINT.chat, { method: 'POST', headers: { 'content-type': 'application/json', ...auth('chat', key) }, body: JSON.stringify(body('leaky-only', 'x', false)) })
		expect(res.status).toBe(502)
		const text = await res.text()
		expect(text).not.toContain(LEAKY_UPSTREAM_KEY)
		const disabled = (await dep.admin(server, '/api/channels')).data.find((c: { name: string }) => c.name === 'leaky')
		expect(disabled.disabled_reason ?? '').not.toContain(LEAKY_UPSTREAM_KEY)
		server.proc.kill('SIGTERM')
		await server.exited
		expect(server.output()).not.toContain(LEAKY_UPSTREAM_KEY)
	}, 60_000)
})
