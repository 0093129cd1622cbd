/**
 * The management API and the config file refuse what the database would: a rename onto a name another channel or
 * model holds is 409 (as a create with that name is), and a priority, weight or output cap beyond PostgreSQL's
 * `integer` is 400 naming the field (a start on such a file names file, entry and field) — not a 500, nor a start
 * stopped with a raw SQL statement.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ConfigError, parseGatewayConfig } from '../../../src/config/gateway-file'
import { startTestApp, type TestApp } from '../../helpers/app'

let app: TestApp

beforeAll(async () => {
	app = await startTestApp()
}, 60_000)
afterAll(() => app.close())

const channel = (name: string, extra: Record<string, unknown> = {}) => ({ name, type: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'k', models: [`${name}-model`], ...extra })

describe('names', () => {
	it('should answer 409 naming the field when a channel is renamed onto another channel’s name, and change neither', async () => {
		const a = await app.admin('/api/channels', { body: channel('east') })
		const b = await app.admin('/api/channels', { body: channel('west') })
		expect([a.status, b.status]).toEqual([201, 201])
		const r = await app.admin(`/api/channels/${b.body.id}`, { method: 'PATCH', body: { name: 'east', weight: 5 } })
		expect(r.status).toBe(409)
		expect(r.body.error).toMatchObject({ type: 'invalid_request_error', param: 'name', message: 'a channel named "east" exists' })
		expect((await app.admin(`/api/channels/${b.body.id}`)).body).toMatchObject({ name: 'west', weight: 1 })
		// Its own name, or a free one, is still fine.
		expect((await app.admin(`/api/channels/${b.body.id}`, { method: 'PATCH', body: { name: 'west' } })).status).toBe(200)
		expect((await app.admin(`/api/channels/${b.body.id}`, { method: 'PATCH', body: { name: 'north' } })).body.name).toBe('north')
	})

	it('should answer 409 naming the field when a price is renamed onto another model’s name, and keep both prices', async () => {
		const a = await app.admin('/api/models', { body: { name: 'model-a', input_per_mtok: 1, output_per_mtok: 2 } })
		const b = await app.admin('/api/models', { body: { name: 'model-b', input_per_mtok: 3, output_per_mtok: 4 } })
		expect([a.status, b.status]).toEqual([201, 201])
		const r = await app.admin(`/api/models/${b.body.id}`, { method: 'PATCH', body: { name: 'model-a', input_per_mtok: 9 } })
		expect(r.status).toBe(409)
		expect(r.body.error).toMatchObject({ param: 'name', message: 'a model named "model-a" exists' })
		const list = (await app.admin('/api/models')).body.data.map((m: { name: string; input_per_mtok: number }) => [m.name, m.input_per_mtok])
		expect(list).toEqual(expect.arrayContaining([['model-a', 1], ['model-b', 3]]))
	})
})

describe('names too long or holding a NUL', () => {
	it("should refuse a model name over 200 characters with 400 naming it, where the database's index refused it as a 500", async () => {
		const long = Array.from({ length: 3000 }, (_, i) => String.fromCharCode(97 + ((i * 7919) % 26))).join('')
		const r = await app.admin('/api/models', { body: { name: long, input_per_mtok: 1 } })
		expect([r.status, r.body.error?.param, r.body.error?.code]).toEqual([400, 'name', 'string_above_max_length'])
		const made = await app.admin('/api/models', { body: { name: 'short-enough', input_per_mtok: 1 } })
		const p = await app.admin(`/api/models/${made.body.id}`, { method: 'PATCH', body: { name: long } })
		expect([p.status, p.body.error?.param]).toEqual([400, 'name'])
	})

	it("should refuse a NUL character in the gateway's words, not the database's", async () => {
		const r = await app.admin('/api/accounts', { body: { name: 'nul\u0000name' } })
		expect(r.status).toBe(400)
		expect(r.body.error.message).toBe('Invalid value: a text value holds a NUL character (\\u0000), which cannot be stored')
	})
})

describe('names of spaces only', () => {
	it('should refuse a key, account or channel name of spaces only with 400 naming the field, and create or change nothing', async () => {
		const acct = await app.admin('/api/accounts', { body: { name: 'named' } })
		const key = await app.admin('/api/tokens', { body: { account_id: acct.body.id, name: 'laptop' } })
		const ch = await app.admin('/api/channels', { body: channel('spaced') })
		expect([acct.status, key.status, ch.status]).toEqual([201, 201, 201])
		const before = { accounts: (await app.admin('/api/accounts')).body.data.length, tokens: (await app.admin(`/api/tokens?account_id=${acct.body.id}`)).body.data.length }
		for (const [path, method, body] of [
			['/api/accounts', 'POST', { name: '   ' }],
			['/api/tokens', 'POST', { account_id: acct.body.id, name: ' \t ' }],
			[`/api/tokens/${key.body.id}`, 'PATCH', { name: ' ' }],
			['/api/channels', 'POST', channel('   ')],
			[`/api/channels/${ch.body.id}`, 'PATCH', { name: '  ' }],
			['/api/accounts', 'POST', { name: '\u200b\u200b' }],
			[`/api/tokens/${key.body.id}`, 'PATCH', { name: ' \u2060\ufeff ' }],
		] as const) {
			const r = await app.admin(path, { method, body })
			expect({ path, method, status: r.status, param: r.body.error?.param }).toEqual({ path, method, status: 400, param: 'name' })
			expect(r.body.error.message).toContain('character other than spaces')
		}
		expect((await app.admin('/api/accounts')).body.data.length).toBe(before.accounts)
		expect((await app.admin(`/api/tokens?account_id=${acct.body.id}`)).body.data.length).toBe(before.tokens)
		expect((await app.admin(`/api/tokens/${key.body.id}`)).body.name).toBe('laptop')
		expect((await app.admin(`/api/channels/${ch.body.id}`)).body.name).toBe('spaced')
		// Spaces around a name are still taken as written.
		expect((await app.admin(`/api/tokens/${key.body.id}`, { method: 'PATCH', body: { name: ' work laptop ' } })).body.name).toBe(' work laptop ')
	})
})

describe('integer ranges', () => {
	it('should refuse a priority, weight or output cap beyond the database’s integer with 400 naming the field', async () => {
		const c = await app.admin('/api/channels', { body: channel('ranged') })
		for (const [path, method, body, param] of [
			['/api/channels', 'POST', channel('huge', { priority: 9_999_999_999 }), 'priority'],
			[`/api/channels/${c.body.id}`, 'PATCH', { priority: -9_999_999_999 }, 'priority'],
			[`/api/channels/${c.body.id}`, 'PATCH', { weight: 9_999_999_999 }, 'weight'],
			['/api/models', 'POST', { name: 'capped', max_output_tokens: 9_999_999_999 }, 'max_output_tokens'],
		] as const) {
			const r = await app.admin(path, { method, body })
			expect({ path, status: r.status, param: r.body.error?.param }).toEqual({ path, status: 400, param })
		}
		expect((await app.admin(`/api/channels/${c.body.id}`, { method: 'PATCH', body: { priority: -2_147_483_647, weight: 2_147_483_647 } })).status).toBe(200)
		expect((await app.admin('/api/channels')).body.data.map((x: { name: string }) => x.name)).not.toContain('huge')
	})

	it('should refuse such a config file naming the entry and the field', () => {
		const at = (raw: unknown) => {
			try {
				parseGatewayConfig(raw, 'gw.json')
				return 'accepted'
			} catch (e) {
				return e instanceof ConfigError ? e.message : `unexpected: ${String(e)}`
			}
		}
		expect(at({ channels: [channel('x', { priority: 9_999_999_999 })] })).toStartWith('gw.json: channels[0] ("x"): field "priority"')
		expect(at({ channels: [channel('x', { weight: 2_147_483_648 })] })).toStartWith('gw.json: channels[0] ("x"): field "weight"')
		expect(at({ models: [{ name: 'm', max_output_tokens: 9_999_999_999 }] })).toStartWith('gw.json: models[0] ("m"): field "max_output_tokens"')
		expect(at({ channels: [channel('x', { priority: -3, weight: 0 })], models: [{ name: 'm', max_output_tokens: 64_000 }] })).toBe('accepted')
	})
})

describe('whole numbers', () => {
	it('should refuse a fractional id or limit with 400 naming the parameter', async () => {
		for (const [path, param] of [
			['/api/tokens/1.5', 'id'],
			['/api/accounts/2.5', 'id'],
			['/api/channels/1.5', 'id'],
			['/api/tokens?account_id=1.5', 'account_id'],
			['/api/usage?token_id=1.5', 'token_id'],
			['/api/usage?limit=2.5', 'limit'],
		] as const) {
			const r = await app.admin(path)
			expect({ path, status: r.status, param: r.body.error?.param }).toEqual({ path, status: 400, param })
		}
		expect((await app.admin('/api/usage?limit=2&account_id=1')).status).toBe(200)
	})
})

describe('expiry dates', () => {
	it('should refuse an expiry on a day that does not exist, rather than roll it over to another day', async () => {
		const { accountId, tokenId } = await app.account(1)
		const made = await app.admin('/api/tokens', { body: { account_id: accountId, name: 'feb', expires_at: '2027-02-30T00:00:00Z' } })
		expect([made.status, made.body.error?.param]).toEqual([400, 'expires_at'])
		const patched = await app.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body: { expires_at: '2027-04-31T12:00:00+02:00' } })
		expect([patched.status, patched.body.error?.param]).toEqual([400, 'expires_at'])
		// A date JavaScript reads but PostgreSQL's timestamps do not reach: refused naming the field, not in the database's words.
		const far = await app.admin('/api/tokens', { body: { account_id: accountId, name: 'far', expires_at: '+275760-09-13T00:00:00.000Z' } })
		expect([far.status, far.body.error?.param]).toEqual([400, 'expires_at'])
		expect((await app.admin(`/api/tokens/${tokenId}`)).body.expires_at).toBeNull()
		const leap = await app.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body: { expires_at: '2028-02-29T23:00:00-01:00' } })
		expect([leap.status, leap.body.expires_at]).toEqual([200, '2028-03-01T00:00:00.000Z'])
		const range = await app.admin('/api/usage?from=2026-02-29T00:00:00Z')
		expect([range.status, range.body.error?.param]).toEqual([400, 'from'])
	})
})

describe('a balance past what is exact', () => {
	it('should refuse a credit taking the balance past 2^53 micro-USD naming amount, and keep the balance exact', async () => {
		const acct = await app.admin('/api/accounts', { body: { name: 'rich', balance: 9_000_000_000 } })
		expect(acct.status).toBe(201)
		const over = await app.admin(`/api/accounts/${acct.body.id}/credit`, { body: { amount: 9_000_000_000 } })
		expect([over.status, over.body.error?.param]).toEqual([400, 'amount'])
		expect(over.body.error.message).toContain('the most an account holds')
		// Up to the most, to the micro-dollar.
		const up = await app.admin(`/api/accounts/${acct.body.id}/credit`, { body: { amount: 7_199_254.740991 } })
		expect([up.status, up.body.balance]).toEqual([200, 9_007_199_254.740991])
		const one = await app.admin(`/api/accounts/${acct.body.id}/credit`, { body: { amount: 0.000001 } })
		expect([one.status, one.body.error?.param]).toEqual([400, 'amount'])
		expect((await app.admin(`/api/accounts/${acct.body.id}`)).body.balance).toBe(9_007_199_254.740991)
	})
})
