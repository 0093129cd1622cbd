/**
 * An Anthropic client on an Anthropic channel keeps the vendor's own MCP connector (issue 8): `mcp_servers`, the
 * toolsets, the `anthropic-beta` header and MCP blocks of earlier turns reach the vendor untouched, and the vendor's
 * `mcp_tool_use` / `mcp_tool_result` blocks reach the client untouched, streamed or not. The gateway itself connects
 * to no MCP server. The upstream is a fake that answers as the MCP connector documents it.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import { ask } from './ask'
import { BETA, MODEL, type McpEnv, server, SETUP_MS, startMcpEnv, toolset, usageRows } from './setup'

type Seen = { headers: Record<string, string>; body: Record<string, unknown> }

const MESSAGE = {
	id: 'msg_01McpPassthrough',
	type: 'message',
	role: 'assistant',
	model: MODEL.anthropic,
	content: [
		{ type: 'text', text: 'Let me check.' },
		{ type: 'mcp_tool_use', id: 'mcptoolu_01A', name: 'get_weather', server_name: 'tools', input: { city: 'Paris' } },
		{ type: 'mcp_tool_result', tool_use_id: 'mcptoolu_01A', is_error: false, content: [{ type: 'text', text: 'Sunny in Paris' }] },
		{ type: 'text', text: 'It is sunny in Paris.' },
	],
	stop_reason: 'end_turn',
	stop_sequence: null,
	usage: { input_tokens: 120, output_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
}

/** The same answer as the MCP connector streams it. */
const FRAMES: Array<[string, Record<string, unknown>]> = [
	['message_start', { type: 'message_start', message: { ...MESSAGE, content: [], stop_reason: null, usage: { ...MESSAGE.usage, output_tokens: 1 } } }],
	['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
	['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Let me check.' } }],
	['content_block_stop', { type: 'content_block_stop', index: 0 }],
	['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'mcp_tool_use', id: 'mcptoolu_01A', name: 'get_weather', server_name: 'tools', input: {} } }],
	['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":' } }],
	['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } }],
	['content_block_stop', { type: 'content_block_stop', index: 1 }],
	['content_block_start', { type: 'content_block_start', index: 2, content_block: MESSAGE.content[2]! }],
	['content_block_stop', { type: 'content_block_stop', index: 2 }],
	['content_block_start', { type: 'content_block_start', index: 3, content_block: { type: 'text', text: '' } }],
	['content_block_delta', { type: 'content_block_delta', index: 3, delta: { type: 'text_delta', text: 'It is sunny in Paris.' } }],
	['content_block_stop', { type: 'content_block_stop', index: 3 }],
	['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 30 } }],
	['message_stop', { type: 'message_stop' }],
]

let seen: Seen[] = []
let upstream: ReturnType<typeof Bun.serve>
let env: McpEnv
beforeAll(async () => {
	upstream = Bun.serve({
		port: 0,
		hostname: '127.0.0.1',
		async fetch(req) {
			const body = (await req.json()) as Record<string, unknown>
			seen.push({ headers: Object.fromEntries(req.headers), body })
			if (!body.stream) return Response.json(MESSAGE)
			const sse = FRAMES.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join('')
			return new Response(sse, { headers: { 'content-type': 'text/event-stream' } })
		},
	})
	env = await startMcpEnv({ anthropicUrl: `http://127.0.0.1:${upstream.port}` })
}, SETUP_MS)
afterAll(async () => {
	await env.close()
	upstream.stop(true)
})
beforeEach(() => {
	seen = []
	env.mcp.reset()
})

/** Raw SSE events of a response body: [event, parsed data]. */
async function eventsOf(res: Response): Promise<Array<[string, unknown]>> {
	const text = await res.text()
	return text
		.split('\n\n')
		.filter((b) => b.trim() && !b.startsWith(':'))
		.map((b) => {
			const event = /^event: (.*)$/m.exec(b)?.[1] ?? ''
			return [event, JSON.parse(/^data: (.*)$/m.exec(b)?.[1] ?? 'null')] as [string, unknown]
		})
		.filter(([e]) => e !== 'ping')
}

const request = (stream: boolean) => ({
	model: MODEL.anthropic,
	max_tokens: 512,
	stream,
	mcp_servers: [server(env.mcp.url)],
	tools: [toolset('tools', ['get_weather'])],
	messages: [
		{ role: 'user', content: 'Weather in Rome?' },
		{
			role: 'assistant',
			content: [
				{ type: 'mcp_tool_use', id: 'mcptoolu_00Z', name: 'get_weather', server_name: 'tools', input: { city: 'Rome' } },
				{ type: 'mcp_tool_result', tool_use_id: 'mcptoolu_00Z', is_error: false, content: [{ type: 'text', text: 'Rainy in Rome' }] },
				{ type: 'text', text: 'Rainy.' },
			],
		},
		{ role: 'user', content: 'And in Paris?' },
	],
})

describe('Anthropic channel: the MCP connector passes through', () => {
	for (const stream of [false, true])
		it(`should relay the MCP request and answer untouched (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await env.account()
			const body = request(stream)
			const res = await fetch(`${env.app.url}/v1/messages`, {
				method: 'POST',
				headers: { 'content-type': 'application/json', 'x-api-key': acct.key, 'anthropic-version': '2023-06-01', 'anthropic-beta': BETA },
				body: JSON.stringify(body),
			})
			expect(res.status).toBe(200)
			if (stream) expect(await eventsOf(res)).toEqual(FRAMES)
			else expect(await res.json()).toEqual(MESSAGE)
			// The vendor got the body as the client sent it (with the server token it needs) and the beta header.
			expect(seen).toHaveLength(1)
			expect(seen[0]!.body).toEqual(body)
			expect(seen[0]!.headers['anthropic-beta']).toBe(BETA)
			// The gateway did not act as an MCP client.
			expect(env.mcp.auth).toEqual([])
			const rows = await usageRows(env, acct.accountId)
			expect(rows.map((r) => [r.input_tokens, r.output_tokens, r.end_reason])).toEqual([[120, 30, 'ok']])
		})

	it('should give the Anthropic SDK the MCP blocks of a streamed answer', async () => {
		const acct = await env.account()
		const a = await ask(acct.anthropic, { model: MODEL.anthropic, messages: [{ role: 'user', content: 'Weather in Paris?' }], mcp_servers: [server(env.mcp.url)], tools: [toolset()] }, true)
		expect(a.content).toEqual(MESSAGE.content)
		expect(seen[0]!.headers['anthropic-beta']).toBe(BETA)
	})
})
