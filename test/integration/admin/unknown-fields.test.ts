/**
 * Fields a schema does not name (src/app.ts: the app does not normalise bodies). The model APIs take them, as the
 * vendors' clients send fields we do not model; the management API refuses them with a 400 naming the field, so a
 * misspelt setting is not silently dropped, and nothing unnamed reaches storage. No answer carries a stored secret.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startTestApp, type TestApp } from '../../helpers/app'

let app: TestApp

beforeAll(async () => {
	app = await startTestApp()
}, 120_000)
afterAll(async () => {
	await app.close()
})

describe('fields no schema names', () => {
	it('should refuse them in management bodies and queries, naming the field, and change nothing', async () => {
		const before = (await app.admin('/api/accounts')).body.data.length
		const acct = await app.admin('/api/accounts', { body: { name: 'plain', balance: 2, credits: 1e9 } })
		expect(acct.status).toBe(400)
		expect(acct.body.error).toMatchObject({ type: 'invalid_request_error', param: 'credits' })
		expect((await app.admin('/api/accounts')).body.data.length).toBe(before)

		const { accountId, tokenId, key } = await app.account(3)
		const edited = await app.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body: { spend_limit: 1, spent: -100 } })
		expect(edited.status).toBe(400)
		expect(edited.body.error.param).toBe('spent')
		expect((await app.admin(`/api/tokens/${tokenId}`)).body).toMatchObject({ spend_limit: null, spent: 0, account_id: accountId })

		const listed = await app.admin('/api/tokens?acount_id=1')
		expect(listed.status).toBe(400)
		expect(listed.body.error.param).toBe('acount_id')

		// The key is untouched and works.
		expect((await fetch(`${app.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200)
	})

	it('should refuse a misspelt or unknown model price with 400 naming it, storing nothing', async () => {
		const names = async () => (await app.admin('/api/models')).body.data.map((m: { name: string }) => m.name)
		const before = await names()
		for (const [field, body] of [
			['ouput_per_mtok', { name: 'typo-a', input_per_mtok: 1, ouput_per_mtok: 2 }],
			['bogus', { name: 'typo-b', input_per_mtok: 1, bogus: 2 }],
			['per_reqest', { name: 'typo-c', per_reqest: 0.01 }],
			['reasoning_per_mtok', { name: 'typo-d', reasoning_per_mtok: 1 }],
			['per_image_1024x1024_hdd', { name: 'typo-e', per_image_1024x1024_hdd: 0.08 }],
		] as const) {
			const r = await app.admin('/api/models', { body })
			expect(r.status).toBe(400)
			expect(r.body.error).toMatchObject({ type: 'invalid_request_error', param: field })
			expect(r.body.error.message).toContain(field)
		}
		expect(await names()).toEqual(before)

		const m = await app.admin('/api/models', { body: { name: 'priced', input_per_mtok: 1, output_per_mtok: 2, per_image_1024x1024_hd: 0.08, per_second_1280x720: 0.1 } })
		expect(m.status).toBe(201)
		const edited = await app.admin(`/api/models/${m.body.id}`, { method: 'PATCH', body: { outptu_per_mtok: 0 } })
		expect(edited.status).toBe(400)
		expect(edited.body.error.param).toBe('outptu_per_mtok')
		const precise = await app.admin(`/api/models/${m.body.id}`, { method: 'PATCH', body: { per_image: 0.0000001 } })
		expect(precise.status).toBe(400)
		expect(precise.body.error.param).toBe('per_image')
		const ok = await app.admin(`/api/models/${m.body.id}`, { method: 'PATCH', body: { per_minute: 0.006 } })
		expect(ok.status).toBe(200)
		expect(ok.body).toMatchObject({ input_per_mtok: 1, output_per_mtok: 2, prices: { per_image_1024x1024_hd: 0.08, per_second_1280x720: 0.1, per_minute: 0.006 } })
	})

	it('should name the nearest field the body defines, at any depth, as the config file does', async () => {
		// Audit: "Unexpected property" alone left the caller to guess that cached_input_per_mtok is cache_read_per_mtok.
		const ch = { name: 'near', type: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'k', models: ['m'] }
		const cases: Array<[string, string, unknown, string, string]> = [
			['POST', '/api/models', { name: 'near-m', input_per_mtok: 1, cached_input_per_mtok: 0.5 }, 'cached_input_per_mtok', 'cache_read_per_mtok'],
			['POST', '/api/channels', { ...ch, prioirty: 1 }, 'prioirty', 'priority'],
			['POST', '/api/channels', { ...ch, settings: { timeouts: { first_byte: 100 } } }, 'settings.timeouts.first_byte', 'first_byte_ms'],
			['POST', '/api/accounts', { name: 'a', balence: 1 }, 'balence', 'balance'],
		]
		for (const [method, path, body, param, near] of cases) {
			const r = await app.admin(path, { method, body })
			expect({ path, status: r.status, error: r.body.error }).toEqual({
				path,
				status: 400,
				error: { type: 'invalid_request_error', code: 'unknown_parameter', param, message: `Invalid body: "${param}" Unexpected property: did you mean "${near}"?` },
			})
		}
		const m = await app.admin('/api/models', { body: { name: 'near-p', input_per_mtok: 1 } })
		const patch = await app.admin(`/api/models/${m.body.id}`, { method: 'PATCH', body: { cache_hit_per_mtok: 0.1 } })
		expect(patch.body.error.message).toBe('Invalid body: "cache_hit_per_mtok" Unexpected property: did you mean "cache_read_per_mtok"?')
		// Nothing near: the field alone.
		expect((await app.admin('/api/models', { body: { name: 'near-q', bogus: 2 } })).body.error.message).toBe('Invalid body: "bogus" Unexpected property')
	})

	it('should take them in the model APIs’ queries, as the vendors do', async () => {
		const { key } = await app.account(1)
		for (const path of ['/v1/models?foo=1', '/v1/models?limit=1&after_id=&x=y', '/v1/dashboard/billing/usage?foo=1']) {
			const r = await fetch(`${app.url}${path}`, { headers: { authorization: `Bearer ${key}` } })
			expect(r.status).toBe(200)
		}
	})

	it('should answer with the documented fields only, never a stored secret', async () => {
		const { accountId, tokenId, key } = await app.account(1)
		const ch = await app.admin('/api/channels', { body: { name: 'c', type: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'upstream-secret-value', models: ['m'] } })
		expect(ch.status).toBe(201)
		for (const path of [`/api/tokens/${tokenId}`, '/api/tokens', `/api/channels/${ch.body.id}`, '/api/channels', `/api/accounts/${accountId}`]) {
			const r = await app.admin(path)
			expect(r.status).toBe(200)
			const text = JSON.stringify(r.body)
			for (const secret of ['upstream-secret-value', key, 'keyHash', 'key_hash', 'keyEnc', 'key_enc', 'apiKeyEnc', 'api_key_enc']) expect(text).not.toContain(secret)
		}
	})
})
