/**
 * SIGTERM with Realtime sessions open: a real server process gives them the grace period (SHUTDOWN_GRACE_MS), then
 * closes both sockets with 1001 (going away) and bills the response each was running as `shutdown`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type RealtimeMock, startRealtimeMock } from '../../mocks/openai/realtime'
import { expectLedgerInvariant } from '../resilience/invariant'
import { deploy, type Deployment } from '../resilience/server-process'

let rt: RealtimeMock
let dep: Deployment

beforeAll(async () => {
	rt = await startRealtimeMock({ apiKey: 'up-rt' })
	dep = await deploy({
		channels: [{ name: 'rt', type: 'openai', base_url: rt.url, api_key: 'up-rt', models: ['gpt-realtime'] }],
		models: [{ name: 'gpt-realtime', input_per_mtok: 4, output_per_mtok: 16 }],
	})
}, 60_000)
afterAll(async () => {
	await dep.close()
	await rt.stop()
})

/** A session whose response is running and whose upstream will not answer a cancel (the mock stalls it). */
async function heldSession(url: string, key: string, requestId: string) {
	const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/realtime?model=gpt-realtime`, { headers: { authorization: `Bearer ${key}`, 'x-request-id': requestId } } as unknown as string[])
	const closed = new Promise<number>((resolve) => ws.addEventListener('close', (e) => resolve(e.code)))
	const delta = new Promise<void>((resolve) => ws.addEventListener('message', (e) => String(e.data).includes('"response.output_audio.delta"') && resolve()))
	await new Promise((resolve) => ws.addEventListener('open', resolve))
	ws.send(JSON.stringify({ type: 'response.create', response: { metadata: { mock: 'stall' } } }))
	await delta
	return { ws, closed }
}

describe('SIGTERM with Realtime sessions open', () => {
	it('should close the sessions still open when the grace period runs out with 1001 both ways, bill their running response (estimated, the upstream never reported it) as shutdown, and exit 0', async () => {
		const s = await dep.start({ SHUTDOWN_GRACE_MS: '400' })
		const acct = await dep.admin(s, '/api/accounts', { name: 'rt', balance: 5 })
		const tok = await dep.admin(s, '/api/tokens', { account_id: acct.id, name: 'k' })
		const closedBefore = rt.closed.length
		const session = await heldSession(s.url, tok.key, 'rt-held')
		s.proc.kill('SIGTERM')
		expect(await session.closed).toBe(1001)
		expect(await s.exited).toBe(0)
		expect(rt.closed.slice(closedBefore)).toEqual([1001])
		const rows = await dep.withDb((db) => db.sql.query<{ request_id: string; end_reason: string; cost: number; estimated: boolean }>(`SELECT request_id, end_reason, cost, estimated FROM usage_logs WHERE endpoint = '/v1/realtime'`))
		expect(rows.map((r) => [r.request_id, r.end_reason])).toEqual([['rt-held', 'shutdown']])
		expect(rows[0]!.cost).toBeGreaterThan(0)
		expect(rows[0]!.estimated).toBe(true)
		expect((await dep.withDb((db) => expectLedgerInvariant(db.sql))).leases).toBe(0)
	}, 60_000)
})
