/**
 * The fast path relays an upstream read that holds only whole frames as the upstream's own bytes (src/core/sse.ts,
 * `bytesOf`): the client must then get exactly what the vendor sent, and whatever the relay must change or leave out
 * (the usage chunk it asked for, a renamed model, frames after the terminator, comments) must still be changed or left
 * out. The upstream here writes each answer in one piece, so every stream is one read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { startTestApp, type TestApp } from '../../helpers/app'

let app: TestApp
let upstream: ReturnType<typeof Bun.serve>

const chunk = (delta: Record<string, unknown>, finish: string | null = null, usage?: Record<string, number>) =>
	`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: usage ? [] : [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: usage ?? null })}\n\n`

const USAGE = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 }
/** A stream as OpenAI sends it, with non-ASCII text and an `id:` line (kept in a frame's raw text). */
const STREAM = [chunk({ role: 'assistant', content: '' }), `id: 7\n${chunk({ content: 'Grüße' })}`, chunk({ content: ' 👋' }), chunk({}, 'stop'), chunk({}, null, USAGE), 'data: [DONE]\n\n'].join('')

/** What the upstream answers, by the prompt's text. */
const BODIES: Record<string, string> = {
	plain: STREAM,
	// A frame after the terminator, in the same read: never relayed.
	'after-done': `${STREAM}data: {"stray":true}\n\n`,
	// A keepalive comment among the frames: the parser drops it, so the read is not relayed as bytes.
	comment: STREAM.replace('data: [DONE]', ': keepalive\n\ndata: [DONE]'),
}

beforeAll(async () => {
	upstream = Bun.serve({
		port: 0,
		hostname: '127.0.0.1',
		async fetch(req) {
			const body = (await req.json()) as { messages: Array<{ content: string }> }
			return new Response(BODIES[body.messages[0]!.content], { headers: { 'content-type': 'text/event-stream' } })
		},
	})
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'whole-reads', type: 'openai', base_url: `http://127.0.0.1:${upstream.port}/v1`, api_key: 'up-key', models: ['gpt-4o-mini', 'alias-m'], model_map: { 'alias-m': 'gpt-4o-mini' } },
			],
			models: [
				{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 },
				{ name: 'alias-m', input_per_mtok: 1, output_per_mtok: 2 },
			],
		} as never,
	})
})

afterAll(async () => {
	await app.close()
	upstream.stop(true)
})

async function streamed(key: string, prompt: string, opts: { model?: string; includeUsage?: boolean } = {}) {
	const res = await fetch(`${app.url}/v1/chat/completions`, {
		method: 'POST',
		headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
		body: JSON.stringify({ model: opts.model ?? 'gpt-4o-mini', stream: true, ...(opts.includeUsage === false ? {} : { stream_options: { include_usage: true } }), messages: [{ role: 'user', content: prompt }] }),
	})
	expect(res.status).toBe(200)
	return new Uint8Array(await res.arrayBuffer())
}

const dataOf = (text: string) => text.split('\n').filter((l) => l.startsWith('data: '))

describe('fast-path streams relayed as the upstream sent them', () => {
	it("should give the client the upstream's bytes exactly, and bill the stream", async () => {
		const { key, accountId } = await app.account(10)
		expect(await streamed(key, 'plain')).toEqual(new TextEncoder().encode(STREAM))
		const usage = await app.admin(`/api/usage?account_id=${accountId}`)
		expect(usage.body.data[0]).toMatchObject({ input_tokens: 3, output_tokens: 2, end_reason: 'ok', status: 200 })
	})

	it('should read the same stream through the OpenAI SDK', async () => {
		const { key } = await app.account(10)
		const client = new OpenAI({ baseURL: `${app.url}/v1`, apiKey: key, maxRetries: 0 })
		let text = ''
		let usage: unknown
		const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'plain' }] })
		for await (const c of stream) {
			text += c.choices[0]?.delta?.content ?? ''
			if (c.usage) usage = c.usage
		}
		expect(text).toBe('Grüße 👋')
		expect(usage).toEqual(USAGE)
	})

	it('should end at [DONE] when the same read holds more after it', async () => {
		const { key } = await app.account(10)
		expect(new TextDecoder().decode(await streamed(key, 'after-done'))).toBe(STREAM)
	})

	it('should leave out a comment the upstream sent among the frames', async () => {
		const { key } = await app.account(10)
		expect(new TextDecoder().decode(await streamed(key, 'comment'))).toBe(STREAM)
	})

	it('should still strip the usage chunk the client did not ask for', async () => {
		const { key } = await app.account(10)
		const text = new TextDecoder().decode(await streamed(key, 'plain', { includeUsage: false }))
		expect(text).not.toContain('"usage"')
		expect(text).toContain('Grüße')
		expect(text.endsWith('data: [DONE]\n\n')).toBe(true)
	})

	it('should still show the model under the name the client asked for', async () => {
		const { key } = await app.account(10)
		const text = new TextDecoder().decode(await streamed(key, 'plain', { model: 'alias-m' }))
		// Frames the relay rewrote are formatted afresh (each then repeats the last event id, as SSE keeps it).
		expect(dataOf(text)).toEqual(dataOf(STREAM.replaceAll('"model":"gpt-4o-mini"', '"model":"alias-m"')))
	})
})
