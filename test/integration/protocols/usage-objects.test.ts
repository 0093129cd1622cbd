/**
 * Converted answers carry the usage fields the client's vendor always sends, derived from the upstream's usage: an
 * Anthropic client gets `cache_creation` (by TTL), `output_tokens_details`, `service_tier` and `speed` from an OpenAI or Gemini model, an OpenAI chat
 * client gets every count of `prompt_tokens_details` / `completion_tokens_details` from a Claude or Gemini model,
 * streamed or not. Checked through the official SDKs' typed fields and the Vercel AI SDK's `providerMetadata`, which
 * read them from the wire (the same-protocol fast path relays the vendor's own usage and is not concerned).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createAnthropic } from '@ai-sdk/anthropic'
import { createOpenAI } from '@ai-sdk/openai'
import { generateText, streamText } from 'ai'
import { countWords } from '../../mocks'
import { type Matrix, MODEL, SETUP_MS, startMatrix, type Upstream } from './harness'

// The SDK warns on stderr about model names it does not know (ours are aliases).
;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

// 12 words, 10 of them read from the cache (`#cache`); the answer "Hello! You said: …" is 15 words.
const CACHED = 'one two three four five six seven eight nine ten eleven #cache'
const ANSWER = countWords(`Hello! You said: ${CACHED}`)

describe('an Anthropic client of another vendor', () => {
	for (const up of ['openai', 'gemini'] as Upstream[])
		for (const stream of [false, true])
			it(`should get cache_creation, output_tokens_details, service_tier and speed in its usage (${up}, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				const params = { model: MODEL[up], max_tokens: 200, messages: [{ role: 'user' as const, content: CACHED }] }
				let deltaUsage: unknown
				const msg = stream
					? await acct.anthropic.messages
							.stream(params)
							.on('streamEvent', (e) => {
								if (e.type === 'message_delta') deltaUsage = e.usage
							})
							.finalMessage()
					: await acct.anthropic.messages.create(params)
				// Anthropic sends the thinking count with every usage, 0 without thinking (promptfoo reads it as reasoning tokens).
				if (stream) expect(deltaUsage).toMatchObject({ output_tokens: ANSWER, output_tokens_details: { thinking_tokens: 0 } })
				expect(msg.usage).toEqual({
					input_tokens: 2,
					cache_creation_input_tokens: 0,
					cache_read_input_tokens: 10,
					cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
					output_tokens: ANSWER,
					output_tokens_details: { thinking_tokens: 0 },
					service_tier: 'standard',
					speed: 'standard',
				} as never)
			})

	for (const stream of [false, true])
		it(`should tell the AI SDK the tier an OpenAI model was served at (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const model = createAnthropic({ apiKey: acct.key, baseURL: `${m.app.url}/v1` })(MODEL.openai)
			// The OpenAI mock serves a project whose default tier is Priority at Priority, and says so in `service_tier`.
			const prompt = 'what is the weather like today #project-priority'
			const meta = stream ? await streamText({ model, prompt, maxOutputTokens: 200 }).providerMetadata : (await generateText({ model, prompt, maxOutputTokens: 200 })).providerMetadata
			expect(meta?.anthropic?.serviceTier).toBe('priority')
			expect((meta?.anthropic?.usage as Record<string, unknown>).cache_creation).toEqual({ ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 })
		})
})

describe('an OpenAI chat client of another vendor', () => {
	for (const up of ['anthropic', 'gemini'] as Upstream[])
		for (const stream of [false, true])
			it(`should get every count of the usage details (${up}, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				const params = { model: MODEL[up], messages: [{ role: 'user' as const, content: CACHED }] }
				let usage
				if (stream) {
					for await (const c of await acct.openai.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } })) usage = c.usage ?? usage
				} else usage = (await acct.openai.chat.completions.create(params)).usage
				expect(usage).toEqual({
					prompt_tokens: 12,
					completion_tokens: ANSWER,
					total_tokens: 12 + ANSWER,
					prompt_tokens_details: { cached_tokens: 10, audio_tokens: 0 },
					completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
				})
			})

	for (const stream of [false, true])
		it(`should give the AI SDK's OpenAI provider its prediction counts from a Claude model (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const model = createOpenAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1` }).chat(MODEL.anthropic)
			const r = stream ? streamText({ model, prompt: CACHED, maxOutputTokens: 200 }) : await generateText({ model, prompt: CACHED, maxOutputTokens: 200 })
			expect((await r.providerMetadata)?.openai).toMatchObject({ acceptedPredictionTokens: 0, rejectedPredictionTokens: 0 })
			expect((await r.usage).inputTokenDetails?.cacheReadTokens).toBe(10)
		})
})
