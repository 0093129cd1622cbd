/**
 * An upstream that answers 200, starts its stream, and resets the connection before any content: the failure happens
 * inside the first-content window, while nothing has reached the client, so it must fail over like any other
 * upstream failure (a read error there used to escape as a 500 "Internal error").
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'

let app: TestApp
let good: VendorMock
let resets = 0
let bad: ReturnType<typeof Bun.serve>

beforeAll(async () => {
	good = await startOpenAIMock({ apiKey: 'up-key' })
	bad = Bun.serve({
		port: 0,
		hostname: '127.0.0.1',
		fetch() {
			resets++
			// Headers and the role-only chunk go out, then the body errors (the connection is cut).
			return new Response(
				new ReadableStream({
					async start(c) {
						c.enqueue(new TextEncoder().encode('data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n'))
						await Bun.sleep(20)
						c.error(new Error('reset'))
					},
				}),
				{ headers: { 'content-type': 'text/event-stream' } },
			)
		},
	})
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'resets', type: 'openai', base_url: `http://127.0.0.1:${bad.port}/v1`, api_key: 'up-key', models: ['gpt-4o-mini'], priority: 0 },
				{ name: 'good', type: 'openai', base_url: `${good.url}`, api_key: 'up-key', models: ['gpt-4o-mini'], priority: 1 },
			],
			models: [{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 }],
		} as never,
	})
})

afterAll(async () => {
	await app.close()
	bad.stop(true)
	await good.stop()
})

describe('a reset inside the first-content window', () => {
	it('should fail over to the next channel and bill that answer once', async () => {
		const { key, accountId } = await app.account(10)
		const client = new OpenAI({ baseURL: `${app.url}/v1`, apiKey: key, maxRetries: 0 })
		const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'after a reset' }] })
		let text = ''
		for await (const c of stream) text += c.choices[0]?.delta?.content ?? ''
		expect(resets).toBe(1)
		expect(text).toBe('Hello! You said: after a reset')
		const rows = (await app.admin(`/api/usage?account_id=${accountId}`)).body.data as Array<{ channel: string; status: number; end_reason: string }>
		expect(rows.map((r) => [r.channel, r.status, r.end_reason])).toEqual([['good', 200, 'ok']])
	})
})
