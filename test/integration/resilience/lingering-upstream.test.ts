/**
 * An upstream that sends its whole stream, terminator included, and then keeps the connection open (some
 * OpenAI-compatible servers close late, or send keepalive comments after `[DONE]`). The relay must end the client's
 * stream at the terminator, on the fast path, through conversion and on the verbatim Responses relay, and bill it as
 * a finished request, not wait for the upstream to close.
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

/** Bodies the gateway gave up on (it aborts a call whose body stays open past the grace after the terminator). */
let released = 0

/** A response whose body is `text` and then nothing more: it stays open until the gateway lets go or the test ends. */
const lingering = (text: string) => {
	let ctl: ReadableStreamDefaultController
	return new Response(
		new ReadableStream({
			start(c) {
				ctl = c
				c.enqueue(new TextEncoder().encode(text))
				open.add(c)
			},
			cancel() {
				open.delete(ctl)
				released++
			},
		}),
		{ headers: { 'content-type': 'text/event-stream' } },
	)
}

/** Waits until the gateway has let go of one more upstream body than `before`: after the grace (DRAIN_GRACE_MS). */
async function releasedSince(before: number) {
	for (let i = 0; i < 60 && released <= before; i++) await Bun.sleep(50)
	return released - before
}

const response = (status: string, extra: Record<string, unknown> = {}) => ({ id: 'resp_1', object: 'response', created_at: 1, model: 'gpt-4o-mini', status, output: [], ...extra })
const item = { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hello there', annotations: [] }] }
/** A Responses stream as OpenAI sends it, `sequence_number`s and all, ending with response.completed. */
const RESPONSES_STREAM = [
	['response.created', { response: response('in_progress') }],
	['response.in_progress', { response: response('in_progress') }],
	['response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } }],
	['response.content_part.added', { item_id: 'msg_1', output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }],
	['response.output_text.delta', { item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hello' }],
	['response.output_text.delta', { item_id: 'msg_1', output_index: 0, content_index: 0, delta: ' there' }],
	['response.output_text.done', { item_id: 'msg_1', output_index: 0, content_index: 0, text: 'Hello there' }],
	['response.content_part.done', { item_id: 'msg_1', output_index: 0, content_index: 0, part: item.content[0] }],
	['response.output_item.done', { output_index: 0, item }],
	['response.completed', { response: response('completed', { output: [item], usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } } }) }],
]
	.map(([type, data], i) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: i, ...(data as object) })}\n\n`)
	.join('')

beforeAll(async () => {
	upstream = Bun.serve({
		port: 0,
		hostname: '127.0.0.1',
		idleTimeout: 0,
		fetch(req) {
			if (new URL(req.url).pathname === '/v1/responses') return lingering(RESPONSES_STREAM)
			const body = [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hello' }), chunk({ content: ' there' }), chunk({}, 'stop'), chunk({}, null, { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 }), 'data: [DONE]\n\n']
			return lingering(body.join(''))
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
	it('should end the chat stream (fast path) at [DONE], bill it, and let go of the upstream after the grace', async () => {
		const { key, accountId } = await app.account(10)
		const before = released
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
		expect(await releasedSince(before)).toBe(1)
	})

	it('should end the converted messages stream at the upstream terminator, bill it, and let go of the upstream', async () => {
		const { key, accountId } = await app.account(10)
		const before = released
		const client = new Anthropic({ baseURL: app.url, apiKey: key, maxRetries: 0 })
		const message = await within(client.messages.stream({ model: 'gpt-4o-mini', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).finalMessage(), 5_000)
		expect(message.content).toMatchObject([{ type: 'text', text: 'Hello there' }])
		expect(message.stop_reason).toBe('end_turn')
		expect(message.usage.output_tokens).toBe(2)
		const usage = await app.admin(`/api/usage?account_id=${accountId}`)
		expect(usage.body.data[0]).toMatchObject({ input_tokens: 3, output_tokens: 2, end_reason: 'ok', status: 200 })
		expect(await releasedSince(before)).toBe(1)
	})

	it('should end the verbatim Responses stream at response.completed, forward its bytes as sent, bill it, and let go of the upstream', async () => {
		const { key, accountId } = await app.account(10)
		const before = released
		const body = await within(
			(async () => {
				const res = await fetch(`${app.url}/v1/responses`, {
					method: 'POST',
					headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
					body: JSON.stringify({ model: 'gpt-4o-mini', input: 'hi', stream: true }),
				})
				expect(res.status).toBe(200)
				return res.text()
			})(),
			5_000,
		)
		expect(body).toBe(RESPONSES_STREAM)
		const usage = await app.admin(`/api/usage?account_id=${accountId}`)
		expect(usage.body.data[0]).toMatchObject({ endpoint: '/v1/responses', input_tokens: 3, output_tokens: 2, end_reason: 'ok', status: 200 })
		expect(await releasedSince(before)).toBe(1)
	})
})
