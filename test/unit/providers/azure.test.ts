import { describe, expect, it } from 'bun:test'
import { appendPath } from '../../../src/providers/append-path'
import { azureAdapter, azureResponsesUrl, azureUrl } from '../../../src/providers/azure'
import { entraTokenUrl, servicePrincipalOf } from '../../../src/providers/azure-entra'
import { completePromptFilterChunk, isPromptFilterChunk } from '../../../src/providers/azure-stream'
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

describe("Azure's stream through the adapter's answer", () => {
	const filter = '{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0}]}'
	const first = '{"id":"chatcmpl-9","object":"chat.completion.chunk","created":7,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"héllo 🌍"}}]}'
	const rest = 'data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":7,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"✓ ünïcode"},"finish_reason":"stop"}]}\r\n\r\ndata: [DONE]\r\n\r\n'

	/** The stream's bytes cut at `cuts`, through the adapter's answer, read back as text. */
	async function through(text: string, cuts: number[]): Promise<string> {
		const bytes = new TextEncoder().encode(text)
		const parts = [0, ...cuts, bytes.length].map((c, i, all) => bytes.subarray(c, all[i + 1] ?? c)).filter((p) => p.length)
		const body = new ReadableStream<Uint8Array>({
			start(c) {
				for (const p of parts) c.enqueue(p)
				c.close()
			},
		})
		const res = azureAdapter.answer!(new Response(body, { headers: { 'content-type': 'text/event-stream', 'content-length': String(bytes.length) } }))
		expect(res.headers.get('content-length')).toBeNull()
		return res.text()
	}

	it('should complete the filter chunk from the next, wherever the bytes are cut, and pass the rest byte for byte', async () => {
		const text = `: keep-alive\n\ndata: ${filter}\n\ndata: ${first}\n\n${rest}`
		const want = `: keep-alive\n\ndata: ${completePromptFilterChunk(filter, first)}\n\ndata: ${first}\n\n${rest}`
		const size = new TextEncoder().encode(text).length
		for (let cut = 1; cut < size; cut++) expect(await through(text, [cut])).toBe(want)
		const everyByte = Array.from({ length: size - 1 }, (_, i) => i + 1)
		expect(await through(text, everyByte)).toBe(want)
	})

	it('should leave a stream that opens with a choice untouched', async () => {
		const text = `data: ${first}\n\n${rest}`
		for (const cut of [1, 10, 60, 140]) expect(await through(text, [cut])).toBe(text)
	})

	it('should send the held chunk at the end when nothing names the stream', async () => {
		expect(await through(`data: ${filter}\n\ndata: [DONE]\n\n`, [5])).toBe(`data: ${completedFilter(undefined)}\n\ndata: [DONE]\n\n`)
		expect(await through(`data: ${filter}\n\n`, [])).toBe(`data: ${completedFilter(undefined)}\n\n`)
	})
	const completedFilter = (next: string | undefined) => completePromptFilterChunk(filter, next)

	it('should leave errors and whole answers alone', async () => {
		const err = new Response('{"error":{}}', { status: 400, headers: { 'content-type': 'application/json' } })
		expect(azureAdapter.answer!(err)).toBe(err)
		const whole = new Response('{}', { headers: { 'content-type': 'application/json' } })
		expect(azureAdapter.answer!(whole)).toBe(whole)
	})
})

describe('azure Entra ID service principals', () => {
	const principal = { tenant_id: 'contoso.onmicrosoft.com', client_id: '6a1f2c9e-0b7d-4c1e-9a55-3e8f0d2b1c44', client_secret: 'Q8Q~secret.value' }

	it('should read a service principal key, and leave a resource key to api-key', () => {
		expect(servicePrincipalOf(JSON.stringify(principal))).toEqual({ tenantId: 'contoso.onmicrosoft.com', clientId: principal.client_id, proof: { kind: 'secret', clientSecret: 'Q8Q~secret.value' } })
		expect(servicePrincipalOf('0123456789abcdef0123456789abcdef')).toBeUndefined()
		const sp = { ...ch('https://r.openai.azure.com', { headers: { 'x-ms-client': 'a' } }), id: 71, apiKey: JSON.stringify(principal) }
		expect(azureAdapter.headers(sp)).toEqual({ 'content-type': 'application/json', 'x-ms-client': 'a' })
	})

	it("should never send a JSON key that is no service principal as api-key, and refuse it at the call without its secret", async () => {
		const bad = { ...ch('https://r.openai.azure.com'), id: 72, apiKey: JSON.stringify({ ...principal, client_id: undefined }) }
		expect(azureAdapter.headers(bad)['api-key']).toBeUndefined()
		const err = await azureAdapter.authorize!(bad, { url: '', method: 'POST', headers: {} }).catch((e) => e)
		expect(err).toMatchObject({ code: 'channel_misconfigured', status: 503, retryable: true })
		expect(err.message).toContain('`client_id`')
		expect(err.message).not.toContain('Q8Q~secret.value')
	})

	it('should ask the tenant of the key at the authority host, the default one or the setting', () => {
		const sp = servicePrincipalOf(JSON.stringify(principal))!
		expect(entraTokenUrl({ settings: {} }, sp)).toBe('https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token')
		expect(entraTokenUrl({ settings: { authority_host: 'https://login.microsoftonline.us/' } }, sp)).toBe('https://login.microsoftonline.us/contoso.onmicrosoft.com/oauth2/v2.0/token')
	})
})
