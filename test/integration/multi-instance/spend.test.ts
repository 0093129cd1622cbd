/**
 * Two gateway processes on one PostgreSQL, with Redis and without, hammered concurrently through both until refused:
 * a key's USD spend limit, and an account balance shared by two keys (one used on each instance). Whatever runs at
 * once, the total charged never exceeds the limit or the balance, every refusal is the documented 402 in its
 * protocol's shape (OpenAI `insufficient_quota`, Anthropic `billing_error`), and once both instances stop the balance
 * is the starting balance less the usage rows, to the micro-dollar, with no lease left.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { startAnthropicMock, startOpenAIMock, type VendorMock } from '../../mocks'
import { books, call, keyBooks, noteSkip, ON_POSTGRES, type Outcome, type Pair, type Server, startPair } from './pair'

noteSkip(import.meta.path)

let oa: VendorMock
let an: VendorMock
beforeAll(async () => {
	if (!ON_POSTGRES) return
	oa = await startOpenAIMock({ apiKey: 'up-o', record: false })
	an = await startAnthropicMock({ apiKey: 'up-a', record: false })
})
afterAll(async () => {
	await oa?.stop()
	await an?.stop()
})

const MODELS = ['m-gpt', 'm-claude']
const config = (): GatewayConfig => ({
	channels: [
		{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-o', models: ['m-gpt'], model_map: { 'm-gpt': 'gpt-4o-mini' } },
		{ name: 'an', type: 'anthropic', base_url: an.url, api_key: 'up-a', models: ['m-claude'], model_map: { 'm-claude': 'claude-sonnet-5' } },
	],
	// 10 and 30 micro-USD a token: a request costs a few hundred micro-USD, and reserves ~700.
	models: MODELS.map((name) => ({ name, input_per_mtok: 10, output_per_mtok: 30 })),
})

/** The refusal each SDK saw is the documented 402 in its protocol's shape. */
function expectRefusal(o: Outcome) {
	expect({ status: o.status, proto: o.proto }).toEqual({ status: 402, proto: o.proto })
	if (o.proto === 'messages') expect(o.body).toMatchObject({ type: 'error', error: { type: 'billing_error' } })
	else expect(o.body).toMatchObject({ code: 'insufficient_quota', type: 'insufficient_quota' })
}

/**
 * Waves of `width` requests at once, spread over the servers (each server its own key from `keys`), all four
 * shapes (chat and messages, streamed and not) on both vendors, until a whole wave is refused.
 */
async function hammer(servers: Server[], keys: string[], width = 16): Promise<Outcome[]> {
	const all: Outcome[] = []
	for (let wave = 0; wave < 40; wave++) {
		const outs = await Promise.all(
			Array.from({ length: width }, (_, i) => {
				const s = i % servers.length
				return call(servers[s]!, keys[s % keys.length]!, MODELS[(i >> 1) % 2]!, (i >> 2) % 2 ? 'messages' : 'chat', (i >> 3) % 2 === 1, `wave ${wave} request ${i} please`)
			}),
		)
		all.push(...outs)
		if (outs.every((o) => o.status !== 200)) return all
	}
	throw new Error('still served after 40 waves')
}

/** Stops both instances (SIGTERM: they flush and give their leases back) and checks the account's books. */
async function expectSettled(p: Pair, accountId: number, startMicros: number, outcomes: Outcome[]) {
	expect(await p.stop(p.a)).toBe(0)
	expect(await p.stop(p.b)).toBe(0)
	const s = await books(p.dep, accountId)
	expect(s.leases).toBe(0)
	// The balance is what it was, less the usage rows: nothing lost, nothing charged twice.
	expect(s.balance).toBe(startMicros - s.usageCost)
	expect(s.credits).toBe(startMicros)
	expect(s.balance).toBeGreaterThanOrEqual(0)
	// A row per answered request; none for a refusal.
	expect(s.usageRows).toBe(outcomes.filter((o) => o.status === 200).length)
	for (const o of outcomes) if (o.status !== 200) expectRefusal(o)
	// Each instance answered and refused some (the limit is shared, not split).
	return s
}

for (const redis of [true, false]) {
	describe.skipIf(!ON_POSTGRES)(`two processes on one database, ${redis ? 'with' : 'without'} Redis`, () => {
		it("should never charge past a key's spend limit hammered through both", async () => {
			const p = await startPair(import.meta.path, config(), { redis })
			try {
				const limit = 6_000
				const { accountId, tokens } = await p.account(5, [{ spend_limit: limit / 1e6 }])
				const outcomes = await hammer([p.a, p.b], [tokens[0]!.key])
				const s = await expectSettled(p, accountId, 5_000_000, outcomes)
				const k = await keyBooks(p.dep, tokens[0]!.id)
				expect(k.reserved).toBe(0)
				expect(k.spent).toBe(k.used)
				expect(k.spent).toBe(s.usageCost)
				expect(k.spent).toBeLessThanOrEqual(limit)
				// Hammered until refused: what is left of the limit would not cover another request's minimum.
				expect(k.spent).toBeGreaterThan(limit / 2)
				expect(outcomes.filter((o) => o.status === 200).length).toBeGreaterThan(5)
			} finally {
				await p.close()
			}
		}, 40_000)

		it('should never charge past an account balance shared by two keys, one on each instance', async () => {
			const p = await startPair(import.meta.path, config(), { redis })
			try {
				const start = 6_000
				const { accountId, tokens } = await p.account(start / 1e6, [{}, {}])
				const outcomes = await hammer([p.a, p.b], tokens.map((t) => t.key))
				const s = await expectSettled(p, accountId, start, outcomes)
				expect(s.usageCost).toBeLessThanOrEqual(start)
				expect(s.usageCost).toBeGreaterThan(start / 2)
				const [k0, k1] = [await keyBooks(p.dep, tokens[0]!.id), await keyBooks(p.dep, tokens[1]!.id)]
				expect(k0.spent + k1.spent).toBe(s.usageCost)
				expect(k0.okRows).toBeGreaterThan(0)
				expect(k1.okRows).toBeGreaterThan(0)
			} finally {
				await p.close()
			}
		}, 40_000)
	})
}
