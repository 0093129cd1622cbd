/**
 * WIRE-NOTES #19 (BerriAI/litellm PR #37322): a stream that goes silent (slow reasoning) gets SSE comments, so proxies'
 * idle timeouts do not cut it, and clients still parse it (comments are ignored by SSE parsers).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startOpenAIMock } from '../../mocks'

let app: TestApp
let mock: Awaited<ReturnType<typeof startOpenAIMock>>

beforeAll(async () => {
	// Chunks 0.6 s apart, keepalive after 150 ms of silence.
	mock = await startOpenAIMock({ apiKey: 'up-key', chunkDelayMs: 600 })
	app = await startTestApp({
		env: { SSE_KEEPALIVE_MS: '150' },
		config: {
			channels: [{ name: 'slow', type: 'openai', base_url: mock.url, api_key: 'up-key', models: ['gpt-slow'] }],
			models: [{ name: 'gpt-slow', input_per_mtok: 1, output_per_mtok: 1 }],
		},
	})
}, 120_000)
afterAll(async () => {
	await app.close()
	await mock.stop()
})

describe('SSE keepalive', () => {
	// The two slow streams (seconds each) run together; each test reads its own.
	let chat: Promise<string>
	let sdk: Promise<Anthropic.Message>
	beforeAll(() => {
		chat = (async () => {
			const { key } = await app.account(1)
			const res = await fetch(`${app.url}/v1/chat/completions`, {
				method: 'POST',
				headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
				body: JSON.stringify({ model: 'gpt-slow', stream: true, messages: [{ role: 'user', content: 'take your time' }] }),
			})
			return res.text()
		})()
		sdk = (async () => {
			const { key } = await app.account(1)
			const client = new Anthropic({ apiKey: key, baseURL: app.url })
			return client.messages.stream({ model: 'gpt-slow', max_tokens: 50, messages: [{ role: 'user', content: 'slowly' }] }).finalMessage()
		})()
		for (const p of [chat, sdk]) p.catch(() => {}) // each test awaits its own, and fails with it
	})

	it('should send comments while a chat stream is silent, and still end with [DONE]', async () => {
		const text = await chat
		expect(text).toContain(': keepalive\n\n')
		expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true)
	}, 60_000)

	it('should keep an Anthropic SDK stream readable with comments in it', async () => {
		const msg = await sdk
		expect(msg.content[0]).toMatchObject({ type: 'text', text: 'Hello! You said: slowly' })
	}, 60_000)
})
