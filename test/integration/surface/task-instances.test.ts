/**
 * Tasks across instances sharing one database: a task submitted on instance A and seen to fail on instance B is
 * refunded once, and the key's spend comes back to what it was. Instance A flushes its ledger rarely here (as any
 * instance may not have flushed yet when another instance's poll sees the failure): the task must not be visible to
 * other instances before its charge is in the database, or B refunds a charge A has not written, the key's `spent`
 * (clamped at zero) loses the refund, and A's later flush counts the charge on the key for good.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { createTestDb, type TestDb } from '../../helpers/db'
import { startVideoMock, type VideoMock } from '../../mocks/tasks'
import { allUsage, dbState, type Instance, startNode } from '../admin/instances'
import { priceList } from './helpers'

let up: VideoMock
let t: TestDb
let a: Instance
let b: Instance

beforeAll(async () => {
	up = await startVideoMock({ apiKey: 'up-v', steps: 1 })
	const config: GatewayConfig = {
		channels: [{ name: 'vid', type: 'video', base_url: up.url, api_key: 'up-v', models: ['sora-2'] }],
		models: priceList([{ name: 'sora-2', per_second: 0.1 }]),
	}
	t = await createTestDb()
	// A keeps its charges in memory for a minute (nothing but an explicit flush writes them); B flushes as usual.
	a = await startNode(t, config, { LEDGER_FLUSH_MS: '60000', LEASE_IDLE_MS: '60000' }, true)
	b = await startNode(t, config, {}, false)
}, 60_000)

afterAll(async () => {
	await b.stop()
	await a.stop()
	await t.drop()
	await up.stop()
})

describe('a task polled on another instance', () => {
	it('should refund a failure seen on instance B once, the key and the balance back where they were', async () => {
		const acct = await a.admin('/api/accounts', { body: { name: 'x', balance: 10 } })
		const tok = await a.admin('/api/tokens', { body: { account_id: acct.body.id, name: 'k', spend_limit: 5 } })
		const onA = new OpenAI({ apiKey: tok.body.key, baseURL: `${a.url}/v1`, maxRetries: 0 })
		const onB = new OpenAI({ apiKey: tok.body.key, baseURL: `${b.url}/v1`, maxRetries: 0 })

		const video = await onA.videos.create({ model: 'sora-2', prompt: 'a storm #fail', seconds: '4' })
		expect(video.status).toBe('queued')
		const seen = await onB.videos.retrieve(video.id)
		expect(seen.status).toBe('failed')

		// A stops (its leases flushed and given back): everything it held is in the database now.
		await a.stop()
		const key = await b.admin(`/api/tokens/${tok.body.id}`)
		expect(key.body.spent).toBe(0)
		const state = await dbState(t, acct.body.id)
		expect(state.balance).toBe(10_000_000)
		expect(state.leased).toBe(0)
		const rows = (await allUsage(b, acct.body.id)).sort((x, y) => x.id - y.id)
		expect(rows.map((r) => [r.endpoint, r.cost, r.end_reason])).toEqual([
			['/v1/videos', 0.4, 'ok'],
			['/v1/videos', -0.4, 'refund'],
		])
	})
})
