/**
 * SIGTERM (issue 4): a real server process with slow streams in flight stops accepting connections at once, lets the
 * open streams finish (OpenAI ends with [DONE], Anthropic with message_stop), writes their usage rows and exits 0.
 * When the grace period (SHUTDOWN_GRACE_MS) runs out first, the streams still open end with their protocol's error
 * event (not a bare connection reset), and what they used is still billed before the process exits: no hold is left open.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { expectLedgerInvariant } from './invariant'
import { auth, body, ENDPOINT, type Proto } from './rig'
import { deploy, type Deployment, readFrames, type Server } from './server-process'

let mock: VendorMock
let dep: Deployment

beforeAll(async () => {
	mock = await startOpenAIMock({ apiKey: 'up-term-key', chunkDelayMs: 200, record: false })
	dep = await deploy({
		channels: [{ name: 'up', type: 'openai', base_url: mock.url, api_key: 'up-term-key', models: ['term'], model_map: { term: 'gpt-4o-mini' } }],
		models: [{ name: 'term', input_per_mtok: 100, output_per_mtok: 200 }],
	})
}, 60_000)
afterAll(async () => {
	await dep.close()
	await mock.stop()
})

/** About 12 chunks at 200 ms: a 2–3 s stream. */
const PROMPT = 'tell me a slow story about the sea and ships'

async function openStream(server: Server, key: string, proto: Proto, requestId: string) {
	const res = await fetch(server.url + ENDPOINT[proto], {
		method: 'POST',
		headers: { 'content-type': 'application/json', 'x-request-id': requestId, ...auth(proto, key) },
		body: JSON.stringify(body('term', PROMPT, true, 100)),
	})
	expect(res.status).toBe(200)
	return readFrames(res, 3)
}

/** Whether a new TCP connection to the server is refused (a fetch could reuse a pooled keep-alive connection). */
async function refusesConnections(server: Server): Promise<boolean> {
	const port = Number(new URL(server.url).port)
	for (let i = 0; i < 40; i++) {
		try {
			const sock = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } })
			sock.end()
		} catch {
			return true
		}
		await Bun.sleep(50)
	}
	return false
}

describe('SIGTERM', () => {
	it('should refuse new connections, finish the open streams, bill them and exit 0', async () => {
		const s = await dep.start({ SHUTDOWN_GRACE_MS: '20000' })
		const acct = await dep.admin(s, '/api/accounts', { name: 'term', balance: 5 })
		const tok = await dep.admin(s, '/api/tokens', { account_id: acct.id, name: 'k' })
		const chat = await openStream(s, tok.key, 'chat', 'term-chat')
		const messages = await openStream(s, tok.key, 'messages', 'term-messages')
		s.proc.kill('SIGTERM')
		expect(await refusesConnections(s)).toBe(true)
		expect(s.running()).toBe(true) // still draining

		const chatText = chat.text + (await chat.rest())
		expect(chatText.trimEnd().endsWith('data: [DONE]')).toBe(true)
		expect(chatText).toContain(' ships')
		const messagesText = messages.text + (await messages.rest())
		expect(messagesText).toContain('event: message_stop')
		expect(await s.exited).toBe(0)
		expect(s.output()).toContain('"msg":"shutting down"')

		const rows = await dep.withDb((db) => db.sql.query<{ request_id: string; status: number; end_reason: string; cost: number }>('SELECT request_id, status, end_reason, cost FROM usage_logs ORDER BY request_id'))
		expect(rows.map((r) => [r.request_id, r.status, r.end_reason])).toEqual([
			['term-chat', 200, 'ok'],
			['term-messages', 200, 'ok'],
		])
		expect(rows.every((r) => r.cost > 0)).toBe(true)
		expect((await dep.withDb((db) => expectLedgerInvariant(db.sql))).leases).toBe(0)
	}, 60_000)

	it('should bill the streams it cuts when the grace period runs out, record them as shutdown, and still exit 0', async () => {
		const s = await dep.start({ SHUTDOWN_GRACE_MS: '400' })
		const tok = (await dep.admin(s, '/api/tokens')).data[0] as { id: number }
		const key = (await dep.admin(s, `/api/tokens/${tok.id}/key`)).key as string
		// A client that leaves on its own before the shutdown: still its own doing (client_abort).
		const leaving = new AbortController()
		const left = await fetch(s.url + ENDPOINT.chat, {
			method: 'POST',
			headers: { 'content-type': 'application/json', 'x-request-id': 'cut-left', ...auth('chat', key) },
			body: JSON.stringify(body('term', PROMPT, true, 100)),
			signal: leaving.signal,
		})
		await readFrames(left, 3)
		leaving.abort()
		await Bun.sleep(300)
		const chat = await openStream(s, key, 'chat', 'cut-chat')
		const messages = await openStream(s, key, 'messages', 'cut-messages')
		s.proc.kill('SIGTERM')
		// Each stream ends (its body complete, not reset) with its protocol's error event: an OpenAI error chunk, and
		// Anthropic's `event: error` with overloaded_error (retryable), as for other failures midway.
		const reset = (e: unknown) => `reset: ${e}`
		const [chatRest, messagesRest] = await Promise.all([chat.rest().catch(reset), messages.rest().catch(reset)])
		expect(await s.exited).toBe(0)
		expect(chatRest).not.toContain('reset:')
		expect(chatRest).not.toContain('[DONE]')
		const chatLast = JSON.parse(chatRest.trimEnd().split('\n').at(-1)!.slice('data: '.length))
		expect(chatLast).toMatchObject({ error: { type: 'service_unavailable_error', code: 'shutting_down' } })
		expect(messagesRest).not.toContain('reset:')
		expect(messagesRest).not.toContain('message_stop')
		expect(messagesRest.trimEnd()).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"overloaded_error","message":"[^"]+"\}[^\n]*\}$/)
		const rows = await dep.withDb((db) => db.sql.query<{ request_id: string; end_reason: string; cost: number }>(`SELECT request_id, end_reason, cost FROM usage_logs WHERE request_id LIKE 'cut-%' ORDER BY request_id`))
		// QA operator report: the streams the gateway cut were recorded as client_abort, as if their clients had left.
		expect(rows.map((r) => [r.request_id, r.end_reason])).toEqual([
			['cut-chat', 'shutdown'],
			['cut-left', 'client_abort'],
			['cut-messages', 'shutdown'],
		])
		expect(rows.every((r) => r.cost > 0)).toBe(true)
		expect((await dep.withDb((db) => expectLedgerInvariant(db.sql))).leases).toBe(0)
	}, 60_000)
})
