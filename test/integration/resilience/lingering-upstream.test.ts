/**
 * An upstream that sends its whole stream, terminator included, and then keeps the connection open (some
 * OpenAI-compatible servers close late, or send keepalive comments after `[DONE]`). The relay must end the client's
 * stream at the terminator, on the fast path and through conversion, and bill it as a finished request, not wait
 * for the upstream to close.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { startTestApp, type TestApp } from '../../helpers/app'

let app: TestApp
let upstream: ReturnType<typeof Bun.serve>
const open = new Set<ReadableStreamDefaultController>()

const chunk = (delta: Record<string, unknown>, finish: string | null = null, usage?: Record<string, number>) =>
	`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: usage ? [] : [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: usage ?? null })}\n\n`

beforeAll(async () => {
	upstream = Bun.serve({
		port: 0,
		hostname: '127.0.0.1',
		idleTimeout: 0,
		fetch() {
			const body = [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hello' }), chunk({ content: ' there' }), chunk({}, 'stop'), chunk({}, null, { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 }), 'data: [DONE]\n\n']
			return new Response(
				new ReadableStream({
					start(c) {
						c.enqueue(new TextEncoder().encode(body.join('')))
						// …and nothing more: the body stays open until the test ends.
						open.add(c)
					},
				}),
				{ headers: { 'content-type': 'text/event-stream' } },
			)
		},
	})
	app = await startTestApp({
		config: {
			channels: [{ name: 'lingers', type: 'openai', base_url: `http://127.0.0.1:${upstream.port}/v1`, api_key: 'up-key', models: ['gpt-4o-mini'] }],
			models: [{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 }],
		} as never,
	})
})

afterAll(async () => {
	for (const c of open)
		try {
			c.close()
		} catch {
			// Already closed: the gateway released the call.
		}
	await app.close()
	upstream.stop(true)
})

/** Rejects when `p` takes longer than `ms`: a relay that waits for the upstream to close never finishes. */
const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, Bun.sleep(ms).then(() => Promise.reject(new Error(`still open after ${ms} ms`)))])

describe('an upstream that keeps its stream open after the terminator', () => {
	it('should end the chat stream (fast path) at [DONE] and bill it', async () => {
		const { key, accountId } = await app.account(10)
		const client = new OpenAI({ baseURL: `${app.url}/v1`, apiKey: key, maxRetries: 0 })
		const text = await within(
			(async () => {
				let t = ''
				const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] })
				for await (const c of stream) t += c.choices[0]?.delta?.content ?? ''
				return t
			})(),
			5_000,
		)
		expect(text).toBe('Hello there')
		const usage = await app.admin(`/api/usage?account_id=${accountId}`)
		expect(usage.body.data[0]).toMatchObject({ input_tokens: 3, output_tokens: 2, end_reason: 'ok', status: 200 })
	})

	it('should end the converted messages stream at the upstream terminator and bill it', async () => {
		const { key, accountId } = await app.account(10)
		const client = new Anthropic({ baseURL: app.url, apiKey: key, maxRetries: 0 })
		const message = await within(client.messages.stream({ model: 'gpt-4o-mini', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).finalMessage(), 5_000)
		expect(message.content).toMatchObject([{ type: 'text', text: 'Hello there' }])
		expect(message.stop_reason).toBe('end_turn')
		expect(message.usage.output_tokens).toBe(2)
		const usage = await app.admin(`/api/usage?account_id=${accountId}`)
		expect(usage.body.data[0]).toMatchObject({ input_tokens: 3, output_tokens: 2, end_reason: 'ok', status: 200 })
	})
})
