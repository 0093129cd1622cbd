/**
 * What only the client's vendor can take (core/ir.ts `vendorOnly`, protocols/vendor-only.ts): Anthropic server tools
 * and user-side blocks with no canonical form, Gemini built-in tools. The decoders list them; the client's own
 * encoder re-emits them, every other encoder refuses with a 400 naming where they stood (WIRE-NOTES #8).
 */
import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../src/core/errors'
import type { ChatRequest } from '../../../src/core/ir'
import { anthropicMessages } from '../../../src/protocols/anthropic-messages'
import { gemini } from '../../../src/protocols/gemini'
import { openaiChat } from '../../../src/protocols/openai-chat'
import { encodeRequest as encodeResponses } from '../../../src/protocols/openai-responses/request'

const WEATHER = { name: 'weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }
const fromAnthropic = (body: Record<string, unknown>): ChatRequest => anthropicMessages.decodeRequest({ model: 'm', max_tokens: 10, ...body } as never)

function refusal(f: () => unknown): GatewayError {
	try {
		f()
	} catch (e) {
		if (e instanceof GatewayError) return e
		throw e
	}
	throw new Error('expected a refusal')
}

describe('vendor-only request parts', () => {
	it('should list Anthropic server tools but not an MCP toolset nor the web search (canonical)', () => {
		const req = fromAnthropic({
			tools: [WEATHER, { type: 'code_execution_20250825', name: 'code_execution' }, { type: 'mcp_toolset', mcp_server_name: 's' }, { type: 'web_search_20250305', name: 'web_search', max_uses: 3 }],
			messages: [{ role: 'user', content: 'hi' }],
		})
		expect(req.vendorOnly).toEqual([{ protocol: 'anthropic-messages', what: 'server tool code_execution_20250825', path: 'tools.1' }])
		expect(req.webSearch).toEqual({ maxUses: 3 })
	})

	it('should list user-side blocks with no canonical form, not assistant-side history', () => {
		const req = fromAnthropic({
			messages: [
				{ role: 'user', content: [{ type: 'search_result', source: 's', title: 't', content: [{ type: 'text', text: 'x' }] }] },
				{ role: 'assistant', content: [{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} }, { type: 'text', text: 'ok' }] },
				{ role: 'user', content: 'more' },
			],
		})
		expect(req.vendorOnly).toEqual([{ protocol: 'anthropic-messages', what: 'a search_result block', path: 'messages.0.content.0' }])
	})

	it('should list Gemini built-in tools', () => {
		const req = gemini.decodeRequest({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], tools: [{ functionDeclarations: [{ name: 'f' }] }, { googleSearch: {}, urlContext: {} }] } as never)
		expect(req.vendorOnly?.map((v) => v.path)).toEqual(['tools[1].urlContext'])
		expect(req.webSearch).toEqual({})
	})

	it("should re-emit them to the client's own protocol and refuse them in every other", () => {
		const req = fromAnthropic({ tools: [{ type: 'code_execution_20250825', name: 'code_execution' }], messages: [{ role: 'user', content: 'hi' }] })
		expect(anthropicMessages.encodeRequest(req, 'up').tools).toEqual([{ type: 'code_execution_20250825', name: 'code_execution' }])
		for (const encode of [(r: ChatRequest) => openaiChat.encodeRequest(r, 'up'), (r: ChatRequest) => gemini.encodeRequest(r, 'up'), (r: ChatRequest) => encodeResponses(r, 'up')]) {
			const err = refusal(() => encode(req))
			expect(err.status).toBe(400)
			expect(err.retryable).toBe(true)
			expect(err.message).toStartWith("tools.0: server tool code_execution_20250825 is only available on Anthropic's API")
		}
		const fromGemini = gemini.decodeRequest({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], tools: [{ codeExecution: {} }] } as never)
		expect(gemini.encodeRequest(fromGemini, 'up').tools as unknown[]).toEqual([{ codeExecution: {} }])
		expect(refusal(() => anthropicMessages.encodeRequest(fromGemini, 'up')).message).toStartWith("tools[0].codeExecution: built-in tool codeExecution is only available on Gemini's API")
	})
})
