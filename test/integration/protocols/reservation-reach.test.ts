/**
 * The reservation prices only the token kinds its request can produce (src/relay/reach.ts): through the official
 * SDKs, a text request to a model priced for audio keeps the output cap a key's spend limit covers at the text price,
 * while one that asks for audio (OpenAI `modalities`, Gemini `responseModalities`, a text-to-speech model) has it
 * lowered to what the limit covers at the audio price; an Anthropic prompt is reserved at the 1-hour cache-write price
 * only when it asks for 1-hour caching (an OpenAI client: prompt_cache_retention 24h). The cap each request was sent upstream is read from the mocks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import { anthropicMessages } from '../../../src/protocols/anthropic-messages'
import { openaiChat } from '../../../src/protocols/openai-chat'
import { boundInputTokens } from '../../../src/relay/estimate'
import { type Account, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix } from './harness'

/** A public name served by Gemini's text-to-speech model. */
const TTS = 'voice-g'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		models: [
			// gpt-m (base $0.15 / $0.60): audio at $40 in, $80 out (gpt-4o-audio-preview's ratio).
			{ name: MODEL.openai, audio_input_per_mtok: 40, audio_output_per_mtok: 80 },
			// gemini-m (base $0.30 / $2.50): audio output $10 (Gemini 2.5 Flash TTS).
			{ name: MODEL.gemini, audio_output_per_mtok: 10 },
			{ name: TTS, input_per_mtok: 0.5, output_per_mtok: 2.5, audio_output_per_mtok: 10 },
			// claude-m (base $3 / $15): 5-minute writes $3.75, 1-hour writes $6.
			{ name: MODEL.anthropic, cache_write_per_mtok: 3.75, cache_write_1h_per_mtok: 6 },
		],
		channels: (mocks) => [{ name: 'tts', type: 'gemini', base_url: mocks.gemini.url, api_key: 'up-gemini', models: [TTS], model_map: { [TTS]: 'gemini-2.5-flash-preview-tts' } }],
	})
}, SETUP_MS)
afterAll(() => m.close())

const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
const TEXT = 'read me the news of the day'

describe('audio output', () => {
	// 1,000 answer tokens: $0.0006 as text, $0.08 as audio; the key may spend $0.005.
	const limit = { spend_limit: 0.005 }

	it('should keep an OpenAI text request the cap its limit covers at the text price', async () => {
		const chat = await m.account(10, limit)
		await chat.openai.chat.completions.create({ model: MODEL.openai, max_tokens: 1000, messages: [{ role: 'user', content: TEXT }] })
		expect(lastRequest(m.mocks.openai).body.max_tokens).toBe(1000)
		// Converted from Anthropic's protocol, which cannot ask for audio.
		const messages = await m.account(10, limit)
		await messages.anthropic.messages.create({ model: MODEL.openai, max_tokens: 1000, messages: [{ role: 'user', content: TEXT }] })
		expect(lastRequest(m.mocks.openai).body.max_tokens).toBe(1000)
	})

	it('should lower the cap of an OpenAI request asking for audio to what its limit covers at the audio price', async () => {
		const acct = await m.account(10, limit)
		await acct.openai.chat.completions.create({ model: MODEL.openai, max_tokens: 1000, modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' }, messages: [{ role: 'user', content: TEXT }] })
		// (5,000 − input × $40 − 1) / $80 per token: under 62.
		const cap = lastRequest(m.mocks.openai).body.max_tokens as number
		expect(cap).toBeGreaterThan(50)
		expect(cap).toBeLessThan(5000 / 80)
	})

	it('should reserve Gemini audio output only for responseModalities AUDIO or a text-to-speech model', async () => {
		// 1,000 answer tokens: $0.0025 as text, $0.01 as audio; the key may spend $0.004.
		const cap = async (model: string, config: Record<string, unknown>) => {
			const acct = await m.account(10, { spend_limit: 0.004 })
			await genai(acct).models.generateContent({ model, contents: TEXT, config: { maxOutputTokens: 1000, ...config } })
			return lastRequest(m.mocks.gemini).body.generationConfig.maxOutputTokens as number
		}
		expect(await cap(MODEL.gemini, {})).toBe(1000)
		// (4,000 − input − 1) / $10 per token: just under 400.
		for (const lowered of [await cap(MODEL.gemini, { responseModalities: ['AUDIO'] }), await cap(TTS, {})]) {
			expect(lowered).toBeGreaterThan(390)
			expect(lowered).toBeLessThan(400)
		}
		// An OpenAI client of the TTS model, converted: still an audio answer.
		const acct = await m.account(10, { spend_limit: 0.004 })
		await acct.openai.chat.completions.create({ model: TTS, max_tokens: 1000, messages: [{ role: 'user', content: TEXT }] })
		expect(lastRequest(m.mocks.gemini).body.generationConfig.maxOutputTokens).toBeLessThan(400)
	})
})

describe('Anthropic 1-hour cache writes', () => {
	it('should reserve the prompt at the 1-hour write price only when a cache_control asks for one hour', async () => {
		const system = 'word '.repeat(600).trimEnd()
		const body = (ttl?: '5m' | '1h') => ({
			model: MODEL.anthropic,
			max_tokens: 1000,
			system: [{ type: 'text' as const, text: system, cache_control: { type: 'ephemeral' as const, ...(ttl && { ttl }) } }],
			messages: [{ role: 'user' as const, content: TEXT }],
		})
		const bound = boundInputTokens(anthropicMessages.decodeRequest(body()))
		// A limit between the two bounds: input × $3.75 + 1,000 × $15 fits, input × $6 + 1,000 × $15 does not.
		const limit = 15_000 + bound * 5
		const sent = async (ttl?: '5m' | '1h') => {
			const acct = await m.account(10, { spend_limit: limit / 1e6 })
			await acct.anthropic.messages.create(body(ttl))
			return lastRequest(m.mocks.anthropic).body.max_tokens as number
		}
		expect(await sent()).toBe(1000)
		expect(await sent('5m')).toBe(1000)
		// (limit − input × $6 − 1) / $15 per token
		expect(await sent('1h')).toBe(Math.floor((limit - bound * 6 - 1) / 15))
	})
	it("should reserve an OpenAI client's prompt at the 1-hour write price when prompt_cache_retention 24h caches it for an hour", async () => {
		const body = (retention?: string) => ({
			model: MODEL.anthropic,
			max_tokens: 1000,
			prompt_cache_key: 'session',
			...(retention && { prompt_cache_retention: retention }),
			messages: [{ role: 'user' as const, content: 'word '.repeat(600).trimEnd() }],
		})
		const bound = boundInputTokens(openaiChat.decodeRequest(body()))
		const limit = 15_000 + bound * 5
		const sent = async (retention?: string) => {
			const acct = await m.account(10, { spend_limit: limit / 1e6 })
			await acct.openai.chat.completions.create(body(retention) as never)
			return lastRequest(m.mocks.anthropic).body.max_tokens as number
		}
		expect(await sent()).toBe(1000)
		expect(await sent('in_memory')).toBe(1000)
		expect(await sent('24h')).toBe(Math.floor((limit - bound * 6 - 1) / 15))
	})
})
