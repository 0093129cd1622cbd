/**
 * The Claude Agent SDK (Claude Code 2.1.332 underneath) pointed at the gateway with a GPT, Gemini or Claude model,
 * replayed from the shape it was seen sending (claude-agent-sdk-shape.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { AGENT_SDK_ENV, AGENT_SDK_HEADERS, agentSdkBody } from './claude-agent-sdk-shape'
import { lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, UPSTREAMS } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const ASK = 'What is two plus two?'

/** Streams one request through the Anthropic SDK as Claude Code does; the text and thinking it showed. */
async function send(key: string, body: object): Promise<{ text: string; thinking: string; stop: string | null }> {
	const client = new Anthropic({ apiKey: key, baseURL: m.app.url, maxRetries: 0, defaultHeaders: AGENT_SDK_HEADERS })
	const stream = await client.beta.messages.create(body as never)
	let text = ''
	let thinking = ''
	let stop: string | null = null
	for await (const e of stream as unknown as AsyncIterable<any>) {
		if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text
		if (e.type === 'content_block_delta' && e.delta.type === 'thinking_delta') thinking += e.delta.thinking
		if (e.type === 'message_delta') stop = e.delta.stop_reason
	}
	return { text, thinking, stop }
}

describe('Claude Agent SDK', () => {
	for (const up of UPSTREAMS)
		it(`should take adaptive thinking with display "updates" (its default), from ${up}`, async () => {
			// Refused as an unknown display, the SDK lost two calls per request before retrying without it.
			const acct = await m.account()
			const out = await send(acct.key, agentSdkBody(MODEL[up], [{ role: 'user', content: [{ type: 'text', text: ASK }] }, AGENT_SDK_ENV]))
			expect(out.text).toBe(`Hello! You said: ${ASK}`)
			expect(out.stop).toBe('end_turn')
			const sent = lastRequest(m.mocks[up]).body
			// Claude gets it as written; Gemini, which has no progress notes, shows its thoughts as when no display is named.
			if (up === 'anthropic') expect(sent.thinking).toEqual({ type: 'adaptive', display: 'updates' })
			if (up === 'gemini') expect(sent.generationConfig.thinkingConfig.includeThoughts).toBe(true)
			if (up !== 'openai') expect(out.thinking).toBe(`Let me think about ${ASK}.`)
		})
})
