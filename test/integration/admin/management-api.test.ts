import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startAnthropicMock, startOpenAIMock } from '../../mocks'
import { ADMIN_KEY, startTestApp, type TestApp } from '../../helpers/app'

let app: TestApp
let mock: Awaited<ReturnType<typeof startOpenAIMock>>

beforeAll(async () => {
	mock = await startOpenAIMock({ apiKey: 'up-key' })
	app = await startTestApp({
		config: {
			channels: [{ name: 'mock', type: 'openai', base_url: mock.url, api_key: 'up-key', models: ['gpt-4o-mini'] }],
			models: [{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 }],
		},
	})
}, 120_000)
afterAll(async () => {
	await app.close()
	await mock.stop()
})

const chat = (key: string) =>
	fetch(`${app.url}/v1/chat/completions`, {
		method: 'POST',
		headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
		body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
	})

describe('management API', () => {
	it('should run a whole key session: create, reveal, use, expire, delete', async () => {
		const acct = await app.admin('/api/accounts', { body: { name: 'acme', balance: 5 } })
		expect(acct.status).toBe(201)
		expect(acct.body).toMatchObject({ name: 'acme', balance: 5 })
		const tok = await app.admin('/api/tokens', { body: { account_id: acct.body.id, name: 'ci', spend_limit: 1.25 } })
		expect(tok.status).toBe(201)
		expect(tok.body.key).toMatch(/^sk-[A-Za-z0-9]{48}$/)
		expect(tok.body).toMatchObject({ name: 'ci', spend_limit: 1.25, spent: 0, expires_at: null, status: 'active' })

		const shown = await app.admin(`/api/tokens/${tok.body.id}`)
		expect(shown.body.key).toBeUndefined()
		expect(shown.body.key_hint).toBe(`${tok.body.key.slice(0, 7)}…${tok.body.key.slice(-4)}`)
		expect((await app.admin(`/api/tokens/${tok.body.id}/key`)).body.key).toBe(tok.body.key)
		const list = await app.admin(`/api/tokens?account_id=${acct.body.id}`)
		expect(list.body.data.map((t: { id: number }) => t.id)).toEqual([tok.body.id])

		expect((await chat(tok.body.key)).status).toBe(200)

		const past = new Date(Date.now() - 60_000).toISOString()
		expect((await app.admin(`/api/tokens/${tok.body.id}`, { method: 'PATCH', body: { expires_at: past } })).body.status).toBe('expired')
		const expired = await chat(tok.body.key)
		expect(expired.status).toBe(401)
		expect((await expired.json()).error.message).toMatch(/expired/)

		await app.admin(`/api/tokens/${tok.body.id}`, { method: 'PATCH', body: { expires_at: null } })
		expect((await chat(tok.body.key)).status).toBe(200)
		expect((await app.admin(`/api/tokens/${tok.body.id}`, { method: 'DELETE' })).body).toEqual({ id: tok.body.id, deleted: true })
		const gone = await chat(tok.body.key)
		expect(gone.status).toBe(401)
		expect((await gone.json()).error.code).toBe('invalid_api_key')
		expect((await app.admin(`/api/tokens/${tok.body.id}`)).status).toBe(404)
	})

	it('should record usage rows, newest first, paged by cursor', async () => {
		const { key, accountId } = await app.account(1)
		for (let i = 0; i < 3; i++) expect((await chat(key)).status).toBe(200)
		const p1 = await app.admin(`/api/usage?account_id=${accountId}&limit=2`)
		expect(p1.body.data).toHaveLength(2)
		expect(p1.body.next_cursor).toBeString()
		const p2 = await app.admin(`/api/usage?account_id=${accountId}&limit=2&cursor=${p1.body.next_cursor}`)
		expect(p2.body.data).toHaveLength(1)
		expect(p2.body.next_cursor).toBeNull()
		const row = p1.body.data[0]
		expect(row).toMatchObject({ account_id: accountId, model: 'gpt-4o-mini', upstream_model: 'gpt-4o-mini', endpoint: '/v1/chat/completions', channel: 'mock', status: 200, estimated: false })
		expect(row.id).toBeGreaterThan(p2.body.data[0].id)
		expect(row.cost).toBeGreaterThan(0)
		expect(await app.balance(accountId)).toBeCloseTo(1 - p1.body.data.concat(p2.body.data).reduce((s: number, r: { cost: number }) => s + r.cost, 0), 9)
	})

	it('should credit accounts and refuse a debit below zero', async () => {
		const { accountId } = await app.account(1)
		expect((await app.admin(`/api/accounts/${accountId}/credit`, { body: { amount: 2.5 } })).body).toEqual({ balance: 3.5 })
		const over = await app.admin(`/api/accounts/${accountId}/credit`, { body: { amount: -10 } })
		expect(over.status).toBe(400)
		expect(over.body.error.param).toBe('amount')
	})

	it('should answer bad input with 400 naming the field, unknown ids with 404', async () => {
		const bad = await app.admin('/api/tokens', { body: { account_id: 'x', name: 'n' } })
		expect(bad.status).toBe(400)
		expect(bad.body.error.message).toContain('account_id')
		const noName = await app.admin('/api/accounts', { body: {} })
		expect(noName.status).toBe(400)
		expect(noName.body.error.message).toContain('name')
		const limit = await app.admin('/api/tokens', { body: { account_id: 1, name: 'n', spend_limit: 0.0000001 } })
		expect(limit.status).toBe(400)
		expect(limit.body.error.param).toBe('spend_limit')
		expect((await app.admin('/api/accounts/99999')).status).toBe(404)
		expect((await app.admin('/api/tokens/99999/key')).status).toBe(404)
		expect((await app.admin('/api/tokens', { body: { account_id: 99999, name: 'n' } })).status).toBe(404)
		const raw = await fetch(`${app.url}/api/accounts`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' }, body: '{"name":' })
		expect(raw.status).toBe(400)
		expect((await raw.json()).error.code).toBe('invalid_json')
	})

	it('should refuse the management API without the admin key', async () => {
		const res = await fetch(`${app.url}/api/accounts`)
		expect(res.status).toBe(401)
		const wrong = await fetch(`${app.url}/api/accounts`, { headers: { authorization: 'Bearer nope' } })
		expect(wrong.status).toBe(401)
	})

	it('should reject oversize bodies with 413 in the caller protocol shape, leaving no rows', async () => {
		const { key, accountId } = await app.account(1)
		const big = JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'x'.repeat(33 * 1024 * 1024) }] })
		const res = await fetch(`${app.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: big })
		expect(res.status).toBe(413)
		expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'request_too_large' } })
		expect((await app.admin(`/api/usage?account_id=${accountId}`)).body.data).toHaveLength(0)
	})

	it('should manage channels and prices, never returning upstream keys', async () => {
		const ch = await app.admin('/api/channels', { body: { name: 'extra', type: 'anthropic', base_url: 'https://example.invalid', api_key: 'secret-up', models: ['claude-*'] } })
		expect(ch.status).toBe(201)
		expect(JSON.stringify(ch.body)).not.toContain('secret-up')
		expect((await app.admin('/api/channels', { body: { name: 'extra', type: 'openai', base_url: 'https://x', api_key: 'k', models: ['m'] } })).status).toBe(409)
		expect((await app.admin(`/api/channels/${ch.body.id}/disable`, { method: 'POST' })).body.status).toBe('disabled')
		expect((await app.admin('/api/channels', { body: { name: 'bad', type: 'nope', base_url: 'https://x', api_key: 'k', models: ['m'] } })).status).toBe(400)
		const m = await app.admin('/api/models', { body: { name: 'claude-x', input_per_mtok: 3, output_per_mtok: 15, per_image: 0.01 } })
		expect(m.status).toBe(201)
		expect(m.body).toMatchObject({ input_per_mtok: 3, output_per_mtok: 15, prices: { per_image: 0.01 } })
		const patched = await app.admin(`/api/models/${m.body.id}`, { method: 'PATCH', body: { output_per_mtok: 12 } })
		expect(patched.body).toMatchObject({ input_per_mtok: 3, output_per_mtok: 12, prices: { per_image: 0.01 } })
		expect((await app.admin(`/api/models/${m.body.id}`, { method: 'DELETE' })).body.status).toBe('disabled')
	})

	it('should remove a price set to null in PATCH, keep the fields left out, and stop billing what was removed', async () => {
		const ch = await app.admin('/api/channels', { body: { name: 'clearable', type: 'openai', base_url: mock.url, api_key: 'up-key', models: ['clear-me'] } })
		const m = await app.admin('/api/models', {
			body: { name: 'clear-me', input_per_mtok: 1, output_per_mtok: 2, cache_read_per_mtok: 0.5, cache_write_per_mtok: 1.5, per_request: 0.01, max_output_tokens: 100, per_image: 0.04, per_image_hd: 0.06, per_image_1024x1024_hd: 0.08 },
		})
		expect(m.status).toBe(201)
		const { key, accountId } = await app.account(1)
		const call = () =>
			fetch(`${app.url}/v1/chat/completions`, {
				method: 'POST',
				headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
				body: JSON.stringify({ model: 'clear-me', messages: [{ role: 'user', content: 'hi' }] }),
			})
		const lastCost = async () => (await app.admin(`/api/usage?account_id=${accountId}&limit=1`)).body.data[0].cost as number
		expect((await call()).status).toBe(200)
		expect(await lastCost()).toBeGreaterThanOrEqual(0.01)

		const cleared = await app.admin(`/api/models/${m.body.id}`, {
			method: 'PATCH',
			body: { per_request: null, cache_read_per_mtok: null, cache_write_per_mtok: null, max_output_tokens: null, per_image: 0.05, per_image_hd: null, per_image_1024x1024_hd: null },
		})
		expect(cleared.status).toBe(200)
		expect(cleared.body).toMatchObject({ input_per_mtok: 1, output_per_mtok: 2, cache_read_per_mtok: null, cache_write_per_mtok: null, per_request: null, max_output_tokens: null })
		expect(cleared.body.prices).toEqual({ per_image: 0.05 })
		const listed = (await app.admin('/api/models')).body.data.find((x: { id: number }) => x.id === m.body.id)
		expect(listed).toMatchObject({ per_request: null, prices: { per_image: 0.05 } })
		expect((await call()).status).toBe(200)
		expect(await lastCost()).toBeLessThan(0.01)

		// null on input or output means 0, what a new price leaves out; the name and status cannot be null.
		const zero = await app.admin(`/api/models/${m.body.id}`, { method: 'PATCH', body: { input_per_mtok: null } })
		expect(zero.body).toMatchObject({ input_per_mtok: 0, output_per_mtok: 2, prices: { per_image: 0.05 } })
		for (const field of ['name', 'enabled']) {
			const r = await app.admin(`/api/models/${m.body.id}`, { method: 'PATCH', body: { [field]: null } })
			expect(r.status).toBe(400)
			expect(r.body.error.param).toBe(field)
		}
		await app.admin(`/api/models/${m.body.id}`, { method: 'DELETE' })
		await app.admin(`/api/channels/${ch.body.id}`, { method: 'DELETE' })
	})

	it('should test a channel with a real one-token call and report failures in words', async () => {
		const list = (await app.admin('/api/channels')).body.data as Array<{ id: number; name: string; health: { state: string } }>
		const mockCh = list.find((c) => c.name === 'mock')!
		expect(mockCh.health.state).toBe('closed')
		const ok = await app.admin(`/api/channels/${mockCh.id}/test`, { method: 'POST' })
		expect(ok.body).toMatchObject({ ok: true, status: 200, model: 'gpt-4o-mini' })
		expect(mock.requests.at(-1)!.body).toMatchObject({ model: 'gpt-4o-mini', max_tokens: 1 })
		const wrongKey = 'sk-wrong-key-0123456789abcdef'
		const bad = await app.admin('/api/channels', { body: { name: 'bad-key', type: 'openai', base_url: mock.url, api_key: wrongKey, models: ['gpt-4o-mini'] } })
		const res = await app.admin(`/api/channels/${bad.body.id}/test`, { method: 'POST' })
		expect(res.body).toMatchObject({ ok: false, status: 401 })
		// The administrator sees the vendor's own words (callers get only the gateway's), without the key or its
		// masked form.
		expect(res.body.message).toContain('Incorrect API key provided')
		expect(res.body.message).not.toContain(wrongKey.slice(0, 8))
		expect(res.body.message).not.toContain(wrongKey.slice(-4))
		await app.admin(`/api/channels/${bad.body.id}`, { method: 'DELETE' })
	})

	it('should answer the test of a channel with no chat endpoint as not testable, not as a failed call', async () => {
		// Audit: a rerank channel's Test read "Failed: no answer after 0 ms": nothing was called, nothing failed.
		const rerank = await app.admin('/api/channels', { body: { name: 'rerank-x', type: 'rerank', base_url: mock.url, api_key: 'up-key', models: ['rerank-v3'] } })
		const before = mock.requests.length
		const res = await app.admin(`/api/channels/${rerank.body.id}/test`, { method: 'POST' })
		expect(res.status).toBe(200)
		expect(res.body).toMatchObject({ ok: false, testable: false, status: 0, model: 'rerank-v3' })
		expect(res.body.message).toContain('type rerank')
		expect(mock.requests.length).toBe(before)
		const chat = (await app.admin('/api/channels')).body.data.find((c: { name: string }) => c.name === 'mock')
		expect((await app.admin(`/api/channels/${chat.id}/test`, { method: 'POST' })).body).toMatchObject({ ok: true, testable: true })
		await app.admin(`/api/channels/${rerank.body.id}`, { method: 'DELETE' })
	})

	it('should test a channel of globs with a concrete model: a priced chat model they match, the one asked for, or a 400 saying so', async () => {
		// A vendor answers a glob sent as the model name with 404: Test would call a healthy channel broken.
		const embed = await app.admin('/api/models', { body: { name: 'gpt-4o-embed-x', input_per_mtok: 0.1 } })
		expect(embed.status).toBe(201)
		const glob = await app.admin('/api/channels', { body: { name: 'globs', type: 'openai', base_url: mock.url, api_key: 'up-key', models: ['gpt-4o*'] } })
		const picked = await app.admin(`/api/channels/${glob.body.id}/test`, { method: 'POST' })
		expect(picked.body).toMatchObject({ ok: true, status: 200, model: 'gpt-4o-mini' })
		expect(mock.requests.at(-1)!.body).toMatchObject({ model: 'gpt-4o-mini' })

		const asked = await app.admin(`/api/channels/${glob.body.id}/test`, { body: { model: 'gpt-4o-2024-08-06' } })
		expect(asked.body).toMatchObject({ ok: true, model: 'gpt-4o-2024-08-06' })
		expect(mock.requests.at(-1)!.body).toMatchObject({ model: 'gpt-4o-2024-08-06' })

		const before = mock.requests.length
		const none = await app.admin('/api/channels', { body: { name: 'no-priced', type: 'openai', base_url: mock.url, api_key: 'up-key', models: ['zz-*'] } })
		const refused = await app.admin(`/api/channels/${none.body.id}/test`, { method: 'POST' })
		expect(refused.status).toBe(400)
		expect(refused.body.error).toMatchObject({ type: 'invalid_request_error', param: 'model' })
		expect(refused.body.error.message).toContain('zz-*')
		expect(refused.body.error.message).toContain('"model"')
		expect(mock.requests.length).toBe(before)
		for (const id of [glob.body.id, none.body.id]) await app.admin(`/api/channels/${id}`, { method: 'DELETE' })
		await app.admin(`/api/models/${embed.body.id}`, { method: 'DELETE' })
	})

	it('should test a channel with a chat model, not the embedding or audio model its list names first', async () => {
		// QA (fresh clone): a Gemini channel of `gemini-2.5-*` and `gemini-embedding-001` was tested with the embedding
		// model, which Gemini answers 404 for generateContent (OpenAI: "This is not a chat model"): a healthy channel
		// would read as broken.
		const mixed = await app.admin('/api/channels', { body: { name: 'mixed', type: 'openai', base_url: mock.url, api_key: 'up-key', models: ['text-embedding-3-small', 'whisper-1', 'gpt-4o*'] } })
		const viaGlob = await app.admin(`/api/channels/${mixed.body.id}/test`, { method: 'POST' })
		expect(viaGlob.body).toMatchObject({ ok: true, model: 'gpt-4o-mini' })
		expect(mock.requests.at(-1)!).toMatchObject({ path: '/v1/chat/completions', body: { model: 'gpt-4o-mini' } })
		const exact = await app.admin('/api/channels', { body: { name: 'mixed-exact', type: 'openai', base_url: mock.url, api_key: 'up-key', models: ['tts-1', 'text-embedding-3-small', 'gpt-4.1'] } })
		const viaEntry = await app.admin(`/api/channels/${exact.body.id}/test`, { method: 'POST' })
		expect(viaEntry.body).toMatchObject({ ok: true, model: 'gpt-4.1' })
		expect(mock.requests.at(-1)!).toMatchObject({ path: '/v1/chat/completions', body: { model: 'gpt-4.1' } })
		for (const id of [mixed.body.id, exact.body.id]) await app.admin(`/api/channels/${id}`, { method: 'DELETE' })
	})

	it('should name the URL a channel Test called when the vendor answers 404, so a wrong base URL shows', async () => {
		// QA (fresh clone): an Anthropic channel given `…/v1` (its form says "Without /v1") read only "HTTP 404 — Not
		// Found", Anthropic's whole answer for /v1/v1/messages.
		const anthropic = await startAnthropicMock({ apiKey: 'up-an' })
		try {
			const ch = await app.admin('/api/channels', { body: { name: 'an-v1', type: 'anthropic', base_url: `${anthropic.url}/v1`, api_key: 'up-an', models: ['claude-haiku-4-5'] } })
			const res = await app.admin(`/api/channels/${ch.body.id}/test`, { method: 'POST' })
			expect(res.body).toMatchObject({ ok: false, status: 404 })
			expect(res.body.message).toBe(`Not Found (POST ${anthropic.url}/v1/v1/messages)`)
			await app.admin(`/api/channels/${ch.body.id}`, { method: 'DELETE' })
		} finally {
			await anthropic.stop()
		}
	})

	it('should name the field of every refused query, path or body value, coerced or not', async () => {
		const cases: Array<[string, { method?: string; body?: unknown }, string]> = [
			['/api/usage?limit=0', {}, 'limit'],
			['/api/usage?limit=100000', {}, 'limit'],
			['/api/usage?limit=abc', {}, 'limit'],
			['/api/usage?account_id=0&limit=5', {}, 'account_id'],
			['/api/usage?limit=5&token_id=-3', {}, 'token_id'],
			['/api/tokens?account_id=0', {}, 'account_id'],
			['/api/tokens/0', {}, 'id'],
			['/api/accounts/99999999999', {}, 'id'],
			['/api/accounts', { body: { name: 'x', balance: 'ten' } }, 'balance'],
			['/api/accounts', { body: { balance: 1 } }, 'name'],
			['/api/tokens', { body: { account_id: 0, name: 'k' } }, 'account_id'],
			['/api/tokens', { body: { account_id: 1, name: 'k', rpm_limit: 0 } }, 'rpm_limit'],
		]
		for (const [path, init, field] of cases) {
			const r = await app.admin(path, init)
			expect([path, r.status]).toEqual([path, 400])
			expect([path, r.body.error.param]).toEqual([path, field])
			expect(r.body.error.message).toContain(`"${field}"`)
			expect(r.body.error.message).not.toContain('Invalid property')
		}
	})
})
