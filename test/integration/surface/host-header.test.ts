/**
 * The Host header as callers send it. Without a usable one (HTTP/1.0 without Host, an empty or malformed Host) Bun
 * gives the path alone as the URL, and the error handler's URL parse threw: a 500 with Bun's development page, which
 * showed the server's source lines and working directory. A short one (`Host: gw`, a compose or Kubernetes service)
 * made Elysia read the path from the URL's 12th character on: `/v1/chat/completions` answered "No route", the
 * management API answered under `/v1/api/…`. Both through raw sockets, as such callers send them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN_KEY, startTestApp, type TestApp } from '../../helpers/app'
import { startOpenAIMock } from '../../mocks'

let app: TestApp
let up: Awaited<ReturnType<typeof startOpenAIMock>>

beforeAll(async () => {
	up = await startOpenAIMock({ apiKey: 'up-key' })
	app = await startTestApp({
		serverOptions: true,
		config: {
			channels: [{ name: 'o', type: 'openai', base_url: up.url, api_key: 'up-key', models: ['gpt-4o-mini'] }],
			models: [{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 }],
		},
	})
}, 60_000)
afterAll(async () => {
	await app.close()
	await up.stop()
})

/** One request written as is on a new connection; the answer's status and body. */
async function raw(head: string, body = ''): Promise<{ status: number; body: string }> {
	const port = Number(new URL(app.url).port)
	const text = await new Promise<string>((resolve, reject) => {
		let buf = ''
		Bun.connect({
			hostname: '127.0.0.1',
			port,
			socket: {
				open: (s) => void s.write(head + body),
				data: (_s, d) => void (buf += d.toString()),
				close: () => resolve(buf),
				error: (_s, e) => reject(e),
			},
		})
	})
	const [top = '', ...rest] = text.split('\r\n\r\n')
	const payload = rest.join('\r\n\r\n')
	// A chunked answer: its sizes dropped.
	const plain = /transfer-encoding: chunked/i.test(top) ? payload.replace(/(?:^|\r\n)[0-9a-f]+\r\n/gi, '') : payload
	return { status: Number(top.split(' ')[1]), body: plain }
}

describe('a request without a usable Host', () => {
	for (const head of ['GET /v1/models HTTP/1.0\r\n\r\n', 'GET /v1/models HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n', 'GET /api/accounts HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n', 'GET /nowhere HTTP/1.0\r\n\r\n'])
		it(`should answer 400 in the caller's shape, no source shown: ${JSON.stringify(head.split('\r\n')[0])}`, async () => {
			const r = await raw(head)
			expect(r.status).toBe(400)
			expect(JSON.parse(r.body)).toMatchObject({ error: { code: 'invalid_host', message: 'a valid Host header is required' } })
			expect(r.body).not.toContain('src/')
		})
})

describe('a Host of two or three characters', () => {
	it('should route every path by its own name', async () => {
		const { key } = await app.account(1)
		const chat = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
		for (const host of ['gw', 'llm', 'a'])
			for (let i = 0; i < 2; i++) {
				const r = await raw(`POST /v1/chat/completions HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${chat.length}\r\nConnection: close\r\n\r\n`, chat)
				expect({ host, i, status: r.status }).toEqual({ host, i, status: 200 })
				expect(JSON.parse(r.body).object).toBe('chat.completion')
			}
		const health = await raw('GET /xx/health HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n')
		expect(health.status).toBe(404)
		const shifted = await raw(`GET /v1/api/accounts HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${ADMIN_KEY}\r\nConnection: close\r\n\r\n`)
		expect(shifted.status).toBe(404)
		const accounts = await raw(`GET /api/accounts HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${ADMIN_KEY}\r\nConnection: close\r\n\r\n`)
		expect(accounts.status).toBe(200)
		expect(JSON.parse(accounts.body).data.length).toBeGreaterThan(0)
	})
})
