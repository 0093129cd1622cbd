/**
 * Token kinds vendors price apart, billed exactly through the official SDKs against the mock vendors: OpenAI audio
 * tokens (`prompt_tokens_details` / `completion_tokens_details.audio_tokens`), Gemini audio and image tokens by
 * modality (`promptTokensDetails` / `candidatesTokensDetails`), Anthropic 1-hour cache writes
 * (`cache_creation.ephemeral_1h_input_tokens`), OpenAI 12-hour ones (`cache_write_tokens_details.ttl_12h_tokens`) and
 * Gemini's long-context tier; on the same-protocol fast path and
 * converted, streamed or not, with the sub-counts shown to clients whose protocol has the field. Expected micro-USD are
 * worked out by hand from the mocks' word counts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import { pngOf } from '../../helpers/png'
import { countWords } from '../../mocks'
import { type Account, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, usageRows } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		models: [
			// gpt-m (base $0.15 / $0.60): audio at $40 in, $80 out; 30-minute cache writes $0.75, 12-hour ones $1.50
			// (5 and 10 times the input price, where GPT-5.6 writes at 1.25 times: apart enough for the sums to tell).
			{ name: MODEL.openai, audio_input_per_mtok: 40, audio_output_per_mtok: 80, cache_write_per_mtok: 0.75, cache_write_12h_per_mtok: 1.5 },
			// gemini-m (base $0.30 / $2.50, reads the input price): audio input $1, cached audio $0.10, image input $2, image output
			// $30; above 200k prompt tokens $0.60 / $3.75.
			{ name: MODEL.gemini, audio_input_per_mtok: 1, audio_cache_read_per_mtok: 0.1, image_input_per_mtok: 2, image_output_per_mtok: 30, input_above_200k_per_mtok: 0.6, output_above_200k_per_mtok: 3.75 },
			// claude-m (base $3 / $15, reads $0.30): 5-minute writes $3.75, 1-hour writes $6.
			{ name: MODEL.anthropic, cache_write_per_mtok: 3.75, cache_write_1h_per_mtok: 6 },
		],
	})
}, SETUP_MS)
afterAll(() => m.close())

const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
/** Costs of the account's requests in micro-USD, oldest first, and the balance's fall. */
async function charged(acct: Account): Promise<{ costs: number[]; spent: number }> {
	const rows = await usageRows(m, acct.accountId)
	const spent = Math.round(acct.balance * 1e6) - Math.round((await m.app.balance(acct.accountId)) * 1e6)
	return { costs: rows.map((r) => Math.round(r.cost * 1e6)), spent }
}

// 12 words, so 10 input tokens are audio; the answer "Hello! You said: …" is 15 words, 5 of them audio.
const AUDIO_TEXT = '#audio please read this recording back to me right now, thanks again'

describe('audio tokens', () => {
	// (12 − 10) × 0.15 + 10 × 40 + (15 − 5) × 0.60 + 5 × 80 = 0.3 + 400 + 6 + 400 = 806.3
	const GPT_AUDIO = 806

	it('should bill OpenAI audio tokens at the audio prices, through chat (fast path, streamed or not) and converted', async () => {
		expect(countWords(AUDIO_TEXT)).toBe(12)
		const acct = await m.account()
		const plain = await acct.openai.chat.completions.create({ model: MODEL.openai, max_tokens: 100, messages: [{ role: 'user', content: AUDIO_TEXT }] })
		expect(plain.usage?.prompt_tokens_details?.audio_tokens).toBe(10)
		expect(plain.usage?.completion_tokens_details?.audio_tokens).toBe(5)
		const stream = await acct.openai.chat.completions.create({ model: MODEL.openai, max_tokens: 100, stream: true, messages: [{ role: 'user', content: AUDIO_TEXT }] })
		for await (const _ of stream);
		await acct.anthropic.messages.create({ model: MODEL.openai, max_tokens: 100, messages: [{ role: 'user', content: AUDIO_TEXT }] })
		// A Gemini client sees the audio share of the prompt and of the answer by modality.
		const g = await genai(acct).models.generateContent({ model: MODEL.openai, contents: AUDIO_TEXT, config: { maxOutputTokens: 100 } })
		expect(g.usageMetadata?.promptTokensDetails).toEqual([
			{ modality: 'TEXT' as never, tokenCount: 2 },
			{ modality: 'AUDIO' as never, tokenCount: 10 },
		])
		expect(g.usageMetadata?.candidatesTokensDetails).toEqual([
			{ modality: 'TEXT' as never, tokenCount: 10 },
			{ modality: 'AUDIO' as never, tokenCount: 5 },
		])
		await m.app.svc.ledger.flush()
		expect(await charged(acct)).toEqual({ costs: [GPT_AUDIO, GPT_AUDIO, GPT_AUDIO, GPT_AUDIO], spent: 4 * GPT_AUDIO })
	})

	it('should bill Gemini audio input at its price and show it to an OpenAI client as audio_tokens', async () => {
		const acct = await m.account()
		// 2 × 0.30 + 10 × 1 + 15 × 2.50 = 0.6 + 10 + 37.5 = 48.1 (Gemini's audio output has no price here: text price)
		const chat = await acct.openai.chat.completions.create({ model: MODEL.gemini, max_tokens: 100, messages: [{ role: 'user', content: AUDIO_TEXT }] })
		expect(chat.usage?.prompt_tokens_details?.audio_tokens).toBe(10)
		expect(chat.usage?.completion_tokens_details?.audio_tokens).toBe(5)
		const stream = await genai(acct).models.generateContentStream({ model: MODEL.gemini, contents: AUDIO_TEXT, config: { maxOutputTokens: 100 } })
		for await (const _ of stream);
		await m.app.svc.ledger.flush()
		expect(await charged(acct)).toEqual({ costs: [48, 48], spent: 96 })
	})

	it('should bill Gemini cached audio (cacheTokensDetails AUDIO) at its price, and show it as audio in the prompt to OpenAI and Gemini clients', async () => {
		const acct = await m.account()
		// 12 words: 10 read from the cache, all audio; 2 plain input; the answer is 15 words.
		// 2 × 0.30 + 10 × 0.10 + 15 × 2.50 = 0.6 + 1 + 37.5 = 39.1 (at the text cache price: 0.6 + 3 + 37.5 = 41.1)
		const text = '#cached-audio please read this recording back to me right now, thanks again'
		expect(countWords(text)).toBe(12)
		const chat = await acct.openai.chat.completions.create({ model: MODEL.gemini, max_tokens: 100, messages: [{ role: 'user', content: text }] })
		expect(chat.usage?.prompt_tokens_details).toMatchObject({ cached_tokens: 10, audio_tokens: 10 })
		await acct.anthropic.messages.create({ model: MODEL.gemini, max_tokens: 100, messages: [{ role: 'user', content: text }] })
		const g = await genai(acct).models.generateContent({ model: MODEL.gemini, contents: text, config: { maxOutputTokens: 100 } })
		expect(g.usageMetadata?.cacheTokensDetails).toEqual([{ modality: 'AUDIO' as never, tokenCount: 10 }])
		await m.app.svc.ledger.flush()
		expect(await charged(acct)).toEqual({ costs: [39, 39, 39], spent: 117 })
	})

	it('should lower the output cap of a request asking for audio to what the limit covers at the audio output price', async () => {
		// $0.005 covers 100 answer tokens at the text price ($0.00006) but not at the audio price ($0.008).
		const acct = await m.account(10, { spend_limit: 0.005 })
		await acct.openai.chat.completions.create({ model: MODEL.openai, max_tokens: 100, modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' }, messages: [{ role: 'user', content: AUDIO_TEXT }] })
		const sent = lastRequest(m.mocks.openai).body.max_tokens as number
		expect(sent).toBeGreaterThan(15)
		expect(sent).toBeLessThan(5000 / 80)
	})
})

describe('image output tokens', () => {
	it('should bill Gemini image output tokens at the image price, whatever the client protocol', async () => {
		const acct = await m.account()
		// 4 words in; the 7-word answer's first 5 tokens are image: 4 × 0.30 + 5 × 30 + 2 × 2.50 = 1.2 + 150 + 5 = 156.2
		const text = '#image-out draw a cat'
		const g = await genai(acct).models.generateContent({ model: MODEL.gemini, contents: text, config: { maxOutputTokens: 100 } })
		expect(g.usageMetadata?.candidatesTokensDetails).toEqual([
			{ modality: 'TEXT' as never, tokenCount: 2 },
			{ modality: 'IMAGE' as never, tokenCount: 5 },
		])
		const stream = await acct.openai.chat.completions.create({ model: MODEL.gemini, max_tokens: 100, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: text }] })
		for await (const _ of stream);
		await acct.anthropic.messages.create({ model: MODEL.gemini, max_tokens: 100, messages: [{ role: 'user', content: text }] })
		await m.app.svc.ledger.flush()
		expect(await charged(acct)).toEqual({ costs: [156, 156, 156], spent: 468 })
	})
})

describe('image input tokens', () => {
	it("should bill the input images Gemini reports (promptTokensDetails IMAGE) at the model's image input price, whatever the client protocol", async () => {
		const acct = await m.account()
		// 3 words and one image (85 tokens, IMAGE) in; the answer "I see 1 image. Hello! You said: describe this picture" is
		// 10 words: 3 × 0.30 + 85 × 2 + 10 × 2.50 = 0.9 + 170 + 25 = 195.9
		const png = Buffer.from(pngOf(8, 8)).toString('base64')
		const text = 'describe this picture'
		const chat = await acct.openai.chat.completions.create({
			model: MODEL.gemini,
			max_tokens: 100,
			messages: [{ role: 'user', content: [{ type: 'text', text }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] }],
		})
		expect(chat.usage?.prompt_tokens).toBe(88)
		await acct.anthropic.messages.create({
			model: MODEL.gemini,
			max_tokens: 100,
			stream: true,
			messages: [{ role: 'user', content: [{ type: 'text', text }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }] }],
		}).then(async (s) => {
			for await (const _ of s);
		})
		const g = await genai(acct).models.generateContent({ model: MODEL.gemini, contents: [{ role: 'user', parts: [{ text }, { inlineData: { mimeType: 'image/png', data: png } }] }], config: { maxOutputTokens: 100 } })
		expect(g.usageMetadata?.promptTokensDetails).toEqual([
			{ modality: 'TEXT' as never, tokenCount: 3 },
			{ modality: 'IMAGE' as never, tokenCount: 85 },
		])
		await m.app.svc.ledger.flush()
		expect(await charged(acct)).toEqual({ costs: [196, 196, 196], spent: 588 })
	})
})

describe('Anthropic 1-hour cache writes', () => {
	it('should bill 1-hour writes at their price and 5-minute ones at the cache-write price', async () => {
		const acct = await m.account()
		// 12 words: 10 written to the cache, 2 plain input; the answer is 15 words.
		const oneHour = '#write-cache-1h keep this long system prompt around for the whole next hour'
		const fiveMin = '#write-cache keep this long system prompt around for just a few minutes'
		expect([countWords(oneHour), countWords(fiveMin)]).toEqual([12, 12])
		const a = await acct.anthropic.messages.create({ model: MODEL.anthropic, max_tokens: 100, messages: [{ role: 'user', content: oneHour }] })
		expect(a.usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 10 })
		const s = acct.anthropic.messages.stream({ model: MODEL.anthropic, max_tokens: 100, messages: [{ role: 'user', content: oneHour }] })
		await s.finalMessage()
		await acct.openai.chat.completions.create({ model: MODEL.anthropic, max_tokens: 100, messages: [{ role: 'user', content: oneHour }] })
		await acct.anthropic.messages.create({ model: MODEL.anthropic, max_tokens: 100, messages: [{ role: 'user', content: fiveMin }] })
		await m.app.svc.ledger.flush()
		// 1h: 2 × 3 + 10 × 6 + 15 × 15 = 6 + 60 + 225 = 291; 5m: 6 + 10 × 3.75 + 225 = 268.5 → 269
		expect(await charged(acct)).toEqual({ costs: [291, 291, 291, 269], spent: 3 * 291 + 269 })
	})
})

describe('OpenAI 12-hour cache writes', () => {
	// 12 words: 10 written to the cache, 2 plain input; the answer is 15 words.
	const twelveHours = '#write-cache-12h keep this long system prompt around for the next twelve hours'
	const halfHour = '#write-cache keep this long system prompt around for the next half hour'

	it('should bill 12-hour writes at their price and 30-minute ones at the cache-write price, through Responses and converted', async () => {
		expect([countWords(twelveHours), countWords(halfHour)]).toEqual([12, 12])
		const acct = await m.account()
		const r = await acct.openai.responses.create({ model: MODEL.openai, input: twelveHours, prompt_cache_options: { ttl: '12h' } })
		expect(r.usage?.input_tokens_details).toEqual({ cached_tokens: 0, cache_write_tokens: 10, cache_write_tokens_details: { ttl_30m_tokens: 0, ttl_12h_tokens: 10 } })
		await acct.openai.responses.stream({ model: MODEL.openai, input: twelveHours, prompt_cache_options: { ttl: '12h' } }).finalResponse()
		await acct.openai.responses.create({ model: MODEL.openai, input: halfHour })
		// An Anthropic client of the model sees the writes in its own field (chat completions report no TTL: 30 minutes).
		const claude = await acct.anthropic.messages.create({ model: MODEL.openai, max_tokens: 100, messages: [{ role: 'user', content: halfHour }] })
		expect(claude.usage.cache_creation_input_tokens).toBe(10)
		await m.app.svc.ledger.flush()
		// 12h: 2 × 0.15 + 10 × 1.50 + 15 × 0.60 = 0.3 + 15 + 9 = 24.3; 30m: 0.3 + 10 × 0.75 + 9 = 16.8
		expect(await charged(acct)).toEqual({ costs: [24, 24, 17, 17], spent: 2 * 24 + 2 * 17 })
	})

	it('should reserve a request that asks for 12-hour writes at their price', async () => {
		/** The output cap the OpenAI mock received under a $0.0001 key limit for 1,000 asked. */
		const sentCap = async (ttl?: '12h' | '30m') => {
			const acct = await m.account(10, { spend_limit: 0.0001 })
			await acct.openai.responses.create({ model: MODEL.openai, max_output_tokens: 1000, input: twelveHours, ...(ttl && { prompt_cache_options: { ttl } }) })
			return lastRequest(m.mocks.openai).body.max_output_tokens as number
		}
		// Every input token at the dearest input kind it may be billed as: 12h writes at $1.50 when asked, else 30-minute
		// ones at $0.75; the output at $0.60 a token takes what is left of the 100 micro-USD.
		const [long, short, unasked] = [await sentCap('12h'), await sentCap('30m'), await sentCap()]
		expect(short).toBe(unasked)
		expect(long).toBeLessThan(short)
		expect(short - long).toBeGreaterThanOrEqual(Math.floor((12 * 0.75) / 0.6))
	})
})

describe('the long-context tier', () => {
	it('should bill a prompt over 200k tokens at the long-context prices, and one at the threshold at the standard ones', async () => {
		const acct = await m.account()
		const over = `${'word '.repeat(200_000)}end`
		const at = 'word '.repeat(200_000).trimEnd()
		expect([countWords(over), countWords(at)]).toEqual([200_001, 200_000])
		// Capped at 10 answer tokens. Over: 200,001 × 0.60 + 10 × 3.75 = 120,000.6 + 37.5 = 120,038.1
		await acct.openai.chat.completions.create({ model: MODEL.gemini, max_tokens: 10, messages: [{ role: 'user', content: over }] })
		// At the threshold: 200,000 × 0.30 + 10 × 2.50 = 60,025
		await genai(acct).models.generateContent({ model: MODEL.gemini, contents: at, config: { maxOutputTokens: 10 } })
		await m.app.svc.ledger.flush()
		expect(await charged(acct)).toEqual({ costs: [120_038, 60_025], spent: 180_063 })
	}, 30_000)
})
