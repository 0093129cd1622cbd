/**
 * Tasks across instances sharing one database: a task submitted on instance A and seen to fail on instance B (or a
 * background response cancelled there) is refunded once, and the key's spend comes back to what it was. Instance A flushes its ledger rarely here (as any
 * instance may not have flushed yet when another instance's poll sees the failure): the task must not be visible to
 * other instances before its charge is in the database, or B refunds a charge A has not written, the key's `spent`
 * (clamped at zero) loses the refund, and A's later flush counts the charge on the key for good.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { createTestDb, type TestDb } from '../../helpers/db'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { startVideoMock, type VideoMock } from '../../mocks/tasks'
import { allUsage, dbState, type Instance, startNode } from '../admin/instances'
import { priceList } from './helpers'

let up: VideoMock
let oa: VendorMock
let t: TestDb
let a: Instance
let b: Instance

beforeAll(async () => {
	up = await startVideoMock({ apiKey: 'up-v', steps: 1 })
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	const config: GatewayConfig = {
		channels: [
			{ name: 'vid', type: 'video', base_url: up.url, api_key: 'up-v', models: ['sora-2'] },
			{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['gpt-4o-mini'] },
		],
		models: priceList([
			{ name: 'sora-2', per_second: 0.1 },
			{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 },
		]),
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
	await oa.stop()
})

/** An account with $10 and a key limited to $5, made on instance A. */
async function owner() {
	const acct = await a.admin('/api/accounts', { body: { name: 'x', balance: 10 } })
	const tok = await a.admin('/api/tokens', { body: { account_id: acct.body.id, name: 'k', spend_limit: 5 } })
	return { accountId: acct.body.id as number, tokenId: tok.body.id as number, key: tok.body.key as string }
}

describe('a task polled on another instance', () => {
	it('should refund a failure seen on instance B once, the key and the balance back where they were', async () => {
		const { accountId, tokenId, key } = await owner()
		const onA = new OpenAI({ apiKey: key, baseURL: `${a.url}/v1`, maxRetries: 0 })
		const onB = new OpenAI({ apiKey: key, baseURL: `${b.url}/v1`, maxRetries: 0 })

		const video = await onA.videos.create({ model: 'sora-2', prompt: 'a storm #fail', seconds: '4' })
		expect(video.status).toBe('queued')
		const seen = await onB.videos.retrieve(video.id)
		expect(seen.status).toBe('failed')

		// A writes what it settled: everything it charged is in the database now.
		await a.svc.ledger.flush()
		expect((await b.admin(`/api/tokens/${tokenId}`)).body.spent).toBe(0)
		const state = await dbState(t, accountId)
		// Nothing spent: the $10 are in the balance, or leased (unused) to an instance.
		expect(state.balance + state.leased).toBe(10_000_000)
		expect(state.usageCost).toBe(0)
		const rows = (await allUsage(b, accountId)).sort((x, y) => x.id - y.id)
		expect(rows.map((r) => [r.endpoint, r.cost, r.end_reason])).toEqual([
			['/v1/videos', 0.4, 'ok'],
			['/v1/videos', -0.4, 'refund'],
		])
	})

	it('should give back a background response cancelled on instance B once, the key and the balance back where they were', async () => {
		const { accountId, tokenId, key } = await owner()
		const onA = new OpenAI({ apiKey: key, baseURL: `${a.url}/v1`, maxRetries: 0 })
		const onB = new OpenAI({ apiKey: key, baseURL: `${b.url}/v1`, maxRetries: 0 })
		const queued = await onA.responses.create({ model: 'gpt-4o-mini', input: 'cancel me before I start', background: true })
		expect(queued.status).toBe('queued')
		expect((await onB.responses.cancel(queued.id)).status).toBe('cancelled')

		await a.svc.ledger.flush()
		expect((await b.admin(`/api/tokens/${tokenId}`)).body.spent).toBe(0)
		const state = await dbState(t, accountId)
		expect(state.balance + state.leased).toBe(10_000_000)
		expect(state.usageCost).toBe(0)
		const rows = (await allUsage(b, accountId)).sort((x, y) => x.id - y.id)
		expect(rows.map((r) => r.end_reason)).toEqual(['background', 'refund'])
		expect(rows[1].cost).toBe(-rows[0].cost)
	})
})
