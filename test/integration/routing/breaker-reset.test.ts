/**
 * Circuit breakers are per instance, but an operator's edit of a channel, or enabling it again, resets its breaker on
 * every instance as each loads the change (heard through Redis): a channel whose key or URL was just fixed is not
 * left cooling down for minutes behind the fallback on the instances the edit did not go through. A config file that
 * changes the channel at a start resets it likewise.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { type Cluster, clients, redisEnv, startCluster, startNode } from '../admin/instances'

// One failure opens the breaker, for ten minutes: longer than the test, so only a reset closes it.
const ENV = { ...redisEnv(import.meta.path), BREAKER_THRESHOLD: '1', BREAKER_BASE_MS: '600000', BREAKER_MAX_MS: '600000' }

let primary: VendorMock
let fallback: VendorMock
let cluster: Cluster
let key: string
let pri: number

const config = (weight = 1): GatewayConfig => ({
	channels: [
		{ name: 'pri', type: 'openai', base_url: primary.url, api_key: 'up-pri', models: ['m'], model_map: { m: 'gpt-4o-mini' }, priority: 0, weight },
		{ name: 'fallback', type: 'openai', base_url: fallback.url, api_key: 'up-fb', models: ['m'], model_map: { m: 'gpt-4o-mini' }, priority: 1 },
	],
	models: [{ name: 'm', input_per_mtok: 1, output_per_mtok: 2 }],
})

beforeAll(async () => {
	primary = await startOpenAIMock({ apiKey: 'up-pri' })
	fallback = await startOpenAIMock({ apiKey: 'up-fb' })
	cluster = await startCluster(2, config(), ENV)
	key = (await cluster.account(100)).key
	const list = await cluster.nodes[0]!.admin('/api/channels')
	pri = (list.body.data as Array<{ id: number; name: string }>).find((c) => c.name === 'pri')!.id
}, 60_000)

afterAll(async () => {
	await cluster.close()
	await primary.stop()
	await fallback.stop()
})

const chats = (m: VendorMock) => m.requests.filter((r) => r.path.endsWith('/chat/completions')).length

/** Which mock served one chat request through instance `node`. */
async function servedBy(node: number): Promise<'primary' | 'fallback'> {
	const [p, f] = [chats(primary), chats(fallback)]
	const c = await clients(cluster.nodes[node]!, key).openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 })
	expect(c.choices[0]!.message.content).toContain('hi')
	const served = { primary: chats(primary) - p, fallback: chats(fallback) - f }
	// A failed try of the primary before the fallback answered counts as the fallback's.
	if (served.fallback === 1) return 'fallback'
	expect(served).toEqual({ primary: 1, fallback: 0 })
	return 'primary'
}

const breaker = async (node: number) => (await cluster.nodes[node]!.admin(`/api/channels/${pri}`)).body.health.state as string

/** The primary fails once through each instance: both open its breaker and route to the fallback, the primary untried. */
async function openEverywhere() {
	primary.fault = { kind: 'status', status: 500 }
	for (const node of [0, 1]) {
		expect(await servedBy(node)).toBe('fallback')
		expect(await breaker(node)).toBe('open')
	}
	primary.fault = undefined
	// Recovered, but still skipped while it cools down.
	const tried = chats(primary)
	for (const node of [0, 1]) expect(await servedBy(node)).toBe('fallback')
	expect(chats(primary)).toBe(tried)
}

describe('a channel edited or enabled again', () => {
	it('should close its breaker on every instance when edited through one of them', async () => {
		await openEverywhere()
		const r = await cluster.nodes[0]!.admin(`/api/channels/${pri}`, { method: 'PATCH', body: { api_key: 'up-pri' } })
		expect([r.status, r.body.health.state]).toEqual([200, 'closed'])
		expect(await breaker(1)).toBe('closed')
		expect(await servedBy(1)).toBe('primary')
		expect(await servedBy(0)).toBe('primary')
	})

	it('should close its breaker on every instance when enabled again through one of them', async () => {
		await openEverywhere()
		expect((await cluster.nodes[1]!.admin(`/api/channels/${pri}/disable`, { method: 'POST' })).status).toBe(200)
		expect((await cluster.nodes[1]!.admin(`/api/channels/${pri}/enable`, { method: 'POST' })).status).toBe(200)
		expect(await servedBy(0)).toBe('primary')
		expect(await servedBy(1)).toBe('primary')
	})

	it('should leave the breaker alone on a change that does not touch the channel (a price)', async () => {
		await openEverywhere()
		const models = await cluster.nodes[0]!.admin('/api/models')
		const m = (models.body.data as Array<{ id: number; name: string }>).find((x) => x.name === 'm')!
		expect((await cluster.nodes[0]!.admin(`/api/models/${m.id}`, { method: 'PATCH', body: { output_per_mtok: 3 } })).status).toBe(200)
		expect([await breaker(0), await breaker(1)]).toEqual(['open', 'open'])
		expect(await servedBy(1)).toBe('fallback')
	})

	it('should close it on every instance when a start applies a config that changes the channel', async () => {
		await openEverywhere()
		const restarted = await startNode(cluster.t, config(2), ENV, false)
		try {
			expect([await breaker(0), await breaker(1)]).toEqual(['closed', 'closed'])
			expect(await servedBy(0)).toBe('primary')
			expect(await servedBy(1)).toBe('primary')
		} finally {
			await restarted.stop()
		}
	})
})
