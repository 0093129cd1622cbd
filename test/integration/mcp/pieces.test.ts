/**
 * The pure pieces of the gateway's MCP client: tool names for the model, toolset filters of both connector versions,
 * earlier MCP turns in the model's view, and the outbound address guard.
 */
import { describe, expect, it } from 'bun:test'
import type { ChatRequest } from '../../../src/core/ir'
import { anthropicMessages } from '../../../src/protocols/anthropic-messages'
import { checkMcpHost } from '../../../src/mcp/guard'
import { modelView } from '../../../src/mcp/history'
import { parseMcp } from '../../../src/mcp/request'
import { nameTools } from '../../../src/mcp/tools'

const tool = (server: string, name: string) => ({ server, name, inputSchema: { type: 'object', properties: { city: { type: 'string' } } } })

describe('nameTools', () => {
	it('should name MCP tools mcp__<server>__<tool> within [a-zA-Z0-9_-]{1,64}, unique against the caller’s tools', () => {
		const n = nameTools([tool('wx', 'get.weather'), tool('wx', 'get/weather'), tool('a'.repeat(40), 'b'.repeat(40))], [{ name: 'mcp__wx__get_weather', parameters: {} }])
		const names = n.tools.map((t) => t.name)
		expect(names[0]).toBe('mcp__wx__get_weather_2')
		expect(names[1]).toBe('mcp__wx__get_weather_3')
		for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/)
		expect(n.resolve(names[1]!)).toEqual({ server: 'wx', tool: 'get/weather' })
		expect(n.resolve('mcp__wx__get_weather')).toBeUndefined() // the caller's own tool
		expect(n.nameOf('wx', 'get.weather')).toBe(names[0]!)
		expect(n.nameOf('gone', 'x')).toBe('mcp__gone__x')
	})
})

describe('parseMcp filters', () => {
	const srv = { type: 'url', url: 'https://mcp.example.com/mcp', name: 's', authorization_token: 't' }
	it('should apply configs over default_config (mcp-client-2025-11-20)', () => {
		const spec = parseMcp({ mcp_servers: [srv], tools: [{ type: 'mcp_toolset', mcp_server_name: 's', default_config: { enabled: false }, configs: { a: { enabled: true } } }] }, 'mcp-client-2025-11-20')
		expect(spec.version).toBe('mcp-client-2025-11-20')
		expect([spec.servers[0]!.enabled('a'), spec.servers[0]!.enabled('b')]).toEqual([true, false])
		expect(spec.servers[0]!.token).toBe('t')
	})

	it('should apply tool_configuration (mcp-client-2025-04-04), inferred without a beta header', () => {
		const spec = parseMcp({ mcp_servers: [{ ...srv, tool_configuration: { allowed_tools: ['a'] } }] }, null)
		expect(spec.version).toBe('mcp-client-2025-04-04')
		expect([spec.servers[0]!.enabled('a'), spec.servers[0]!.enabled('b')]).toEqual([true, false])
		const off = parseMcp({ mcp_servers: [{ ...srv, tool_configuration: { enabled: false } }] }, 'mcp-client-2025-04-04')
		expect(off.servers[0]!.enabled('a')).toBe(false)
	})
})

describe('modelView', () => {
	const names = nameTools([tool('wx', 'get_weather')], [])
	const decode = (messages: unknown[]) => anthropicMessages.decodeRequest({ model: 'm', max_tokens: 10, messages, mcp_servers: [{ type: 'url' }] } as never)

	it('should split an assistant turn with MCP blocks into calls and results the model can read', () => {
		const ir = decode([
			{ role: 'user', content: 'weather?' },
			{
				role: 'assistant',
				content: [
					{ type: 'text', text: 'Checking.' },
					{ type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'get_weather', server_name: 'wx', input: { city: 'Rome' } },
					{ type: 'mcp_tool_use', id: 'mcptoolu_2', name: 'get_weather', server_name: 'wx', input: { city: 'Oslo' } },
					{ type: 'mcp_tool_result', tool_use_id: 'mcptoolu_1', is_error: false, content: [{ type: 'text', text: 'Rain' }] },
					{ type: 'mcp_tool_result', tool_use_id: 'mcptoolu_2', is_error: true, content: 'down' },
					{ type: 'mcp_tool_use', id: 'mcptoolu_3', name: 'get_weather', server_name: 'wx', input: {} },
					{ type: 'text', text: 'Rain in Rome.' },
				],
			},
			{ role: 'user', content: 'thanks' },
		])
		const view = modelView(ir, names)
		expect(view.messages).toEqual([
			{ role: 'user', content: [{ type: 'text', text: 'weather?' }] },
			{
				role: 'assistant',
				content: [
					{ type: 'text', text: 'Checking.' },
					{ type: 'tool_call', id: 'mcptoolu_1', name: 'mcp__wx__get_weather', input: { city: 'Rome' } },
					{ type: 'tool_call', id: 'mcptoolu_2', name: 'mcp__wx__get_weather', input: { city: 'Oslo' } },
				],
			},
			{
				role: 'user',
				content: [
					{ type: 'tool_result', toolCallId: 'mcptoolu_1', name: 'mcp__wx__get_weather', content: [{ type: 'text', text: 'Rain' }] },
					{ type: 'tool_result', toolCallId: 'mcptoolu_2', name: 'mcp__wx__get_weather', content: [{ type: 'text', text: 'down' }], isError: true },
				],
			},
			// mcptoolu_3 had no result in its turn: left out, as vendors refuse an unanswered call.
			{ role: 'assistant', content: [{ type: 'text', text: 'Rain in Rome.' }] },
			{ role: 'user', content: [{ type: 'text', text: 'thanks' }] },
		] satisfies ChatRequest['messages'])
		expect(view.extra?.mcp_servers).toBeUndefined()
		expect(view.extra?.__blocks).toBeUndefined()
	})

	it('should put the results of a turn that ends with them first in the user turn after it', () => {
		const ir = decode([
			{ role: 'user', content: 'go' },
			{
				role: 'assistant',
				content: [
					{ type: 'tool_use', id: 'toolu_1', name: 'mine', input: {} },
					{ type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'get_weather', server_name: 'wx', input: {} },
					{ type: 'mcp_tool_result', tool_use_id: 'mcptoolu_1', is_error: false, content: [{ type: 'text', text: 'Sun' }] },
				],
			},
			{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'mine done' }, { type: 'text', text: 'next' }] },
		])
		const view = modelView(ir, names)
		expect(view.messages.map((m) => [m.role, m.content.map((p) => p.type)])).toEqual([
			['user', ['text']],
			['assistant', ['tool_call', 'tool_call']],
			['user', ['tool_result', 'tool_result', 'text']],
		])
	})
})

describe('checkMcpHost', () => {
	it.each(['http://169.254.169.254/mcp', 'http://10.0.0.8/mcp', 'http://[::1]/mcp', 'http://127.0.0.1:9/mcp', 'http://[::ffff:192.168.1.1]/mcp'])('should refuse %s', async (url) => {
		await expect(checkMcpHost(new URL(url), { allow: [] })).rejects.toThrow('private or loopback')
	})

	it('should allow a private address on the allow-list, by address or CIDR', async () => {
		expect(await checkMcpHost(new URL('http://10.1.2.3/mcp'), { allow: ['10.0.0.0/8'] })).toBe('10.1.2.3')
		expect(await checkMcpHost(new URL('http://127.0.0.1:9/mcp'), { allow: ['127.0.0.1'] })).toBe('127.0.0.1')
		expect(await checkMcpHost(new URL('https://93.184.216.34/mcp'), { allow: [] })).toBe('93.184.216.34')
	})
})
