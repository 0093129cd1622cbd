/**
 * Items of converted Responses answers are stored in the database, not only in the answering instance's memory: a
 * client behind a load balancer whose second turn names the first turn's items by `item_reference` (the Vercel AI
 * SDK's default Responses model does) reaches another instance, which resolves them. Before, it got a 400 there.
 * Two instances on one database; the items are kept as long as stored response ids and purged with them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { purgeStoredResponses, STORED_RESPONSE_DAYS } from '../../../src/modules/responses/ownership'
import { countWords } from '../../mocks'
import { type ClaudeCluster, startClaudeCluster } from './claude-cluster'

let cl: ClaudeCluster
let mock: ClaudeCluster['mock']
let c: ClaudeCluster['c']

beforeAll(async () => {
	cl = await startClaudeCluster()
	;({ mock, c } = cl)
}, 60_000)
afterAll(() => cl.close())

const client = (node: number, key: string) => cl.client(node, key)

/** Checks the account's items are in the database (written before the end of the answer; a stream's last items may still be going). */
async function stored(accountId: number, n: number) {
	for (let i = 0; i < 100; i++) {
		const [row] = await c.t.db.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM converted_items WHERE account_id = $1', [accountId])
		if (row!.n >= n) return
		await Bun.sleep(20)
	}
	throw new Error('items never stored')
}

describe('item references across instances', () => {
	for (const stream of [false, true])
		it(`should resolve on instance B the items instance A answered (${stream ? 'stream' : 'JSON'})`, async () => {
			const { accountId, key } = await c.account(1)
			const first = stream
				? await client(0, key).responses.stream({ model: 'qa-claude', input: 'remember me' }).finalResponse()
				: await client(0, key).responses.create({ model: 'qa-claude', input: 'remember me' })
			await stored(accountId, first.output.length)
			const refs = first.output.map((o) => ({ type: 'item_reference' as const, id: o.id! }))
			const next = await client(1, key).responses.create({ model: 'qa-claude', input: [{ role: 'user', content: 'remember me' }, ...refs, { role: 'user', content: 'next' }] })
			expect(next.output_text).toBe('Hello! You said: next')
			// The earlier answer reached the upstream from B: remember me (2) + its answer + next (1).
			expect(next.usage?.input_tokens).toBe(2 + countWords(first.output_text) + 1)
		})

	it("should not resolve another account's items on any instance", async () => {
		const owner = await c.account(1)
		const first = await client(0, owner.key).responses.create({ model: 'qa-claude', input: 'private words' })
		await stored(owner.accountId, first.output.length)
		const other = await c.account(1)
		const err = await client(1, other.key)
			.responses.create({ model: 'qa-claude', input: [{ type: 'item_reference', id: first.output[0]!.id! }, { role: 'user', content: 'leak?' }] })
			.catch((e: unknown) => e)
		expect((err as { status?: number }).status).toBe(400)
	})

	it('should forget the items with the stored response ids', async () => {
		const { accountId, key } = await c.account(1)
		const first = await client(0, key).responses.create({ model: 'qa-claude', input: 'short lived' })
		await stored(accountId, first.output.length)
		await purgeStoredResponses(c.nodes[0]!.svc, STORED_RESPONSE_DAYS, Date.now() + (STORED_RESPONSE_DAYS + 1) * 86_400_000)
		// This account's rows only: another test's answer may still be writing its items (a stream's items are stored as they come).
		const [row] = await c.t.db.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM converted_items WHERE account_id = $1', [accountId])
		expect(row!.n).toBe(0)
	})
})
