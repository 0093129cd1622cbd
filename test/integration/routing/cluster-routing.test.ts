/**
 * Routing as an operator sees it on two instances sharing one database and Redis, with several channels per model:
 * the priority and weight split measured over hundreds of requests (within a binomial tolerance), a disabled channel
 * never used, and a channel change made through one instance's management API followed by the other's very next
 * request (the catalog reload it hears through Redis is waited for, not raced).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { type Cluster, clients, redisEnv, startCluster } from '../admin/instances'

/** Channels of other models: a catalog of a realistic size, whose reload (a key decrypted per channel) takes a while. */
const FILLER = 60

let mocks: VendorMock[] = []
let cluster: Cluster
let key: string

const channel = (i: number, model: string, priority: number, weight: number, extra: Record<string, unknown> = {}) => ({
	name: `${model}-${i}`,
	type: 'openai' as const,
	base_url: mocks[i]!.url,
	api_key: `up-${i}`,
	models: [model],
	model_map: { [model]: 'gpt-4o-mini' },
	priority,
	weight,
	...extra,
})

beforeAll(async () => {
	for (let i = 0; i < 4; i++) mocks.push(await startOpenAIMock({ apiKey: `up-${i}` }))
	const config: GatewayConfig = {
		channels: [
			// `split`: weights 1 and 3 at priority 0, a priority-1 fallback, and a disabled channel of the heaviest weight.
			channel(0, 'split', 0, 1),
			channel(1, 'split', 0, 3),
			channel(2, 'split', 1, 1),
			channel(3, 'split', 0, 5, { enabled: false }),
			// `flip`: what the operator edits on one instance while the other serves.
			channel(0, 'flip', 0, 1),
			channel(1, 'flip', 1, 1),
			...Array.from({ length: FILLER }, (_, i) => ({ ...channel(2, `filler${i}`, 0, 1), name: `filler-${i}` })),
		],
		models: ['split', 'flip'].map((name) => ({ name, input_per_mtok: 1, output_per_mtok: 2 })),
	}
	cluster = await startCluster(2, config, redisEnv(import.meta.path))
	key = (await cluster.account(100)).key
}, 60_000)

afterAll(async () => {
	await cluster.close()
	for (const m of mocks) await m.stop()
})

const served = () => mocks.map((m) => m.requests.filter((r) => r.path.endsWith('/chat/completions')).length)
const resetMocks = () => mocks.forEach((m) => m.reset())

async function ask(node: number, model: string) {
	const c = await clients(cluster.nodes[node]!, key).openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 })
	expect(c.choices[0]!.message.content).toContain('hi')
}

describe('priority and weight', () => {
	it('should split equal-priority traffic by weight on both instances, never using the lower priority or a disabled channel', async () => {
		resetMocks()
		const n = 400
		for (let i = 0; i < n; i += 8) await Promise.all(Array.from({ length: 8 }, (_, j) => ask((i + j) % 2, 'split')))
		const [w1, w3, fallback, disabled] = served()
		expect(fallback).toBe(0)
		expect(disabled).toBe(0)
		expect(w1! + w3!).toBe(n)
		// Binomial(n, 1/4) for the weight-1 channel: mean 100, sd √(n·p·(1−p)) ≈ 8.7; 4.5 sd gives a false alarm once in
		// ~150,000 runs, while a split ignoring weights (mean 200) or inverting them (300) is far outside.
		const mean = n / 4
		const sd = Math.sqrt(n * 0.25 * 0.75)
		expect(Math.abs(w1! - mean)).toBeLessThan(4.5 * sd)
	})
})

describe('a channel change through one instance', () => {
	/** The `flip` channels' ids, as the management API lists them. */
	async function flipIds(): Promise<[number, number]> {
		const list = await cluster.nodes[0]!.admin('/api/channels')
		const id = (name: string) => (list.body.data as Array<{ id: number; name: string }>).find((c) => c.name === name)!.id
		return [id('flip-0'), id('flip-1')]
	}

	it("should hold on the other instance's very next request: disable, enable, priority swapped", async () => {
		const [first] = await flipIds()
		const misses: string[] = []
		for (let round = 0; round < 10; round++) {
			resetMocks()
			expect((await cluster.nodes[0]!.admin(`/api/channels/${first}/disable`, { method: 'POST' })).status).toBe(200)
			await ask(1, 'flip')
			if (served()[0] !== 0) misses.push(`round ${round}: disabled channel used`)

			resetMocks()
			expect((await cluster.nodes[0]!.admin(`/api/channels/${first}/enable`, { method: 'POST' })).status).toBe(200)
			await ask(1, 'flip')
			if (served()[0] !== 1) misses.push(`round ${round}: enabled priority-0 channel not used`)

			resetMocks()
			await cluster.nodes[0]!.admin(`/api/channels/${first}`, { method: 'PATCH', body: { priority: 2 } })
			await ask(1, 'flip')
			if (served()[1] !== 1) misses.push(`round ${round}: new priority not used`)
			await cluster.nodes[0]!.admin(`/api/channels/${first}`, { method: 'PATCH', body: { priority: 0 } })
		}
		expect(misses).toEqual([])
	})
})
