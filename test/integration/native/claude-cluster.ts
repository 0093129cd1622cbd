/**
 * Two gateway instances on one database, with one Claude model (`qa-claude`, served by the Anthropic mock as
 * `claude-sonnet-5`): for the Responses state that must hold across instances (stored items, conversation locks).
 * @module
 */
import OpenAI from 'openai'
import { startAnthropicMock, type VendorMock } from '../../mocks'
import { type Cluster, startCluster } from '../admin/instances'

export type ClaudeCluster = { mock: VendorMock; c: Cluster; client(node: number, key: string): OpenAI; close(): Promise<void> }

export async function startClaudeCluster(): Promise<ClaudeCluster> {
	const mock = await startAnthropicMock({ apiKey: 'up-a' })
	const c = await startCluster(2, {
		channels: [{ name: 'a', type: 'anthropic', base_url: mock.url, api_key: 'up-a', models: ['qa-claude'], model_map: { 'qa-claude': 'claude-sonnet-5' } }],
		models: [{ name: 'qa-claude', input_per_mtok: 1, output_per_mtok: 2 }],
	})
	return {
		mock,
		c,
		client: (node, key) => new OpenAI({ apiKey: key, baseURL: `${c.nodes[node]!.url}/v1`, maxRetries: 0 }),
		async close() {
			await c.close()
			await mock.stop()
		},
	}
}
