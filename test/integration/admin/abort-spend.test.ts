/**
 * Clients that leave mid-stream, many at once, through every protocol's SDK and to every vendor, on two instances
 * sharing the database and Redis, against a small balance and a key's spend limit: each one is charged the input and
 * the output it was sent (never nothing once content reached it, never past the balance or the limit), its
 * reservation goes back, and the usage rows add up to exactly what left the balance and what the key spent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startAnthropicMock, startGeminiMock, startOpenAIMock, type VendorMock } from '../../mocks'
import { allUsage, clients, dbState, type Cluster, type Instance, redisEnv, startCluster } from './instances'

type Vendor = 'openai' | 'anthropic' | 'gemini'
const VENDORS: Vendor[] = ['openai', 'anthropic', 'gemini']
const MODEL: Record<Vendor, string> = { openai: 'ab-gpt', anthropic: 'ab-claude', gemini: 'ab-gemini' }
const UPSTREAM: Record<Vendor, string> = { openai: 'gpt-4o-mini', anthropic: 'claude-sonnet-5', gemini: 'gemini-2.5-flash' }
const KEY: Record<Vendor, string> = { openai: 'up-o', anthropic: 'up-a', gemini: 'up-g' }

let mocks: Record<Vendor, VendorMock>
let cl: Cluster
beforeAll(async () => {
	// A chunk every 15 ms: a 40-word answer streams for over half a second, so clients leave at many points of it.
	mocks = {
		openai: await startOpenAIMock({ apiKey: KEY.openai, chunkDelayMs: 15 }),
		anthropic: await startAnthropicMock({ apiKey: KEY.anthropic, chunkDelayMs: 15 }),
		gemini: await startGeminiMock({ apiKey: KEY.gemini, chunkDelayMs: 15 }),
	}
	cl = await startCluster(
		2,
		{
			channels: VENDORS.map((v) => ({ name: `ch-${v}`, type: v, base_url: mocks[v].url, api_key: KEY[v], models: [MODEL[v]], model_map: { [MODEL[v]]: UPSTREAM[v] } })),
			models: VENDORS.map((v) => ({ name: MODEL[v], input_per_mtok: 10, output_per_mtok: 30 })),
		},
		redisEnv(import.meta.path),
	)
}, 60_000)
afterAll(async () => {
	await cl.close()
	for (const v of VENDORS) await mocks[v].stop()
})

const PROMPT = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ')

/** Streams request `i` and leaves after `stopAfter` events; the events it got, or -1 when refused (402). */
async function leaveAfter(node: Instance, key: string, i: number, stopAfter: number): Promise<number> {
	const c = clients(node, key)
	const model = MODEL[VENDORS[i % 3]!]
	const ac = new AbortController()
	let n = 0
	const tick = () => {
		if (++n >= stopAfter) ac.abort()
	}
	try {
		switch (Math.floor(i / 3) % 4) {
			case 0:
				for await (const _ of await c.openai.chat.completions.create({ model, max_tokens: 100, stream: true, messages: [{ role: 'user', content: PROMPT }] }, { signal: ac.signal })) tick()
				break
			case 1:
				for await (const _ of await c.anthropic.messages.create({ model, max_tokens: 100, stream: true, messages: [{ role: 'user', content: PROMPT }] }, { signal: ac.signal })) tick()
				break
			case 2:
				for await (const _ of await c.gemini.models.generateContentStream({ model, contents: PROMPT, config: { maxOutputTokens: 100, abortSignal: ac.signal } })) tick()
				break
			default:
				for await (const _ of await c.openai.responses.create({ model, max_output_tokens: 100, input: PROMPT, stream: true }, { signal: ac.signal })) tick()
		}
	} catch (e) {
		const status = (e as { status?: number; code?: number }).status ?? (e as { code?: number }).code
		if (status === 402) return -1
		if (!ac.signal.aborted) throw e
	}
	return n
}

describe('clients leaving mid-stream on two instances', () => {
	it('should charge each the input and what it was sent, within the balance and the key limit, and keep the books exact', async () => {
		const { accountId, tokenId, key } = await cl.account(0.05, { spend_limit: 0.03 })
		const got = await Promise.all(Array.from({ length: 48 }, (_, i) => leaveAfter(cl.nodes[i % 2]!, key, i, 2 + ((i * 7) % 20))))
		// The limit holds about nine reservations at once: the rest are refused (402) unless one settled before them.
		expect(got.filter((n) => n > 0).length).toBeGreaterThan(0)
		// Give the instances a moment to see the aborts and settle, then write what they hold.
		await Bun.sleep(300)
		for (const node of cl.nodes) await node.svc.ledger.flush()
		const rows = await allUsage(cl.nodes[0]!, accountId)
		const charged = rows.reduce((s, r) => s + Math.round(r.cost * 1e6), 0)
		// One row per request that started; each stream that reached its client paid at least its prompt.
		expect(rows).toHaveLength(got.filter((n) => n >= 0).length)
		for (const r of rows.filter((r) => r.status === 200)) {
			expect(['client_abort', 'ok']).toContain(r.end_reason)
			expect(r.cost).toBeGreaterThanOrEqual((r.input_tokens * 10) / 1e6)
			expect(r.output_tokens).toBeGreaterThan(0)
		}
		expect(charged).toBeLessThanOrEqual(30_000)
		const s = await dbState(cl.t, accountId)
		expect(s.inUse).toBe(0)
		expect(s.usageCost).toBe(charged)
		expect(s.credits).toBe(s.balance + s.usageCost + s.leased)
		const tok = (await cl.nodes[1]!.admin(`/api/tokens/${tokenId}`)).body
		expect(Math.round(tok.spent * 1e6)).toBe(charged)
		expect(tok.reserved).toBe(0)
		const shown = Math.round((await cl.nodes[0]!.admin(`/api/accounts/${accountId}`)).body.balance * 1e6)
		expect(50_000 - shown).toBe(charged)
	}, 60_000)
})
