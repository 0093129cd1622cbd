/**
 * What an operator checks before trusting the ledger: many parallel requests, streamed and not, through all four
 * client protocols (the official SDKs) and to all three vendors, against a small balance or a key's spend limit, on
 * one instance and on two sharing the database (and Redis). Whatever runs at once, the total charged never exceeds
 * the balance or the limit, refused requests get 402 in their protocol's shape and cost nothing, the usage rows add
 * up to exactly the balance's change, and no lease is left holding money once the instances stop.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startAnthropicMock, startGeminiMock, startOpenAIMock, type VendorMock } from '../../mocks'
import { allUsage, clients, dbState, type Cluster, type Instance, redisEnv, startCluster } from './instances'

type Vendor = 'openai' | 'anthropic' | 'gemini'
const VENDORS: Vendor[] = ['openai', 'anthropic', 'gemini']
const MODEL: Record<Vendor, string> = { openai: 'qa-gpt', anthropic: 'qa-claude', gemini: 'qa-gemini' }
const UPSTREAM: Record<Vendor, string> = { openai: 'gpt-4o-mini', anthropic: 'claude-sonnet-5', gemini: 'gemini-2.5-flash' }
/** The same price for every vendor's model: 10 and 30 micro-USD per token. */
const PRICE = { input_per_mtok: 10, output_per_mtok: 30 }

let mocks: Record<Vendor, VendorMock>
beforeAll(async () => {
	mocks = {
		openai: await startOpenAIMock({ apiKey: 'up-o' }),
		anthropic: await startAnthropicMock({ apiKey: 'up-a' }),
		gemini: await startGeminiMock({ apiKey: 'up-g' }),
	}
}, 60_000)
afterAll(async () => {
	for (const v of VENDORS) await mocks[v].stop()
})

const config = () => ({
	channels: VENDORS.map((v) => ({
		name: `ch-${v}`,
		type: v,
		base_url: mocks[v].url,
		api_key: v === 'openai' ? 'up-o' : v === 'anthropic' ? 'up-a' : 'up-g',
		models: [MODEL[v]],
		model_map: { [MODEL[v]]: UPSTREAM[v] },
	})),
	models: VENDORS.map((v) => ({ name: MODEL[v], ...PRICE })),
})

type Outcome = { status: number; body?: unknown; proto: string }

/** One request through an SDK; the HTTP status it ended with (200, or the error's) and the error body. */
async function call(node: Instance, key: string, i: number): Promise<Outcome> {
	const c = clients(node, key)
	const model = MODEL[VENDORS[i % 3]!]
	const stream = i % 2 === 1
	const text = `request number ${i} please`
	const proto = ['chat', 'messages', 'gemini', 'responses'][Math.floor(i / 2) % 4]!
	try {
		if (proto === 'chat') {
			if (!stream) await c.openai.chat.completions.create({ model, max_tokens: 20, messages: [{ role: 'user', content: text }] })
			else for await (const _ of await c.openai.chat.completions.create({ model, max_tokens: 20, stream: true, messages: [{ role: 'user', content: text }] }));
		} else if (proto === 'messages') {
			if (!stream) await c.anthropic.messages.create({ model, max_tokens: 20, messages: [{ role: 'user', content: text }] })
			else for await (const _ of await c.anthropic.messages.create({ model, max_tokens: 20, stream: true, messages: [{ role: 'user', content: text }] }));
		} else if (proto === 'gemini') {
			if (!stream) await c.gemini.models.generateContent({ model, contents: text, config: { maxOutputTokens: 20 } })
			else for await (const _ of await c.gemini.models.generateContentStream({ model, contents: text, config: { maxOutputTokens: 20 } }));
		} else {
			if (!stream) await c.openai.responses.create({ model, max_output_tokens: 20, input: text })
			else for await (const _ of await c.openai.responses.create({ model, max_output_tokens: 20, input: text, stream: true }));
		}
		return { status: 200, proto }
	} catch (e) {
		const err = e as { status?: number; code?: number; error?: unknown; message?: string }
		return { status: err.status ?? err.code ?? 0, body: err.error ?? err.message, proto }
	}
}

/** The 402 each protocol's SDK saw carries that protocol's error shape. */
function expectRefusal(o: Outcome) {
	expect(o.status).toBe(402)
	if (o.proto === 'messages') expect(o.body).toMatchObject({ type: 'error', error: { type: 'billing_error' } })
	else if (o.proto === 'gemini') expect(JSON.parse(String(o.body))).toMatchObject({ error: { code: 402, status: 'RESOURCE_EXHAUSTED' } })
	else expect(o.body).toMatchObject({ code: 'insufficient_quota' })
}

/** Sends `n` requests at once, spread over the instances, with every vendor slow to answer so all reserve first. */
async function burst(nodes: Instance[], key: string, n: number): Promise<Outcome[]> {
	for (const v of VENDORS) mocks[v].fault = { kind: 'slow', firstByteMs: 150 }
	try {
		return await Promise.all(Array.from({ length: n }, (_, i) => call(nodes[i % nodes.length]!, key, i)))
	} finally {
		for (const v of VENDORS) mocks[v].fault = undefined
	}
}

/** Checks the books of one account after a burst; returns what was charged. */
async function expectBooks(cl: Cluster, accountId: number, startMicros: number, outcomes: Outcome[]) {
	for (const node of cl.nodes) await node.svc.ledger.flush()
	const rows = await allUsage(cl.nodes[0]!, accountId)
	const charged = rows.reduce((s, r) => s + Math.round(r.cost * 1e6), 0)
	const shown = Math.round((await cl.nodes[0]!.admin(`/api/accounts/${accountId}`)).body.balance * 1e6)
	// The usage rows sum to exactly the change of the balance the API shows.
	expect(startMicros - shown).toBe(charged)
	expect(shown).toBeGreaterThanOrEqual(0)
	// One charged row per success; refused requests cost nothing.
	const ok = outcomes.filter((o) => o.status === 200).length
	expect(rows.filter((r) => r.status === 200).length).toBe(ok)
	expect(rows.filter((r) => r.status !== 200).every((r) => r.cost === 0)).toBe(true)
	for (const o of outcomes) if (o.status !== 200) expectRefusal(o)
	// The database's invariant: credits = balance + Σ usage cost + Σ leases.
	const s = await dbState(cl.t, accountId)
	expect(s.credits).toBe(s.balance + s.usageCost + s.leased)
	expect(s.usageCost).toBe(charged)
	return { charged, ok, rows }
}

describe('concurrent requests against a small balance (one instance)', () => {
	let cl: Cluster
	beforeAll(async () => {
		cl = await startCluster(1, config())
	}, 60_000)
	afterAll(() => cl.close())

	it('should never charge past the balance, with every protocol and vendor streaming or not at once', async () => {
		const { accountId, key } = await cl.account(0.003)
		const outcomes = await burst(cl.nodes, key, 48)
		const { charged, ok } = await expectBooks(cl, accountId, 3000, outcomes)
		expect(ok).toBeGreaterThan(0)
		expect(outcomes.some((o) => o.status === 402)).toBe(true)
		expect(charged).toBeLessThanOrEqual(3000)
	}, 60_000)

	it("should never charge past a key's spend limit, the account's balance being larger", async () => {
		const { accountId, tokenId, key } = await cl.account(5, { spend_limit: 0.002 })
		const outcomes = await burst(cl.nodes, key, 48)
		const { charged } = await expectBooks(cl, accountId, 5_000_000, outcomes)
		expect(charged).toBeLessThanOrEqual(2000)
		const tok = (await cl.nodes[0]!.admin(`/api/tokens/${tokenId}`)).body
		expect(Math.round(tok.spent * 1e6)).toBe(charged)
		expect(outcomes.filter((o) => o.status === 402).length).toBeGreaterThan(0)
	}, 60_000)
})

describe('concurrent requests against a small balance (two instances, Redis)', () => {
	let cl: Cluster
	beforeAll(async () => {
		cl = await startCluster(2, config(), redisEnv(import.meta.path))
	}, 60_000)
	afterAll(() => cl.close())

	it('should never charge past the balance across instances, and give every lease back when they stop', async () => {
		const { accountId, key } = await cl.account(0.004)
		const outcomes = await burst(cl.nodes, key, 60)
		const { charged } = await expectBooks(cl, accountId, 4000, outcomes)
		expect(charged).toBeLessThanOrEqual(4000)
		expect(outcomes.filter((o) => o.status === 200).length).toBeGreaterThan(0)
	}, 60_000)

	it("should never charge past a key's spend limit across instances", async () => {
		const { accountId, tokenId, key } = await cl.account(5, { spend_limit: 0.0025 })
		const outcomes = await burst(cl.nodes, key, 60)
		const { charged } = await expectBooks(cl, accountId, 5_000_000, outcomes)
		expect(charged).toBeLessThanOrEqual(2500)
		const tok = (await cl.nodes[1]!.admin(`/api/tokens/${tokenId}`)).body
		expect(Math.round(tok.spent * 1e6)).toBe(charged)
	}, 60_000)

	it('should serve from a balance whose headroom the other instance leased, by asking for it back', async () => {
		const { accountId, key } = await cl.account(0.01)
		// Instance A leases a slice with one request; B must still be able to spend the rest.
		const outcomes = [await call(cl.nodes[0]!, key, 0)]
		for (let i = 0; i < 30; i++) outcomes.push(await call(cl.nodes[1]!, key, i))
		await expectBooks(cl, accountId, 10_000, outcomes)
		expect(outcomes.map((o) => o.status)).toEqual(outcomes.map(() => 200))
	}, 60_000)

	it('should leave no lease behind and the whole balance in the account once both instances stop', async () => {
		const { accountId, key } = await cl.account(1)
		await burst(cl.nodes, key, 20)
		for (const node of cl.nodes) await node.stop()
		const s = await dbState(cl.t, accountId)
		expect(s.leases).toBe(0)
		expect(s.balance).toBe(1_000_000 - s.usageCost)
		expect(s.usageRows).toBe(20)
	}, 60_000)
})
