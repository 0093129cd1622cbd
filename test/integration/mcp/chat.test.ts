/**
 * MCP through `/v1/chat/completions` (issue 8): the same `mcp_servers` field (with the per-server
 * `tool_configuration` of the connector's first version, since chat-completions `tools` hold only functions). The
 * answer is the final text, with the MCP calls the gateway ran in the `message.mcp_calls` extension (streamed as
 * `delta.mcp_calls`, like `tool_calls`), never in `tool_calls`, which the client would try to run itself.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import type OpenAI from 'openai'
import { countText } from '../../../src/relay/estimate'
import { countWords, PREFACE_TEXT } from '../../mocks'
import { expectRounds, failedAsSeen, MODEL, type McpEnv, server, SETUP_MS, startMcpEnv, type Up, UPS, usageRows } from './setup'

let env: McpEnv
beforeAll(async () => {
	env = await startMcpEnv()
}, SETUP_MS)
afterAll(() => env.close())
beforeEach(() => env.mcp.reset())

type McpCall = { id: string; type: string; server_name: string; name: string; arguments: string; output: string | null; error: string | null }
type Answered = { text: string; finish: string | null; toolCalls: number; mcpCalls: McpCall[]; usage?: OpenAI.CompletionUsage }

async function chat(client: OpenAI, body: Record<string, unknown>, stream: boolean): Promise<Answered> {
	const params = { messages: [{ role: 'user', content: '#tools What is the weather?' }], ...body } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming
	if (!stream) {
		const r = await client.chat.completions.create(params)
		const m = r.choices[0]!.message as OpenAI.Chat.ChatCompletionMessage & { mcp_calls?: McpCall[] }
		return { text: m.content ?? '', finish: r.choices[0]!.finish_reason, toolCalls: m.tool_calls?.length ?? 0, mcpCalls: m.mcp_calls ?? [], usage: r.usage }
	}
	const s = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } })
	const out: Answered = { text: '', finish: null, toolCalls: 0, mcpCalls: [] }
	for await (const c of s) {
		if (c.usage) out.usage = c.usage
		const choice = c.choices[0]
		if (!choice) continue
		const d = choice.delta as typeof choice.delta & { mcp_calls?: Array<Partial<McpCall> & { index: number }> }
		out.text += d.content ?? ''
		out.toolCalls += d.tool_calls?.length ?? 0
		if (choice.finish_reason) out.finish = choice.finish_reason
		for (const { index, ...rest } of d.mcp_calls ?? []) {
			const call = out.mcpCalls[index]
			if (!call) {
				// The first delta of a call introduces it whole, with empty arguments.
				expect(rest).toMatchObject({ type: 'mcp_call', arguments: '' })
				out.mcpCalls[index] = { ...(rest as McpCall), output: null, error: null }
			} else if (rest.arguments !== undefined) call.arguments += rest.arguments
			else Object.assign(call, rest)
		}
	}
	return out
}

/** Five sequences that never match, before the one that does: beyond OpenAI's four and Gemini's five. */
const FILLERS = ['<a>', '<b>', '<c>', '<d>', '<e>']
/** What each vendor takes of them. */
const TAKEN: Record<Up, string[]> = { openai: FILLERS.slice(0, 4), gemini: FILLERS }
const sentStops = (up: Up, body: Record<string, any>): unknown => (up === 'openai' ? body.stop : body.generationConfig?.stopSequences)

const call = (name: string, city: string, outcome: { output: string } | { error: string }) => ({
	type: 'mcp_call',
	server_name: 'tools',
	name,
	arguments: { city },
	output: 'output' in outcome ? outcome.output : null,
	error: 'error' in outcome ? outcome.error : null,
})

/** Calls with their JSON arguments parsed (fragment boundaries differ by vendor). */
const parsed = (calls: McpCall[]) => calls.map(({ id: _id, ...c }) => ({ ...c, arguments: JSON.parse(c.arguments) }))

for (const up of UPS)
	for (const stream of [false, true])
		describe(`MCP through chat completions (${up} upstream, ${stream ? 'stream' : 'non-stream'})`, () => {
			it('should answer with the final text and the MCP calls in message.mcp_calls, billed per round', async () => {
				const acct = await env.account()
				const from = env.vendors[up].requests.length
				const a = await chat(acct.openai, { model: MODEL[up], mcp_servers: [server(env.mcp.url)] }, stream)
				expect(a.text).toBe('Tool results: Sunny in Paris; Noon in Tokyo')
				// The field stays with the gateway: no vendor receives it or the server's token.
				for (const r of env.vendors[up].requests.slice(from)) expect(JSON.stringify(r.body)).not.toMatch(/mcp_servers|mcp-secret-token/)
				expect(env.mcp.auth.every((h) => h === 'Bearer mcp-secret-token')).toBe(true)
				expect(a.finish).toBe('stop')
				expect(a.toolCalls).toBe(0)
				expect(parsed(a.mcpCalls)).toEqual([call('get_weather', 'Paris', { output: 'Sunny in Paris' }), call('get_time', 'Tokyo', { output: 'Noon in Tokyo' })])
				expect(new Set(a.mcpCalls.map((c) => c.id)).size).toBe(2)
				const rows = await expectRounds(env, acct, MODEL[up], 2)
				expect(a.usage?.prompt_tokens).toBe(rows[0]!.input_tokens + rows[1]!.input_tokens)
				expect(a.usage?.completion_tokens).toBe(rows[0]!.output_tokens + rows[1]!.output_tokens)
			})

			it('should report a failing tool in the error field of its call', async () => {
				const acct = await env.account()
				const entry = { ...server(env.mcp.url), tool_configuration: { allowed_tools: ['get_weather', 'explode'] } }
				const a = await chat(acct.openai, { model: MODEL[up], mcp_servers: [entry] }, stream)
				expect(parsed(a.mcpCalls)).toEqual([call('get_weather', 'Paris', { output: 'Sunny in Paris' }), call('explode', 'Tokyo', { error: 'boom for Tokyo' })])
				expect(a.text).toBe(`Tool results: Sunny in Paris; ${failedAsSeen(up, 'boom for Tokyo')}`)
				expect((await usageRows(env, acct.accountId)).map((r) => r.request_id.replace(/^req_\w+/, 'id'))).toEqual(['id', 'id:r2'])
			})

			it('should cut the final answer at a stop sequence the vendor cannot take, every round sent what it takes', async () => {
				const acct = await env.account()
				const from = env.vendors[up].requests.length
				const a = await chat(acct.openai, { model: MODEL[up], mcp_servers: [server(env.mcp.url)], stop: [...FILLERS, 'Noon'] }, stream)
				expect(a.text).toBe('Tool results: Sunny in Paris; ')
				expect(a.finish).toBe('stop')
				expect(a.mcpCalls).toHaveLength(2)
				const sent = env.vendors[up].requests.slice(from).map((r) => sentStops(up, r.body as Record<string, any>))
				expect(sent).toEqual([TAKEN[up], TAKEN[up]])
				const rows = await expectRounds(env, acct, MODEL[up], 2)
				expect(a.usage?.completion_tokens).toBe(rows[0]!.output_tokens + rows[1]!.output_tokens)
			})

			it('should end the answer at a stop sequence matched in a round that then calls tools, with no call after it', async () => {
				const acct = await env.account()
				const from = env.vendors[up].requests.length
				const aborts = env.vendors[up].aborts.length
				// A stream stalls after the chunk the sequence is in (OpenAI's role chunk and a word each, Gemini's text whole):
				// only an abort ends it.
				if (stream) env.vendors[up].faultOnce = { kind: 'stall', afterChunks: up === 'openai' ? 5 : 1 }
				const a = await chat(acct.openai, { model: MODEL[up], messages: [{ role: 'user', content: '#tools #preface What is the weather?' }], mcp_servers: [server(env.mcp.url)], stop: [...FILLERS, 'STOP'] }, stream)
				expect(a.text).toBe('Let me check. ')
				expect(a.finish).toBe('stop')
				expect(a.mcpCalls).toEqual([])
				expect(a.toolCalls).toBe(0)
				// One round: no tool ran, nothing went back to the model.
				expect(env.vendors[up].requests.length).toBe(from + 1)
				expect(env.mcp.calls).toEqual([])
				// The stream is read no further than the match: the call is aborted.
				if (stream) {
					for (let i = 0; i < 100 && env.vendors[up].aborts.length === aborts; i++) await Bun.sleep(10)
					expect(env.vendors[up].aborts.length).toBe(aborts + 1)
				}
				const [row] = await expectRounds(env, acct, MODEL[up], 1)
				expect(a.usage?.completion_tokens).toBe(row!.output_tokens)
				// Billed at least for what was produced up to the match (a whole answer, the vendor's whole usage).
				expect(row!.output_tokens).toBeGreaterThanOrEqual(stream ? countText('Let me check. STOP') : countWords(PREFACE_TEXT) + 4)
			})
		})
