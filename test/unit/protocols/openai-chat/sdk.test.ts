/**
 * Feeds encodeStream output, as an HTTP response, to the parsers real clients use: the official `openai` SDK
 * (`ChatCompletionStream` accumulates and checks chunk order) and the Vercel AI SDK (`@ai-sdk/openai` validates
 * every chunk against a zod schema and rejects tool-call deltas without id/type/name on first sight).
 */
import { describe, expect, it } from 'bun:test'
import { createOpenAI } from '@ai-sdk/openai'
import { jsonSchema, streamText, tool } from 'ai'
import OpenAI, { APIError } from 'openai'
import { GatewayError } from '../../../../src/core/errors'
import type { StreamEvent } from '../../../../src/core/events'
import { decodeStream } from '../../../../src/protocols/openai-chat/stream-decode'
import { encodeStream } from '../../../../src/protocols/openai-chat/stream-encode'
import { agentTurn, collect, fixtureFrames, from, sseResponse } from './helpers'

/** A fetch that answers every request with the encoded stream. */
const fetchOf = (events: StreamEvent[], includeUsage = true): typeof fetch =>
	Object.assign(async () => sseResponse(await collect(encodeStream(from(events), { model: 'client-model', includeUsage }))), {
		preconnect: fetch.preconnect,
	})

const openaiClient = (events: StreamEvent[], includeUsage = true) =>
	new OpenAI({ apiKey: 'sk-test', baseURL: 'http://gateway.test/v1', fetch: fetchOf(events, includeUsage), maxRetries: 0 })

const params = { model: 'client-model', messages: [{ role: 'user' as const, content: 'Weather?' }], stream_options: { include_usage: true } }

describe('openai-chat encodeStream with the openai SDK', () => {
	it('should let ChatCompletionStream rebuild text, parallel tool calls, finish_reason and usage', async () => {
		const completion = await openaiClient(agentTurn()).chat.completions.stream(params).finalChatCompletion()
		const choice = completion.choices[0]
		expect(completion.model).toBe('client-model')
		expect(choice.finish_reason).toBe('tool_calls')
		expect(choice.message.role).toBe('assistant')
		expect(choice.message.content).toBe('Let me check.')
		expect(choice.message.tool_calls?.map((c) => (c.type === 'function' ? [c.id, c.function.name, c.function.arguments] : c.type))).toEqual([
			['toolu_A', 'get_weather', '{"city":"Paris"}'],
			['toolu_B__ts_Z2VtaW5p', 'get_time', '{}'],
		])
		expect(completion.usage).toMatchObject({ prompt_tokens: 100, completion_tokens: 42, total_tokens: 142, prompt_tokens_details: { cached_tokens: 90 } })
	})

	it('should let raw chunk iteration rebuild reasoning_content and its signature', async () => {
		const stream = await openaiClient(agentTurn()).chat.completions.create({ ...params, stream: true })
		let reasoning = ''
		const signatures: string[] = []
		for await (const chunk of stream) {
			const delta = (chunk.choices[0]?.delta ?? {}) as { reasoning_content?: string; reasoning_details?: Array<{ signature?: string }> }
			reasoning += delta.reasoning_content ?? ''
			for (const d of delta.reasoning_details ?? []) if (d.signature) signatures.push(d.signature)
		}
		expect(reasoning).toBe('Thinking.')
		expect(signatures).toEqual(['sig-A'])
	})

	it('should surface a mid-stream error as an APIError carrying our message', async () => {
		const events: StreamEvent[] = [
			{ type: 'start', id: 'x', model: 'm' },
			{ type: 'block_start', index: 0, block: { kind: 'text' } },
			{ type: 'text_delta', index: 0, text: 'part' },
			{ type: 'error', error: new GatewayError('upstream', 'upstream went away') },
		]
		const stream = await openaiClient(events).chat.completions.create({ ...params, stream: true })
		const read = async () => {
			for await (const _ of stream) void _
		}
		const err = await read().then(
			() => undefined,
			(e: unknown) => e,
		)
		expect(err).toBeInstanceOf(APIError)
		expect((err as APIError).message).toContain('upstream went away')
	})

	it('should accept a recorded upstream stream decoded and re-encoded end to end', async () => {
		const events = await collect(decodeStream(fixtureFrames('parallel-tools.sse')))
		const completion = await openaiClient(events).chat.completions.stream(params).finalChatCompletion()
		expect(completion.choices[0].message.tool_calls?.map((c) => (c.type === 'function' ? [c.id, c.function.arguments] : []))).toEqual([
			['call_paris', '{"city": "Paris"}'],
			['call_tokyo', '{"city": "Tokyo"}'],
		])
		expect(completion.usage?.total_tokens).toBe(120)
	})
})

describe('openai-chat encodeStream with the Vercel AI SDK', () => {
	const tools = {
		get_weather: tool({ inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } } }) }),
		get_time: tool({ inputSchema: jsonSchema<Record<string, never>>({ type: 'object', properties: {} }) }),
	}

	async function run(events: StreamEvent[]) {
		const provider = createOpenAI({ apiKey: 'sk-test', baseURL: 'http://gateway.test/v1', fetch: fetchOf(events) })
		// maxRetries 0: the AI SDK retries a retryable stream error that arrives before any output.
		const result = streamText({ model: provider.chat('client-model'), prompt: 'Weather?', tools, maxRetries: 0, onError: () => {} })
		return collect(result.fullStream)
	}

	it('should pass the strict chunk schema and rebuild text, tool calls, finish reason and usage', async () => {
		const parts = await run(agentTurn())
		expect(parts.filter((p) => p.type === 'error')).toEqual([])
		const text = parts.map((p) => (p.type === 'text-delta' ? p.text : '')).join('')
		expect(text).toBe('Let me check.')
		const calls = parts.flatMap((p) => (p.type === 'tool-call' ? [{ id: p.toolCallId, name: p.toolName, input: p.input }] : []))
		expect(calls).toEqual([
			{ id: 'toolu_A', name: 'get_weather', input: { city: 'Paris' } },
			{ id: 'toolu_B__ts_Z2VtaW5p', name: 'get_time', input: {} },
		])
		const finish = parts.find((p) => p.type === 'finish')
		if (finish?.type !== 'finish') throw new Error('no finish part')
		expect(finish.finishReason).toBe('tool-calls')
		expect(finish.totalUsage.inputTokens).toBe(100)
		expect(finish.totalUsage.outputTokens).toBe(42)
		expect(finish.totalUsage.inputTokenDetails.cacheReadTokens).toBe(90)
		expect(finish.totalUsage.outputTokenDetails.reasoningTokens).toBe(12)
	})

	it('should report a mid-stream error frame as an error the SDK classifies by its type (429 for rate limits)', async () => {
		const parts = await run([
			{ type: 'start', id: 'x', model: 'm' },
			{ type: 'error', error: new GatewayError('rate_limit', 'slow down') },
		])
		const error = parts.find((p) => p.type === 'error')
		if (error?.type !== 'error') throw new Error('no error part')
		expect(String(error.error)).toContain('slow down')
		expect((error.error as { statusCode?: number }).statusCode).toBe(429)
	})
})
