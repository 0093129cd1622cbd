/**
 * A stream's status line, headers and first frames leave in one write when the upstream's first chunk is at hand
 * (one TCP segment on loopback: one syscall and one segment fewer per stream than headers sent alone), on the fast
 * path and through a conversion.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startTestApp, type TestApp } from '../../helpers/app'
import { rawPieces, rawPost } from '../../helpers/raw-pieces'
import { startOpenAIMock } from '../../mocks'

let app: TestApp
let mock: Awaited<ReturnType<typeof startOpenAIMock>>

beforeAll(async () => {
	mock = await startOpenAIMock({ apiKey: 'up-key' })
	app = await startTestApp({
		config: {
			channels: [{ name: 'fast', type: 'openai', base_url: mock.url, api_key: 'up-key', models: ['gpt-fast'] }],
			models: [{ name: 'gpt-fast', input_per_mtok: 1, output_per_mtok: 1 }],
		},
	})
}, 120_000)
afterAll(async () => {
	await app.close()
	await mock.stop()
})

/** POSTs from another process and returns the pieces its socket delivered. */
async function post(path: string, headers: Record<string, string>, body: string): Promise<string[]> {
	const url = new URL(app.url)
	return (await rawPieces(Number(url.port), rawPost(url.host, path, headers, body))).map((p) => p.text)
}

describe('first write of a stream', () => {
	it('should carry the headers and the first frames of a chat stream (fast path)', async () => {
		const { key } = await app.account(1)
		const body = JSON.stringify({ model: 'gpt-fast', max_tokens: 256, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] })
		const pieces = await post('/v1/chat/completions', { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body)
		expect(pieces[0]).toStartWith('HTTP/1.1 200')
		expect(pieces[0]).toContain('text/event-stream')
		expect(pieces[0]).toContain('data: {')
		expect(pieces.join('')).toContain('data: [DONE]')
	})

	it('should carry the headers and the first frames of a converted messages stream', async () => {
		const { key } = await app.account(1)
		const body = JSON.stringify({ model: 'gpt-fast', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] })
		const pieces = await post('/v1/messages', { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, body)
		expect(pieces[0]).toStartWith('HTTP/1.1 200')
		expect(pieces[0]).toContain('event: message_start')
		expect(pieces.join('')).toContain('event: message_stop')
	})
})
