/**
 * A key changed through one instance's management API, then used on the other at once, as an operator (or a script)
 * does: re-enabled, its models narrowed and widened again. The other instance has the key cached and holds no lease of
 * its account (its leases went back, as they do after LEASE_IDLE_MS), so nothing else makes the change wait for it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { type Cluster, clients, redisEnv, startCluster } from './instances'

let upstream: VendorMock
let cluster: Cluster
let key: string
let tokenId: number

beforeAll(async () => {
	upstream = await startOpenAIMock({ apiKey: 'up-o' })
	cluster = await startCluster(
		2,
		{
			channels: [{ name: 'o', type: 'openai', base_url: upstream.url, api_key: 'up-o', models: ['kc-gpt', 'kc-other'], model_map: { 'kc-gpt': 'gpt-4o-mini', 'kc-other': 'gpt-4o-mini' } }],
			models: ['kc-gpt', 'kc-other'].map((name) => ({ name, input_per_mtok: 1, output_per_mtok: 2 })),
		},
		{ ...redisEnv(import.meta.path), LEASE_IDLE_MS: '1' },
	)
	;({ key, tokenId } = await cluster.account(10))
}, 60_000)

afterAll(async () => {
	await cluster.close()
	await upstream.stop()
})

/** The outcome of one chat request on instance `node`: 'ok' or the error's code. */
async function outcome(node: number): Promise<string> {
	return clients(cluster.nodes[node]!, key)
		.openai.chat.completions.create({ model: 'kc-gpt', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 })
		.then(
			() => 'ok',
			(e: InstanceType<typeof OpenAI.APIError>) => String(e.code ?? e.status),
		)
}

const patch = (body: Record<string, unknown>) => cluster.nodes[0]!.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body })

describe('a key changed through one instance', () => {
	it("should hold on the other instance's very next request: re-enabled, models narrowed, models widened", async () => {
		const misses: string[] = []
		for (let round = 0; round < 10; round++) {
			expect(await outcome(1)).toBe('ok') // cached there
			await Bun.sleep(20) // its lease goes back (LEASE_IDLE_MS)
			expect((await patch({ status: 'disabled' })).status).toBe(200)
			expect((await patch({ status: 'active' })).status).toBe(200)
			const enabled = await outcome(1)
			if (enabled !== 'ok') misses.push(`round ${round}: re-enabled key refused (${enabled})`)

			await Bun.sleep(20)
			expect((await patch({ allowed_models: ['kc-other'] })).status).toBe(200)
			const narrowed = await outcome(1)
			if (narrowed !== 'model_not_allowed') misses.push(`round ${round}: narrowed key answered ${narrowed}`)
			expect((await patch({ allowed_models: null })).status).toBe(200)
			const widened = await outcome(1)
			if (widened !== 'ok') misses.push(`round ${round}: widened key answered ${widened}`)
		}
		expect(misses).toEqual([])
	})
})
