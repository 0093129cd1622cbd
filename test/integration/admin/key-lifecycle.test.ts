/**
 * A key's life as an operator manages it on a deployment of two instances: created on one, used on the other, its
 * expiry, status, spend limit and allowed models changed or the key deleted through the management API of either,
 * the account topped up or debited. Every change must hold on every instance at once (Redis carries it), each protocol
 * answering in its own error shape; and without Redis a revocation must not stay unheard for a cached key's minute.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { startAnthropicMock, startGeminiMock, startOpenAIMock, type VendorMock } from '../../mocks'
import { allUsage, type Cluster, dbState, type Instance, redisEnv, slowBus, startCluster } from './instances'

type Proto = 'chat' | 'messages' | 'gemini' | 'responses'
const PROTOS: Proto[] = ['chat', 'messages', 'gemini', 'responses']

let openai: VendorMock
let anthropic: VendorMock
let gemini: VendorMock
beforeAll(async () => {
	openai = await startOpenAIMock({ apiKey: 'up-o' })
	anthropic = await startAnthropicMock({ apiKey: 'up-a' })
	gemini = await startGeminiMock({ apiKey: 'up-g' })
}, 60_000)
afterAll(async () => {
	await openai.stop()
	await anthropic.stop()
	await gemini.stop()
})

const config = (): GatewayConfig => ({
	channels: [
		{ name: 'o', type: 'openai', base_url: openai.url, api_key: 'up-o', models: ['qa-gpt'], model_map: { 'qa-gpt': 'gpt-4o-mini' } },
		{ name: 'a', type: 'anthropic', base_url: anthropic.url, api_key: 'up-a', models: ['qa-claude'], model_map: { 'qa-claude': 'claude-sonnet-5' } },
		{ name: 'g', type: 'gemini', base_url: gemini.url, api_key: 'up-g', models: ['qa-gemini'], model_map: { 'qa-gemini': 'gemini-2.5-flash' } },
	],
	models: ['qa-gpt', 'qa-claude', 'qa-gemini'].map((name) => ({ name, input_per_mtok: 10, output_per_mtok: 30 })),
})

/** One plain request in a protocol's own wire form, with the key where that protocol's SDK puts it. */
async function ask(node: Instance, key: string, proto: Proto, model = 'qa-gpt'): Promise<{ status: number; body: any }> {
	const text = 'one two three'
	const req: { path: string; headers: Record<string, string>; body: unknown } =
		proto === 'chat'
			? { path: '/v1/chat/completions', headers: { authorization: `Bearer ${key}` }, body: { model, max_tokens: 20, messages: [{ role: 'user', content: text }] } }
			: proto === 'messages'
				? { path: '/v1/messages', headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' }, body: { model, max_tokens: 20, messages: [{ role: 'user', content: text }] } }
				: proto === 'gemini'
					? { path: `/v1beta/models/${model}:generateContent`, headers: { 'x-goog-api-key': key }, body: { contents: [{ role: 'user', parts: [{ text }] }], generationConfig: { maxOutputTokens: 20 } } }
					: { path: '/v1/responses', headers: { authorization: `Bearer ${key}` }, body: { model, max_output_tokens: 20, input: text } }
	const res = await fetch(node.url + req.path, { method: 'POST', headers: { ...req.headers, 'content-type': 'application/json' }, body: JSON.stringify(req.body) })
	return { status: res.status, body: await res.json() }
}

/** Google's answer to a refused API key (never 401): its HTTP status, rpc status and ErrorInfo reason. */
const GEMINI_KEY_REFUSAL: Record<string, [number, string, string]> = {
	invalid_api_key: [400, 'INVALID_ARGUMENT', 'API_KEY_INVALID'],
	api_key_expired: [400, 'INVALID_ARGUMENT', 'API_KEY_EXPIRED'],
	api_key_disabled: [403, 'PERMISSION_DENIED', 'CONSUMER_SUSPENDED'],
	account_disabled: [403, 'PERMISSION_DENIED', 'CONSUMER_SUSPENDED'],
}

/** The error each protocol's clients read for a refused key (`code` is the OpenAI-shape code; `status` not Gemini's for a key). */
function expectError(r: { status: number; body: any }, proto: Proto, status: number, code: string) {
	const refusal = proto === 'gemini' ? GEMINI_KEY_REFUSAL[code] : undefined
	if (refusal) {
		const [http, rpc, reason] = refusal
		expect({ proto, status: r.status }).toEqual({ proto, status: http })
		expect(r.body).toMatchObject({ error: { code: http, status: rpc } })
		expect(r.body.error.details[0].reason).toBe(reason)
		return
	}
	expect({ proto, status: r.status }).toEqual({ proto, status })
	const anthropicType: Record<number, string> = { 401: 'authentication_error', 402: 'billing_error', 403: 'permission_error' }
	const geminiStatus: Record<number, string> = { 402: 'RESOURCE_EXHAUSTED', 403: 'PERMISSION_DENIED' }
	if (proto === 'messages') expect(r.body).toMatchObject({ type: 'error', error: { type: anthropicType[status] } })
	else if (proto === 'gemini') expect(r.body).toMatchObject({ error: { code: status, status: geminiStatus[status] } })
	else expect(r.body).toMatchObject({ error: { code } })
}

/** Polls `fn` until it returns true or `ms` passed; returns how long it took (Infinity when it never did). */
async function within(ms: number, fn: () => Promise<boolean>): Promise<number> {
	const start = Date.now()
	while (Date.now() - start <= ms) {
		if (await fn()) return Date.now() - start
		await Bun.sleep(10)
	}
	return Number.POSITIVE_INFINITY
}

describe('keys on two instances sharing Redis', () => {
	let cl: Cluster
	let a: Instance
	let b: Instance
	beforeAll(async () => {
		cl = await startCluster(2, config(), redisEnv(import.meta.path))
		a = cl.nodes[0]!
		b = cl.nodes[1]!
	}, 60_000)
	afterAll(() => cl.close())

	it('should refuse a key from the millisecond it expires, on both instances, in each protocol shape', async () => {
		const expires = new Date(Date.now() + 4000) // room for the eight calls below on a loaded machine (1.5 s was once too little)
		const { key, tokenId } = await cl.account(1, { expires_at: expires.toISOString() })
		for (const node of [a, b]) for (const p of PROTOS) expect((await ask(node, key, p)).status).toBe(200)
		await Bun.sleep(Math.max(0, expires.getTime() - Date.now()) + 5)
		for (const node of [a, b]) for (const p of PROTOS) expectError(await ask(node, key, p), p, 401, 'api_key_expired')
		expect((await a.admin(`/api/tokens/${tokenId}`)).body.status).toBe('expired')
		// Extended again: usable at once everywhere.
		expect((await b.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body: { expires_at: null } })).status).toBe(200)
		for (const node of [a, b]) expect(await within(500, async () => (await ask(node, key, 'chat')).status === 200)).toBeLessThan(500)
	})

	it('should refuse a disabled key on the other instance at once, and accept it again once enabled', async () => {
		const { key, tokenId } = await cl.account(1)
		expect((await ask(b, key, 'chat')).status).toBe(200) // cached on b
		expect((await a.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body: { status: 'disabled' } })).status).toBe(200)
		expect(await within(500, async () => (await ask(b, key, 'messages')).status === 401)).toBeLessThan(500)
		for (const node of [a, b]) for (const p of PROTOS) expectError(await ask(node, key, p), p, 401, 'api_key_disabled')
		expect((await a.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body: { status: 'active' } })).status).toBe(200)
		expect(await within(500, async () => (await ask(b, key, 'gemini')).status === 200)).toBeLessThan(500)
	})

	it('should refuse a deleted key everywhere, and forget it in the management API', async () => {
		const { key, tokenId } = await cl.account(1)
		expect((await ask(b, key, 'responses')).status).toBe(200)
		expect((await a.admin(`/api/tokens/${tokenId}`, { method: 'DELETE' })).body).toEqual({ id: tokenId, deleted: true })
		expect(await within(500, async () => (await ask(b, key, 'chat')).status === 401)).toBeLessThan(500)
		for (const node of [a, b]) for (const p of PROTOS) expectError(await ask(node, key, p), p, 401, 'invalid_api_key')
		for (const path of [`/api/tokens/${tokenId}`, `/api/tokens/${tokenId}/key`]) expect((await b.admin(path)).status).toBe(404)
		expect((await b.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body: { status: 'active' } })).status).toBe(404)
	})

	it('should reveal the same full key on every instance, and keep names as given', async () => {
		const acct = (await a.admin('/api/accounts', { body: { name: 'names', balance: 1 } })).body
		const name = 'Équipe — laptop 🔑 "quoted"'
		const created = await a.admin('/api/tokens', { body: { account_id: acct.id, name } })
		expect(created.status).toBe(201)
		expect(created.body.key).toMatch(/^sk-[A-Za-z0-9]{48}$/)
		expect(created.body.key_hint).toBe(`${created.body.key.slice(0, 7)}…${created.body.key.slice(-4)}`)
		for (const node of [a, b]) expect((await node.admin(`/api/tokens/${created.body.id}/key`)).body).toEqual({ key: created.body.key })
		expect((await b.admin(`/api/tokens/${created.body.id}`)).body.name).toBe(name)
		expect((await b.admin(`/api/tokens/${created.body.id}`, { method: 'PATCH', body: { name: 'renamed' } })).body.name).toBe('renamed')
		expect((await a.admin(`/api/tokens?account_id=${acct.id}`)).body.data.map((t: any) => t.name)).toEqual(['renamed'])
		expect((await ask(b, created.body.key, 'chat')).status).toBe(200)
	})

	it("should apply a lowered spend limit on the other instance at once, even while it holds a lease of the key", async () => {
		const { key, tokenId, accountId } = await cl.account(5, { spend_limit: 1 })
		for (let i = 0; i < 3; i++) expect((await ask(b, key, 'chat')).status).toBe(200) // b leases part of the $1
		await b.svc.ledger.flush() // as its timer does within LEDGER_FLUSH_MS
		const spent = (await a.admin(`/api/tokens/${tokenId}`)).body.spent
		expect(spent).toBeGreaterThan(0)
		// Lowered to what is spent already: nothing more may be charged, whichever instance serves.
		expect((await a.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body: { spend_limit: spent } })).status).toBe(200)
		for (const node of [b, a, b]) for (const p of PROTOS) expectError(await ask(node, key, p), p, 402, 'insufficient_quota')
		const tok = (await b.admin(`/api/tokens/${tokenId}`)).body
		expect(tok.spent).toBe(spent)
		// Raised: served again at once.
		expect((await a.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body: { spend_limit: 2 } })).status).toBe(200)
		expect((await ask(b, key, 'messages')).status).toBe(200)
		for (const node of [a, b]) await node.svc.ledger.flush()
		const rows = await allUsage(a, accountId)
		expect(rows.filter((r) => r.cost > 0).length).toBe(4)
	})

	it('should serve on the other instance as soon as an exhausted account is topped up, and stop after a debit', async () => {
		const { key, accountId } = await cl.account(0.0001)
		expectError(await ask(b, key, 'chat'), 'chat', 402, 'insufficient_quota')
		expect((await a.admin(`/api/accounts/${accountId}/credit`, { body: { amount: 1 } })).status).toBe(200)
		for (const p of PROTOS) expect((await ask(b, key, p)).status).toBe(200)
		await b.svc.ledger.flush() // as its timer does within LEDGER_FLUSH_MS
		const shown = (await a.admin(`/api/accounts/${accountId}`)).body.balance
		// Take everything the API shows (b holds part of it as a lease): b must stop at once.
		const debit = await a.admin(`/api/accounts/${accountId}/credit`, { body: { amount: -shown } })
		expect(debit.status).toBe(200)
		expect(debit.body.balance).toBe(0)
		for (const p of PROTOS) expectError(await ask(b, key, p), p, 402, 'insufficient_quota')
		const s = await dbState(cl.t, accountId)
		expect(s.credits).toBe(s.balance + s.usageCost + s.leased)
		expect(s.balance + s.leased).toBe(0)
	})

	it('should refuse a model outside allowed_models in each protocol shape, and follow a change on the other instance at once', async () => {
		const { key, tokenId } = await cl.account(1, { allowed_models: ['qa-gpt'] } as Record<string, unknown>)
		for (const p of PROTOS) expect((await ask(b, key, p, 'qa-gpt')).status).toBe(200)
		for (const p of PROTOS) expectError(await ask(b, key, p, 'qa-claude'), p, 403, 'model_not_allowed')
		expect((await a.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body: { allowed_models: ['qa-*'] } })).status).toBe(200)
		expect(await within(500, async () => (await ask(b, key, 'gemini', 'qa-claude')).status === 200)).toBeLessThan(500)
		expect((await a.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body: { allowed_models: ['qa-gemini'] } })).status).toBe(200)
		expect(await within(500, async () => (await ask(b, key, 'messages', 'qa-claude')).status === 403)).toBeLessThan(500)
	})
})

describe('keys on two instances whose bus is slow (50 ms)', () => {
	let cl: Cluster
	beforeAll(async () => {
		cl = await startCluster(2, config(), {}, slowBus(50))
	}, 60_000)
	afterAll(() => cl.close())

	it('should answer a lowered spend limit or a disabled key only once the other instance no longer serves from its lease', async () => {
		const [a, b] = cl.nodes as [Instance, Instance]
		const { key, tokenId } = await cl.account(5, { spend_limit: 1 })
		for (let i = 0; i < 3; i++) expect((await ask(b, key, 'chat')).status).toBe(200)
		await b.svc.ledger.flush()
		const spent = (await a.admin(`/api/tokens/${tokenId}`)).body.spent
		expect((await a.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body: { spend_limit: spent } })).status).toBe(200)
		expectError(await ask(b, key, 'messages'), 'messages', 402, 'insufficient_quota')
		await b.svc.ledger.flush()
		expect((await a.admin(`/api/tokens/${tokenId}`)).body.spent).toBe(spent)

		expect((await a.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body: { spend_limit: 2 } })).status).toBe(200)
		expect((await ask(b, key, 'chat')).status).toBe(200)
		expect((await a.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body: { status: 'disabled' } })).status).toBe(200)
		expectError(await ask(b, key, 'gemini'), 'gemini', 401, 'api_key_disabled')
	})
})

describe('keys on two instances without Redis', () => {
	let cl: Cluster
	beforeAll(async () => {
		cl = await startCluster(2, config())
	}, 60_000)
	afterAll(() => cl.close())

	// Two instances without Redis share a database only on PostgreSQL (a PGlite data directory has one process).
	it.skipIf(!process.env.DATABASE_URL)('should stop honouring a key disabled on the other instance within seconds, not a cached minute', async () => {
		const { key, tokenId } = await cl.account(1)
		const [a, b] = cl.nodes as [Instance, Instance]
		expect((await ask(b, key, 'chat')).status).toBe(200) // cached on b
		expect((await a.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body: { status: 'disabled' } })).status).toBe(200)
		expect((await ask(a, key, 'chat')).status).toBe(401)
		// b cannot hear a; it may trust its cache only as long as it would while Redis is down (5 s).
		expect(await within(7_000, async () => (await ask(b, key, 'chat')).status === 401)).toBeLessThan(7_000)
	}, 20_000)
})
