/**
 * Token counts of requests naming MCP servers the gateway connects to (src/mcp/prepare.ts): `count_tokens` (the
 * Anthropic SDK's beta `messages.countTokens`) and the Responses `input_tokens` (the openai SDK's
 * `responses.inputTokens.count`) count the MCP tools the model would be offered, listed as the request lists them
 * (its toolset or `tool_configuration` filters), on every counter: Anthropic's and Gemini's (the mocks here count tool
 * definitions, as the vendors do) and the local estimate (an OpenAI model). An Anthropic client on an Anthropic
 * channel keeps Anthropic's connector, which counts `mcp_servers` itself. And the real request's counted input (the
 * `message_start` of a stream whose upstream reports usage only at the end) is that same count.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import type OpenAI from 'openai'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { countText } from '../../../src/relay/estimate'
import { startAnthropicMock, toolWords, type VendorMock } from '../../mocks'
import { ask } from './ask'
import { BETA, MODEL, type McpEnv, OLD_BETA, SETUP_MS, startMcpEnv } from './setup'

type Listed = { name: string; description?: string; inputSchema: Record<string, unknown> }

let env: McpEnv
let anthropic: VendorMock
/** The test server's tools, as its own `tools/list` gives them. */
let listed: Listed[]

beforeAll(async () => {
	anthropic = await startAnthropicMock({ apiKey: 'up-anthropic', countTools: true })
	env = await startMcpEnv({ anthropicUrl: anthropic.url, countTools: true })
	const client = new Client({ name: 'count-test', version: '1.0.0' })
	await client.connect(new StreamableHTTPClientTransport(new URL(env.mcp.url)))
	listed = (await client.listTools()).tools as Listed[]
	await client.close()
}, SETUP_MS)

afterAll(async () => {
	await env.close()
	await anthropic.stop()
})

const SERVER = 'tools'
const messages = [{ role: 'user' as const, content: 'What is the weather in Paris today?' }]
const server = (extra: Record<string, unknown> = {}) => ({ type: 'url', url: env.mcp.url, name: SERVER, ...extra })
const toolset = (extra: Record<string, unknown> = {}) => ({ type: 'mcp_toolset', mcp_server_name: SERVER, ...extra })
const enabled = (keep: (name: string) => boolean) => listed.filter((t) => keep(t.name))
const modelName = (t: Listed) => `mcp__${SERVER}__${t.name}`

/** What the local estimate adds for these tools (relay/estimate.ts: 4 per tool, then its name, description and schema). */
const estimated = (tools: Listed[]) => tools.reduce((n, t) => n + 4 + countText(modelName(t)) + countText(t.description ?? '') + countText(JSON.stringify(t.inputSchema)), 0)
/** What the mocks' counters add for them (`toolWords`: the schema's JSON splits at its descriptions' spaces only, whatever shape the vendor takes it in). */
const mockWords = (tools: Listed[]) => toolWords(tools.map((t) => ({ name: modelName(t), description: t.description, schema: t.inputSchema })))

async function countMessages(key: string, model: string, extra: Record<string, unknown>, betas: string[] = [BETA]) {
	const client = new Anthropic({ apiKey: key, baseURL: env.app.url, maxRetries: 0 })
	const res = await client.beta.messages.countTokens({ model, messages, betas, ...extra } as unknown as Anthropic.Beta.Messages.MessageCountTokensParams).withResponse()
	return { tokens: res.data.input_tokens, by: res.response.headers.get('x-switchboard-counted-by') }
}

const lastBody = (m: VendorMock) => m.requests[m.requests.length - 1]!.body as Record<string, any>

describe('count_tokens with MCP servers (Anthropic SDK, beta messages.countTokens)', () => {
	it('should add what the MCP tools add to the local estimate of a model with no counter', async () => {
		const acct = await env.account()
		const plain = await countMessages(acct.key, MODEL.openai, {})
		const opened = env.mcp.opened
		const withMcp = await countMessages(acct.key, MODEL.openai, { mcp_servers: [server()], tools: [toolset()] })
		expect(withMcp.by).toBe('estimate')
		expect(withMcp.tokens - plain.tokens).toBe(estimated(listed))
		// Listed through a session of its own, as the request would.
		expect(env.mcp.opened).toBe(opened + 1)
	})

	it("should count only the tools the toolset enables, as the request would offer them", async () => {
		const acct = await env.account()
		const plain = await countMessages(acct.key, MODEL.openai, {})
		const only = await countMessages(acct.key, MODEL.openai, { mcp_servers: [server()], tools: [toolset({ default_config: { enabled: false }, configs: { get_weather: { enabled: true } } })] })
		expect(only.tokens - plain.tokens).toBe(estimated(enabled((n) => n === 'get_weather')))
	})

	it("should send the MCP tools to Gemini's counter as function declarations, and answer its count", async () => {
		const acct = await env.account()
		const plain = await countMessages(acct.key, MODEL.gemini, {})
		const withMcp = await countMessages(acct.key, MODEL.gemini, { mcp_servers: [server()], tools: [toolset({ configs: { explode: { enabled: false } } })] })
		expect(withMcp.by).toBe('gemini')
		const sent = lastBody(env.vendors.gemini).generateContentRequest
		const declared = sent.tools.flatMap((t: { functionDeclarations?: Array<{ name: string; description?: string }> }) => t.functionDeclarations ?? [])
		const expected = enabled((n) => n !== 'explode')
		expect(declared.map((d: { name: string }) => d.name).sort()).toEqual(expected.map(modelName).sort())
		expect(declared.find((d: { name: string }) => d.name === 'mcp__tools__get_weather').description).toBe('Current weather in a city')
		expect(JSON.stringify(sent)).not.toContain('mcp_servers')
		expect(withMcp.tokens - plain.tokens).toBe(mockWords(expected))
	})

	it("should leave an Anthropic model's count to Anthropic's connector, mcp_servers as sent, without connecting", async () => {
		const acct = await env.account()
		const opened = env.mcp.opened
		await countMessages(acct.key, MODEL.anthropic, { mcp_servers: [server()], tools: [toolset()] })
		const sent = lastBody(anthropic)
		expect(sent.mcp_servers).toEqual([server()])
		expect(sent.tools).toEqual([toolset()])
		expect(env.mcp.opened).toBe(opened)
	})

	it('should refuse a bad MCP entry with the 400 the request gets, in Anthropic\'s error shape', async () => {
		const acct = await env.account()
		const err = await countMessages(acct.key, MODEL.openai, { mcp_servers: [server({ url: 'ftp://x/mcp' })], tools: [toolset()] }).catch((e) => e)
		expect(err).toBeInstanceOf(Anthropic.BadRequestError)
		expect(err.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: 'mcp_servers.0.url: must be an http(s) URL' } })
	})

	it('should count a server it cannot reach as the tools/list call and error the model would read', async () => {
		const acct = await env.account()
		const plain = await countMessages(acct.key, MODEL.openai, {})
		const down = await countMessages(acct.key, MODEL.openai, { mcp_servers: [server({ url: 'http://127.0.0.1:9/mcp' })], tools: [toolset()] })
		// Two messages (4 each), the call's name and `{}`, the error text (at least its server's name).
		expect(down.tokens - plain.tokens).toBeGreaterThan(8 + countText('mcp__tools__tools_list') + countText('{}'))
	})

})

describe('the reservation of a request with MCP servers', () => {
	it("should reserve round 1's prompt with the MCP tools: a balance that covers the question alone is refused before any upstream call", async () => {
		// 200 micro-USD at 1 USD per million input tokens: the question alone (with the smallest answer) fits, the
		// six tools' definitions (~300 tokens) do not.
		const acct = await env.account(0.0002)
		const sent = env.vendors.openai.requests.length
		const err = await ask(acct.anthropic, { model: MODEL.openai, messages, mcp_servers: [server()], tools: [toolset()] }, false).catch((e) => e)
		expect(err).toBeInstanceOf(Anthropic.APIError)
		expect(err.status).toBe(402)
		expect(env.vendors.openai.requests.length).toBe(sent)
		// The same balance answers the question without them.
		const plain = await ask(acct.anthropic, { model: MODEL.openai, messages }, false)
		expect(plain.stop_reason).toBe('end_turn')
		expect(await env.app.balance(acct.accountId)).toBeGreaterThan(0)
	})
})

async function countResponses(openai: OpenAI, model: string, extra: Record<string, unknown>) {
	const res = await openai.responses.inputTokens.count({ model, input: messages[0]!.content, ...extra } as never)
	return res.input_tokens
}

describe('Responses input_tokens with MCP servers (openai SDK, responses.inputTokens.count)', () => {
	it("should send the MCP tools to Anthropic's counter for a Claude model, which the gateway runs them for", async () => {
		const acct = await env.account()
		const plain = await countResponses(acct.openai, MODEL.anthropic, {})
		const withMcp = await countResponses(acct.openai, MODEL.anthropic, { mcp_servers: [server()] })
		const sent = lastBody(anthropic)
		expect(sent.mcp_servers).toBeUndefined()
		expect(sent.tools.map((t: { name: string }) => t.name).sort()).toEqual(listed.map(modelName).sort())
		expect(sent.tools.find((t: { name: string }) => t.name === 'mcp__tools__get_time')).toMatchObject({ description: 'Local time in a city', input_schema: { type: 'object' } })
		expect(withMcp - plain).toBe(mockWords(listed))
	})

	it("should count only the tools tool_configuration.allowed_tools allows, with Gemini's counter", async () => {
		const acct = await env.account()
		const plain = await countResponses(acct.openai, MODEL.gemini, {})
		const allowed = ['get_weather', 'get_time']
		const withMcp = await countResponses(acct.openai, MODEL.gemini, { mcp_servers: [server({ tool_configuration: { allowed_tools: allowed } })] })
		const expected = enabled((n) => allowed.includes(n))
		expect(withMcp - plain).toBe(mockWords(expected))
		const declared = lastBody(env.vendors.gemini).generateContentRequest.tools.flatMap((t: { functionDeclarations?: Array<{ name: string }> }) => t.functionDeclarations ?? [])
		expect(declared.map((d: { name: string }) => d.name).sort()).toEqual(expected.map(modelName).sort())
	})

	it('should refuse a bad MCP entry in OpenAI\'s error shape', async () => {
		const acct = await env.account()
		const err = await countResponses(acct.openai, MODEL.gemini, { mcp_servers: [server({ name: '' })] }).catch((e) => e)
		expect(err.status).toBe(400)
		expect(err.error).toMatchObject({ type: 'invalid_request_error', message: 'mcp_servers.0.name: String should have at least 1 character' })
	})

	it('should refuse an mcp_toolset without the current beta as the request does', async () => {
		const acct = await env.account()
		const err = await countMessages(acct.key, MODEL.gemini, { mcp_servers: [server()], tools: [toolset()] }, [OLD_BETA]).catch((e) => e)
		expect(err).toBeInstanceOf(Anthropic.BadRequestError)
		expect(err.error.error.message).toBe(`tools.0: mcp_toolset requires the anthropic-beta header ${BETA}`)
	})
})
