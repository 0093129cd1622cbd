/**
 * The Claude Agent SDK (Claude Code 2.1.332 underneath) pointed at the gateway with a GPT, Gemini or Claude model,
 * replayed from the shape it was seen sending (claude-agent-sdk-shape.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { AGENT_SDK_ENV, AGENT_SDK_HEADERS, agentSdkBody, agentSdkWebSearchBody, CALC_ADD, PLACEHOLDER, READ_TOOL, TOOL_SEARCH, USER_ID } from './claude-agent-sdk-shape'
import { lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, UPSTREAM_MODEL, UPSTREAMS } from './harness'

/** A GPT model whose web searches go to the Responses API (the channel says its vendor has it, as OpenAI's own URL does). */
const GPT_WEB = 'gpt-web'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		channels: (mocks) => [
			{ name: 'openai-responses', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: [GPT_WEB], model_map: { [GPT_WEB]: UPSTREAM_MODEL.openai }, settings: { responses_api: true } },
		],
	})
}, SETUP_MS)
afterAll(() => m.close())

const ASK = 'What is two plus two?'

const client = (key: string) => new Anthropic({ apiKey: key, baseURL: m.app.url, maxRetries: 0, defaultHeaders: AGENT_SDK_HEADERS })

/** One streamed turn, as the SDK keeps it for the next request: the assistant's content blocks. */
async function turn(key: string, body: object): Promise<any[]> {
	const msg = await client(key).beta.messages.stream(body as never).finalMessage()
	return msg.content as any[]
}

/** Streams one request through the Anthropic SDK as Claude Code does; the text and thinking it showed. */
async function send(key: string, body: object): Promise<{ text: string; thinking: string; stop: string | null }> {
	const stream = await client(key).beta.messages.create(body as never)
	let text = ''
	let thinking = ''
	let stop: string | null = null
	for await (const e of stream as unknown as AsyncIterable<any>) {
		if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text
		if (e.type === 'content_block_delta' && e.delta.type === 'thinking_delta') thinking += e.delta.thinking
		if (e.type === 'message_delta') stop = e.delta.stop_reason
	}
	return { text, thinking, stop }
}

describe('Claude Agent SDK', () => {
	for (const up of UPSTREAMS)
		it(`should take adaptive thinking with display "updates" (its default), from ${up}`, async () => {
			// Refused as an unknown display, the SDK lost two calls per request before retrying without it.
			const acct = await m.account()
			const out = await send(acct.key, agentSdkBody(MODEL[up], [{ role: 'user', content: [{ type: 'text', text: ASK }] }, AGENT_SDK_ENV]))
			expect(out.text).toBe(`Hello! You said: ${ASK}`)
			expect(out.stop).toBe('end_turn')
			const sent = lastRequest(m.mocks[up]).body
			// Claude gets it as written; Gemini, which has no progress notes, shows its thoughts as when no display is named.
			if (up === 'anthropic') expect(sent.thinking).toEqual({ type: 'adaptive', display: 'updates' })
			if (up === 'gemini') expect(sent.generationConfig.thinkingConfig.includeThoughts).toBe(true)
			if (up !== 'openai') expect(out.thinking).toBe(`Let me think about ${ASK}.`)
		})

	for (const up of UPSTREAMS)
		it(`should load an MCP tool through ToolSearch's tool_reference and let the model call it, from ${up}`, async () => {
			// The gateway refused tool_reference for other vendors (400 twice, then the SDK gave up tool search), and offered
			// them DeferredToolPlaceholder, a tool Claude never sees, as a callable function.
			const acct = await m.account()
			const toolNames = () => {
				const b = lastRequest(m.mocks[up]).body
				return up === 'openai' ? b.tools.map((t: any) => t.function.name) : up === 'gemini' ? b.tools[0].functionDeclarations.map((t: any) => t.name) : b.tools.map((t: any) => t.name)
			}
			const first = { role: 'user' as const, content: [{ type: 'text', text: '#call ToolSearch {"query":"select:mcp__calc__add","max_results":5}' }] }
			const searched = await turn(acct.key, agentSdkBody(MODEL[up], [first, AGENT_SDK_ENV]))
			const call = searched.find((b) => b.type === 'tool_use')
			expect(call).toMatchObject({ name: 'ToolSearch', input: { query: 'select:mcp__calc__add' } })
			expect(toolNames()).toEqual(up === 'anthropic' ? ['Read', 'ToolSearch', 'DeferredToolPlaceholder'] : ['Read', 'ToolSearch'])

			// The SDK answers with a tool_reference and from then on sends the loaded tool, still deferred.
			const tools = [READ_TOOL, TOOL_SEARCH, PLACEHOLDER, CALC_ADD]
			const history = [first, AGENT_SDK_ENV, { role: 'assistant' as const, content: searched }, { role: 'user' as const, content: [{ type: 'tool_result', tool_use_id: call.id, content: [{ type: 'tool_reference', tool_name: CALC_ADD.name }] }] }]
			const loaded = await turn(acct.key, agentSdkBody(MODEL[up], history, tools))
			expect(loaded.filter((b) => b.type === 'text').map((b) => b.text)).toEqual(['Tool results: '])
			expect(toolNames()).toEqual(up === 'anthropic' ? ['Read', 'ToolSearch', 'DeferredToolPlaceholder', 'mcp__calc__add'] : ['Read', 'ToolSearch', 'mcp__calc__add'])
			if (up === 'anthropic') expect(lastRequest(m.mocks.anthropic).body.messages[3].content[0].content).toEqual([{ type: 'tool_reference', tool_name: CALC_ADD.name }])

			const next = { role: 'user' as const, content: [{ type: 'text', text: '#call mcp__calc__add {"a":2,"b":3}' }] }
			const added = await turn(acct.key, agentSdkBody(MODEL[up], [...history, { role: 'assistant', content: loaded }, next], tools))
			expect(added.find((b) => b.type === 'tool_use')).toMatchObject({ name: 'mcp__calc__add', input: { a: 2, b: 3 } })
		})

	it("should run its WebSearch tool's search on a GPT model through the Responses API, with its long user id", async () => {
		// Its 150-character metadata.user_id went to /responses as `user` unhashed: OpenAI's 400 "string too long".
		const acct = await m.account()
		const out = await send(acct.key, agentSdkWebSearchBody(GPT_WEB, 'weather in Paris #search'))
		expect(out.text).toContain('Hello! You said: Perform a web search for the query: weather in Paris #search')
		const sent = lastRequest(m.mocks.openai)
		expect(sent.path).toBe('/v1/responses')
		expect(sent.body.tools).toEqual([expect.objectContaining({ type: 'web_search' })])
		expect(sent.body.user).toBe(new Bun.CryptoHasher('sha256').update(USER_ID).digest('hex'))
	})
})
