/**
 * Request bodies: the fast path forwards the client's own body text when it changes nothing in it (no
 * re-serialisation of what it only relays) and serialises the rewritten body when it does change something (here: a
 * model_map alias); integer fields take JSON numbers only, as the vendors' own APIs do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startTestApp, type TestApp } from '../../helpers/app'

let app: TestApp
let upstream: ReturnType<typeof Bun.serve>
const received: string[] = []

const completion = JSON.stringify({
	id: 'chatcmpl-1',
	object: 'chat.completion',
	created: 1,
	model: 'gpt-raw',
	choices: [{ index: 0, message: { role: 'assistant', content: 'ok', refusal: null }, logprobs: null, finish_reason: 'stop' }],
	usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
})

beforeAll(async () => {
	upstream = Bun.serve({
		hostname: '127.0.0.1',
		port: 0,
		async fetch(req) {
			received.push(await req.text())
			return new Response(completion, { headers: { 'content-type': 'application/json' } })
		},
	})
	const base_url = `http://127.0.0.1:${upstream.port}/v1`
	const price = (name: string) => ({ name, input_per_mtok: 1, output_per_mtok: 2 })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'raw', type: 'openai', base_url, api_key: 'up-key', models: ['gpt-raw'] },
				{ name: 'raw-alias', type: 'openai', base_url, api_key: 'up-key', models: ['raw-alias'], model_map: { 'raw-alias': 'gpt-raw' } },
			],
			models: [price('gpt-raw'), price('raw-alias')],
		},
	})
}, 60_000)
afterAll(async () => {
	await app.close()
	upstream.stop(true)
})

const post = async (text: string) => {
	const acct = await app.account(10)
	return fetch(`${app.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${acct.key}`, 'content-type': 'application/json' }, body: text })
}
const send = async (text: string) => {
	const res = await post(text)
	expect(res.status).toBe(200)
	await res.text()
	return received[received.length - 1]
}

describe('fast path body', () => {
	it('should forward the client body text byte for byte when nothing in it changes', async () => {
		// Spacing, key order and an escape JSON.stringify would write differently.
		const text = '{ "messages": [ { "content": "caf\\u00e9", "role": "user" } ],\n  "model": "gpt-raw", "max_tokens": 16 }'
		expect(await send(text)).toBe(text)
	})

	it('should append what it adds (the usage option of a stream) to the client text rather than serialise it again', async () => {
		const text = '{ "messages": [ { "content": "caf\\u00e9", "role": "user" } ],\n  "model": "gpt-raw", "stream": true }'
		const before = received.length
		// This upstream answers JSON to a stream request (the gateway then answers 502): only what it was sent matters here.
		await (await post(text)).text()
		expect(received.length).toBeGreaterThan(before)
		expect(received[before]).toBe('{ "messages": [ { "content": "caf\\u00e9", "role": "user" } ],\n  "model": "gpt-raw", "stream": true ,"stream_options":{"include_usage":true}}')
	})

	it('should send the rewritten body when the model is renamed upstream', async () => {
		const body = { model: 'raw-alias', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }
		expect(JSON.parse((await send(JSON.stringify(body)))!)).toEqual({ ...body, model: 'gpt-raw' })
	})
})

describe('integer fields', () => {
	it('should reject a numeric string with 400 naming the field, before any upstream call', async () => {
		const before = received.length
		const res = await post(JSON.stringify({ model: 'gpt-raw', max_tokens: '16', messages: [{ role: 'user', content: 'hi' }] }))
		expect(res.status).toBe(400)
		expect((await res.json()).error).toMatchObject({ type: 'invalid_request_error', param: 'max_tokens' })
		expect(received.length).toBe(before)
	})
})
