/**
 * The `openai` SDK's chat-completions surface against Claude (Anthropic upstream) and Gemini models, the way users
 * call a gateway: logprobs streamed and not, stop/seed/token caps/reasoning_effort, developer role, image and audio
 * parts, tool_choice variants, parallel tool calls through `chat.completions.stream()`, `runTools()`, tool results
 * with array content, the usage chunk, finish reasons, user ids, OpenAI-only features and the error shape.
 * Checked against https://platform.openai.com/docs/api-reference/chat/create and /chat-streaming,
 * https://docs.anthropic.com/en/api/messages and https://ai.google.dev/api/generate-content.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import { countWords } from '../../mocks'
import { chat } from './clients'
import { expectCharges, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix } from './harness'
import { checkChatChunks } from './wire-checks'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

type Up = 'anthropic' | 'gemini'
const UPS: Up[] = ['anthropic', 'gemini']
const BOTH: Array<[Up, boolean]> = UPS.flatMap((u) => [[u, false] as [Up, boolean], [u, true] as [Up, boolean]])
const label = (up: Up, stream: boolean) => `${up} upstream, ${stream ? 'stream' : 'non-stream'}`
const answer = (text: string) => `Hello! You said: ${text}`
type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk

const WEATHER: OpenAI.Chat.Completions.ChatCompletionTool = {
	type: 'function',
	function: { name: 'weather', description: 'weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
}
const LOOKUP: OpenAI.Chat.Completions.ChatCompletionTool = { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { query: { type: 'string' } } } } }

/** The log probabilities the mocks give an answer (test/mocks/shared/logprobs.ts), as OpenAI's `logprobs.content`. */
function expectedLogprobs(text: string, top: number) {
	const pieces = text.split(/(?= )/)
	const entry = (token: string, logprob: number) => ({ token, logprob, bytes: [...new TextEncoder().encode(token)] })
	return pieces.map((token, i) => {
		const lp = -(i + 1) / 10
		return { ...entry(token, lp), top_logprobs: Array.from({ length: top }, (_, k) => entry(k === 0 ? token : `alt${k}`, lp - k)) }
	})
}

async function chunksOf(client: OpenAI, params: Record<string, unknown>): Promise<Chunk[]> {
	const s = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } } as OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming)
	const out: Chunk[] = []
	for await (const c of s) out.push(c)
	return out
}

describe('logprobs and top_logprobs', () => {
	const text = 'rate these words'
	for (const stream of [false, true])
		it(`should refuse logprobs for Claude, which has none, with a 400 naming the field, before any upstream call (anthropic upstream, ${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const before = m.mocks.anthropic.requests.length
			const err = await acct.openai.chat.completions.create({ model: MODEL.anthropic, messages: [{ role: 'user', content: text }], logprobs: true, stream }).catch((e) => e)
			expect(err).toBeInstanceOf(OpenAI.BadRequestError)
			expect(err.error).toMatchObject({ code: 'unsupported_for_model', param: 'logprobs' })
			expect(m.mocks.anthropic.requests.length).toBe(before)
		})

	it('should return logprobs.content per token from Gemini (gemini upstream, non-stream)', async () => {
		const acct = await m.account()
		const r = await acct.openai.chat.completions.create({ model: MODEL.gemini, messages: [{ role: 'user', content: text }], logprobs: true, top_logprobs: 2 })
		expect(lastRequest(m.mocks.gemini).body.generationConfig).toMatchObject({ responseLogprobs: true, logprobs: 2 })
		expect(r.choices[0]!.logprobs).toEqual({ content: expectedLogprobs(answer(text), 2), refusal: null })
	})

	it("should put each streamed Gemini chunk's logprobsResult on its content chunk (gemini upstream, stream)", async () => {
		const acct = await m.account()
		const chunks = await chunksOf(acct.openai, { model: MODEL.gemini, messages: [{ role: 'user', content: text }], logprobs: true, top_logprobs: 2 })
		checkChatChunks(chunks, MODEL.gemini, true)
		const content = chunks.filter((c) => c.choices[0]?.delta.content)
		const want = expectedLogprobs(answer(text), 2)
		expect(content.length).toBe(want.length)
		// Every content chunk scores its own text; chunks without content carry null, as OpenAI streams them.
		content.forEach((c, i) => expect(c.choices[0]!.logprobs).toEqual({ content: [want[i]!], refusal: null }))
		for (const c of chunks) if (c.choices[0] && !c.choices[0].delta.content) expect(c.choices[0].logprobs).toBeNull()
	})

	it("should let chat.completions.stream() collect the streamed logprobs into the final completion (gemini upstream)", async () => {
		const acct = await m.account()
		const s = acct.openai.chat.completions.stream({ model: MODEL.gemini, messages: [{ role: 'user', content: text }], logprobs: true, top_logprobs: 1 })
		const final = await s.finalChatCompletion()
		expect(final.choices[0]!.message.content).toBe(answer(text))
		expect(final.choices[0]!.logprobs?.content).toEqual(expectedLogprobs(answer(text), 1))
	})

	it('should stream an OpenAI upstream\'s chunk logprobs to a Gemini client as logprobsResult (openai upstream, generateContentStream)', async () => {
		const acct = await m.account()
		const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
		const chunks = []
		for await (const c of await ai.models.generateContentStream({ model: MODEL.openai, contents: text, config: { responseLogprobs: true, logprobs: 1 } })) chunks.push(c)
		expect(lastRequest(m.mocks.openai).body).toMatchObject({ logprobs: true, top_logprobs: 1 })
		const results = chunks.flatMap((c) => (c.candidates?.[0]?.logprobsResult ? [c.candidates[0].logprobsResult] : []))
		const want = expectedLogprobs(answer(text), 1)
		expect(results.length).toBe(want.length)
		results.forEach((r, i) => {
			expect(r.chosenCandidates).toEqual([{ token: want[i]!.token, logProbability: want[i]!.logprob }])
			expect(r.topCandidates).toEqual([{ candidates: [{ token: want[i]!.token, logProbability: want[i]!.logprob }] }])
		})
	})
})

describe('sampling, limits and reasoning', () => {
	for (const [up, stream] of BOTH) {
		it(`should send stop as a string and as an array in the vendor's field and cut the text there (${label(up, stream)})`, async () => {
			const acct = await m.account()
			for (const stop of ['STOP', ['NEVER', 'STOP']]) {
				const a = await chat(acct.openai, { model: MODEL[up], messages: [{ role: 'user', content: 'count #stop' }], stop }, stream)
				expect(a.text).toBe(`${answer('count #stop')} one two `)
				expect(a.stop).toBe('stop')
				const b = lastRequest(m.mocks[up]).body
				const list = typeof stop === 'string' ? [stop] : stop
				if (up === 'anthropic') expect(b.stop_sequences).toEqual(list)
				else expect(b.generationConfig.stopSequences).toEqual(list)
			}
		})

		it(`should take max_completion_tokens over max_tokens and answer length at the cap (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const a = await chat(acct.openai, { model: MODEL[up], messages: [{ role: 'user', content: 'go on #length' }], max_completion_tokens: 3, max_tokens: 50 }, stream)
			expect(a.stop).toBe('length')
			expect(a.text).toBe('Hello! You said:')
			const b = lastRequest(m.mocks[up]).body
			expect(up === 'anthropic' ? b.max_tokens : b.generationConfig.maxOutputTokens).toBe(3)
			await expectCharges(m, acct, [{ model: MODEL[up], input: 3, output: 3, stream }])
		})

		it(`should turn reasoning_effort into the vendor's thinking and stream it as reasoning_content (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const a = await chat(acct.openai, { model: MODEL[up], messages: [{ role: 'user', content: 'ponder this' }], reasoning_effort: 'minimal', max_completion_tokens: 4000 }, stream)
			expect(a.reasoning).toBe('Let me think about ponder this.')
			expect(a.text).toBe(answer('ponder this'))
			expect(a.usage.reasoning).toBe(countWords(a.reasoning))
			const b = lastRequest(m.mocks[up]).body
			// 1024 is the smallest budget Claude takes; "minimal" asks for the least thinking.
			if (up === 'anthropic') expect(b.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 })
			else expect(b.generationConfig.thinkingConfig).toMatchObject({ includeThoughts: true })
		})
	}

	it('should send seed to Gemini, which takes one (gemini upstream)', async () => {
		const acct = await m.account()
		await chat(acct.openai, { model: MODEL.gemini, messages: [{ role: 'user', content: 'hi' }], seed: 7, presence_penalty: 0.5, frequency_penalty: -0.5 }, false)
		expect(lastRequest(m.mocks.gemini).body.generationConfig).toMatchObject({ seed: 7, presencePenalty: 0.5, frequencyPenalty: -0.5 })
	})

	for (const up of UPS)
		it(`should turn thinking off with reasoning_effort none, not leave the model's default thinking on (${up} upstream)`, async () => {
			const acct = await m.account()
			const a = await chat(acct.openai, { model: MODEL[up], messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'none' }, true)
			expect(a.reasoning).toBe('')
			const b = lastRequest(m.mocks[up]).body
			// Gemini 2.5 Flash thinks unless told a budget of 0 (ai.google.dev/gemini-api/docs/thinking).
			if (up === 'anthropic') expect(b.thinking).toEqual({ type: 'disabled' })
			else expect(b.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 0 })
		})
})

describe('messages', () => {
	for (const [up, stream] of BOTH) {
		it(`should send developer and system messages as the vendor's system prompt (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const a = await chat(
				acct.openai,
				{ model: MODEL[up], messages: [{ role: 'developer', content: 'be terse' }, { role: 'system', content: [{ type: 'text', text: 'and kind' }] }, { role: 'user', content: 'hi', name: 'bob' }] },
				stream,
			)
			expect(a.text).toBe(answer('hi'))
			const b = lastRequest(m.mocks[up]).body
			if (up === 'anthropic') expect([b.system].flat().map((s: any) => (typeof s === 'string' ? s : s.text))).toEqual(['be terse', 'and kind'])
			else expect(b.systemInstruction.parts).toEqual([{ text: 'be terse' }, { text: 'and kind' }])
			await expectCharges(m, acct, [{ model: MODEL[up], input: countWords('be terse and kind hi'), output: countWords(a.text), stream }])
		})

		it(`should send a data-URL image as the vendor's inline image (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const url = 'data:image/png;base64,iVBORw0KGgo='
			const a = await chat(acct.openai, { model: MODEL[up], messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url, detail: 'low' } }] }] }, stream)
			expect(a.text).toBe(`I see 1 image. ${answer('look')}`)
			const parts = up === 'anthropic' ? lastRequest(m.mocks.anthropic).body.messages[0].content : lastRequest(m.mocks.gemini).body.contents[0].parts
			if (up === 'anthropic') expect(parts[1]).toEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } })
			else expect(parts[1]).toEqual({ inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } })
		})
	}

	it('should pass an https image URL to Claude as a url source, not fetch it (anthropic upstream)', async () => {
		const acct = await m.account()
		await chat(acct.openai, { model: MODEL.anthropic, messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'https://img.example/cat.png' } }] }] }, false)
		expect(lastRequest(m.mocks.anthropic).body.messages[0].content[1]).toEqual({ type: 'image', source: { type: 'url', url: 'https://img.example/cat.png' } })
	})

	it('should send input_audio to Gemini as inline audio (gemini upstream)', async () => {
		const acct = await m.account()
		await chat(acct.openai, { model: MODEL.gemini, messages: [{ role: 'user', content: [{ type: 'text', text: 'listen' }, { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } }] }] }, true)
		expect(lastRequest(m.mocks.gemini).body.contents[0].parts[1]).toEqual({ inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } })
	})

	it('should refuse input_audio for Claude with a 400 naming the part, sending nothing (anthropic upstream)', async () => {
		const acct = await m.account()
		const before = m.mocks.anthropic.requests.length
		const err = await acct.openai.chat.completions
			.create({ model: MODEL.anthropic, messages: [{ role: 'user', content: [{ type: 'text', text: 'listen' }, { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } }] }] })
			.catch((e: unknown) => e)
		expect(err).toBeInstanceOf(OpenAI.BadRequestError)
		const e = err as InstanceType<typeof OpenAI.BadRequestError>
		expect(e.param).toBe('messages[0].content[1]')
		expect(e.type).toBe('invalid_request_error')
		expect(m.mocks.anthropic.requests.length).toBe(before)
		expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
	})
})

describe('tools', () => {
	for (const [up, stream] of BOTH) {
		it(`should map tool_choice required, a named function and none (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const required = await chat(acct.openai, { model: MODEL[up], messages: [{ role: 'user', content: 'Paris' }], tools: [WEATHER, LOOKUP], tool_choice: 'required' }, stream)
			expect(required.stop).toBe('tool_calls')
			expect(required.calls.map((c) => c.name)).toEqual(['weather'])
			let b = lastRequest(m.mocks[up]).body
			expect(up === 'anthropic' ? b.tool_choice : b.toolConfig).toEqual(up === 'anthropic' ? { type: 'any' } : { functionCallingConfig: { mode: 'ANY' } })

			const named = await chat(acct.openai, { model: MODEL[up], messages: [{ role: 'user', content: 'Paris' }], tools: [WEATHER, LOOKUP], tool_choice: { type: 'function', function: { name: 'lookup' } } }, stream)
			expect(named.calls).toEqual([{ id: named.calls[0]!.id, name: 'lookup', args: { query: 'Paris' } }])
			b = lastRequest(m.mocks[up]).body
			expect(up === 'anthropic' ? b.tool_choice : b.toolConfig).toEqual(
				up === 'anthropic' ? { type: 'tool', name: 'lookup' } : { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['lookup'] } },
			)

			const none = await chat(acct.openai, { model: MODEL[up], messages: [{ role: 'user', content: 'Paris #tools' }], tools: [WEATHER], tool_choice: 'none' }, stream)
			expect(none.calls).toEqual([])
			expect(none.stop).toBe('stop')
		})

		it(`should refuse a tool_choice naming a function not among the tools, sending nothing (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const before = m.mocks[up].requests.length
			const err = await chat(acct.openai, { model: MODEL[up], messages: [{ role: 'user', content: 'Paris' }], tools: [WEATHER], tool_choice: { type: 'function', function: { name: 'nope' } } }, stream).catch((e: unknown) => e)
			expect(err).toBeInstanceOf(OpenAI.BadRequestError)
			expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('tool_choice')
			expect((err as Error).message).toContain("'nope'")
			expect(m.mocks[up].requests.length).toBe(before)
		})

		it(`should send tool results with array content and answer from them (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const first = await chat(acct.openai, { model: MODEL[up], messages: [{ role: 'user', content: 'weather #tools' }], tools: [WEATHER] }, stream)
			expect(first.calls.map((c) => c.args)).toEqual([{ city: 'Paris' }, { city: 'Tokyo' }])
			const results: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = first.calls.map((c, i) => ({
				role: 'tool',
				tool_call_id: c.id,
				content: [{ type: 'text', text: i === 0 ? 'sunny' : 'rainy' }],
			}))
			const second = await chat(acct.openai, { model: MODEL[up], messages: [{ role: 'user', content: 'weather #tools' }, first.replay, ...results], tools: [WEATHER] }, stream)
			expect(second.text).toBe('Tool results: sunny; rainy')
			expect(second.stop).toBe('stop')
		})
	}

	for (const up of UPS) {
		it(`should stream parallel calls with their own index, id, name and arguments through chat.completions.stream() (${up} upstream)`, async () => {
			const acct = await m.account()
			const chunks: Chunk[] = []
			const s = acct.openai.chat.completions.stream({ model: MODEL[up], messages: [{ role: 'user', content: 'weather #tools' }], tools: [WEATHER], stream_options: { include_usage: true } })
			s.on('chunk', (c) => chunks.push(c))
			const done: Array<{ name: string; arguments: string }> = []
			s.on('tool_calls.function.arguments.done', (e) => done.push({ name: e.name, arguments: e.arguments }))
			const final = await s.finalChatCompletion()
			checkChatChunks(chunks, MODEL[up], true)
			// The first delta of each call has index, id, type and name; later ones only index and arguments.
			const heads = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []).filter((t) => t.id)
			expect(heads.map((t) => [t.index, t.type, t.function?.name, t.function?.arguments])).toEqual([
				[0, 'function', 'weather', ''],
				[1, 'function', 'weather', ''],
			])
			expect(new Set(heads.map((t) => t.id)).size).toBe(2)
			const calls = final.choices[0]!.message.tool_calls!
			expect(calls.map((c) => (c.type === 'function' ? [c.id, c.function.arguments] : []))).toEqual(heads.map((h, i) => [h.id!, JSON.stringify({ city: i === 0 ? 'Paris' : 'Tokyo' })]))
			expect(done).toEqual([
				{ name: 'weather', arguments: '{"city":"Paris"}' },
				{ name: 'weather', arguments: '{"city":"Tokyo"}' },
			])
			expect(final.choices[0]!.finish_reason).toBe('tool_calls')
			expect(final.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 4, total_tokens: 6 })
		})

		for (const stream of [false, true])
			it(`should run a tool loop to its answer with runTools() (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const seen: string[] = []
				const body = {
					model: MODEL[up],
					messages: [{ role: 'user' as const, content: 'weather #tools' }],
					tools: [
						{
							type: 'function' as const,
							function: {
								name: 'weather',
								description: 'weather in a city',
								parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
								parse: JSON.parse,
								function: (args: { city: string }) => {
									seen.push(args.city)
									return `${args.city}: sunny`
								},
							},
						},
					],
				}
				const runner = stream ? acct.openai.chat.completions.runTools({ ...body, stream: true }) : acct.openai.chat.completions.runTools(body)
				expect(await runner.finalContent()).toBe('Tool results: Paris: sunny; Tokyo: sunny')
				expect(seen).toEqual(['Paris', 'Tokyo'])
				// The second request carried both results, each under its call's id.
				const b = lastRequest(m.mocks[up]).body
				if (up === 'anthropic') expect(b.messages[2].content.map((c: any) => c.type)).toEqual(['tool_result', 'tool_result'])
				else expect(b.contents[2].parts.map((p: any) => p.functionResponse.name)).toEqual(['weather', 'weather'])
			})
	}
})

describe('streams and finish reasons', () => {
	for (const up of UPS) {
		it(`should end with the usage chunk (choices: []) only when include_usage is asked (${up} upstream)`, async () => {
			const acct = await m.account()
			const withUsage = await chunksOf(acct.openai, { model: MODEL[up], messages: [{ role: 'user', content: 'hi' }] })
			const last = withUsage[withUsage.length - 1]!
			expect(last.choices).toEqual([])
			expect(last.usage).toEqual({
				prompt_tokens: 1,
				completion_tokens: 4,
				total_tokens: 5,
				prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
				completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
			})
			for (const c of withUsage.slice(0, -1)) expect(c.usage).toBeNull()

			const s = await acct.openai.chat.completions.create({ model: MODEL[up], messages: [{ role: 'user', content: 'hi' }], stream: true })
			const plain: Chunk[] = []
			for await (const c of s) plain.push(c)
			checkChatChunks(plain, MODEL[up], false)
			for (const c of plain) {
				expect(c.choices.length).toBe(1)
				expect('usage' in c).toBe(false)
			}
		})

		for (const stream of [false, true])
			it(`should answer content_filter for the vendor's refusal (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const a = await chat(acct.openai, { model: MODEL[up], messages: [{ role: 'user', content: 'do it #refusal' }] }, stream)
				expect(a.stop).toBe('content_filter')
			})
	}
})

describe('ids and OpenAI-only fields', () => {
	for (const [up, stream] of BOTH) {
		it(`should give Claude the user id from user or safety_identifier, and send no OpenAI-only field upstream (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const extra = { service_tier: 'auto', prompt_cache_key: 'pk-1', metadata: { team: 'a' }, store: false, logit_bias: { '42': -100 }, prediction: { type: 'content', content: 'x' } }
			for (const ids of [{ user: 'u-1' }, { safety_identifier: 'u-1' }, { user: 'u-1', safety_identifier: 's-1' }]) {
				const a = await chat(acct.openai, { model: MODEL[up], messages: [{ role: 'user', content: 'hi' }], ...extra, ...ids } as Parameters<typeof chat>[1], stream)
				expect(a.text).toBe(answer('hi'))
				const b = lastRequest(m.mocks[up]).body
				for (const k of [...Object.keys(extra), 'user', 'safety_identifier']) if (k !== 'metadata') expect(b[k]).toBeUndefined()
				// Claude's own metadata carries only the user id; OpenAI's metadata (stored-completion tags) is not it.
				expect(b.metadata).toEqual(up === 'anthropic' ? { user_id: 'u-1' } : undefined)
			}
		})

		// web_search_options runs the vendor's own search (web-search-converted.test.ts).
		it(`should refuse audio output and legacy functions with a 400 rather than answer without them (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const before = m.mocks[up].requests.length
			for (const [param, body] of [
				['modalities', { modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } }],
				['functions', { functions: [{ name: 'weather', parameters: { type: 'object', properties: {} } }], function_call: 'auto' }],
			] as const) {
				const err = await chat(acct.openai, { model: MODEL[up], messages: [{ role: 'user', content: 'news today' }], ...body } as unknown as Parameters<typeof chat>[1], stream).catch((e: unknown) => e)
				expect(err).toBeInstanceOf(OpenAI.BadRequestError)
				const e = err as InstanceType<typeof OpenAI.BadRequestError>
				expect(e.param).toBe(param)
				expect(e.message).toContain(MODEL[up])
			}
			expect(m.mocks[up].requests.length).toBe(before)
			expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
		})
	}

	it('should keep safety_identifier as written for an OpenAI upstream, adding no user field', async () => {
		const acct = await m.account()
		// (No web_search_options: the matrix's model is no search model, which OpenAI refuses them for.)
		await chat(acct.openai, { model: MODEL.openai, messages: [{ role: 'user', content: 'hi' }], safety_identifier: 's-1' }, false)
		const b = lastRequest(m.mocks.openai).body
		expect(b.safety_identifier).toBe('s-1')
		expect(b.user).toBeUndefined()
	})
})

describe('errors', () => {
	for (const [up, stream] of BOTH) {
		it(`should answer a parameter out of range with a 400 in OpenAI's error shape naming it (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const before = m.mocks[up].requests.length
			for (const [param, body] of [
				['temperature', { temperature: 3 }],
				['top_logprobs', { top_logprobs: 2 }],
				['n', { n: 0 }],
			] as const) {
				const err = await chat(acct.openai, { model: MODEL[up], messages: [{ role: 'user', content: 'hi' }], ...body }, stream).catch((e: unknown) => e)
				expect(err).toBeInstanceOf(OpenAI.BadRequestError)
				const e = err as InstanceType<typeof OpenAI.BadRequestError>
				expect(e.status).toBe(400)
				expect(e.type).toBe('invalid_request_error')
				expect(e.param).toBe(param)
			}
			expect(m.mocks[up].requests.length).toBe(before)
		})

		it(`should give n > 1 choices for a model no OpenAI channel serves, each by its index (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const params = { model: MODEL[up], messages: [{ role: 'user' as const, content: 'hi' }], n: 2 }
			const indexes = new Set<number>()
			if (stream) for await (const c of await acct.openai.chat.completions.create({ ...params, stream: true })) for (const ch of c.choices) indexes.add(ch.index)
			else for (const ch of (await acct.openai.chat.completions.create(params)).choices) indexes.add(ch.index)
			expect([...indexes].sort()).toEqual([0, 1])
		})

		it(`should give the vendor's 429 to the SDK as a RateLimitError (${label(up, stream)})`, async () => {
			const acct = await m.account()
			m.mocks[up].faultOnce = { kind: 'status', status: 429 }
			const err = await chat(acct.openai, { model: MODEL[up], messages: [{ role: 'user', content: 'hi' }] }, stream).catch((e: unknown) => e)
			expect(err).toBeInstanceOf(OpenAI.RateLimitError)
			expect((err as InstanceType<typeof OpenAI.RateLimitError>).status).toBe(429)
			expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
		})
	}
})
