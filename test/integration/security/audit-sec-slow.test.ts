/**
 * Clients that send slowly or too much, over raw sockets: a body that stalls half-way holds no upstream call and no
 * charge (every route reads the whole body before it authenticates, reserves or calls out), and a body announced
 * past the limit is answered 413 at once, before it is sent, on every kind of route (the hot chat routes, Gemini's
 * native routes, the task passthroughs, the multipart uploads).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { MODELS, type SecApp, startSecApp } from './setup'

let app: SecApp
let port: number
beforeAll(async () => {
	app = await startSecApp({ MAX_JSON_BYTES: String(64 * 1024), MAX_UPLOAD_BYTES: String(256 * 1024) })
	port = Number(new URL(app.url).port)
}, 60_000)
afterAll(() => app?.close())

type Conn = { socket: Awaited<ReturnType<typeof Bun.connect>>; received: () => string; closed: Promise<void> }

async function open(): Promise<Conn> {
	let raw = ''
	let onClose!: () => void
	const closed = new Promise<void>((r) => (onClose = r))
	const socket = await Bun.connect({
		hostname: '127.0.0.1',
		port,
		socket: { data: (_s, d) => void (raw += d.toString()), close: () => onClose(), error: () => onClose() },
	})
	return { socket, received: () => raw, closed }
}

const head = (method: string, path: string, headers: Record<string, string>) =>
	`${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`

async function until(cond: () => boolean, ms: number) {
	const end = Date.now() + ms
	while (!cond() && Date.now() < end) await Bun.sleep(20)
}

describe('a body that stalls half-way', () => {
	const cases = [
		{ name: 'chat (hot route)', path: '/v1/chat/completions', auth: 'authorization', body: (m: string) => ({ model: m, max_tokens: 5, messages: [{ role: 'user', content: 'hi there' }] }), model: MODELS.openai, vendor: 'openai' as const },
		{ name: 'messages', path: '/v1/messages', auth: 'x-api-key', body: (m: string) => ({ model: m, max_tokens: 5, messages: [{ role: 'user', content: 'hi there' }] }), model: MODELS.anthropic, vendor: 'anthropic' as const },
		{ name: 'gemini native', path: `/v1beta/models/${MODELS.gemini}:generateContent`, auth: 'x-goog-api-key', body: () => ({ contents: [{ role: 'user', parts: [{ text: 'hi there' }] }] }), model: MODELS.gemini, vendor: 'gemini' as const },
	]
	for (const c of cases)
		it(`should call no upstream and hold no charge until it is complete, then be served (${c.name})`, async () => {
			const acct = await app.account(5)
			const before = await app.balance(acct.accountId)
			app.mocks[c.vendor].reset()
			const body = JSON.stringify(c.body(c.model))
			const conn = await open()
			const half = Math.floor(body.length / 2)
			conn.socket.write(head('POST', c.path, { 'content-type': 'application/json', 'content-length': String(body.length), [c.auth]: c.auth === 'authorization' ? `Bearer ${acct.key}` : acct.key, 'anthropic-version': '2023-06-01' }))
			conn.socket.write(body.slice(0, half))
			await Bun.sleep(700)
			expect(app.mocks[c.vendor].requests.length).toBe(0)
			expect(await app.balance(acct.accountId)).toBe(before)
			expect(conn.received()).toBe('')
			conn.socket.write(body.slice(half))
			await until(() => conn.received().includes('\r\n\r\n') && /"(?:usage|usageMetadata)"/.test(conn.received()), 5000)
			expect(conn.received()).toStartWith('HTTP/1.1 200')
			expect(app.mocks[c.vendor].requests.length).toBe(1)
			conn.socket.end()
		}, 20_000)
})

describe('a body announced past the limit', () => {
	const routes: Array<[string, string]> = [
		['/v1/chat/completions', 'application/json'],
		['/v1/messages', 'application/json'],
		[`/v1beta/models/${MODELS.gemini}:generateContent`, 'application/json'],
		['/v1/responses', 'application/json'],
		['/mj/submit/imagine', 'application/json'],
		['/mj/submit/upload-discord-images', 'application/json'],
		['/suno/submit/music', 'application/json'],
		['/suno/anything', 'application/json'],
		['/api/session', 'application/json'],
		['/v1/audio/transcriptions', 'multipart/form-data; boundary=x'],
		['/v1/files', 'multipart/form-data; boundary=x'],
	]
	for (const [path, type] of routes)
		it(`should be answered 413 before it is sent (${path})`, async () => {
			const acct = await app.account(1)
			const size = type.startsWith('multipart') ? 300 * 1024 : 100 * 1024
			const conn = await open()
			conn.socket.write(head('POST', path, { 'content-type': type, 'content-length': String(size), authorization: `Bearer ${acct.key}` }))
			await until(() => conn.received().includes('\r\n\r\n'), 5000)
			expect(conn.received()).toStartWith('HTTP/1.1 413')
			conn.socket.end()
		})

	it('should cut a chunked body once it passes the limit', async () => {
		const acct = await app.account(1)
		const conn = await open()
		conn.socket.write(head('POST', '/mj/submit/imagine', { 'content-type': 'application/json', 'transfer-encoding': 'chunked', authorization: `Bearer ${acct.key}` }))
		const chunk = 'x'.repeat(16 * 1024)
		for (let i = 0; i < 8 && !conn.received(); i++) {
			conn.socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)
			await Bun.sleep(30)
		}
		await until(() => conn.received().includes('\r\n\r\n'), 5000)
		expect(conn.received()).toStartWith('HTTP/1.1 413')
		conn.socket.end()
	})
})
