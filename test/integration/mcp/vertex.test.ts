/**
 * MCP servers asked of a Claude model on Google Vertex AI: Vertex has no MCP connector ("not currently available on
 * Amazon Bedrock or Vertex AI"), so the gateway is the MCP client, as for OpenAI and Gemini models: Vertex gets plain
 * tools and no `mcp_servers`, and the Anthropic client gets the MCP blocks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startVertexMock, type VertexMock } from '../../mocks'
import { ask } from './ask'
import { startMcpServer, type TestMcpServer } from './mcp-server'
import { server, SETUP_MS, shape, toolset } from './setup'

let app: TestApp
let vx: VertexMock
let mcp: TestMcpServer
beforeAll(async () => {
	vx = await startVertexMock({ project: 'proj-mcp', region: 'us-east5', expressKey: 'unused' })
	mcp = await startMcpServer({})
	app = await startTestApp({
		config: {
			channels: [{ name: 'vx', type: 'vertex', base_url: vx.url, api_key: vx.key.json, settings: { region: 'us-east5' }, models: ['claude-vx'], model_map: { 'claude-vx': 'claude-sonnet-4-5@20250929' } }],
			models: [{ name: 'claude-vx', input_per_mtok: 3, output_per_mtok: 15 }],
		},
		env: { FETCH_ALLOW: '127.0.0.1' },
	})
}, SETUP_MS)
afterAll(async () => {
	await app.close()
	await mcp.stop()
	await vx.stop()
})

describe('MCP on a vertex channel', () => {
	for (const stream of [false, true])
		it(`should run the MCP tools itself and send Vertex plain tools (${stream ? 'stream' : 'non-stream'})`, async () => {
			const a = await app.account(10)
			const client = new Anthropic({ apiKey: a.key, baseURL: app.url, maxRetries: 0 })
			const from = vx.requests.length
			const r = await ask(client, { model: 'claude-vx', messages: [{ role: 'user', content: '#tools What is the weather?' }], mcp_servers: [server(mcp.url)], tools: [toolset()] }, stream)
			expect(shape(r.content).at(-1)).toEqual({ type: 'text', text: 'Tool results: Sunny in Paris; Noon in Tokyo' })
			expect(r.content.filter((b) => b.type === 'mcp_tool_use').length).toBe(2)
			const sent = vx.requests.slice(from).map((q) => q.body as Record<string, unknown>)
			expect(sent).toHaveLength(2)
			for (const body of sent) {
				expect(body.mcp_servers).toBeUndefined()
				const names = (body.tools as { name: string; type?: string }[]).map((t) => t.name)
				expect(names).toContain('mcp__tools__get_weather')
				expect(JSON.stringify(body.tools)).not.toContain('mcp_toolset')
			}
		})
})

describe('count_tokens with MCP servers on a vertex channel', () => {
	it("should send Claude's counter on Vertex the MCP tools as plain tools, as the request sends them", async () => {
		const a = await app.account(10)
		const client = new Anthropic({ apiKey: a.key, baseURL: app.url, maxRetries: 0 })
		const from = vx.requests.length
		const params = { model: 'claude-vx', messages: [{ role: 'user', content: 'What is the weather?' }], mcp_servers: [server(mcp.url)], tools: [toolset()], betas: ['mcp-client-2025-11-20'] }
		const res = await client.beta.messages.countTokens(params as unknown as Anthropic.Beta.Messages.MessageCountTokensParams).withResponse()
		expect(res.response.headers.get('x-switchboard-counted-by')).toBe('vertex')
		const sent = vx.requests.slice(from).map((q) => ({ path: q.path, body: q.body as Record<string, unknown> }))
		expect(sent).toHaveLength(1)
		expect(sent[0]!.path).toContain('count-tokens:rawPredict')
		expect(sent[0]!.body.mcp_servers).toBeUndefined()
		expect(JSON.stringify(sent[0]!.body.tools)).not.toContain('mcp_toolset')
		expect((sent[0]!.body.tools as { name: string }[]).map((t) => t.name)).toContain('mcp__tools__get_weather')
	})
})
