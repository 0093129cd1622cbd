/**
 * Real OpenAI-compatible vendors behind an `openai` channel, as Anthropic SDK and @google/genai clients see them (the
 * conversion path), and what each request is charged. The mock vendor (test/mocks/compat) replays each vendor's
 * documented stream and body byte for byte: DeepSeek reasoning and cache hits, OpenRouter comments, reasoning_details
 * and cost, Groq's x_groq.usage, servers that send no usage, Ollama's reused or missing tool-call index, Mistral's
 * whole tool calls and finish reasons, object arguments, CRLF / `data:` framing without [DONE], Azure's empty chunks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { FinishReason, type GenerateContentResponse, GoogleGenAI, Type } from '@google/genai'
import OpenAI from 'openai'
import { startTestApp, type TestApp } from '../../helpers/app'
import { COMPAT_MODELS, startCompatMock } from '../../mocks/compat'
import { AZURE_TEXT, AZURE_USAGE, FRAMING_TEXT, FRAMING_USAGE } from '../../mocks/compat/framing'
import { OPENROUTER_ERROR, XAI_TEXT, XAI_THINKING, XAI_USAGE, DEEPSEEK_TEXT, DEEPSEEK_THINKING, DEEPSEEK_USAGE, GROQ_TEXT, GROQ_USAGE, NOUSAGE_TEXT, OPENROUTER_SIGNATURE, OPENROUTER_TEXT, OPENROUTER_THINKING, OPENROUTER_USAGE } from '../../mocks/compat/reasoning'
import { CUT_TEXT, CUT_USAGE, MISTRAL_ID, MISTRAL_USAGE, PARIS, TOKYO, TWO_CALLS_USAGE } from '../../mocks/compat/tools'
import type { VendorMock } from '../../mocks'
import { type Answer, messages } from './clients'
import { SETUP_MS } from './harness'

const UP_KEY = 'up-compat'
/** USD per million tokens: input 1 µUSD a token, output 4, cache reads 0.1 (fractions, so the rounding is exercised). */
const PRICE = { input: 1, output: 4, cacheRead: 0.1 }

let app: TestApp
let mock: VendorMock
beforeAll(async () => {
	mock = startCompatMock({ apiKey: UP_KEY })
	app = await startTestApp({
		config: {
			channels: [{ name: 'ch-compat', type: 'openai', base_url: mock.url, api_key: UP_KEY, models: COMPAT_MODELS }],
			models: COMPAT_MODELS.map((name) => ({ name, input_per_mtok: PRICE.input, output_per_mtok: PRICE.output, cache_read_per_mtok: PRICE.cacheRead })),
		},
	})
}, SETUP_MS)
afterAll(async () => {
	await app?.close()
	await mock?.stop()
})

type Acct = { accountId: number; anthropic: Anthropic; genai: GoogleGenAI; openai: OpenAI }
async function account(): Promise<Acct> {
	const a = await app.account(10)
	return {
		accountId: a.accountId,
		anthropic: new Anthropic({ apiKey: a.key, baseURL: app.url, maxRetries: 0 }),
		genai: new GoogleGenAI({ apiKey: a.key, httpOptions: { baseUrl: app.url, apiVersion: 'v1beta' } }),
		openai: new OpenAI({ apiKey: a.key, baseURL: `${app.url}/v1`, maxRetries: 0 }),
	}
}

const WEATHER = { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } }

const ask = (acct: Acct, model: string, stream: boolean, tools = false): Promise<Answer> =>
	messages(acct.anthropic, { model, max_tokens: 512, messages: [{ role: 'user', content: 'hello there' }], ...(tools && { tools: [WEATHER] }) }, stream)

/**
 * One @google/genai call, streamed or not, as the SDK reads it. `showThoughts` asks for thought parts
 * (`thinkingConfig.includeThoughts`), without which Gemini's protocol gives none.
 */
async function generate(acct: Acct, model: string, stream: boolean, tools = false, showThoughts = false) {
	const params = {
		model,
		contents: 'hello there',
		...(tools && { config: { tools: [{ functionDeclarations: [{ name: 'get_weather', parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } } } }] }] } }),
		...(showThoughts && { config: { thinkingConfig: { includeThoughts: true } } }),
	}
	const chunks: GenerateContentResponse[] = stream ? [] : [await acct.genai.models.generateContent(params)]
	if (stream) for await (const c of await acct.genai.models.generateContentStream(params)) chunks.push(c)
	const parts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? [])
	const last = chunks[chunks.length - 1]!
	return {
		text: parts.filter((p) => !p.thought).map((p) => p.text ?? '').join(''),
		thoughts: parts.filter((p) => p.thought).map((p) => p.text ?? '').join(''),
		calls: parts.flatMap((p) => (p.functionCall ? [{ name: p.functionCall.name, args: p.functionCall.args }] : [])),
		finishReason: last.candidates?.[0]?.finishReason,
		usage: last.usageMetadata,
	}
}

type Row = { model: string; input_tokens: number; output_tokens: number; cached_tokens: number; reasoning_tokens: number; cost: number; estimated: boolean; end_reason: string; status: number }

async function lastRow(accountId: number): Promise<Row> {
	const r = await app.admin(`/api/usage?account_id=${accountId}`)
	expect(r.status).toBe(200)
	expect(r.body.data).toHaveLength(1)
	return r.body.data[0] as Row
}

/** µUSD for the tokens at PRICE, one exact sum and one half-up rounding (independent of the gateway's billing code). */
const micros = (input: number, cached: number, output: number) => Math.round((input - cached) * PRICE.input + cached * PRICE.cacheRead + output * PRICE.output)

/** The one usage row and the balance show exactly these vendor-reported tokens. */
async function expectBilled(acct: Acct, model: string, t: { input: number; cached?: number; output: number; reasoning?: number }) {
	const row = await lastRow(acct.accountId)
	const cached = t.cached ?? 0
	expect({ model: row.model, input: row.input_tokens, cached: row.cached_tokens, output: row.output_tokens, reasoning: row.reasoning_tokens, estimated: row.estimated, end: row.end_reason }).toEqual({
		model,
		input: t.input,
		cached,
		output: t.output,
		reasoning: t.reasoning ?? 0,
		estimated: false,
		end: 'ok',
	})
	const cost = micros(t.input, cached, t.output)
	expect(Math.round(row.cost * 1e6)).toBe(cost)
	expect(Math.round((await app.balance(acct.accountId)) * 1e6)).toBe(10_000_000 - cost)
}

const MODES = [false, true]
const how = (stream: boolean) => (stream ? 'stream' : 'non-stream')

describe('DeepSeek reasoner (reasoning_content, prompt_cache_hit_tokens, usage with finish_reason)', () => {
	const model = 'deepseek-reasoner'
	for (const stream of MODES) {
		it(`should give an Anthropic client the thinking, the text and the cache reads, and bill them (${how(stream)})`, async () => {
			const acct = await account()
			const a = await ask(acct, model, stream)
			expect(a.reasoning).toBe(DEEPSEEK_THINKING)
			expect(a.text).toBe(DEEPSEEK_TEXT)
			expect(a.stop).toBe('end_turn')
			expect(a.usage).toEqual({ input: 40, cached: 32, output: 30 })
			await expectBilled(acct, model, { input: 40, cached: 32, output: 30, reasoning: 12 })
		})
		it(`should give a Gemini client thought parts and usageMetadata with cached and thought tokens (${how(stream)})`, async () => {
			const acct = await account()
			const g = await generate(acct, model, stream, false, true)
			expect(g.thoughts).toBe(DEEPSEEK_THINKING)
			expect(g.text).toBe(DEEPSEEK_TEXT)
			expect(g.finishReason).toBe(FinishReason.STOP)
			expect(g.usage).toMatchObject({ promptTokenCount: 40, cachedContentTokenCount: 32, candidatesTokenCount: 18, thoughtsTokenCount: 12, totalTokenCount: 70 })
			await expectBilled(acct, model, { input: DEEPSEEK_USAGE.prompt_tokens, cached: 32, output: 30, reasoning: 12 })
		})
		it(`should give a Gemini client that did not ask for thoughts none, with the same text and counts (${how(stream)})`, async () => {
			const acct = await account()
			const g = await generate(acct, model, stream)
			expect(g.thoughts).toBe('')
			expect(g.text).toBe(DEEPSEEK_TEXT)
			expect(g.usage).toMatchObject({ promptTokenCount: 40, cachedContentTokenCount: 32, candidatesTokenCount: 18, thoughtsTokenCount: 12, totalTokenCount: 70 })
			await expectBilled(acct, model, { input: DEEPSEEK_USAGE.prompt_tokens, cached: 32, output: 30, reasoning: 12 })
		})
	}
})

describe('OpenRouter (comment lines, reasoning + reasoning_details with a signature, usage with cost)', () => {
	const model = 'openrouter-claude'
	for (const stream of MODES) {
		it(`should give an Anthropic client the signed thinking once, the text and the cache reads (${how(stream)})`, async () => {
			const acct = await account()
			const a = await ask(acct, model, stream)
			expect(a.reasoning).toBe(OPENROUTER_THINKING)
			expect(a.signatures).toEqual([OPENROUTER_SIGNATURE])
			expect(a.text).toBe(OPENROUTER_TEXT)
			expect(a.stop).toBe('end_turn')
			expect(a.usage).toEqual({ input: 50, cached: 30, output: 20 })
			await expectBilled(acct, model, { input: 50, cached: 30, output: 20, reasoning: 8 })
		})
		it(`should give a Gemini client the thought, the text and usageMetadata (${how(stream)})`, async () => {
			const acct = await account()
			const g = await generate(acct, model, stream, false, true)
			expect(g.thoughts).toBe(OPENROUTER_THINKING)
			expect(g.text).toBe(OPENROUTER_TEXT)
			expect(g.finishReason).toBe(FinishReason.STOP)
			expect(g.usage).toMatchObject({ promptTokenCount: 50, cachedContentTokenCount: 30, candidatesTokenCount: 12, thoughtsTokenCount: 8 })
			await expectBilled(acct, model, { input: OPENROUTER_USAGE.prompt_tokens, cached: 30, output: 20, reasoning: 8 })
		})
	}
})

describe("OpenRouter's mid-stream error (a chunk with `error` and finish_reason \"error\" after a 200)", () => {
	const model = 'openrouter-error'
	it('should end an Anthropic stream with an error event carrying the provider message, recorded as an error', async () => {
		const acct = await account()
		const err = await ask(acct, model, true).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(Anthropic.APIError)
		expect((err as Error).message).toContain(OPENROUTER_ERROR)
		const row = await lastRow(acct.accountId)
		expect(row.end_reason).toBe('error')
	})
	it('should end a Gemini stream with an error too', async () => {
		const acct = await account()
		const err = await generate(acct, model, true).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(Error)
		expect((err as Error).message).toContain(OPENROUTER_ERROR)
	})
})

describe('Groq (usage in x_groq.usage on the last chunk)', () => {
	const model = 'groq-llama'
	for (const stream of MODES) {
		it(`should show and bill the usage Groq reported, not an estimate (${how(stream)})`, async () => {
			const acct = await account()
			const a = await ask(acct, model, stream)
			expect(a.text).toBe(GROQ_TEXT)
			expect(a.stop).toBe('end_turn')
			expect(a.usage).toEqual({ input: GROQ_USAGE.prompt_tokens, cached: 0, output: GROQ_USAGE.completion_tokens })
			await expectBilled(acct, model, { input: 23, output: 19 })
		})
	}
	it('should bill an OpenAI client on the same-protocol fast path from x_groq.usage too (stream)', async () => {
		const acct = await account()
		const chunks = []
		for await (const c of await acct.openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hello there' }], stream: true })) chunks.push(c)
		expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(GROQ_TEXT)
		await expectBilled(acct, model, { input: 23, output: 19 })
	})
	it('should give a Gemini client the usage Groq reported (stream)', async () => {
		const acct = await account()
		const g = await generate(acct, model, true)
		expect(g.text).toBe(GROQ_TEXT)
		expect(g.usage).toMatchObject({ promptTokenCount: 23, candidatesTokenCount: 19, totalTokenCount: 42 })
		await expectBilled(acct, model, { input: 23, output: 19 })
	})
})

describe('xAI Grok (reasoning_tokens counted outside completion_tokens, inside total_tokens)', () => {
	const model = 'grok-mini'
	const output = XAI_USAGE.completion_tokens + XAI_USAGE.completion_tokens_details.reasoning_tokens
	for (const stream of MODES) {
		it(`should count the reasoning tokens as output for an Anthropic client and the bill (${how(stream)})`, async () => {
			const acct = await account()
			const a = await ask(acct, model, stream)
			expect(a.reasoning).toBe(XAI_THINKING)
			expect(a.text).toBe(XAI_TEXT)
			expect(a.usage).toEqual({ input: 32, cached: 6, output })
			await expectBilled(acct, model, { input: 32, cached: 6, output, reasoning: 94 })
		})
		it(`should give a Gemini client candidates and thoughts as xAI counted them (${how(stream)})`, async () => {
			const acct = await account()
			const g = await generate(acct, model, stream, false, true)
			expect(g.thoughts).toBe(XAI_THINKING)
			expect(g.usage).toMatchObject({ promptTokenCount: 32, cachedContentTokenCount: 6, candidatesTokenCount: 9, thoughtsTokenCount: 94, totalTokenCount: XAI_USAGE.total_tokens })
			await expectBilled(acct, model, { input: 32, cached: 6, output, reasoning: 94 })
		})
	}
})

describe('a server that sends no usage (usage: null on every chunk, no usage chunk)', () => {
	const model = 'vllm-nousage'
	const billed: Row[] = []
	for (const stream of MODES) {
		it(`should end the answer normally and bill a local estimate, marked estimated (${how(stream)})`, async () => {
			const acct = await account()
			const a = await ask(acct, model, stream)
			expect(a.text).toBe(NOUSAGE_TEXT)
			expect(a.stop).toBe('end_turn')
			const row = await lastRow(acct.accountId)
			expect({ estimated: row.estimated, end: row.end_reason, status: row.status }).toEqual({ estimated: true, end: 'ok', status: 200 })
			expect(row.input_tokens).toBeGreaterThan(0)
			expect(row.output_tokens).toBeGreaterThan(0)
			expect(Math.round(row.cost * 1e6)).toBe(micros(row.input_tokens, 0, row.output_tokens))
			// The client is shown the counts it is billed for, not zeros (WIRE-NOTES #12).
			expect(a.usage).toEqual({ input: row.input_tokens, cached: 0, output: row.output_tokens })
			billed.push(row)
		})
		it(`should show a Gemini client the counts it is billed for (${how(stream)})`, async () => {
			const acct = await account()
			const g = await generate(acct, model, stream)
			const row = await lastRow(acct.accountId)
			expect(row.estimated).toBe(true)
			expect(g.usage).toMatchObject({ promptTokenCount: row.input_tokens, candidatesTokenCount: row.output_tokens, totalTokenCount: row.input_tokens + row.output_tokens })
		})
	}
	it('should estimate a stream and a non-stream answer alike', () => {
		expect(billed).toHaveLength(2)
		expect(billed[1]!.input_tokens).toBe(billed[0]!.input_tokens)
		expect(billed[1]!.output_tokens).toBe(billed[0]!.output_tokens)
	})
})

describe('Ollama parallel tool calls (each whole in its own chunk, index reused or missing)', () => {
	for (const model of ['ollama-tools', 'noindex-tools'])
		for (const stream of MODES) {
			it(`should give an Anthropic client two tool_use blocks with their own arguments (${model}, ${how(stream)})`, async () => {
				const acct = await account()
				const a = await ask(acct, model, stream, true)
				expect(a.calls).toEqual([
					{ id: 'call_k3xq81nd', name: 'get_weather', args: PARIS },
					{ id: 'call_p2mz04ab', name: 'get_weather', args: TOKYO },
				])
				expect(a.stop).toBe('tool_use')
				expect(a.usage).toEqual({ input: 60, cached: 0, output: 16 })
				await expectBilled(acct, model, { input: TWO_CALLS_USAGE.prompt_tokens, output: 16 })
			})
			it(`should give a Gemini client two functionCall parts (${model}, ${how(stream)})`, async () => {
				const acct = await account()
				const g = await generate(acct, model, stream, true)
				expect(g.calls).toEqual([
					{ name: 'get_weather', args: PARIS },
					{ name: 'get_weather', args: TOKYO },
				])
				expect(g.finishReason).toBe(FinishReason.STOP)
				await expectBilled(acct, model, { input: 60, output: 16 })
			})
		}
})

describe('Mistral (9-character tool call id, whole call with finish_reason and usage in one chunk)', () => {
	const model = 'mistral-large'
	for (const stream of MODES) {
		it(`should give an Anthropic client the call under Mistral's id and send that id back with the result (${how(stream)})`, async () => {
			const acct = await account()
			const a = await ask(acct, model, stream, true)
			expect(a.calls).toEqual([{ id: MISTRAL_ID, name: 'get_weather', args: PARIS }])
			expect(a.stop).toBe('tool_use')
			expect(a.usage).toEqual({ input: MISTRAL_USAGE.prompt_tokens, cached: 0, output: MISTRAL_USAGE.completion_tokens })
			await expectBilled(acct, model, { input: 70, output: 25 })
			await acct.anthropic.messages.create({
				model,
				max_tokens: 512,
				tools: [WEATHER],
				messages: [{ role: 'user', content: 'hello there' }, a.replay, { role: 'user', content: [{ type: 'tool_result', tool_use_id: MISTRAL_ID, content: 'sunny' }] }],
			})
			const sent = mock.requests[mock.requests.length - 1]!.body as { messages: Array<Record<string, any>> }
			const assistant = sent.messages.find((x) => x.role === 'assistant')!
			const tool = sent.messages.find((x) => x.role === 'tool')!
			expect(assistant.tool_calls.map((c: { id: string }) => c.id)).toEqual([MISTRAL_ID])
			expect(tool.tool_call_id).toBe(MISTRAL_ID)
		})
		it(`should give a Gemini client the functionCall and finishReason STOP (${how(stream)})`, async () => {
			const acct = await account()
			const g = await generate(acct, model, stream, true)
			expect(g.calls).toEqual([{ name: 'get_weather', args: PARIS }])
			expect(g.finishReason).toBe(FinishReason.STOP)
			expect(g.usage).toMatchObject({ promptTokenCount: 70, candidatesTokenCount: 25 })
			await expectBilled(acct, model, { input: 70, output: 25 })
		})
	}
})

describe("Mistral's model_length finish reason (the model's context is full)", () => {
	const model = 'mistral-model-length'
	for (const stream of MODES) {
		it(`should tell an Anthropic client max_tokens and a Gemini client MAX_TOKENS, not a normal end (${how(stream)})`, async () => {
			const acct = await account()
			const a = await ask(acct, model, stream)
			expect(a.text).toBe(CUT_TEXT)
			expect(a.stop).toBe('max_tokens')
			const g = await generate(acct, model, stream)
			expect(g.text).toBe(CUT_TEXT)
			expect(g.finishReason).toBe(FinishReason.MAX_TOKENS)
		})
	}
})

describe("Mistral's error finish reason (generation failed)", () => {
	const model = 'mistral-error'
	it('should fail a non-stream Anthropic request rather than return the partial text as a finished answer', async () => {
		const acct = await account()
		const err = await ask(acct, model, false).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(Anthropic.APIError)
		expect((err as InstanceType<typeof Anthropic.APIError>).status).toBeGreaterThanOrEqual(500)
	})
	it('should end an Anthropic stream with an error event, not end_turn, and record it as an error with the usage Mistral sent', async () => {
		const acct = await account()
		const err = await ask(acct, model, true).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(Anthropic.APIError)
		expect((err as InstanceType<typeof Anthropic.APIError>).message).toContain('finish_reason')
		const row = await lastRow(acct.accountId)
		expect({ end: row.end_reason, input: row.input_tokens, output: row.output_tokens, estimated: row.estimated }).toEqual({ end: 'error', input: CUT_USAGE.prompt_tokens, output: CUT_USAGE.completion_tokens, estimated: false })
	})
	for (const stream of MODES)
		it(`should fail a Gemini client's request too (${how(stream)})`, async () => {
			const acct = await account()
			const err = await generate(acct, model, stream).catch((e: unknown) => e)
			expect(err).toBeInstanceOf(Error)
			expect(String((err as Error).message)).toContain('finish_reason')
		})
})

describe("a call's id changing after its first delta (poolsideai/pool#9)", () => {
	it('should keep the argument deltas with their call (an Anthropic client gets one whole tool_use)', async () => {
		const acct = await account()
		const a = await ask(acct, 'unstable-ids', true, true)
		expect(a.calls).toEqual([{ id: 'call_first01', name: 'get_weather', args: PARIS }])
		expect(a.stop).toBe('tool_use')
	})
})

describe('tool-call arguments sent as an object instead of a JSON string', () => {
	const model = 'args-object'
	for (const stream of MODES) {
		it(`should give an Anthropic client the call's input and a Gemini client its args (${how(stream)})`, async () => {
			const acct = await account()
			const a = await ask(acct, model, stream, true)
			expect(a.calls).toEqual([{ id: 'call_obj1', name: 'get_weather', args: PARIS }])
			expect(a.stop).toBe('tool_use')
			const g = await generate(acct, model, stream, true)
			expect(g.calls).toEqual([{ name: 'get_weather', args: PARIS }])
		})
	}
})

describe('SSE framing: `data:` without a space, CRLF split across reads, no [DONE], usage with finish_reason', () => {
	const model = 'llamacpp-crlf'
	for (const stream of MODES) {
		it(`should end the answer normally with the vendor's usage (${how(stream)})`, async () => {
			const acct = await account()
			const a = await ask(acct, model, stream)
			expect(a.text).toBe(FRAMING_TEXT)
			expect(a.stop).toBe('end_turn')
			expect(a.usage).toEqual({ input: FRAMING_USAGE.prompt_tokens, cached: 0, output: FRAMING_USAGE.completion_tokens })
			await expectBilled(acct, model, { input: 9, output: 5 })
		})
	}
	it('should end the relayed stream of an OpenAI client (fast path) with the [DONE] the vendor left out', async () => {
		const acct = await account()
		const res = await fetch(`${app.url}/v1/chat/completions`, {
			method: 'POST',
			headers: { authorization: `Bearer ${acct.openai.apiKey}`, 'content-type': 'application/json' },
			body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hello there' }] }),
		})
		const text = await res.text()
		expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true)
		expect(text).not.toContain('"error"')
		await expectBilled(acct, model, { input: 9, output: 5 })
	})

	it('should stream the same to a Gemini client', async () => {
		const acct = await account()
		const g = await generate(acct, model, true)
		expect(g.text).toBe(FRAMING_TEXT)
		expect(g.finishReason).toBe(FinishReason.STOP)
		expect(g.usage).toMatchObject({ promptTokenCount: 9, candidatesTokenCount: 5 })
		await expectBilled(acct, model, { input: 9, output: 5 })
	})
})

describe('Azure OpenAI (a first chunk with no choices, empty id and model; empty keep-alive chunks)', () => {
	const model = 'azure-gpt'
	for (const stream of MODES) {
		it(`should answer under the requested model with the vendor's usage (${how(stream)})`, async () => {
			const acct = await account()
			const a = await ask(acct, model, stream)
			expect(a.text).toBe(AZURE_TEXT)
			expect(a.stop).toBe('end_turn')
			expect(a.usage).toEqual({ input: AZURE_USAGE.prompt_tokens, cached: 0, output: AZURE_USAGE.completion_tokens })
			await expectBilled(acct, model, { input: 14, output: 4 })
			const g = await generate(acct, model, stream)
			expect(g.text).toBe(AZURE_TEXT)
		})
	}
})
