/**
 * The gateway's MCP loop on a Claude channel (a chat-completions client naming `mcp_servers`): every round's cap is
 * chosen as the first round's is (src/relay/output-limit.ts `fitCap`). A client that names no cap gets the model's
 * maximum in every round, not the first alone; and a round whose prompt the tool results have grown gets a cap fitted
 * to the context window that prompt leaves, since Anthropic refuses a prompt plus `max_tokens` over the window (the
 * mock enforces it, counting words).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import type OpenAI from 'openai'
import { startAnthropicMock, type VendorMock } from '../../mocks'
import { PAGE, PAGES } from './mcp-server'
import { expectRounds, MODEL, type McpEnv, server, SETUP_MS, startMcpEnv } from './setup'

/** Claude Sonnet 4.5: 200,000 tokens of context and 64,000 of output, as the gateway's model table knows it. */
const WINDOW = 200_000
const MAX_OUTPUT = 64_000

let claude: VendorMock
let env: McpEnv
beforeAll(async () => {
	claude = await startAnthropicMock({ apiKey: 'up-anthropic' })
	env = await startMcpEnv({ anthropicUrl: claude.url, anthropicModel: 'claude-sonnet-4-5' })
}, SETUP_MS)
afterAll(async () => {
	await env.close()
	await claude.stop()
})
beforeEach(() => {
	env.mcp.reset()
	claude.reset()
})

/** The `max_tokens` of each round as Claude received them. */
const rounds = () => claude.requests.map((r) => ({ cap: (r.body as { max_tokens: number }).max_tokens }))

describe('MCP rounds on a Claude channel, the client naming no cap', () => {
	for (const stream of [false, true])
		it(`should send every round the model's maximum (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await env.account()
			const entry = { ...server(env.mcp.url), tool_configuration: { allowed_tools: ['get_weather', 'get_time'] } }
			const params = { model: MODEL.anthropic, messages: [{ role: 'user' as const, content: '#tools What is the weather?' }], mcp_servers: [entry] }
			let text = ''
			if (stream) {
				const s = await acct.openai.chat.completions.create({ ...params, stream: true } as OpenAI.Chat.ChatCompletionCreateParamsStreaming)
				for await (const c of s) text += c.choices[0]?.delta.content ?? ''
			} else {
				const r = await acct.openai.chat.completions.create(params as never)
				text = (r as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content
			}
			expect(text).toBe('Tool results: Sunny in Paris; Noon in Tokyo')
			expect(rounds().map((r) => r.cap)).toEqual([MAX_OUTPUT, MAX_OUTPUT])
			await expectRounds(env, acct, MODEL.anthropic, 2)
		})
})

describe('an MCP round whose prompt the tool results have grown', () => {
	it('should be sent a cap fitted to the context window left, and answered', async () => {
		const acct = await env.account()
		const entry = { ...server(env.mcp.url), tool_configuration: { allowed_tools: ['pages'] } }
		// Two calls of `pages`: 140,000 words of tool results, with which the 64,000 maximum would exceed the window.
		const r = await acct.openai.chat.completions.create({ model: MODEL.anthropic, messages: [{ role: 'user', content: '#tools Read both documents.' }], mcp_servers: [entry] } as never)
		const answer = (r as { choices: Array<{ message: { content: string }; finish_reason: string }> }).choices[0]!
		expect(env.mcp.calls.map((c) => c.name)).toEqual(['pages', 'pages'])
		const [first, second] = rounds()
		expect(first!.cap).toBe(MAX_OUTPUT)
		const results = 2 * PAGES * PAGE.split(' ').length
		expect(results).toBe(140_000)
		// The window holds the grown prompt plus the cap sent, and the answer still has most of the room left.
		expect(results + second!.cap).toBeLessThanOrEqual(WINDOW)
		expect(second!.cap).toBeLessThan(MAX_OUTPUT)
		expect(second!.cap).toBeGreaterThan(8_000)
		// The echo of the results is cut at that cap.
		expect(answer.finish_reason).toBe('length')
		const rows = await expectRounds(env, acct, MODEL.anthropic, 2)
		expect(rows[1]!.output_tokens).toBe(second!.cap)
	})
})
