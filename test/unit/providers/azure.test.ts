import { describe, expect, it } from 'bun:test'
import { appendPath } from '../../../src/providers/append-path'
import { azureAdapter, azureResponsesUrl, azureUrl } from '../../../src/providers/azure'
import { completePromptFilterChunk, isPromptFilterChunk } from '../../../src/relay/prompt-filter-chunk'
import type { Channel } from '../../../src/routing/catalog'

const ch = (baseUrl: string, settings: Record<string, unknown> = {}): Channel =>
	({ id: 1, name: 'az', type: 'azure', baseUrl, apiKey: 'k', models: ['*'], modelMap: {}, priority: 0, weight: 1, settings }) as unknown as Channel

describe('azure adapter', () => {
	it('should build deployment URLs from the endpoint, with or without /openai and a trailing slash', () => {
		for (const base of ['https://r.openai.azure.com', 'https://r.openai.azure.com/', 'https://r.openai.azure.com/openai', 'https://r.openai.azure.com/openai/'])
			expect(azureAdapter.chatUrl(ch(base), 'prod 4o', true)).toBe('https://r.openai.azure.com/openai/deployments/prod%204o/chat/completions?api-version=2025-04-01-preview')
		expect(azureUrl(ch('https://r.openai.azure.com', { api_version: '2024-10-21' }), 'emb', '/embeddings')).toBe('https://r.openai.azure.com/openai/deployments/emb/embeddings?api-version=2024-10-21')
		expect(azureResponsesUrl(ch('https://r.openai.azure.com/'))).toBe('https://r.openai.azure.com/openai/responses?api-version=2025-04-01-preview')
	})

	it("should use OpenAI's paths, without api-version, on a v1 base URL", () => {
		expect(azureAdapter.chatUrl(ch('https://r.openai.azure.com/openai/v1/'), 'prod', false)).toBe('https://r.openai.azure.com/openai/v1/chat/completions')
		expect(azureResponsesUrl(ch('https://r.openai.azure.com/openai/v1'))).toBe('https://r.openai.azure.com/openai/v1/responses')
	})

	it('should send the key in api-key, never as a Bearer token', () => {
		const h = azureAdapter.headers(ch('https://r.openai.azure.com', { headers: { 'x-ms-client': 'a' } }))
		expect(h).toEqual({ 'content-type': 'application/json', 'x-ms-client': 'a', 'api-key': 'k' })
	})
})

describe('appendPath', () => {
	it('should add the path before a query and merge a client query into it', () => {
		expect(appendPath('https://h/openai/responses?api-version=v', '/resp_1', '?include=x')).toBe('https://h/openai/responses/resp_1?api-version=v&include=x')
		expect(appendPath('https://h/v1/responses', '/compact')).toBe('https://h/v1/responses/compact')
		expect(appendPath('https://h/v1/responses', '/resp_1', '?stream=true')).toBe('https://h/v1/responses/resp_1?stream=true')
	})
})

describe("Azure's prompt filter chunk", () => {
	const held = '{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0}]}'
	it('should be recognised by its empty id and prompt_filter_results', () => {
		expect(isPromptFilterChunk(held)).toBe(true)
		expect(isPromptFilterChunk('{"id":"chatcmpl-1","choices":[],"usage":{}}')).toBe(false)
	})
	it("should take the stream's id, object, created and model from the next chunk", () => {
		const next = '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":5,"model":"m","system_fingerprint":"fp","choices":[{"index":0,"delta":{"role":"assistant"}}]}'
		expect(JSON.parse(completePromptFilterChunk(held, next))).toEqual({ choices: [], created: 5, id: 'chatcmpl-1', model: 'm', object: 'chat.completion.chunk', system_fingerprint: 'fp', prompt_filter_results: [{ prompt_index: 0 }] })
		expect(JSON.parse(completePromptFilterChunk(held, undefined)).object).toBe('chat.completion.chunk')
	})
})
