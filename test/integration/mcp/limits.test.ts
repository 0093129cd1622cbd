/**
 * Bounds and refusals of the gateway's MCP client (issue 8): the round limit (the answer stops with pause_turn and
 * can be resumed), the per-call timeout and the response size cap (both become is_error results), the outbound guard
 * (loopback refused without the allow-list), and 400s naming a bad `mcp_servers` or toolset entry.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import { ask } from './ask'
import { BETA, expectRounds, failedAsSeen, MODEL, type McpEnv, OLD_BETA, server, SETUP_MS, shape, startMcpEnv, toolset, UPS, usageRows } from './setup'

let bounded: McpEnv
let guarded: McpEnv
beforeAll(async () => {
	bounded = await startMcpEnv({ env: { MCP_MAX_ROUNDS: '1', MCP_CALL_TIMEOUT_MS: '500', MCP_MAX_RESPONSE_BYTES: '10000' } })
	guarded = await startMcpEnv({ env: { FETCH_ALLOW: '' } })
}, SETUP_MS)
afterAll(async () => {
	await bounded.close()
	await guarded.close()
})
beforeEach(() => {
	bounded.mcp.reset()
	guarded.mcp.reset()
})

const Q = '#tools What is the weather?'

for (const up of UPS)
	for (const stream of [false, true])
		describe(`MCP bounds (${up} upstream, ${stream ? 'stream' : 'non-stream'})`, () => {
			it('should stop at the round limit with pause_turn after running the last round’s calls, and resume from the answer', async () => {
				const acct = await bounded.account()
				const params = { model: MODEL[up], mcp_servers: [server(bounded.mcp.url)], tools: [toolset()] }
				const a = await ask(acct.anthropic, { ...params, messages: [{ role: 'user', content: Q }] }, stream)
				expect(shape(a.content)).toEqual([
					{ type: 'mcp_tool_use', server_name: 'tools', name: 'get_weather', input: { city: 'Paris' } },
					{ type: 'mcp_tool_use', server_name: 'tools', name: 'get_time', input: { city: 'Tokyo' } },
					{ type: 'mcp_tool_result', is_error: false, text: 'Sunny in Paris' },
					{ type: 'mcp_tool_result', is_error: false, text: 'Noon in Tokyo' },
				])
				expect(a.stop_reason).toBe('pause_turn')
				await expectRounds(bounded, acct, MODEL[up], 1)
				// pause_turn: the client sends the answer back as it is and the model goes on from the results.
				const b = await ask(acct.anthropic, { ...params, messages: [{ role: 'user', content: Q }, { role: 'assistant', content: a.content }] }, stream)
				expect(shape(b.content)).toEqual([{ type: 'text', text: 'Tool results: Sunny in Paris; Noon in Tokyo' }])
				expect(b.stop_reason).toBe('end_turn')
				expect(bounded.mcp.calls).toHaveLength(2)
			})

			it('should turn a call over the time limit and an answer over the size cap into is_error results', async () => {
				const acct = await bounded.account()
				const a = await ask(acct.anthropic, { model: MODEL[up], messages: [{ role: 'user', content: Q }], mcp_servers: [server(bounded.mcp.url)], tools: [toolset('tools', ['big', 'slow'])] }, stream)
				const results = a.content.filter((b) => b.type === 'mcp_tool_result').map((b) => ({ is_error: b.is_error, text: (b.content as Array<{ text: string }>)[0]!.text }))
				expect(results).toHaveLength(2)
				expect(results[0]!.is_error).toBe(true)
				expect(results[0]!.text).toContain('exceeds 10000 bytes')
				expect(results[1]!.is_error).toBe(true)
				expect(results[1]!.text).toContain('timed out')
			})

			it('should refuse a loopback MCP server without the allow-list, as a result the model sees', async () => {
				const acct = await guarded.account()
				const a = await ask(acct.anthropic, { model: MODEL[up], messages: [{ role: 'user', content: Q }], mcp_servers: [server(guarded.mcp.url)], tools: [toolset()] }, stream)
				expect(a.content.map((b) => b.type)).toEqual(['mcp_tool_use', 'mcp_tool_result', 'text'])
				const text = (a.content[1]!.content as Array<{ text: string }>)[0]!.text
				expect(a.content[1]!.is_error).toBe(true)
				expect(text).toContain('private or loopback address')
				expect(a.content[2]!.text).toBe(`Tool results: ${failedAsSeen(up, text)}`)
				// Nothing reached the server.
				expect(guarded.mcp.auth).toEqual([])
			})
		})

/** A raw call, to see the error body exactly. */
async function post(env: McpEnv, key: string, body: Record<string, unknown>, beta = BETA) {
	const res = await fetch(`${env.app.url}/v1/messages`, {
		method: 'POST',
		headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01', 'anthropic-beta': beta },
		body: JSON.stringify({ model: MODEL.openai, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], ...body }),
	})
	return { status: res.status, body: (await res.json()) as { type: string; error: { type: string; message: string } } }
}

describe('MCP request validation', () => {
	const url = () => bounded.mcp.url
	const cases: Array<[string, () => Record<string, unknown>, string, string?]> = [
		['mcp_servers is not a list', () => ({ mcp_servers: { url: url() } }), 'mcp_servers: Input should be a valid list'],
		['an entry has no url', () => ({ mcp_servers: [{ type: 'url', name: 'tools' }], tools: [toolset()] }), 'mcp_servers.0.url: Field required'],
		['an entry is not of type url', () => ({ mcp_servers: [{ ...server(url()), type: 'sse' }], tools: [toolset()] }), "mcp_servers.0.type: Input should be 'url'"],
		['a url is not http(s)', () => ({ mcp_servers: [server('ftp://example.com/mcp')], tools: [toolset()] }), 'mcp_servers.0.url: must be an http(s) URL'],
		['two servers share a name', () => ({ mcp_servers: [server(url()), server(url())], tools: [toolset()] }), 'mcp_servers.1.name: MCP server name "tools" is used more than once'],
		['a toolset names no server', () => ({ mcp_servers: [server(url())], tools: [toolset(), toolset('nope')] }), 'tools.1.mcp_server_name: no mcp_servers entry is named "nope"'],
		['a server has no toolset', () => ({ mcp_servers: [server(url())] }), 'mcp_servers.0: MCP server "tools" must be referenced by exactly one mcp_toolset in tools'],
		['a toolset config is not an object', () => ({ mcp_servers: [server(url())], tools: [{ ...toolset(), configs: { get_weather: true } }] }), 'tools.0.configs.get_weather: Input should be a valid dictionary'],
		['tool_configuration comes with the current beta', () => ({ mcp_servers: [{ ...server(url()), tool_configuration: { enabled: true } }], tools: [toolset()] }), 'mcp_servers.0.tool_configuration: not supported'],
		['an mcp_toolset comes with the deprecated beta', () => ({ mcp_servers: [server(url())], tools: [toolset()] }), 'tools.0: mcp_toolset requires the anthropic-beta header mcp-client-2025-11-20', OLD_BETA],
	]
	for (const [what, body, message, beta] of cases)
		it(`should answer 400 naming the entry when ${what}`, async () => {
			const acct = await bounded.account()
			const before = bounded.vendors.openai.requests.length
			const r = await post(bounded, acct.key, body(), beta)
			expect(r.status).toBe(400)
			expect(r.body.type).toBe('error')
			expect(r.body.error.type).toBe('invalid_request_error')
			expect(r.body.error.message).toStartWith(message)
			expect(bounded.vendors.openai.requests.length).toBe(before)
			expect(bounded.mcp.auth).toEqual([])
			expect(await bounded.app.balance(acct.accountId)).toBe(acct.balance)
		})

	it('should take the tool_configuration of the deprecated beta (allowed_tools)', async () => {
		const acct = await bounded.account()
		const entry = { ...server(bounded.mcp.url), tool_configuration: { enabled: true, allowed_tools: ['get_time'] } }
		const a = await ask(acct.anthropic, { model: MODEL.openai, messages: [{ role: 'user', content: Q }], mcp_servers: [entry] }, false, [OLD_BETA])
		// Only get_time is offered, so the mock's two calls both go to it.
		expect(a.content.filter((b) => b.type === 'mcp_tool_use').map((b) => [b.name, b.input])).toEqual([
			['get_time', { city: 'Paris' }],
			['get_time', { city: 'Tokyo' }],
		])
		expect((await usageRows(bounded, acct.accountId)).length).toBe(1)
	})
})
