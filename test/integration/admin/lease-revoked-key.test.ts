/**
 * The database refuses a lease to a key that is no longer active (billing QA, left over): an instance whose key cache
 * has not heard that the key was disabled (its bus message is late, or there is no Redis) could otherwise take a new
 * lease for it and spend. Here the change is made in the database alone, as another instance's would look before its
 * message arrives, and the key's lease is given back so that the next request must take one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
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
			expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('invalid_api_key')
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

	it('should leave the ledger sound', async () => {
		await expectLedgerInvariant(app.svc.db.sql, app.svc.ledger)
	})
})
