/**
 * Feeds encodeStream / encodeResponse output to the official Anthropic SDK and to the Vercel AI SDK
 * (`@ai-sdk/anthropic`, strict zod chunk schemas) through a custom `fetch`, and checks what they reconstruct.
 */
import { describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { createAnthropic } from '@ai-sdk/anthropic'
import { streamText } from 'ai'
import { GatewayError } from '../../../../src/core/errors'
import type { StreamEvent } from '../../../../src/core/events'
import { UNSIGNED_THINKING_TAG } from '../../../../src/core/signatures'
import { anthropicMessages } from '../../../../src/protocols/anthropic-messages'
import { fakeFetch, fixtureFrames, from, sseResponse } from './helpers'

const ctx = { model: 'claude-client', countInputTokens: () => 42 }
// The AI SDK logs compatibility warnings for unknown model names; they are noise here.
;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false

/** A Response factory per request: the body stream can only be read once. */
type Serve = () => Response
const sdk = (serve: Serve) => new Anthropic({ apiKey: 'sk-test', maxRetries: 0, fetch: fakeFetch(serve) })
const aiSdk = (serve: Serve) => createAnthropic({ apiKey: 'sk-test', fetch: fakeFetch(serve) })('claude-client')
const streamOf =
	(events: StreamEvent[]): Serve =>
	() =>
		sseResponse(anthropicMessages.encodeStream(from(events), ctx))
/** An upstream fixture decoded to canonical events and re-encoded for the client. */
const fixtureStream =
	(name: string): Serve =>
	() =>
		sseResponse(anthropicMessages.encodeStream(anthropicMessages.decodeStream(fixtureFrames(name)), ctx))

const params = { model: 'claude-client', max_tokens: 1024, messages: [{ role: 'user' as const, content: 'Hi' }] }

const openaiLike: StreamEvent[] = [
	{ type: 'start', id: 'chatcmpl-1', model: 'gpt-4o' },
	{ type: 'block_start', index: 0, block: { kind: 'thinking' } },
	{ type: 'thinking_delta', index: 0, text: 'Let me think.' },
	{ type: 'block_stop', index: 0 },
	{ type: 'block_start', index: 1, block: { kind: 'text' } },
	{ type: 'text_delta', index: 1, text: 'Checking ' },
	{ type: 'text_delta', index: 1, text: 'both.' },
	{ type: 'block_stop', index: 1 },
	{ type: 'block_start', index: 2, block: { kind: 'tool_call', id: 'call_a', name: 'get_weather' } },
	{ type: 'json_delta', index: 2, json: '{"city":"Pa' },
	{ type: 'json_delta', index: 2, json: 'ris"}' },
	{ type: 'block_stop', index: 2 },
	{ type: 'block_start', index: 3, block: { kind: 'tool_call', id: 'call_b', name: 'get_weather', signature: 'c2ln' } },
	{ type: 'json_delta', index: 3, json: '{"city":"Tokyo"}' },
	{ type: 'block_stop', index: 3 },
	{ type: 'finish', reason: 'end_turn' },
	{ type: 'usage', usage: { input: 100, output: 30, cacheRead: 50, cacheWrite: 0, reasoning: 10 } },
]

describe('Anthropic SDK on encodeStream output', () => {
	it('should reconstruct text, thinking, parallel tool calls, stop reason and usage', async () => {
		const msg = await sdk(streamOf(openaiLike)).messages.stream(params).finalMessage()
		expect(msg.model).toBe('claude-client')
		expect(msg.id).toMatch(/^msg_/)
		expect(msg.stop_reason).toBe('tool_use')
		expect(msg.content).toEqual([
			{ type: 'thinking', thinking: 'Let me think.', signature: UNSIGNED_THINKING_TAG },
			{ type: 'text', text: 'Checking both.' },
			{ type: 'tool_use', id: 'call_a', name: 'get_weather', input: { city: 'Paris' } },
			{ type: 'tool_use', id: 'call_b__ts_c2ln', name: 'get_weather', input: { city: 'Tokyo' } },
		] as never)
		expect(msg.usage).toMatchObject({ input_tokens: 100, output_tokens: 30, cache_read_input_tokens: 50, cache_creation_input_tokens: 0 })
	})

	it('should reconstruct a re-encoded Anthropic thinking stream with its signature and redacted block', async () => {
		const msg = await sdk(fixtureStream('thinking.sse')).messages.stream(params).finalMessage()
		expect(msg.content).toEqual([
			{
				type: 'thinking',
				thinking: 'The user said hello. I should greet back.',
				signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+ZsO4Kb2xW6==',
			},
			{ type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj' },
			{ type: 'text', text: 'Hello! How can I help?' },
		] as never)
		expect(msg.usage).toMatchObject({ input_tokens: 778, output_tokens: 120 })
	})

	it('should keep cache counters from message_start when message_delta repeats them', async () => {
		const msg = await sdk(fixtureStream('usage-cache.sse')).messages.stream(params).finalMessage()
		expect(msg.usage).toMatchObject({
			input_tokens: 12,
			output_tokens: 42,
			cache_read_input_tokens: 30000,
			cache_creation_input_tokens: 1500,
		})
	})

	it('should surface a mid-stream error event as an APIError with its type', async () => {
		const stream = await sdk(fixtureStream('error-mid.sse')).messages.create({ ...params, stream: true })
		const seen: string[] = []
		const run = async () => {
			for await (const ev of stream) seen.push(ev.type)
		}
		const err = await run().then(
			() => undefined,
			(e: unknown) => e,
		)
		expect(err).toBeInstanceOf(Anthropic.APIError)
		expect((err as InstanceType<typeof Anthropic.APIError>).message).toContain('Overloaded')
		expect(seen).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop'])
	})

	it('should parse a non-streaming encodeResponse body', async () => {
		const body = anthropicMessages.encodeResponse(
			{
				id: 'chatcmpl-x',
				model: 'gpt-4o',
				content: [{ type: 'text', text: 'Hi there' }],
				stopReason: 'end_turn',
				usage: { input: 3, output: 2, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
			},
			ctx,
		)
		const msg = await sdk(() => Response.json(body)).messages.create(params)
		expect(msg.content).toEqual([{ type: 'text', text: 'Hi there' }] as never)
		expect(msg.usage.input_tokens).toBe(3)
	})

	it('should raise the encoded error body as a typed SDK error', async () => {
		const { status, body, headers } = anthropicMessages.encodeError(new GatewayError('rate_limit', 'slow down', { retryAfter: 2 }))
		const err = await sdk(() => Response.json(body, { status, headers }))
			.messages.create(params)
			.then(
				() => undefined,
				(e: unknown) => e,
			)
		expect(err).toBeInstanceOf(Anthropic.RateLimitError)
	})
})

describe('Vercel AI SDK (@ai-sdk/anthropic) on encodeStream output', () => {
	it('should accept every chunk and reconstruct text, reasoning, tool calls and usage', async () => {
		const result = streamText({ model: aiSdk(streamOf(openaiLike)), prompt: 'Hi', maxOutputTokens: 1024 })
		const errors: unknown[] = []
		for await (const part of result.fullStream) if (part.type === 'error') errors.push(part.error)
		expect(errors).toEqual([])
		expect(await result.text).toBe('Checking both.')
		expect(await result.reasoningText).toBe('Let me think.')
		const calls = await result.toolCalls
		expect(calls.map((c) => [c.toolCallId, c.toolName, c.input])).toEqual([
			['call_a', 'get_weather', { city: 'Paris' }],
			['call_b__ts_c2ln', 'get_weather', { city: 'Tokyo' }],
		])
		expect(await result.finishReason).toBe('tool-calls')
		const usage = await result.usage
		expect(usage.inputTokens).toBe(150)
		expect(usage.outputTokens).toBe(30)
	})

	it('should accept a re-encoded Anthropic fixture with pings, thinking signatures and redacted thinking', async () => {
		const result = streamText({ model: aiSdk(fixtureStream('thinking.sse')), prompt: 'Hi', maxOutputTokens: 1024 })
		const errors: unknown[] = []
		for await (const part of result.fullStream) if (part.type === 'error') errors.push(part.error)
		expect(errors).toEqual([])
		expect(await result.text).toBe('Hello! How can I help?')
		expect(await result.finishReason).toBe('stop')
	})
})
