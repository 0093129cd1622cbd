/**
 * A vendor's error sent mid-stream, after content, is its own words; some repeat the credentials and the address they
 * were called with (a self-hosted server's "failure for key … at http://host:port/…"). Before the stream such an error
 * reaches the caller with the channel's key and host cut (routing/attempts.ts); after content it did so verbatim, on
 * the fast path and converted. Here an upstream of each protocol sends content, then such an error, and each
 * official SDK's stream must fail with the vendor's message, the key and host cut out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { startTestApp, type TestApp } from '../../helpers/app'

const KEY = 'up-key-aaaa-SECRET-1111'
let upstream: ReturnType<typeof Bun.serve>
let app: TestApp
let key: string

const sse = (frames: string[]) => new Response(frames.join(''), { headers: { 'content-type': 'text/event-stream' } })
const event = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`

beforeAll(async () => {
	upstream = Bun.serve({
		hostname: '127.0.0.1',
		port: 0,
		fetch(req) {
			const url = new URL(req.url)
			const said = `internal failure for key ${KEY} at ${url.origin}${url.pathname}`
			if (url.pathname.endsWith('/chat/completions')) {
				const chunk = (delta: object) => `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`
				return sse([chunk({ role: 'assistant', content: 'Hello' }), chunk({ content: ' world' }), `data: ${JSON.stringify({ error: { message: said, type: 'server_error', param: null, code: null } })}\n\n`])
			}
			return sse([
				event('message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-6', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } }),
				event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
				event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello world' } }),
				event('error', { type: 'error', error: { type: 'api_error', message: said } }),
			])
		},
	})
	const base = `http://127.0.0.1:${upstream.port}`
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'oa', type: 'openai', base_url: `${base}/v1`, api_key: KEY, models: ['gpt-m'], model_map: { 'gpt-m': 'gpt-4o-mini' } },
				{ name: 'an', type: 'anthropic', base_url: base, api_key: KEY, models: ['claude-m'], model_map: { 'claude-m': 'claude-sonnet-4-6' } },
			],
			models: [
				{ name: 'gpt-m', input_per_mtok: 1, output_per_mtok: 2 },
				{ name: 'claude-m', input_per_mtok: 1, output_per_mtok: 2 },
			],
		},
	})
	key = (await app.account(5)).key
}, 60_000)
afterAll(async () => {
	await app.close()
	upstream.stop(true)
})

/** The error a stream ended with, and the text it delivered before. */
async function openaiStream(model: string) {
	const client = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
	let text = ''
	try {
		for await (const c of await client.chat.completions.create({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] })) text += c.choices[0]?.delta.content ?? ''
	} catch (e) {
		return { text, message: (e as Error).message }
	}
	return { text, message: undefined }
}

async function anthropicStream(model: string) {
	const client = new Anthropic({ apiKey: key, baseURL: app.url, maxRetries: 0 })
	let text = ''
	try {
		for await (const e of await client.messages.create({ model, max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'hi' }] }))
			if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text
	} catch (e) {
		return { text, message: (e as Error).message }
	}
	return { text, message: undefined }
}

describe("a vendor's error after content", () => {
	for (const [client, model, path] of [
		['openai', 'gpt-m', 'fast path'],
		['anthropic', 'claude-m', 'fast path'],
		['openai', 'claude-m', 'converted'],
		['anthropic', 'gpt-m', 'converted'],
	] as const)
		it(`should reach the ${client} SDK with the channel's key and host cut (${model}, ${path})`, async () => {
			const got = await (client === 'openai' ? openaiStream : anthropicStream)(model)
			expect(got.text).toBe('Hello world')
			expect(got.message).toContain('internal failure for key *** at the upstream')
			expect(got.message).not.toContain('SECRET')
			expect(got.message).not.toContain(`127.0.0.1:${upstream.port}`)
		})
})
