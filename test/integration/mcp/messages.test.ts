/**
 * MCP through the messages protocol for models that have no MCP connector (issue 8): the Anthropic SDK asks for a
 * model on the OpenAI or Gemini mock with `mcp_servers` and an `mcp_toolset`; the gateway lists the test server's
 * tools, runs the ones the model calls, feeds the results back and answers with the MCP blocks in order, streamed
 * or not, each model round billed through the ledger.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import { ask } from './ask'
import { eventually, expectPaired, expectRounds, failedAsSeen, MODEL, type McpEnv, server, SETUP_MS, shape, startMcpEnv, toolset, UPS, usageRows } from './setup'

let env: McpEnv
beforeAll(async () => {
	env = await startMcpEnv()
}, SETUP_MS)
afterAll(() => env.close())
beforeEach(() => env.mcp.reset())

const Q = '#tools What is the weather?'
const use = (name: string, city: string) => ({ type: 'mcp_tool_use', server_name: 'tools', name, input: { city } })
const result = (text: string, isError = false) => ({ type: 'mcp_tool_result', is_error: isError, text })

/** Bodies the vendor received since `from`, as text. */
const sentSince = (up: 'openai' | 'gemini', from: number) => env.vendors[up].requests.slice(from).map((r) => JSON.stringify(r.body))

for (const up of UPS)
	for (const stream of [false, true])
		describe(`MCP loop (${up} upstream, ${stream ? 'stream' : 'non-stream'})`, () => {
			it('should run the MCP tools the model calls and answer with mcp_tool_use and mcp_tool_result blocks in order', async () => {
				const acct = await env.account()
				const from = env.vendors[up].requests.length
				const a = await ask(acct.anthropic, { model: MODEL[up], messages: [{ role: 'user', content: Q }], mcp_servers: [server(env.mcp.url)], tools: [toolset()] }, stream)
				expect(shape(a.content)).toEqual([
					use('get_weather', 'Paris'),
					use('get_time', 'Tokyo'),
					result('Sunny in Paris'),
					result('Noon in Tokyo'),
					{ type: 'text', text: 'Tool results: Sunny in Paris; Noon in Tokyo' },
				])
				expectPaired(a.content)
				expect(a.stop_reason).toBe('end_turn')
				expect(env.mcp.calls).toEqual([
					{ name: 'get_weather', args: { city: 'Paris' } },
					{ name: 'get_time', args: { city: 'Tokyo' } },
				])
				// Two model rounds: the second one carried the tool results.
				const sent = sentSince(up, from)
				expect(sent).toHaveLength(2)
				expect(sent[1]).toContain('Sunny in Paris')
				expect(sent[1]).toContain('Noon in Tokyo')
				if (up === 'gemini') {
					// Gemini pairs each functionResponse with its functionCall by name.
					type Content = { parts: Array<{ functionCall?: { name: string }; functionResponse?: { name: string } }> }
					const parts = (JSON.parse(sent[1]!).contents as Content[]).flatMap((c) => c.parts)
					const calls = parts.flatMap((p) => (p.functionCall ? [p.functionCall.name] : []))
					expect(calls).toEqual(['mcp__tools__get_weather', 'mcp__tools__get_time'])
					expect(parts.flatMap((p) => (p.functionResponse ? [p.functionResponse.name] : []))).toEqual(calls)
				}
				// The session is ended (DELETE) once the answer is complete.
				await eventually(() => env.mcp.opened > 0 && env.mcp.closed === env.mcp.opened)
				if (stream) {
					// As Anthropic streams them: mcp_tool_use opens with input {} and grows by input_json_delta;
					// mcp_tool_result arrives whole in content_block_start.
					const starts = a.events!.filter((e) => e.type === 'content_block_start').map((e) => e.content_block)
					expect(starts[0]).toMatchObject({ type: 'mcp_tool_use', name: 'get_weather', server_name: 'tools', input: {} })
					expect(a.events!.some((e) => e.type === 'content_block_delta' && e.index === 0 && e.delta.type === 'input_json_delta')).toBe(true)
					expect(starts[2]).toMatchObject({ type: 'mcp_tool_result', is_error: false, content: [{ type: 'text', text: 'Sunny in Paris' }] })
				}
			})

			it('should bill each model round through the ledger and report their summed usage', async () => {
				const acct = await env.account()
				const a = await ask(acct.anthropic, { model: MODEL[up], messages: [{ role: 'user', content: Q }], mcp_servers: [server(env.mcp.url)], tools: [toolset()] }, stream)
				const rows = await expectRounds(env, acct, MODEL[up], 2)
				expect(rows.every((r) => r.stream === stream)).toBe(true)
				expect(a.usage.input_tokens).toBe(rows[0]!.input_tokens + rows[1]!.input_tokens)
				expect(a.usage.output_tokens).toBe(rows[0]!.output_tokens + rows[1]!.output_tokens)
				// The mock counts words: round 1 reads the question and makes two calls (2 tokens each).
				expect(rows[0]!).toMatchObject({ input_tokens: 5, output_tokens: 4 })
				expect(rows[1]!.output_tokens).toBe(8)
			})

			it('should send the authorization token to the MCP server and to nobody else', async () => {
				const acct = await env.account()
				const from = env.vendors[up].requests.length
				const a = await ask(acct.anthropic, { model: MODEL[up], messages: [{ role: 'user', content: Q }], mcp_servers: [server(env.mcp.url)], tools: [toolset()] }, stream)
				expect(env.mcp.auth.length).toBeGreaterThan(0)
				expect(env.mcp.auth.every((h) => h === 'Bearer mcp-secret-token')).toBe(true)
				for (const body of sentSince(up, from)) {
					expect(body).not.toContain('mcp-secret-token')
					expect(body).not.toContain('mcp_servers')
					expect(body).not.toContain('mcp_toolset')
				}
				expect(JSON.stringify(a)).not.toContain('mcp-secret-token')
			})

			it('should give a failing tool to the model as an mcp_tool_result with is_error', async () => {
				const acct = await env.account()
				const a = await ask(acct.anthropic, { model: MODEL[up], messages: [{ role: 'user', content: Q }], mcp_servers: [server(env.mcp.url)], tools: [toolset('tools', ['get_weather', 'explode'])] }, stream)
				expect(shape(a.content)).toEqual([
					use('get_weather', 'Paris'),
					use('explode', 'Tokyo'),
					result('Sunny in Paris'),
					result('boom for Tokyo', true),
					{ type: 'text', text: `Tool results: Sunny in Paris; ${failedAsSeen(up, 'boom for Tokyo')}` },
				])
				expect(a.stop_reason).toBe('end_turn')
			})

			it('should answer with an is_error result the model sees when a server cannot be reached', async () => {
				const acct = await env.account()
				const a = await ask(acct.anthropic, { model: MODEL[up], messages: [{ role: 'user', content: Q }], mcp_servers: [server('http://127.0.0.1:1/mcp', 'down')], tools: [toolset('down')] }, stream)
				expect(a.content.map((b) => b.type)).toEqual(['mcp_tool_use', 'mcp_tool_result', 'text'])
				expect(a.content[0]).toMatchObject({ server_name: 'down', name: 'tools/list', input: {} })
				expect(a.content[1]).toMatchObject({ tool_use_id: a.content[0]!.id, is_error: true })
				const error = (a.content[1]!.content as Array<{ text: string }>)[0]!.text
				expect(error).toStartWith('cannot use MCP server "down"')
				// The model got the error as a tool result and answered from it.
				expect(a.content[2]).toEqual({ type: 'text', text: `Tool results: ${failedAsSeen(up, error)}` })
				await expectRounds(env, acct, MODEL[up], 1)
			})

			it("should return a call of the caller's own tool with tool_use after running the MCP calls of that turn, and continue from the client's result", async () => {
				const acct = await env.account()
				const lookup = { name: 'lookup', description: 'Look a city up', input_schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } }
				const params = { model: MODEL[up], mcp_servers: [server(env.mcp.url)], tools: [lookup, toolset()] }
				const first = await ask(acct.anthropic, { ...params, messages: [{ role: 'user', content: Q }] }, stream)
				expect(shape(first.content)).toEqual([{ type: 'tool_use', name: 'lookup', input: { q: 'Paris' } }, use('get_weather', 'Tokyo'), result('Sunny in Tokyo')])
				expect(first.stop_reason).toBe('tool_use')
				const call = first.content[0]!
				const next = await ask(
					acct.anthropic,
					{
						...params,
						messages: [
							{ role: 'user', content: Q },
							{ role: 'assistant', content: first.content },
							{ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Found Paris' }] },
						],
					},
					stream,
				)
				// The model saw the MCP call of the earlier turn with its result, then the caller's.
				expect(shape(next.content)).toEqual([{ type: 'text', text: 'Tool results: Sunny in Tokyo; Found Paris' }])
				expect(next.stop_reason).toBe('end_turn')
				expect(env.mcp.calls).toEqual([{ name: 'get_weather', args: { city: 'Tokyo' } }])
				expect((await usageRows(env, acct.accountId)).length).toBe(2)
			})
		})

describe('MCP loop failures', () => {
	const body = (stream: boolean) => ({ model: MODEL.openai, max_tokens: 256, stream, messages: [{ role: 'user', content: Q }], mcp_servers: [server(env.mcp.url)], tools: [toolset()] })
	const post = (key: string, b: Record<string, unknown>) =>
		fetch(`${env.app.url}/v1/messages`, {
			method: 'POST',
			headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'mcp-client-2025-11-20' },
			body: JSON.stringify(b),
		})

	it("should answer the upstream's error, charge nothing and close the sessions when round 1 fails", async () => {
		const acct = await env.account()
		env.vendors.openai.faultOnce = { kind: 'status', status: 400 }
		const res = await post(acct.key, body(false))
		expect(res.status).toBe(400)
		expect(((await res.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error')
		await eventually(() => env.mcp.opened > 0 && env.mcp.closed === env.mcp.opened)
		expect(env.mcp.calls).toEqual([])
		const rows = await usageRows(env, acct.accountId)
		expect(rows.map((r) => [r.status, r.cost])).toEqual([[400, 0]])
		expect(await env.app.balance(acct.accountId)).toBe(acct.balance)
	})

	for (const stream of [false, true])
		it(`should keep round 1 billed and end with the error when a later round fails (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await env.account()
			// Between the rounds (while the tools run), make the vendor refuse the next call.
			env.mcp.onCall = () => {
				env.vendors.openai.faultOnce = { kind: 'status', status: 400 }
			}
			const res = await post(acct.key, body(stream))
			if (!stream) {
				expect(res.status).toBe(400)
			} else {
				expect(res.status).toBe(200)
				const text = await res.text()
				expect(text).toContain('"type":"mcp_tool_result"')
				expect(text.trimEnd()).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"invalid_request_error"[^\n]*$/)
			}
			const rows = await usageRows(env, acct.accountId)
			expect(rows.map((r) => [r.request_id.replace(/^req_\w+/, 'id'), r.status, r.end_reason])).toEqual([
				['id', 200, 'ok'],
				['id:r2', 400, 'error'],
			])
			expect(rows[0]!.cost).toBeGreaterThan(0)
			expect(rows[1]!.cost).toBe(0)
			await eventually(() => env.mcp.closed === env.mcp.opened)
		})

	it('should bill the finished round, start no other and end the sessions when the client leaves while tools run', async () => {
		const acct = await env.account()
		const before = env.vendors.openai.requests.length
		const running = new Promise<void>((ok) => {
			env.mcp.onCall = () => ok()
		})
		const ctl = new AbortController()
		const res = await fetch(`${env.app.url}/v1/messages`, {
			method: 'POST',
			headers: { 'content-type': 'application/json', 'x-api-key': acct.key, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'mcp-client-2025-11-20' },
			body: JSON.stringify({ ...body(true), tools: [toolset('tools', ['slow'])] }),
			signal: ctl.signal,
		})
		const reader = res.body!.getReader()
		const drain = (async () => {
			while (!(await reader.read()).done) {
				// read until the gateway ends the stream
			}
		})().catch(() => undefined)
		await running // the slow tool (3 s) is running
		ctl.abort()
		await drain
		await eventually(() => env.mcp.opened > 0 && env.mcp.closed === env.mcp.opened)
		const rows = await usageRows(env, acct.accountId)
		expect(rows.map((r) => [r.request_id.replace(/^req_\w+/, 'id'), r.end_reason])).toEqual([['id', 'ok']])
		expect(env.vendors.openai.requests.length).toBe(before + 1)
	})
})
