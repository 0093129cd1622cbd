/**
 * The caller's own tools in the gateway's MCP loop keep the names the client knows, while the vendor is sent names it
 * takes: a Claude Code tool named past 64 characters (`mcp__<server>__<tool>`, which Anthropic takes up to 128) is
 * refused by OpenAI (`^[a-zA-Z0-9_-]+$`, at most 64) and by Gemini (at most 64). On `/v1/messages` and
 * `/v1/chat/completions` without MCP the converted request already carried portable names (src/relay/tool-names.ts);
 * the MCP loop sent the names as written, so the first round was a 400 from the vendor.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import { ask } from './ask'
import { type McpEnv, MODEL, server, SETUP_MS, shape, startMcpEnv, toolset, UPS } from './setup'

let env: McpEnv
beforeAll(async () => {
	env = await startMcpEnv()
}, SETUP_MS)
afterAll(() => env.close())
beforeEach(() => env.mcp.reset())

const Q = '#tools What is the weather?'
/** 80 characters: Anthropic takes it, OpenAI and Gemini refuse it. */
const LONG = 'mcp__claude_ai_company_knowledge_base_server__search_documents_by_keyword_phrase'
const PORTABLE = /^[a-zA-Z0-9_-]{1,64}$/

/** Function names the vendor was offered in its last request. */
function offered(up: 'openai' | 'gemini'): string[] {
	const b = env.vendors[up].requests.at(-1)!.body as Record<string, any>
	return up === 'openai' ? b.tools.map((t: any) => t.function.name) : b.tools.flatMap((t: any) => t.functionDeclarations.map((d: any) => d.name))
}

for (const up of UPS)
	for (const stream of [false, true])
		describe(`the caller's tool names in the MCP loop (${up} upstream, ${stream ? 'stream' : 'non-stream'})`, () => {
			it("should offer the vendor a name it takes and give the caller's call back under the caller's name, next turn too", async () => {
				const acct = await env.account()
				const search = { name: LONG, description: 'Search the docs', input_schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } }
				const params = { model: MODEL[up], mcp_servers: [server(env.mcp.url)], tools: [search, toolset()] }
				const first = await ask(acct.anthropic, { ...params, messages: [{ role: 'user', content: Q }] }, stream)
				expect(shape(first.content)).toEqual([
					{ type: 'tool_use', name: LONG, input: { q: 'Paris' } },
					{ type: 'mcp_tool_use', server_name: 'tools', name: 'get_weather', input: { city: 'Tokyo' } },
					{ type: 'mcp_tool_result', is_error: false, text: 'Sunny in Tokyo' },
				])
				expect(first.stop_reason).toBe('tool_use')
				const names = offered(up)
				expect(names.every((n) => PORTABLE.test(n))).toBe(true)
				expect(names).not.toContain(LONG)

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
				expect(shape(next.content)).toEqual([{ type: 'text', text: 'Tool results: Sunny in Tokyo; Found Paris' }])
				// The history carried the caller's call under the same portable name as the tools.
				expect(offered(up)).toEqual(names)
				const body = JSON.stringify(env.vendors[up].requests.at(-1)!.body)
				expect(body).not.toContain(LONG)
			})
		})
