/**
 * Upstream connections are reused across streamed requests. A vendor's body ends just after its stream's terminator
 * (the chunked encoding's last chunk), often in a separate read; a relay that aborts the call at the terminator
 * closes the connection, and every next request to the vendor pays a new TCP and TLS handshake. The upstream here
 * ends each body 30 ms after the terminator and counts the connections it was sent requests on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { startTestApp, type TestApp } from '../../helpers/app'

let app: TestApp
let upstream: ReturnType<typeof Bun.serve>
/** Client ports the upstream saw requests from, by path: one per connection. */
const connections = new Map<string, Set<number>>()

const REQUESTS = 5

const chunk = (delta: Record<string, unknown>, finish: string | null = null, usage?: Record<string, number>) =>
	`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: usage ? [] : [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: usage ?? null })}\n\n`
const CHAT_STREAM = [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hello' }), chunk({}, 'stop'), chunk({}, null, { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 }), 'data: [DONE]\n\n'].join('')

const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
const MESSAGES_STREAM = [
	event('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-haiku-4-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 3, output_tokens: 1 } } }),
	event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
	event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hello' } }),
	event('content_block_stop', { index: 0 }),
	event('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } }),
	event('message_stop', {}),
].join('')

const response = (status: string, extra: Record<string, unknown> = {}) => ({ id: 'resp_1', object: 'response', created_at: 1, model: 'gpt-4o-mini', status, output: [], ...extra })
const RESPONSES_STREAM = [
	event('response.created', { sequence_number: 0, response: response('in_progress') }),
	event('response.output_text.delta', { sequence_number: 1, item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hello' }),
	event('response.completed', { sequence_number: 2, response: response('completed', { usage: { input_tokens: 3, output_tokens: 1, total_tokens: 4 } }) }),
].join('')

/** The whole stream in one write, and the body's end 30 ms later. */
const endsLate = (text: string) =>
	new Response(
		new ReadableStream({
			start(c) {
				c.enqueue(new TextEncoder().encode(text))
				setTimeout(() => {
					try {
						c.close()
					} catch {
						// The gateway aborted the call before the end (what these tests catch).
					}
				}, 30)
			},
		}),
		{ headers: { 'content-type': 'text/event-stream' } },
	)

beforeAll(async () => {
	upstream = Bun.serve({
		port: 0,
		hostname: '127.0.0.1',
		fetch(req, server) {
			const path = new URL(req.url).pathname
			const seen = connections.get(path) ?? new Set()
			seen.add(server.requestIP(req)!.port)
			connections.set(path, seen)
			if (path === '/v1/messages') return endsLate(MESSAGES_STREAM)
			if (path === '/v1/responses') return endsLate(RESPONSES_STREAM)
			return endsLate(CHAT_STREAM)
		},
	})
	const base = `http://127.0.0.1:${upstream.port}`
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'oai', type: 'openai', base_url: `${base}/v1`, api_key: 'up-key', models: ['gpt-4o-mini'] },
				{ name: 'ant', type: 'anthropic', base_url: base, api_key: 'up-key', models: ['claude-haiku-4-5'] },
			],
			models: [
				{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 },
				{ name: 'claude-haiku-4-5', input_per_mtok: 1, output_per_mtok: 2 },
			],
		} as never,
	})
})

afterAll(async () => {
	await app.close()
	upstream.stop(true)
})

/** Runs `one` REQUESTS times, one after another, and returns how many connections `path` was served on. */
async function connectionsFor(path: string, one: () => Promise<void>): Promise<number> {
	connections.delete(path)
	for (let i = 0; i < REQUESTS; i++) {
		await one()
		// Let the relay read the body's end (30 ms after the terminator) before the next request asks for a connection.
		await Bun.sleep(60)
	}
	return connections.get(path)?.size ?? 0
}

describe('upstream connections after a finished stream', () => {
	it('should be reused by the next chat stream (fast path)', async () => {
		const { key } = await app.account(10)
		const client = new OpenAI({ baseURL: `${app.url}/v1`, apiKey: key, maxRetries: 0 })
		const n = await connectionsFor('/v1/chat/completions', async () => {
			let text = ''
			for await (const c of await client.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] }))
				text += c.choices[0]?.delta?.content ?? ''
			expect(text).toBe('Hello')
		})
		expect(n).toBe(1)
	})

	it('should be reused by the next converted stream (messages client, OpenAI upstream)', async () => {
		const { key } = await app.account(10)
		const client = new Anthropic({ baseURL: app.url, apiKey: key, maxRetries: 0 })
		const n = await connectionsFor('/v1/chat/completions', async () => {
			const m = await client.messages.stream({ model: 'gpt-4o-mini', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).finalMessage()
			expect(m.content).toMatchObject([{ type: 'text', text: 'Hello' }])
		})
		expect(n).toBe(1)
	})

	it('should be reused by the next messages stream (fast path)', async () => {
		const { key } = await app.account(10)
		const client = new Anthropic({ baseURL: app.url, apiKey: key, maxRetries: 0 })
		const n = await connectionsFor('/v1/messages', async () => {
			const m = await client.messages.stream({ model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).finalMessage()
			expect(m.content).toMatchObject([{ type: 'text', text: 'Hello' }])
		})
		expect(n).toBe(1)
	})

	it('should be reused by the next verbatim Responses stream', async () => {
		const { key } = await app.account(10)
		const n = await connectionsFor('/v1/responses', async () => {
			const res = await fetch(`${app.url}/v1/responses`, {
				method: 'POST',
				headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
				body: JSON.stringify({ model: 'gpt-4o-mini', input: 'hi', stream: true }),
			})
			expect(await res.text()).toBe(RESPONSES_STREAM)
		})
		expect(n).toBe(1)
	})
})
