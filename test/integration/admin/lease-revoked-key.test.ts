/**
 * The database refuses a lease to a key that is no longer active (billing QA, left over): an instance whose key cache
 * has not heard that the key was disabled (its bus message is late, or there is no Redis) could otherwise take a new
 * lease for it and spend. Here the change is made in the database alone, as another instance's would look before its
 * message arrives, and the key's lease is given back so that the next request must take one. Whichever check refuses
 * a key, the key cache or the ledger, the client gets the same error for the same state.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { sha256Hex } from '../../../src/lib/secrets'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { expectLedgerInvariant } from '../resilience/invariant'

let mock: VendorMock
let app: TestApp

beforeAll(async () => {
	mock = await startOpenAIMock({ apiKey: 'up-key' })
	app = await startTestApp({
		config: {
			channels: [{ name: 'up', type: 'openai', base_url: mock.url, api_key: 'up-key', models: ['gpt-4o-mini'] }],
			models: [{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 }],
		},
	})
}, 30_000)
afterAll(async () => {
	await app.close()
	await mock.stop()
})

const ask = (key: string) => new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })

describe('a lease for a key revoked elsewhere', () => {
	for (const change of ["status = 'disabled'", "status = 'deleted'"])
		it(`should be refused by the database (401, no upstream call) when ${change} is not yet in this instance's key cache`, async () => {
			const { accountId, tokenId, key } = await app.account(1)
			expect((await ask(key)).choices[0]!.message.content).toBe('Hello! You said: hi')
			await app.svc.db.sql.query(`UPDATE api_tokens SET ${change} WHERE id = $1`, [tokenId])
			await app.svc.ledger.reclaim({ accountId, tokenId })
			const before = mock.requests.length
			const err = await ask(key).catch((e: unknown) => e)
			expect(err).toBeInstanceOf(OpenAI.AuthenticationError)
			expect(mock.requests.length).toBe(before)
		})

	it("should be refused by the database (401, no upstream call) when the key's account was disabled and this instance's key cache has not heard", async () => {
		const { accountId, key } = await app.account(1)
		expect((await ask(key)).choices[0]!.message.content).toBe('Hello! You said: hi')
		await app.svc.db.sql.query(`UPDATE accounts SET status = 'disabled' WHERE id = $1`, [accountId])
		await app.svc.ledger.reclaim({ accountId })
		const before = mock.requests.length
		const err = await ask(key).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(OpenAI.AuthenticationError)
		expect(mock.requests.length).toBe(before)
	})

	/** The error bodies an OpenAI and an Anthropic client get for `key`, as their SDKs read them. */
	async function refusals(key: string) {
		const oa = (await ask(key).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>
		const an = (await new Anthropic({ apiKey: key, baseURL: app.url, maxRetries: 0 }).messages
			.create({ model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
			.catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>
		// Each answer names its own request.
		const { request_id: _, ...anBody } = an.error as { request_id?: string }
		return { openai: { status: oa.status, body: oa.error as any }, anthropic: { status: an.status, body: anBody as any } }
	}

	const states = [
		{ state: 'disabled', code: 'api_key_disabled', sql: "UPDATE api_tokens SET status = 'disabled' WHERE id = $1" },
		{ state: 'deleted', code: 'invalid_api_key', sql: "UPDATE api_tokens SET status = 'deleted' WHERE id = $1" },
		{ state: 'expired', code: 'api_key_expired', sql: "UPDATE api_tokens SET expires_at = date_trunc('milliseconds', now()) - interval '1 second' WHERE id = $1" },
		{ state: 'of a disabled account', code: 'account_disabled', sql: "UPDATE accounts SET status = 'disabled' WHERE id = (SELECT account_id FROM api_tokens WHERE id = $1)" },
	]
	for (const { state, code, sql } of states)
		it(`should answer a key ${state} with the same error whether the ledger or the key cache refuses it (${code}), in each protocol's shape`, async () => {
			const { accountId, tokenId, key } = await app.account(1)
			expect((await ask(key)).choices[0]!.message.content).toBe('Hello! You said: hi')
			await app.svc.db.sql.query(sql, [tokenId])
			await app.svc.ledger.reclaim({ accountId })
			// The cache still holds the key as usable: the database refuses its lease.
			expect(app.svc.keys.cached(key)?.id).toBe(tokenId)
			const byLedger = await refusals(key)
			await app.svc.keys.invalidate(sha256Hex(key))
			const byCache = await refusals(key)
			expect(byLedger).toEqual(byCache)
			expect(byCache.openai).toMatchObject({ status: 401, body: { code } })
			expect(byCache.anthropic).toMatchObject({ status: 401, body: { type: 'error', error: { type: 'authentication_error' } } })
			expect(byCache.anthropic.body.error.message).toBe(byCache.openai.body.message)
		})

	it('should leave the ledger sound', async () => {
		await expectLedgerInvariant(app.svc.db.sql, app.svc.ledger)
	})
})
