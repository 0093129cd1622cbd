/**
 * Anthropic-compatible vendors (GLM, DeepSeek, Kimi, Bedrock-style gateways, DashScope) behind `anthropic` channels,
 * each with its documented deviations from Anthropic (test/mocks/compat-anthropic), reached with the official SDKs
 * of every client protocol: OpenAI chat completions, Responses, @google/genai, the Vercel AI SDK, and the Anthropic
 * SDK on the same-protocol fast path. Each answer is checked for text, thinking, tool calls, stop reason, a
 * properly ended stream, and the charge (input counted once, cache reads at their price).
 * @module
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createOpenAI } from '@ai-sdk/openai'
import { FinishReason, type GenerateContentResponse, GoogleGenAI } from '@google/genai'
import { generateText, jsonSchema, streamText, tool } from 'ai'
import type { Response, ResponseStreamEvent } from 'openai/resources/responses/responses'
import { ANSWER, CACHE_READ, CALLS, INPUT, OUTPUT, type Profile, startCompatAnthropicMock, THOUGHT } from '../../mocks/compat-anthropic'
import type { VendorMock } from '../../mocks/shared/types'
import { chat } from './clients'
import { type Account, type Matrix, SETUP_MS, startMatrix, usageRows } from './harness'
import { postRaw } from './raw'
import { sseFrames } from './wire-checks'

const KEY = 'up-compat'
/** The model a client names for each vendor profile (the channel maps it to the profile's upstream name). */
const MODELS: Record<Profile, string> = {
	'glm-4.6': 'c-glm',
	'deepseek-v4-flash': 'c-deepseek',
	'kimi-k2': 'c-kimi',
	'bedrock-claude': 'c-bedrock',
	'dashscope-qwen': 'c-dashscope',
	'cut-after-delta': 'c-cut',
	'glm-error': 'c-error',
	'relay-zero-delta': 'c-relay',
}
const PRICE = { input: 3, output: 15, cacheRead: 0.3 }

let m: Matrix
let mock: VendorMock
beforeAll(async () => {
	mock = startCompatAnthropicMock({ apiKey: KEY })
	m = await startMatrix({
		channels: () => [
			{ name: 'compat', type: 'anthropic', base_url: mock.url, api_key: KEY, models: Object.values(MODELS), model_map: Object.fromEntries(Object.entries(MODELS).map(([up, name]) => [name, up])) },
		],
		models: Object.values(MODELS).map((name) => ({ name, input_per_mtok: PRICE.input, output_per_mtok: PRICE.output, cache_read_per_mtok: PRICE.cacheRead })),
	})
}, SETUP_MS)
afterAll(async () => {
	await m.close()
	await mock.stop()
})

/** What each profile reports, as the client should see it and be charged: `input` is the whole prompt. */
type Tokens = { input: number; output: number; cached: number }
const WITH_CACHE: Tokens = { input: INPUT + CACHE_READ, output: OUTPUT, cached: CACHE_READ }
const NO_CACHE: Tokens = { input: INPUT, output: OUTPUT, cached: 0 }
const TOKENS: Record<Exclude<Profile, 'glm-error'>, Tokens> = {
	'glm-4.6': WITH_CACHE,
	'deepseek-v4-flash': WITH_CACHE,
	'kimi-k2': NO_CACHE,
	'bedrock-claude': WITH_CACHE,
	'dashscope-qwen': WITH_CACHE,
	'cut-after-delta': WITH_CACHE,
	'relay-zero-delta': WITH_CACHE,
}
const GOOD = Object.keys(TOKENS) as Array<keyof typeof TOKENS>
/** Profiles that differ only in streams; their non-stream answers are Anthropic's. */
const STREAM_ONLY = new Set<Profile>(['cut-after-delta', 'dashscope-qwen', 'relay-zero-delta'])

/** Micro-USD at PRICE, one half-up rounding (independent of the gateway's billing code). */
const costMicros = (t: Tokens) => {
	const micro = (usd: number) => BigInt(Math.round(usd * 1e6))
	const num = BigInt(t.input - t.cached) * micro(PRICE.input) + BigInt(t.cached) * micro(PRICE.cacheRead) + BigInt(t.output) * micro(PRICE.output)
	return Number((num * 2n + 1_000_000n) / 2_000_000n)
}

/** One usage row with these tokens and this exact cost, and the balance lowered by it. */
async function expectCharged(acct: Account, model: string, t: Tokens, stream: boolean, endReason = 'ok') {
	const rows = await usageRows(m, acct.accountId)
	expect(rows.map((r) => ({ model: r.model, input: r.input_tokens, output: r.output_tokens, cached: r.cached_tokens, stream: r.stream, end: r.end_reason, estimated: r.estimated }))).toEqual([
		{ model, input: t.input, output: t.output, cached: t.cached, stream, end: endReason, estimated: false },
	])
	expect(Math.round(rows[0]!.cost * 1e6)).toBe(costMicros(t))
	expect(Math.round((await m.app.balance(acct.accountId)) * 1e6)).toBe(Math.round(acct.balance * 1e6) - costMicros(t))
}

const weatherFn = { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }
const label = (p: Profile, stream: boolean) => `${p}, ${stream ? 'stream' : 'non-stream'}`

describe('openai SDK chat completions → Anthropic-compatible vendors', () => {
	for (const p of GOOD)
		for (const stream of [false, true]) {
			if (!stream && STREAM_ONLY.has(p)) continue
			it(`should answer, finish with stop and bill the reported usage once (${label(p, stream)})`, async () => {
				const acct = await m.account()
				const r = await chat(acct.openai, { model: MODELS[p], messages: [{ role: 'user', content: 'hi there' }] }, stream)
				expect(r.text).toBe(ANSWER)
				expect(r.stop).toBe('stop')
				expect(r.usage).toMatchObject(TOKENS[p])
				await expectCharged(acct, MODELS[p], TOKENS[p], stream)
			})
		}

	for (const stream of [false, true])
		it(`should turn tool_use whose input came whole (no input_json_delta) into tool_calls (kimi-k2, ${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const r = await chat(acct.openai, { model: MODELS['kimi-k2'], messages: [{ role: 'user', content: 'weather #tools' }], tools: [weatherFn] }, stream)
			expect(r.calls.map((c) => ({ name: c.name, args: c.args }))).toEqual(CALLS.map((c) => ({ name: c.name, args: c.input })))
			expect(r.stop).toBe('tool_calls')
			await expectCharged(acct, MODELS['kimi-k2'], NO_CACHE, stream)
		})

	for (const stream of [false, true])
		it(`should carry DeepSeek's unsigned thinking as reasoning without a made-up signature (deepseek-v4-flash, ${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const r = await chat(acct.openai, { model: MODELS['deepseek-v4-flash'], messages: [{ role: 'user', content: 'weather #tools' }], tools: [weatherFn], reasoning_effort: 'low' }, stream)
			expect(r.reasoning).toBe(THOUGHT)
			// DeepSeek sends an empty signature: none may reach the client as if it were one.
			expect(r.signatures).toEqual([])
			expect(r.calls.map((c) => c.args)).toEqual(CALLS.map((c) => c.input))
			expect(r.stop).toBe('tool_calls')
			await expectCharged(acct, MODELS['deepseek-v4-flash'], WITH_CACHE, stream)
		})

	// The converted request drops thinking without a signature (content-encode.ts), so the tool turn has none: thinking
	// is then said off (request-encode.ts), which DeepSeek, thinking by default, would otherwise refuse with a 400.
	for (const effort of [undefined, 'low'] as const)
		for (const stream of [false, true])
			it(`should continue a DeepSeek tool loop after replaying its unsigned reasoning without a 400 (deepseek-v4-flash, reasoning_effort ${effort ?? 'unset'}, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				const model = MODELS['deepseek-v4-flash']
				const ask = { model, tools: [weatherFn], ...(effort && { reasoning_effort: effort }) }
				const first = await chat(acct.openai, { ...ask, messages: [{ role: 'user', content: 'weather #tools' }] }, stream)
				const results = first.calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: `sunny in ${String(c.args.city)}` }))
				const second = await chat(acct.openai, { ...ask, messages: [{ role: 'user', content: 'weather #tools' }, first.replay, ...results] }, stream)
				expect(second.text).toBe(ANSWER)
			})
})

/** The Responses API through the openai SDK, streamed (`responses.stream`) or not, with the event order checked. */
async function respond(acct: Account, model: string, stream: boolean, input: string): Promise<Response> {
	if (!stream) return acct.openai.responses.create({ model, input })
	const s = acct.openai.responses.stream({ model, input })
	const events: ResponseStreamEvent[] = []
	s.on('event', (e) => events.push(e))
	const final = await s.finalResponse()
	expect(events[0]!.type).toBe('response.created')
	expect(events.at(-1)!.type).toBe('response.completed')
	return final
}

describe('openai SDK responses → Anthropic-compatible vendors', () => {
	for (const p of GOOD)
		for (const stream of [false, true]) {
			if (!stream && STREAM_ONLY.has(p)) continue
			it(`should complete with the text and the usage counted once (${label(p, stream)})`, async () => {
				const acct = await m.account()
				const r = await respond(acct, MODELS[p], stream, 'hi there')
				expect(r.status).toBe('completed')
				expect(r.output_text).toBe(ANSWER)
				const t = TOKENS[p]
				expect([r.usage?.input_tokens, r.usage?.output_tokens, r.usage?.input_tokens_details.cached_tokens]).toEqual([t.input, t.output, t.cached])
				await expectCharged(acct, MODELS[p], t, stream)
			})
		}
})

describe('tool_use sent whole in content_block_start (kimi-k2) to Responses and Gemini clients', () => {
	const params = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }
	for (const stream of [false, true]) {
		it(`should give Responses function_call items with the whole arguments (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const body = { model: MODELS['kimi-k2'], input: 'weather #tools', tools: [{ type: 'function' as const, name: 'get_weather', parameters: params, strict: false }] }
			const r = stream ? await acct.openai.responses.stream(body).finalResponse() : await acct.openai.responses.create(body)
			expect(r.status).toBe('completed')
			const calls = r.output.flatMap((o) => (o.type === 'function_call' ? [{ name: o.name, args: JSON.parse(o.arguments) }] : []))
			expect(calls).toEqual(CALLS.map((c) => ({ name: c.name, args: c.input })))
		})

		it(`should give Gemini functionCall parts with the whole args (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const ai = genai(acct)
			const req = { model: MODELS['kimi-k2'], contents: 'weather #tools', config: { tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: params }] }] } }
			const chunks: GenerateContentResponse[] = stream ? [] : [await ai.models.generateContent(req)]
			if (stream) for await (const c of await ai.models.generateContentStream(req)) chunks.push(c)
			const calls = chunks.flatMap((c) => c.functionCalls ?? []).map((c) => ({ name: c.name, args: c.args }))
			expect(calls).toEqual(CALLS.map((c) => ({ name: c.name, args: c.input })))
			expect(chunks.at(-1)!.candidates?.[0]?.finishReason).toBe(FinishReason.STOP)
		})
	}
})

const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })

describe('@google/genai → Anthropic-compatible vendors', () => {
	for (const p of GOOD)
		for (const stream of [false, true]) {
			if (!stream && STREAM_ONLY.has(p)) continue
			it(`should answer with STOP and usageMetadata counted once (${label(p, stream)})`, async () => {
				const acct = await m.account()
				const ai = genai(acct)
				const params = { model: MODELS[p], contents: 'hi there' }
				const chunks: GenerateContentResponse[] = stream ? [] : [await ai.models.generateContent(params)]
				if (stream) for await (const c of await ai.models.generateContentStream(params)) chunks.push(c)
				const last = chunks.at(-1)!
				expect(chunks.map((c) => c.text ?? '').join('')).toBe(ANSWER)
				expect(last.candidates?.[0]?.finishReason).toBe(FinishReason.STOP)
				const t = TOKENS[p]
				expect([last.usageMetadata?.promptTokenCount, last.usageMetadata?.candidatesTokenCount, last.usageMetadata?.cachedContentTokenCount ?? 0]).toEqual([t.input, t.output, t.cached])
				await expectCharged(acct, MODELS[p], t, stream)
			})
		}
})

describe('Vercel AI SDK (@ai-sdk/openai chat) → Anthropic-compatible vendors', () => {
	for (const p of ['glm-4.6', 'kimi-k2', 'cut-after-delta'] as const)
		it(`should stream the text, finish "stop" and report the usage (${p})`, async () => {
			const acct = await m.account()
			const model = createOpenAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1` }).chat(MODELS[p])
			const r = streamText({ model, prompt: 'hi there' })
			expect(await r.text).toBe(ANSWER)
			expect(await r.finishReason).toBe('stop')
			const u = await r.usage
			expect([u.inputTokens, u.outputTokens]).toEqual([TOKENS[p].input, TOKENS[p].output])
			await expectCharged(acct, MODELS[p], TOKENS[p], true)
		})

	it('should run a tool step with a whole-input tool_use (kimi-k2, generateText)', async () => {
		const acct = await m.account()
		const model = createOpenAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1` }).chat(MODELS['kimi-k2'])
		const r = await generateText({
			model,
			prompt: 'weather #tools',
			tools: { get_weather: tool({ inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }) }) },
		})
		expect(r.toolCalls.map((c) => c.input)).toEqual(CALLS.map((c) => c.input))
		expect(r.finishReason).toBe('tool-calls')
	})
})

/**
 * The fast path relays the vendor's bytes, so the stream is checked as the SDK reads it (`messages.stream` →
 * `finalMessage`), not against the gateway's own event order: a vendor's extra events reach the client as sent.
 */
async function fastPath(acct: Account, model: string, stream: boolean) {
	const params = { model, max_tokens: 256, messages: [{ role: 'user' as const, content: 'hi there' }] }
	if (!stream) return { msg: await acct.anthropic.messages.create(params), types: [] as string[] }
	const s = acct.anthropic.messages.stream(params)
	const types: string[] = []
	for await (const e of s) types.push(e.type)
	return { msg: await s.finalMessage(), types }
}

describe('Anthropic SDK (fast path) → Anthropic-compatible vendors', () => {
	for (const p of GOOD)
		for (const stream of [false, true]) {
			if (!stream && STREAM_ONLY.has(p)) continue
			it(`should relay the answer and bill the reported usage once (${label(p, stream)})`, async () => {
				const acct = await m.account()
				const { msg, types } = await fastPath(acct, MODELS[p], stream)
				expect(msg.model).toBe(MODELS[p])
				expect(msg.content.flatMap((b) => (b.type === 'text' ? [b.text] : []))).toEqual([ANSWER])
				expect(msg.stop_reason).toBe('end_turn')
				if (p === 'dashscope-qwen') expect(types.slice(0, 2)).toEqual(['vendor_metadata', 'message_start'])
				// A whole answer whose vendor sent no message_stop gets one, not an error.
				if (stream && p === 'cut-after-delta') expect(types.slice(-2)).toEqual(['message_delta', 'message_stop'])
				const u = msg.usage
				const cached = u.cache_read_input_tokens ?? 0
				// The SDK itself takes the vendor's zero placeholders from message_delta; only the charge is the gateway's.
				if (!(stream && p === 'relay-zero-delta'))
					expect({ input: u.input_tokens + cached + (u.cache_creation_input_tokens ?? 0), output: u.output_tokens, cached }).toEqual(TOKENS[p])
				await expectCharged(acct, MODELS[p], TOKENS[p], stream)
			})
		}
})

describe('Anthropic SDK (fast path) tool loop with DeepSeek thinking', () => {
	for (const stream of [false, true])
		it(`should replay a thinking block with an empty signature without a 400 (deepseek-v4-flash, ${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const tools = [{ name: 'get_weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }]
			const ask = { model: MODELS['deepseek-v4-flash'], max_tokens: 4000, thinking: { type: 'enabled' as const, budget_tokens: 1024 }, tools }
			const user = { role: 'user' as const, content: 'weather #tools' }
			const first = stream ? await acct.anthropic.messages.stream({ ...ask, messages: [user] }).finalMessage() : await acct.anthropic.messages.create({ ...ask, messages: [user] })
			expect(first.content.map((b) => b.type)).toEqual(['thinking', 'tool_use', 'tool_use'])
			expect(first.content[0]).toMatchObject({ type: 'thinking', thinking: THOUGHT, signature: '' })
			const results = first.content.flatMap((b) => (b.type === 'tool_use' ? [{ type: 'tool_result' as const, tool_use_id: b.id, content: 'sunny' }] : []))
			const second = await acct.anthropic.messages.create({ ...ask, messages: [user, { role: 'assistant', content: first.content }, { role: 'user', content: results }] })
			expect(second.content.flatMap((b) => (b.type === 'text' ? [b.text] : []))).toEqual([ANSWER])
		})
})

describe('vendor errors and cut streams', () => {
	it('should end a chat stream whose vendor sent message_delta but no message_stop with finish_reason stop and [DONE] (cut-after-delta)', async () => {
		const acct = await m.account()
		const res = await postRaw(m, 'chat', acct, { model: MODELS['cut-after-delta'], stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] })
		const frames = sseFrames(await res.text())
		expect(frames.at(-1)!.data).toBe('[DONE]')
		const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.data))
		expect(chunks.some((c) => 'error' in c)).toBe(false)
		expect(chunks.flatMap((c) => c.choices ?? []).find((c: { finish_reason: unknown }) => c.finish_reason)?.finish_reason).toBe('stop')
	})

	it('should bill an estimated prompt, not 0 input, for a GLM stream cut before its message_delta (glm-4.6, chat stream)', async () => {
		const acct = await m.account()
		// message_start (usage 0/0), the text block's start and two of its three deltas; the real counts never come.
		mock.faultOnce = { kind: 'cut', afterChunks: 4 }
		const res = await postRaw(m, 'chat', acct, { model: MODELS['glm-4.6'], stream: true, messages: [{ role: 'user', content: 'hi there' }] })
		await res.text()
		const rows = await usageRows(m, acct.accountId)
		expect(rows.map((r) => ({ end: r.end_reason, estimated: r.estimated }))).toEqual([{ end: 'upstream_cut', estimated: true }])
		expect(rows[0]!.input_tokens).toBeGreaterThan(0)
	})

	it('should surface a mid-stream error event without `error.type` with the vendor message (glm-error, chat stream)', async () => {
		const acct = await m.account()
		const res = await postRaw(m, 'chat', acct, { model: MODELS['glm-error'], stream: true, messages: [{ role: 'user', content: 'hi' }] })
		const frames = sseFrames(await res.text())
		const err = frames.map((f) => (f.data === '[DONE]' ? {} : JSON.parse(f.data))).find((c) => 'error' in c)
		expect(err?.error.message).toBe('System detected potentially unsafe content')
	})

	it('should pass a GLM-shaped 400 (numeric code, no type) to a chat client as a 400 with its message (glm-error, non-stream)', async () => {
		const acct = await m.account()
		const res = await postRaw(m, 'chat', acct, { model: MODELS['glm-error'], messages: [{ role: 'user', content: 'hi' }] })
		expect(res.status).toBe(400)
		expect(((await res.json()) as { error: { message: string } }).error.message).toBe('System detected potentially unsafe content')
	})
})
