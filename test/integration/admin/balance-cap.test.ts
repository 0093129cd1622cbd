/**
 * An output cap the balance cannot cover is lowered to what it covers (README, Billing), and the lowered cap must be
 * the one the vendor applies, with the rest of the caller's settings kept. Gemini's REST API reads every field under
 * its lowerCamel or its snake_case name, and of two spellings of one field keeps the one written last (ProtoJSON): a
 * cap written as `generationConfig` beside the caller's `generation_config` replaces the caller's whole config (its
 * stop sequences, thinking budget, schema) or, written first, is ignored, and the answer runs to the caller's cap
 * while the hold covers only the lowered one. Sent here with `@google/genai`'s `extraBody`, as a caller writing the
 * REST field names of Google's curl samples does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import { startGeminiMock, startOpenAIMock, type VendorMock } from '../../mocks'
import { configOf } from '../../mocks/gemini/read'
import { type TestApp, startTestApp } from '../../helpers/app'

/** 10 and 30 micro-USD a token: $0.001 affords about 30 answer tokens after a short prompt. */
const PRICE = { input_per_mtok: 10, output_per_mtok: 30 }

let mock: VendorMock
let openai: VendorMock
let app: TestApp
beforeAll(async () => {
	mock = await startGeminiMock({ apiKey: 'up-g' })
	openai = await startOpenAIMock({ apiKey: 'up-o' })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'g', type: 'gemini', base_url: mock.url, api_key: 'up-g', models: ['cap-gemini', 'cap-voice'], model_map: { 'cap-gemini': 'gemini-2.5-flash', 'cap-voice': 'gemini-2.5-flash' } },
				{ name: 'o', type: 'openai', base_url: openai.url, api_key: 'up-o', models: ['cap-gpt'], model_map: { 'cap-gpt': 'gpt-4o-mini' } },
			],
			models: [
				{ name: 'cap-gemini', ...PRICE },
				{ name: 'cap-gpt', ...PRICE },
				// Spoken answers at ten times the text price: 300 micro-USD a token.
				{ name: 'cap-voice', ...PRICE, audio_output_per_mtok: 300 },
			],
		},
	})
}, 60_000)
afterAll(async () => {
	await app.close()
	await mock.stop()
	await openai.stop()
})

const gemini = (key: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: app.url, apiVersion: 'v1beta' } })

/** The generation config the vendor reads from the last request, as Google reads two spellings of it. */
const upstreamConfig = () => configOf(mock.requests.at(-1)!.body as Record<string, unknown>)

describe('a cap the balance cannot cover, written in snake_case (Gemini)', () => {
	for (const stream of [false, true]) {
		it(`should reach the vendor lowered, with the caller's other settings kept${stream ? ' (stream)' : ''}`, async () => {
			const { accountId, key } = await app.account(0.001)
			const extraBody = { generation_config: { max_output_tokens: 1_000_000, stop_sequences: ['STOP'] } }
			const params = { model: 'cap-gemini', contents: 'tell me #stop', config: { httpOptions: { extraBody } } }
			let text = ''
			if (stream) for await (const c of await gemini(key).models.generateContentStream(params)) text += c.text ?? ''
			else text = (await gemini(key).models.generateContent(params)).text ?? ''
			const cfg = upstreamConfig()
			// The cap lowered to what $0.001 affords, in the config Google reads.
			expect(cfg.maxOutputTokens ?? cfg.max_output_tokens).toBeLessThanOrEqual(33)
			// The caller's stop sequence still applies: the answer ends before it.
			expect(text).toContain('one two')
			expect(text).not.toContain('STOP')
			expect(await app.balance(accountId)).toBeGreaterThanOrEqual(0)
		})
	}

	it('should bill an answer running to the lowered cap within the balance', async () => {
		const { accountId, key } = await app.account(0.001)
		const extraBody = { generation_config: { max_output_tokens: 1_000_000 } }
		// `#length`: the vendor answers exactly as many words as the cap it applies.
		const r = await gemini(key).models.generateContent({ model: 'cap-gemini', contents: 'tell me #length', config: { httpOptions: { extraBody } } })
		expect(r.usageMetadata!.candidatesTokenCount!).toBeLessThanOrEqual(33)
		const balance = await app.balance(accountId)
		expect(balance).toBeGreaterThanOrEqual(0)
		const rows = (await app.admin(`/api/usage?account_id=${accountId}`)).body.data
		expect(rows).toHaveLength(1)
		expect(Math.round(rows[0].cost * 1e6)).toBe(1000 - Math.round(balance * 1e6))
	})

	it('should be read from the spelling Google reads when converted for another vendor (OpenAI)', async () => {
		const { accountId, key } = await app.account(0.001)
		const extraBody = { generation_config: { max_output_tokens: 1_000_000, stop_sequences: ['STOP'] } }
		const text = (await gemini(key).models.generateContent({ model: 'cap-gpt', contents: 'tell me #stop', config: { httpOptions: { extraBody } } })).text
		const sent = openai.requests.at(-1)!.body as { max_tokens?: number; stop?: string[] }
		expect(sent.max_tokens).toBeLessThanOrEqual(33)
		expect(sent.stop).toEqual(['STOP'])
		expect(text).not.toContain('STOP')
		expect(await app.balance(accountId)).toBeGreaterThanOrEqual(0)
	})

	it('should hold a spoken answer asked in snake_case at the audio price: 402 when the balance cannot cover a minimal one', async () => {
		const { accountId, key } = await app.account(0.001)
		mock.reset()
		// 16 audio tokens (the smallest answer held for) cost $0.0048: more than the balance. At the text price they fit.
		const extraBody = { generation_config: { response_modalities: ['AUDIO'] } }
		const err = await gemini(key)
			.models.generateContent({ model: 'cap-voice', contents: 'say hello to my friends', config: { httpOptions: { extraBody } } })
			.then(() => undefined, (e: { status?: number; message?: string }) => e)
		expect(err?.status).toBe(402)
		expect(JSON.parse(err!.message!)).toMatchObject({ error: { code: 402, status: 'RESOURCE_EXHAUSTED' } })
		expect(mock.requests).toHaveLength(0)
		expect(await app.balance(accountId)).toBe(0.001)
	})
})
