/**
 * MCP servers asked of a Claude model on Amazon Bedrock: Bedrock has no MCP connector ("not currently available on
 * Amazon Bedrock"), so the gateway is the MCP client, as for OpenAI and Gemini models: Bedrock gets plain tools and
 * no `mcp_servers`, and the Anthropic client gets the MCP blocks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { startTestApp, type TestApp } from '../../helpers/app'
import { type BedrockMock, startBedrockMock } from '../../mocks'
import { ask } from './ask'
import { startMcpServer, type TestMcpServer } from './mcp-server'
import { server, SETUP_MS, shape, toolset } from './setup'

const PROFILE = 'us.anthropic.claude-sonnet-4-6-v1:0'
const KEY = 'ABSKbWNwLWJlZHJvY2sta2V5'
let app: TestApp
let br: BedrockMock
let mcp: TestMcpServer
beforeAll(async () => {
	br = await startBedrockMock({ apiKey: KEY, iam: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'secret' }, region: 'us-east-1', models: [PROFILE] })
	mcp = await startMcpServer({})
	app = await startTestApp({
		config: {
			channels: [{ name: 'br', type: 'bedrock', base_url: br.url, api_key: KEY, models: ['claude-br'], model_map: { 'claude-br': PROFILE } }],
			models: [{ name: 'claude-br', input_per_mtok: 3, output_per_mtok: 15 }],
		},
		env: { FETCH_ALLOW: '127.0.0.1' },
	})
}, SETUP_MS)
afterAll(async () => {
	await app.close()
	await mcp.stop()
	await br.stop()
})

describe('MCP on a bedrock channel', () => {
	for (const stream of [false, true])
		it(`should run the MCP tools itself and send Bedrock plain tools (${stream ? 'stream' : 'non-stream'})`, async () => {
			const a = await app.account(10)
			const client = new Anthropic({ apiKey: a.key, baseURL: app.url, maxRetries: 0 })
			const from = br.requests.length
			const r = await ask(client, { model: 'claude-br', messages: [{ role: 'user', content: '#tools What is the weather?' }], mcp_servers: [server(mcp.url)], tools: [toolset()] }, stream)
			expect(shape(r.content).at(-1)).toEqual({ type: 'text', text: 'Tool results: Sunny in Paris; Noon in Tokyo' })
			expect(r.content.filter((b) => b.type === 'mcp_tool_use').length).toBe(2)
			const sent = br.requests.slice(from).map((q) => q.body as Record<string, unknown>)
			expect(sent).toHaveLength(2)
			for (const body of sent) {
				expect(body.mcp_servers).toBeUndefined()
				expect(body.anthropic_beta).toBeUndefined()
				const names = (body.tools as { name: string; type?: string }[]).map((t) => t.name)
				expect(names).toContain('mcp__tools__get_weather')
				expect(names).toContain('mcp__tools__get_time')
				expect(JSON.stringify(body.tools)).not.toContain('mcp_toolset')
			}
		})
})
