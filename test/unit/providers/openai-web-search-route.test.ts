import { describe, expect, it } from 'bun:test'
import type { ChatRequest } from '../../../src/core/ir'
import { openaiAdapter } from '../../../src/providers/openai'
import type { Channel } from '../../../src/routing/catalog'

const ch = (baseUrl: string, settings: Record<string, unknown> = {}): Channel =>
	({ id: 1, name: 'c', type: 'openai', baseUrl, apiKey: 'k', models: ['*'], modelMap: {}, priority: 0, weight: 1, settings })

const ask = (webSearch?: ChatRequest['webSearch']): ChatRequest => ({ model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'news?' }] }], stream: false, ...(webSearch && { webSearch }) })

/** The protocol and URL a converted request goes to on the channel. */
const route = (c: Channel, model: string, req: ChatRequest) => {
	const a = openaiAdapter.routeFor?.(c, model, req) ?? openaiAdapter
	return [a.protocol.name, a.chatUrl(c, model, false)]
}

describe('web search on OpenAI channels', () => {
	const openai = ch('https://api.openai.com/v1')
	it("should send a search for a model that cannot search over chat to OpenAI's Responses API", () => {
		for (const model of ['gpt-4.1', 'gpt-5', 'o4-mini', 'gpt-4o-mini']) expect(route(openai, model, ask({}))).toEqual(['openai-responses', 'https://api.openai.com/v1/responses'])
	})

	it('should keep chat for a search model, for a request without a search, and for a channel whose setting says no /responses', () => {
		expect(route(openai, 'gpt-4o-search-preview', ask({}))).toEqual(['openai-chat', 'https://api.openai.com/v1/chat/completions'])
		expect(route(openai, 'gpt-4.1', ask())).toEqual(['openai-chat', 'https://api.openai.com/v1/chat/completions'])
		expect(route(ch('https://api.openai.com/v1', { responses_api: false }), 'gpt-4.1', ask({}))[0]).toBe('openai-chat')
	})

	it("should not assume another OpenAI-compatible vendor has the Responses API, unless its setting says so", () => {
		expect(route(ch('https://api.deepseek.com/v1'), 'deepseek-chat', ask({}))[0]).toBe('openai-chat')
		expect(route(ch('https://api.openai.com.evil.example/v1'), 'gpt-4.1', ask({}))[0]).toBe('openai-chat')
		expect(route(ch('https://proxy.example/v1', { responses_api: true }), 'gpt-4.1', ask({}))).toEqual(['openai-responses', 'https://proxy.example/v1/responses'])
	})
})
