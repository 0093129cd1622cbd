/**
 * Crash (issue 4): a real server process under concurrent streaming load is killed with SIGKILL. Right after, the
 * ledger invariant holds with the dead process's lease counted as held (its streams' reservations in use); after a
 * restart the lease is released once it expires (HOLD_TTL_SECONDS, swept at start and every HOLD_SWEEP_MS), the
 * money is back in the balance and on the key, no usage row is invented for the lost requests, and the invariant
 * holds with nothing leased. Policy: a dead process's lease is released (refunded), not settled — see
 * src/billing/ledger.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { expectLedgerInvariant } from './invariant'
import { auth, body, ENDPOINT, type Proto } from './rig'
import { deploy, type Deployment, readFrames, type Server } from './server-process'

const STREAMS = 40
const TTL_S = 8

let mock: VendorMock
let dep: Deployment

beforeAll(async () => {
	// 150 ms between chunks: a stream of this prompt lasts about 2 s, long enough to be killed in the middle.
	mock = await startOpenAIMock({ apiKey: 'up-crash-key', chunkDelayMs: 150, record: false })
	dep = await deploy(
		{
			channels: [{ name: 'up', type: 'openai', base_url: mock.url, api_key: 'up-crash-key', models: ['crash'], model_map: { crash: 'gpt-4o-mini' } }],
			models: [{ name: 'crash', input_per_mtok: 100, output_per_mtok: 200 }],
		},
		{ HOLD_TTL_SECONDS: String(TTL_S), HOLD_SWEEP_MS: '250', LOG_LEVEL: 'info' },
	)
}, 60_000)
afterAll(async () => {
	await dep.close()
	await mock.stop()
})

const PROMPT = 'please stream a fairly long answer back to me now'

function ask(server: Server, key: string, proto: Proto, stream: boolean) {
	return fetch(server.url + ENDPOINT[proto], { method: 'POST', headers: { 'content-type': 'application/json', ...auth(proto, key) }, body: JSON.stringify(body('crash', PROMPT, stream, 50)) })
}

describe('SIGKILL under load', () => {
	it('should keep the invariant through the crash and release the lease of the dead process after its TTL', async () => {
		const a = await dep.start()
		const acct = await dep.admin(a, '/api/accounts', { name: 'crash', balance: 50 })
		const tok = await dep.admin(a, '/api/tokens', { account_id: acct.id, name: 'k', spend_limit: 40 })

		// Some finished requests (settled) ...
		for (const proto of ['chat', 'messages'] as const) expect((await ask(a, tok.key, proto, false)).status).toBe(200)
		// Their rows written before the crash (a flush is due within LEDGER_FLUSH_MS; a loaded machine takes longer).
		const written = async () => ((await dep.admin(a, `/api/usage?account_id=${acct.id}`)) as { data: unknown[] }).data.length
		for (const until = Date.now() + 5_000; (await written()) < 2 && Date.now() < until; ) await Bun.sleep(50)
		// ... and many streams in flight, each past its first frames, when the process dies.
		const streams = await Promise.all(
			Array.from({ length: STREAMS }, async (_, i) => {
				const res = await ask(a, tok.key, i % 2 ? 'messages' : 'chat', true)
				expect(res.status).toBe(200)
				return readFrames(res, 3)
			}),
		)
		a.proc.kill('SIGKILL')
		expect(await a.exited).not.toBe(0)
		const crashedAt = Date.now()
		for (const s of streams) await s.rest().catch(() => '') // the connections just die

		// Right away: the dead process's lease is still there, and it counts as held. The streams had been running
		// for several flush intervals, so the lease's in-use amount covers all of them.
		const crashed = await dep.withDb((db) => expectLedgerInvariant(db.sql))
		expect(crashed.leases).toBeGreaterThanOrEqual(1)
		expect(crashed.inUse).toBeGreaterThan(0)
		const inUseAtCrash = crashed.inUse
		const settled = await dep.withDb((db) => db.sql.query<{ n: number }>('SELECT count(*)::bigint AS n FROM usage_logs'))
		expect(settled[0]!.n).toBe(2)

		// Restart: the lease stays until it expires, then the sweeper gives it back. It was last renewed before the crash,
		// so it is surely still there only if the restart came within its TTL (a loaded machine can take longer).
		const b = await dep.start()
		if (dep.live) {
			const held = await dep.withDb((db) => expectLedgerInvariant(db.sql))
			if (Date.now() - crashedAt < (TTL_S - 1) * 1000) expect(held.inUse).toBe(inUseAtCrash)
		}
		const deadline = Date.now() + (TTL_S + 10) * 1000
		let reserved = -1
		const swept = () => b.output().includes('"msg":"expired leases released"')
		// A lease past its TTL no longer counts as reserved, which can show before the sweeper's line is written.
		while (Date.now() < deadline && (reserved !== 0 || !swept())) {
			reserved = (await dep.admin(b, `/api/tokens/${tok.id}`)).reserved
			if (reserved !== 0 || !swept()) await Bun.sleep(250)
		}
		expect(reserved).toBe(0)
		expect(b.output()).toContain('"msg":"expired leases released"')

		// The restarted gateway serves and bills normally.
		expect((await ask(b, tok.key, 'chat', true)).status).toBe(200)
		b.proc.kill('SIGTERM')
		expect(await b.exited).toBe(0)

		const after = await dep.withDb((db) => expectLedgerInvariant(db.sql))
		expect(after.leases).toBe(0)
		const [k] = after.keys.filter((x) => x.id === tok.id)
		const [acc] = after.accounts.filter((x) => x.id === acct.id)
		// Released, not settled: the lost requests cost nothing and left no usage row; only the 3 answers are paid.
		const rows = await dep.withDb((db) => db.sql.query<{ cost: number }>('SELECT cost FROM usage_logs WHERE token_id = $1', [tok.id]))
		expect(rows).toHaveLength(3)
		expect(k!.spent).toBe(rows.reduce((s, r) => s + r.cost, 0))
		expect(acc!.balance).toBe(50e6 - k!.spent)
	}, 90_000)
})
