/**
 * Disabling an account through the management API (`POST /api/accounts/:id/disable`, `/enable`), on two instances
 * joined by Redis as an operator runs them: the account's keys are refused at once on both, through each vendor's SDK
 * in its own error shape, and its console user is signed out and cannot sign in; a stream already running finishes
 * and is billed, nothing after it; enabling again restores everything. Before, an account's `status` was shown but
 * nothing could change it, so the only way to stop an account was to disable its keys one by one.
 */
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { startAnthropicMock, startGeminiMock, startOpenAIMock, type VendorMock } from '../../mocks'
import { expectLedgerInvariant } from '../resilience/invariant'
import { clients, dbState, redisEnv, startCluster, type Cluster } from './instances'

let openai: VendorMock
let anthropic: VendorMock
let gemini: VendorMock
let c: Cluster

beforeAll(async () => {
	openai = await startOpenAIMock({ apiKey: 'up-oa', chunkDelayMs: 60 })
	anthropic = await startAnthropicMock({ apiKey: 'up-an' })
	gemini = await startGeminiMock({ apiKey: 'up-ge' })
	c = await startCluster(
		2,
		{
			channels: [
				{ name: 'oa', type: 'openai', base_url: openai.url, api_key: 'up-oa', models: ['gpt-4o-mini'] },
				{ name: 'an', type: 'anthropic', base_url: anthropic.url, api_key: 'up-an', models: ['claude-sonnet-4-5'] },
				{ name: 'ge', type: 'gemini', base_url: gemini.url, api_key: 'up-ge', models: ['gemini-2.5-flash'] },
			],
			models: [
				{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 },
				{ name: 'claude-sonnet-4-5', input_per_mtok: 1, output_per_mtok: 2 },
				{ name: 'gemini-2.5-flash', input_per_mtok: 1, output_per_mtok: 2 },
			],
		},
		redisEnv(import.meta.path),
	)
}, 60_000)

afterAll(async () => {
	await c.close()
	for (const m of [openai, anthropic, gemini]) await m.stop()
})

/** Every protocol's call on `node` with `key`: the error each SDK throws, or undefined when it answered. */
async function tryAll(node: number, key: string) {
	const k = clients(c.nodes[node]!, key)
	const settle = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e)
	return {
		openai: await settle(k.openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })),
		anthropic: await settle(k.anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] })),
		gemini: await settle(k.gemini.models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi' })),
	}
}

/** Signs in to the console on `node`: the session cookie, or the refusal. */
async function signIn(node: number, username: string, password: string) {
	const url = c.nodes[node]!.url
	const r = await fetch(`${url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json', origin: url }, body: JSON.stringify({ username, password }) })
	const cookie = (r.headers.get('set-cookie') ?? '').split(';')[0]!
	return { status: r.status, body: (await r.json()) as any, cookie }
}

const upstreamCalls = () => openai.requests.length + anthropic.requests.length + gemini.requests.length

describe('disabling an account', () => {
	it('should refuse its keys at once on every instance in each protocol, let a running stream finish, charge nothing after, and restore it when enabled', async () => {
		const { accountId, key } = await c.account(5)
		const [a, b] = c.nodes as [(typeof c.nodes)[0], (typeof c.nodes)[0]]
		// Warm on both instances: each has the key in its cache, and a lease of the account.
		for (const n of [0, 1]) expect(Object.values(await tryAll(n, key)).filter(Boolean)).toEqual([])

		// A stream running on b while the account is disabled through a.
		const stream = await clients(b, key).openai.chat.completions.create({
			model: 'gpt-4o-mini',
			messages: [{ role: 'user', content: 'one two three four five six seven eight' }],
			stream: true,
		})
		const it = stream[Symbol.asyncIterator]()
		const first = await it.next()
		expect(first.done).toBe(false)

		const off = await a.admin(`/api/accounts/${accountId}/disable`, { method: 'POST' })
		expect(off.status).toBe(200)
		expect(off.body).toMatchObject({ id: accountId, status: 'disabled' })

		// Refused at once on both instances, before any upstream call, in each protocol's shape.
		const before = upstreamCalls()
		for (const n of [0, 1]) {
			const e = await tryAll(n, key)
			expect(e.openai).toBeInstanceOf(OpenAI.AuthenticationError)
			expect((e.openai as InstanceType<typeof OpenAI.APIError>).code).toBe('account_disabled')
			expect(e.anthropic).toBeInstanceOf(Anthropic.AuthenticationError)
			expect((e.anthropic as any).error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } })
			// As Google refuses a suspended consumer's API key: 403 with ErrorInfo reason CONSUMER_SUSPENDED.
			expect((e.gemini as { status?: number }).status).toBe(403)
			expect(JSON.parse((e.gemini as Error).message).error).toMatchObject({ status: 'PERMISSION_DENIED', details: [{ reason: 'CONSUMER_SUSPENDED' }] })
		}
		expect(upstreamCalls()).toBe(before)

		// The stream that was running finishes with its whole answer, and is billed.
		let text = (first.value as OpenAI.Chat.Completions.ChatCompletionChunk).choices[0]?.delta.content ?? ''
		for (let r = await it.next(); !r.done; r = await it.next()) text += r.value.choices[0]?.delta.content ?? ''
		expect(text).toBe('Hello! You said: one two three four five six seven eight')
		for (const n of c.nodes) await n.svc.ledger.flush()
		const usage = await a.admin(`/api/usage?account_id=${accountId}`)
		expect(usage.body.data.length).toBe(7)

		// Nothing more is charged: the balance stays while the key keeps being refused.
		const after = await a.admin(`/api/accounts/${accountId}`)
		for (const n of [0, 1]) await tryAll(n, key)
		for (const n of c.nodes) await n.svc.ledger.flush()
		expect((await a.admin(`/api/accounts/${accountId}`)).body.balance).toBe(after.body.balance)
		expect((await a.admin(`/api/usage?account_id=${accountId}`)).body.data.length).toBe(7)
		expect(after.body.status).toBe('disabled')
		// No instance holds a lease of it any more (the running stream's goes back as it ends, in the background).
		const deadline = Date.now() + 3_000
		while ((await dbState(c.t, accountId)).leases > 0 && Date.now() < deadline) await Bun.sleep(20)
		expect((await dbState(c.t, accountId)).leases).toBe(0)

		// Enabled again (through b): the key works on both instances.
		const on = await b.admin(`/api/accounts/${accountId}/enable`, { method: 'POST' })
		expect(on.status).toBe(200)
		expect(on.body.status).toBe('active')
		for (const n of [0, 1]) expect(Object.values(await tryAll(n, key)).filter(Boolean)).toEqual([])
		await expectLedgerInvariant(c.t.db.sql, c.nodes[0]!.svc.ledger, c.nodes[1]!.svc.ledger)
	}, 60_000)

	it("should sign out its console users and refuse their sign-in until it is enabled", async () => {
		const [a, b] = c.nodes as [(typeof c.nodes)[0], (typeof c.nodes)[0]]
		const acct = await a.admin('/api/accounts', { body: { name: 'team', balance: 1 } })
		const user = await a.admin('/api/users', { body: { username: 'member', password: 'member-password-1', account_id: acct.body.id } })
		expect(user.status).toBe(201)
		const s = await signIn(1, 'member', 'member-password-1')
		expect(s.status).toBe(200)
		const mine = () => fetch(`${b.url}/api/accounts/${acct.body.id}`, { headers: { cookie: s.cookie } })
		expect((await mine()).status).toBe(200)

		expect((await a.admin(`/api/accounts/${acct.body.id}/disable`, { method: 'POST' })).status).toBe(200)
		expect((await mine()).status).toBe(401)
		const again = await signIn(1, 'member', 'member-password-1')
		expect(again.status).toBe(403)
		expect(again.body.error).toMatchObject({ code: 'account_disabled' })
		// A wrong password is still just a wrong password (nothing said about the account).
		expect((await signIn(1, 'member', 'wrong-password-9')).status).toBe(401)

		expect((await a.admin(`/api/accounts/${acct.body.id}/enable`, { method: 'POST' })).status).toBe(200)
		expect((await signIn(1, 'member', 'member-password-1')).status).toBe(200)
	}, 60_000)

	it("should not let an administrator lock the console: not the account of the last administrator, nor their own", async () => {
		const a = c.nodes[0]!
		const boss = await a.admin('/api/users', { body: { username: 'boss', password: 'boss-password-1', is_admin: true } })
		expect(boss.status).toBe(201)
		const r = await a.admin(`/api/accounts/${boss.body.account_id}/disable`, { method: 'POST' })
		expect(r.status).toBe(400)
		expect(r.body.error).toMatchObject({ code: 'last_admin' })
		expect((await a.admin(`/api/accounts/${boss.body.account_id}`)).body.status).toBe('active')
		// With another administrator elsewhere, the last-administrator rule allows it, but not from boss's own session.
		expect((await a.admin('/api/users', { body: { username: 'deputy', password: 'deputy-password-1', is_admin: true } })).status).toBe(201)
		const s = await signIn(0, 'boss', 'boss-password-1')
		const own = await fetch(`${a.url}/api/accounts/${boss.body.account_id}/disable`, { method: 'POST', headers: { cookie: s.cookie, 'x-csrf-token': s.body.csrf_token } })
		expect(own.status).toBe(400)
		expect(((await own.json()) as any).error).toMatchObject({ code: 'self_lockout' })
		expect((await a.admin('/api/accounts/999999/disable', { method: 'POST' })).status).toBe(404)
	})
})
