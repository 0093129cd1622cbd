/**
 * A gateway in front of the OpenAI and Gemini mock vendors (and optionally an Anthropic upstream), with the test MCP
 * server on loopback, for the MCP tests (issue 8). The guard's allow-list admits 127.0.0.1 unless a test asks for
 * the default guard. Each test opens its own account so usage rows and balances never mix.
 * @module
 */
import { expect } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startGeminiMock, startOpenAIMock, type VendorMock } from '../../mocks'
import { startMcpServer, type TestMcpServer } from './mcp-server'

export const SETUP_MS = 60_000
export const BETA = 'mcp-client-2025-11-20'
export const OLD_BETA = 'mcp-client-2025-04-04'

export type Up = 'openai' | 'gemini'
export const UPS: Up[] = ['openai', 'gemini']
export const MODEL: Record<Up | 'anthropic', string> = { openai: 'gpt-m', gemini: 'gemini-m', anthropic: 'claude-m' }

/** USD per million tokens. */
const PRICE: Record<string, { input: number; output: number }> = { 'gpt-m': { input: 1, output: 2 }, 'gemini-m': { input: 3, output: 5 }, 'claude-m': { input: 3, output: 15 } }

export type McpEnv = {
	app: TestApp
	mcp: TestMcpServer
	vendors: Record<Up, VendorMock>
	account(balance?: number): Promise<Acct>
	close(): Promise<void>
}

export type Acct = { accountId: number; key: string; balance: number; anthropic: Anthropic; openai: OpenAI }

/**
 * Starts the vendors, the MCP server and a gateway; `anthropicUrl` adds a `claude-m` channel to that upstream, which
 * it asks for `anthropicModel` when given; `countTools` has the Gemini mock's counter count tool definitions.
 */
export async function startMcpEnv(opts: { env?: Record<string, string>; anthropicUrl?: string; anthropicModel?: string; mcpToken?: string; countTools?: boolean } = {}): Promise<McpEnv> {
	const vendors = { openai: await startOpenAIMock({ apiKey: 'up-openai' }), gemini: await startGeminiMock({ apiKey: 'up-gemini', countTools: opts.countTools }) }
	const mcp = await startMcpServer({ token: opts.mcpToken })
	const channels: GatewayConfig['channels'] = [
		{ name: 'ch-openai', type: 'openai', base_url: vendors.openai.url, api_key: 'up-openai', models: [MODEL.openai], model_map: { [MODEL.openai]: 'gpt-4o-mini' } },
		{ name: 'ch-gemini', type: 'gemini', base_url: vendors.gemini.url, api_key: 'up-gemini', models: [MODEL.gemini], model_map: { [MODEL.gemini]: 'gemini-2.5-flash' } },
	]
	if (opts.anthropicUrl) {
		const map = opts.anthropicModel ? { model_map: { [MODEL.anthropic]: opts.anthropicModel } } : {}
		channels.push({ name: 'ch-anthropic', type: 'anthropic', base_url: opts.anthropicUrl, api_key: 'up-anthropic', models: [MODEL.anthropic], ...map })
	}
	const models = Object.entries(PRICE).map(([name, p]) => ({ name, input_per_mtok: p.input, output_per_mtok: p.output }))
	const app = await startTestApp({ config: { channels, models }, env: { FETCH_ALLOW: '127.0.0.1', ...opts.env } })
	return {
		app,
		mcp,
		vendors,
		async account(balance = 10) {
			const a = await app.account(balance)
			return {
				accountId: a.accountId,
				key: a.key,
				balance,
				anthropic: new Anthropic({ apiKey: a.key, baseURL: app.url, maxRetries: 0 }),
				openai: new OpenAI({ apiKey: a.key, baseURL: `${app.url}/v1`, maxRetries: 0 }),
			}
		},
		async close() {
			await app.close()
			await mcp.stop()
			await Promise.all([vendors.openai.stop(), vendors.gemini.stop()])
		},
	}
}

/**
 * A failed tool's text as the model reads it: OpenAI chat's tool message has no error flag, so the gateway states the
 * failure in a line ahead of the text (src/protocols/openai-chat/messages.ts `toolContent`).
 */
export const failedAsSeen = (up: Up, text: string) => (up === 'openai' ? `Error: the tool call failed.\n${text}` : text)

/** One MCP server entry, as the connector documents it. */
export const server = (url: string, name = 'tools', token = 'mcp-secret-token') => ({ type: 'url' as const, url, name, authorization_token: token })

/** An `mcp_toolset` enabling only `tools` of a server (all when omitted). */
export const toolset = (name = 'tools', tools?: string[]) =>
	tools ? { type: 'mcp_toolset' as const, mcp_server_name: name, default_config: { enabled: false }, configs: Object.fromEntries(tools.map((t) => [t, { enabled: true }])) } : { type: 'mcp_toolset' as const, mcp_server_name: name }

export type Row = { request_id: string; model: string; input_tokens: number; output_tokens: number; cost: number; status: number; end_reason: string; stream: boolean }

/** The account's usage rows, oldest first. */
export async function usageRows(env: McpEnv, accountId: number): Promise<Row[]> {
	const r = await env.app.admin(`/api/usage?account_id=${accountId}`)
	expect(r.status).toBe(200)
	return (r.body.data as Row[]).slice().reverse()
}

/** Micro-USD of a round at the model's price (one half-up rounding, computed independently of the gateway). */
export function roundCost(model: string, input: number, output: number): number {
	const p = PRICE[model]!
	const num = BigInt(input) * BigInt(Math.round(p.input * 1e6)) + BigInt(output) * BigInt(Math.round(p.output * 1e6))
	return Number((num * 2n + 1_000_000n) / 2_000_000n)
}

/**
 * Asserts one usage row per round with these end reasons (all `ok` by default), the first under the request id and
 * round n under `<id>:r<n>`, each costing its tokens at the model's price, and the balance down by their sum.
 */
export async function expectRounds(env: McpEnv, acct: Acct, model: string, rounds: number, endReasons?: string[]): Promise<Row[]> {
	const rows = await usageRows(env, acct.accountId)
	expect(rows.map((r) => r.end_reason)).toEqual(endReasons ?? Array(rounds).fill('ok'))
	const id = rows[0]!.request_id
	expect(id).toMatch(/^req_[A-Za-z0-9]+$/)
	expect(rows.map((r) => r.request_id)).toEqual(rows.map((_, i) => (i === 0 ? id : `${id}:r${i + 1}`)))
	let total = 0
	for (const r of rows) {
		expect(r.model).toBe(model)
		expect(r.status).toBe(200)
		const cost = roundCost(model, r.input_tokens, r.output_tokens)
		expect(Math.round(r.cost * 1e6)).toBe(cost)
		total += cost
	}
	expect(Math.round((await env.app.balance(acct.accountId)) * 1e6)).toBe(Math.round(acct.balance * 1e6) - total)
	return rows
}

type Block = { type: string; [k: string]: unknown }

/** Content blocks reduced to what the tests compare. */
export function shape(content: Block[]): unknown[] {
	return content.map((b) => {
		if (b.type === 'mcp_tool_use') return { type: b.type, server_name: b.server_name, name: b.name, input: b.input }
		if (b.type === 'mcp_tool_result')
			return { type: b.type, is_error: b.is_error, text: (b.content as Array<{ text: string }>).map((c) => c.text).join('') }
		if (b.type === 'text') return { type: 'text', text: b.text }
		if (b.type === 'tool_use') return { type: b.type, name: b.name, input: b.input }
		return { type: b.type }
	})
}

/** Every mcp_tool_result answers an mcp_tool_use that came before it. */
export function expectPaired(content: Block[]): void {
	const uses: unknown[] = []
	for (const b of content) {
		if (b.type === 'mcp_tool_use') uses.push(b.id)
		if (b.type === 'mcp_tool_result') expect(uses).toContain(b.tool_use_id)
	}
}

/**
 * Checks a messages stream: one message_start first, blocks opened and closed one at a time with indexes 0, 1, 2…,
 * deltas only of the open block's kind, one message_delta then message_stop last.
 */
export function checkStream(events: Array<{ type: string; [k: string]: any }>): void {
	const real = events.filter((e) => e.type !== 'ping')
	expect(real[0]!.type).toBe('message_start')
	expect(real.filter((e) => e.type === 'message_start')).toHaveLength(1)
	let next = 0
	let open: { index: number; type: string } | undefined
	for (const e of real.slice(1, -2)) {
		if (e.type === 'content_block_start') {
			expect(open).toBeUndefined()
			expect(e.index).toBe(next++)
			open = { index: e.index, type: e.content_block.type }
		} else if (e.type === 'content_block_delta') {
			expect(e.index).toBe(open?.index)
			const allowed = open?.type === 'text' ? ['text_delta'] : open?.type === 'mcp_tool_use' || open?.type === 'tool_use' ? ['input_json_delta'] : ['thinking_delta', 'signature_delta']
			expect(allowed).toContain(e.delta.type)
		} else if (e.type === 'content_block_stop') {
			expect(e.index).toBe(open?.index)
			open = undefined
		} else throw new Error(`unexpected ${e.type} inside the message`)
	}
	expect(real.at(-2)!.type).toBe('message_delta')
	expect(real.at(-1)!.type).toBe('message_stop')
}

/** Waits until `check` holds (things the gateway finishes after the response, such as ending MCP sessions). */
export async function eventually(check: () => boolean, ms = 3_000): Promise<void> {
	const until = Date.now() + ms
	while (!check()) {
		if (Date.now() > until) throw new Error('condition not met in time')
		await Bun.sleep(10)
	}
}
