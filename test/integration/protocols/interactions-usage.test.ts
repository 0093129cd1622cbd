/**
 * The Interaction's `usage` for converted answers (https://ai.google.dev/api/interactions-api#Usage): besides the
 * totals, the per-modality breakdowns the upstream reported (`input_tokens_by_modality`, `cached_tokens_by_modality`,
 * `output_tokens_by_modality`, modalities `text` | `image` | `audio`), whole and on `interaction.completed`. A
 * breakdown is given only when the upstream split its counts (Gemini's `*TokensDetails`, OpenAI's `audio_tokens`):
 * Claude does not, and calling all of its input text would be false for an input with images. What Gemini's built-in
 * tools fed back (`toolUsePromptTokenCount`) is `total_tool_use_tokens`, apart from the input as Google gives it, billed
 * as input; chat and messages clients, which have no such field, get it in their input.
 */
import { GoogleGenAI } from '@google/genai'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { pngOf } from '../../helpers/png'
import { countWords, TOOL_USE_TOKENS } from '../../mocks'
import { chat, messages } from './clients'
import { expectCharges, MODEL, type Matrix, SETUP_MS, startMatrix } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

type Event = { event_type: string; interaction?: { usage?: Record<string, unknown> } }

/** The usage as the gateway sent it: @google/genai adds `initial_input_tokens` (the first hop's input) to a whole answer's. */
const sent = (u: unknown) => {
	const { initial_input_tokens: _, ...rest } = u as Record<string, unknown>
	return rest
}

const genai = (key: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })

describe('Interactions usage by modality', () => {
	for (const stream of [false, true])
		it(`should split a Gemini answer's input, cache reads and output by modality as Gemini reported them (${stream ? 'streamed' : 'whole'})`, async () => {
			const acct = await m.account()
			// The Gemini mock: `#audio` 10 uncached input tokens and 5 answer tokens as audio, `#cached-audio` 10 cache reads
			// (audio), `#image-out` 5 answer tokens as image; an image is 85 input tokens.
			const ask = 'tell me one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen twenty #audio #cached-audio #image-out'
			const input = [{ type: 'text', text: ask }, { type: 'image', data: Buffer.from(pngOf(2, 2)).toString('base64'), mime_type: 'image/png' }]
			let usage: Record<string, unknown> | undefined
			if (stream) {
				const events: Event[] = []
				for await (const e of (await genai(acct.key).interactions.create({ model: MODEL.gemini, input, stream: true } as never)) as unknown as AsyncIterable<Event>) events.push(e)
				usage = events.find((e) => e.event_type === 'interaction.completed')?.interaction?.usage
			} else usage = sent((await genai(acct.key).interactions.create({ model: MODEL.gemini, input } as never)).usage)
			const prompt = countWords(ask) + 85
			const output = countWords(`I see 1 image. Hello! You said: ${ask}`)
			expect(usage).toEqual({
				total_input_tokens: prompt,
				input_tokens_by_modality: [
					{ modality: 'text', tokens: prompt - 85 - 20 },
					{ modality: 'image', tokens: 85 },
					{ modality: 'audio', tokens: 20 },
				],
				total_cached_tokens: 10,
				cached_tokens_by_modality: [{ modality: 'audio', tokens: 10 }],
				total_output_tokens: output,
				output_tokens_by_modality: [
					{ modality: 'text', tokens: output - 10 },
					{ modality: 'audio', tokens: 5 },
					{ modality: 'image', tokens: 5 },
				],
				total_tokens: prompt + output,
			})
		})

	it("should split an OpenAI answer's audio tokens, and give Claude's usage with no breakdown", async () => {
		const acct = await m.account()
		const ask = 'say one two three four five six seven eight nine ten eleven twelve #audio'
		const openai = sent((await genai(acct.key).interactions.create({ model: MODEL.openai, input: ask } as never)).usage)
		const prompt = countWords(ask)
		expect(openai).toMatchObject({ total_input_tokens: prompt, input_tokens_by_modality: [{ modality: 'text', tokens: prompt - 10 }, { modality: 'audio', tokens: 10 }] })
		expect(openai.output_tokens_by_modality).toEqual([{ modality: 'text', tokens: (openai.total_output_tokens as number) - 5 }, { modality: 'audio', tokens: 5 }])
		const claude = sent((await genai(acct.key).interactions.create({ model: MODEL.anthropic, input: 'hello #cache there' } as never)).usage)
		expect(claude).toEqual({ total_input_tokens: 3, total_cached_tokens: 3, total_output_tokens: 6, total_tokens: 9 })
	})
})

describe('Interactions usage: tokens built-in tools fed back', () => {
	const ask = 'look it up #tool-use'
	const prompt = countWords(ask)
	const output = countWords(`Hello! You said: ${ask}`)

	for (const stream of [false, true])
		it(`should give Gemini's toolUsePromptTokenCount as total_tool_use_tokens, apart from total_input_tokens, billed as input (${stream ? 'streamed' : 'whole'})`, async () => {
			const acct = await m.account()
			let usage: Record<string, unknown> | undefined
			if (stream) {
				const events: Event[] = []
				for await (const e of (await genai(acct.key).interactions.create({ model: MODEL.gemini, input: ask, stream: true } as never)) as unknown as AsyncIterable<Event>) events.push(e)
				usage = events.find((e) => e.event_type === 'interaction.completed')?.interaction?.usage
			} else usage = sent((await genai(acct.key).interactions.create({ model: MODEL.gemini, input: ask } as never)).usage)
			expect(usage).toEqual({ total_input_tokens: prompt, total_tool_use_tokens: TOOL_USE_TOKENS, total_output_tokens: output, total_tokens: prompt + TOOL_USE_TOKENS + output })
			await expectCharges(m, acct, [{ model: MODEL.gemini, input: prompt + TOOL_USE_TOKENS, output, endpoint: '/v1beta/interactions', stream }])
		})

	it('should count them in the input of chat and messages clients, billed as input', async () => {
		const acct = await m.account()
		for (const stream of [false, true]) {
			const c = await chat(acct.openai, { model: MODEL.gemini, messages: [{ role: 'user', content: ask }] }, stream)
			expect(c.usage).toMatchObject({ input: prompt + TOOL_USE_TOKENS, output })
			const a = await messages(acct.anthropic, { model: MODEL.gemini, max_tokens: 64, messages: [{ role: 'user', content: ask }] } as never, stream)
			expect(a.usage).toMatchObject({ input: prompt + TOOL_USE_TOKENS, output })
		}
		const row = { model: MODEL.gemini, input: prompt + TOOL_USE_TOKENS, output }
		await expectCharges(m, acct, [
			{ ...row, stream: false },
			{ ...row, stream: false },
			{ ...row, stream: true },
			{ ...row, stream: true },
		])
	})
})
