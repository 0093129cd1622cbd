/**
 * MCP servers asked of a Claude model on Amazon Bedrock: Bedrock has no MCP connector ("not currently available on
 * Amazon Bedrock"), so the gateway is the MCP client, as for OpenAI and Gemini models: Bedrock gets plain tools and
 * no `mcp_servers`, and the Anthropic client gets the MCP blocks. A model served over Converse (Amazon Nova) takes
 * images as bytes only: the gateway fetches an image URL for it in the MCP loop as on the plain chat path. An OpenAI
 * client's `prompt_cache_key` has every round cache its prompt (relay/auto-cache.ts), as the relay's one call does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { startTestApp, type TestApp } from '../../helpers/app'
import { type BedrockMock, startBedrockMock } from '../../mocks'
import { ask } from './ask'
import { startMcpServer, type TestMcpServer } from './mcp-server'
import { server, SETUP_MS, shape, toolset } from './setup'

const PROFILE = 'us.anthropic.claude-sonnet-4-6-v1:0'
const NOVA_ID = 'us.amazon.nova-pro-v1:0'
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')
const KEY = 'ABSKbWNwLWJlZHJvY2sta2V5'
let app: TestApp
let br: BedrockMock
let mcp: TestMcpServer
/** Serves the PNG at any path, as an image host would. */
let images: ReturnType<typeof Bun.serve>
beforeAll(async () => {
	br = await startBedrockMock({ apiKey: KEY, iam: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'secret' }, region: 'us-east-1', models: [PROFILE, NOVA_ID] })
	mcp = await startMcpServer({})
	images = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response(PNG, { headers: { 'content-type': 'image/png' } }) })
	app = await startTestApp({
		config: {
			channels: [{ name: 'br', type: 'bedrock', base_url: br.url, api_key: KEY, models: ['claude-br', 'nova-br'], model_map: { 'claude-br': PROFILE, 'nova-br': NOVA_ID } }],
			models: [
				{ name: 'claude-br', input_per_mtok: 3, output_per_mtok: 15 },
				{ name: 'nova-br', input_per_mtok: 0.8, output_per_mtok: 3.2 },
			],
		},
		env: { FETCH_ALLOW: '127.0.0.1' },
	})
}, SETUP_MS)
afterAll(async () => {
	await app.close()
	await mcp.stop()
	await br.stop()
	await images.stop(true)
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

	it('should fetch an image URL for a Converse model and send its bytes, MCP tools beside it', async () => {
		const a = await app.account(10)
		const client = new Anthropic({ apiKey: a.key, baseURL: app.url, maxRetries: 0 })
		const from = br.requests.length
		const content = [
			{ type: 'image' as const, source: { type: 'url' as const, url: `http://127.0.0.1:${images.port}/cat.png` } },
			{ type: 'text' as const, text: 'What is this?' },
		]
		const r = await ask(client, { model: 'nova-br', messages: [{ role: 'user', content }], mcp_servers: [server(mcp.url)], tools: [toolset()] }, false)
		expect(shape(r.content).at(-1)).toEqual({ type: 'text', text: 'I see 1 image. Hello! You said: What is this?' })
		const body = br.requests[from]!.body as { messages: Array<{ content: unknown[] }>; toolConfig: { tools: Array<{ toolSpec: { name: string } }> } }
		expect(body.messages[0]!.content[0]).toEqual({ image: { format: 'png', source: { bytes: PNG.toString('base64') } } })
		expect(body.toolConfig.tools.map((t) => t.toolSpec.name)).toContain('mcp__tools__get_weather')
	})

	it("should have every round of an OpenAI client's request with prompt_cache_key cache its prompt, and none without it", async () => {
		const a = await app.account(10)
		const client = new OpenAI({ apiKey: a.key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		const ephemeral = { type: 'ephemeral' }
		const cachePoint = { cachePoint: { type: 'default' } }
		for (const hint of [{ prompt_cache_key: 'mcp-session' }, {}])
			for (const model of ['claude-br', 'nova-br']) {
				const from = br.requests.length
				const r = await client.chat.completions.create({ model, messages: [{ role: 'user', content: '#tools What is the weather?' }], mcp_servers: [server(mcp.url)], ...hint } as never)
				expect(r.choices[0]!.message.content).toBe('Tool results: Sunny in Paris; Noon in Tokyo')
				const rounds = br.requests.slice(from).map((q) => q.body as { messages: Array<{ role: string; content: Array<Record<string, unknown>> }> })
				expect(rounds).toHaveLength(2)
				for (const [i, body] of rounds.entries()) {
					if (!('prompt_cache_key' in hint)) {
						expect(JSON.stringify(body)).not.toMatch(/cache_control|cachePoint/)
						continue
					}
					const lastBlocks = body.messages.map((m) => m.content.at(-1))
					if (model === 'claude-br') {
						// InvokeModel: the last message's last block (the second round's: the last tool result).
						expect(lastBlocks.at(-1)).toMatchObject({ type: i ? 'tool_result' : 'text', cache_control: ephemeral })
						expect(JSON.stringify(body).match(/cache_control/g)).toHaveLength(1)
					} else {
						// Converse: after the last message, and the second round also where the first round's point was.
						expect(lastBlocks).toEqual(i ? [cachePoint, lastBlocks[1], cachePoint] : [cachePoint])
						expect(body.messages.at(-1)!.content.at(-2)).toHaveProperty(i ? 'toolResult' : 'text')
					}
				}
			}
	})
})
