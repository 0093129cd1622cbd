/**
 * SIGTERM with Live sessions open: a real server process gives them the grace period (SHUTDOWN_GRACE_MS), then
 * closes both sockets with 1001 (going away) and bills the turn each was running as `shutdown`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type LiveMock, startLiveMock } from '../../mocks/gemini/live'
import { expectLedgerInvariant } from '../resilience/invariant'
import { deploy, type Deployment } from '../resilience/server-process'

let mock: LiveMock
let dep: Deployment

beforeAll(async () => {
	mock = await startLiveMock({ apiKey: 'up-live' })
	dep = await deploy({
		channels: [{ name: 'live', type: 'gemini', base_url: mock.url, api_key: 'up-live', models: ['gemini-live'] }],
		models: [{ name: 'gemini-live', input_per_mtok: 1, output_per_mtok: 4 }],
	})
}, 60_000)
afterAll(async () => {
	await dep.close()
	await mock.stop()
})

const PATH = '/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent'

/** A session whose turn is running and never completes (the mock holds it after its first part). */
async function heldSession(url: string, key: string, requestId: string) {
	const ws = new WebSocket(`${url.replace('http', 'ws')}${PATH}?key=${key}`, { headers: { 'x-request-id': requestId } } as unknown as string[])
	ws.binaryType = 'arraybuffer'
	const text = (e: MessageEvent) => (typeof e.data === 'string' ? e.data : new TextDecoder().decode(e.data as ArrayBuffer))
	const closed = new Promise<number>((resolve) => ws.addEventListener('close', (e) => resolve(e.code)))
	const setUp = new Promise<void>((resolve) => ws.addEventListener('message', (e) => text(e).includes('setupComplete') && resolve()))
	const part = new Promise<void>((resolve) => ws.addEventListener('message', (e) => text(e).includes('"modelTurn"') && resolve()))
	await new Promise((resolve) => ws.addEventListener('open', resolve))
	ws.send(JSON.stringify({ setup: { model: 'models/gemini-live', generationConfig: { responseModalities: ['TEXT'] } } }))
	await setUp
	ws.send(JSON.stringify({ clientContent: { turns: [{ role: 'user', parts: [{ text: 'mock:hold' }] }], turnComplete: true } }))
	await part
	return { ws, closed }
}

describe('SIGTERM with Live sessions open', () => {
	it('should close the sessions still open when the grace period runs out with 1001 both ways, bill their running turn (estimated) as shutdown, and exit 0', async () => {
		const s = await dep.start({ SHUTDOWN_GRACE_MS: '400' })
		const acct = await dep.admin(s, '/api/accounts', { name: 'live', balance: 5 })
		const tok = await dep.admin(s, '/api/tokens', { account_id: acct.id, name: 'k' })
		const closedBefore = mock.closed.length
		const session = await heldSession(s.url, tok.key, 'live-held')
		s.proc.kill('SIGTERM')
		expect(await session.closed).toBe(1001)
		expect(await s.exited).toBe(0)
		expect(mock.closed.slice(closedBefore)).toEqual([1001])
		const rows = await dep.withDb((db) =>
			db.sql.query<{ request_id: string; end_reason: string; cost: number; estimated: boolean }>(`SELECT request_id, end_reason, cost, estimated FROM usage_logs WHERE endpoint = '${PATH}'`),
		)
		expect(rows.map((r) => [r.request_id, r.end_reason])).toEqual([['live-held', 'shutdown']])
		expect(rows[0]!.cost).toBeGreaterThan(0)
		expect(rows[0]!.estimated).toBe(true)
		expect((await dep.withDb((db) => expectLedgerInvariant(db.sql))).leases).toBe(0)
	}, 60_000)
})
