/**
 * The less common features of `@google/genai` through the gateway, against each vendor (Gemini's own is the
 * same-protocol fast path): built-in tools, systemInstruction and generationConfig, thinkingConfig, function calling
 * modes, chat round trips, usageMetadata (cached, thoughts and total counts) against the usage rows, finishReason,
 * countTokens, embedContent and the model list. Checked against https://ai.google.dev/api/generate-content,
 * /api/caching, /gemini-api/docs/function-calling and /gemini-api/docs/google-search.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ApiError, FinishReason, type FunctionCall, FunctionCallingConfigMode, type GenerateContentResponse, GoogleGenAI, type Tool, Type } from '@google/genai'
import { countWords, thinkingSignature } from '../../mocks'
import { type Account, expectCharges, lastRequest, type Matrix, MODEL, PAIRS, SETUP_MS, startMatrix, THINKER, type Upstream, UPSTREAMS, usageRows } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
const answer = (text: string) => `Hello! You said: ${text}`
const label = (up: Upstream, stream: boolean) => `${up} upstream, ${stream ? 'generateContentStream' : 'generateContent'}`

/** One call, streamed or not, as the SDK reads it: the text, the last chunk's usage and finishReason, every chunk. */
async function generate(ai: GoogleGenAI, params: Parameters<GoogleGenAI['models']['generateContent']>[0], stream: boolean) {
	const chunks: GenerateContentResponse[] = stream ? [] : [await ai.models.generateContent(params)]
	if (stream) for await (const c of await ai.models.generateContentStream(params)) chunks.push(c)
	const last = chunks[chunks.length - 1]!
	const parts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? [])
	return {
		text: parts.filter((p) => !p.thought).map((p) => p.text ?? '').join(''),
		thoughts: parts.filter((p) => p.thought).map((p) => p.text ?? '').join(''),
		calls: parts.flatMap((p) => (p.functionCall ? [p.functionCall] : [])),
		finishReason: last.candidates?.[0]?.finishReason,
		usage: last.usageMetadata,
		chunks,
	}
}

const TOOLS: Tool[] = [
	{
		functionDeclarations: [
			{ name: 'weather', parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } } } },
			{ name: 'lookup', parameters: { type: Type.OBJECT, properties: { query: { type: Type.STRING } } } },
		],
	},
]

describe('@google/genai built-in tools', () => {
	for (const [up, stream] of PAIRS) {
		if (up === 'gemini') {
			it(`should pass googleSearch to Gemini as written (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const r = await generate(genai(acct), { model: MODEL[up], contents: 'news today', config: { tools: [{ googleSearch: {} }, ...TOOLS] } }, stream)
				expect(r.text).toBe(answer('news today'))
				expect(lastRequest(m.mocks.gemini).body.tools).toEqual([{ googleSearch: {} }, ...TOOLS])
			})
			continue
		}
		// googleSearch runs the vendor's own search instead (web-search-converted.test.ts); urlContext has no counterpart.
		it(`should refuse urlContext with a 400 naming it rather than drop it (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const before = m.mocks[up].requests.length
			const err = await generate(genai(acct), { model: MODEL[up], contents: 'news today', config: { tools: [...TOOLS, { urlContext: {} }] } }, stream).catch((e: unknown) => e)
			expect(err).toBeInstanceOf(ApiError)
			expect((err as ApiError).status).toBe(400)
			const { error } = JSON.parse((err as ApiError).message.slice((err as ApiError).message.indexOf('{'))) as { error: { status: string; message: string } }
			expect(error.status).toBe('INVALID_ARGUMENT')
			expect(error.message).toContain('tools[1].urlContext')
			expect(error.message).toContain(MODEL[up])
			expect(m.mocks[up].requests.length).toBe(before)
			expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
		})
	}
})

describe('@google/genai cachedContent', () => {
	// A context cache (https://ai.google.dev/api/caching) is the gateway's own (gemini-caches.test.ts), for every vendor:
	// a name it did not make for the account is unknown, never a request answered without the cached content.
	for (const [up, stream] of PAIRS)
		it(`should answer 404 for a cache the gateway does not hold, nothing sent or charged (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const before = m.mocks[up].requests.length
			const err = await generate(genai(acct), { model: MODEL[up], contents: 'summarise the document', config: { cachedContent: 'cachedContents/abc123' } }, stream).catch((e: unknown) => e)
			expect(err).toBeInstanceOf(ApiError)
			expect((err as ApiError).status).toBe(404)
			expect((err as ApiError).message).toContain('cachedContents/abc123')
			expect(m.mocks[up].requests.length).toBe(before)
			expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
		})
})

describe('@google/genai generation settings', () => {
	for (const [up, stream] of PAIRS) {
		it(`should send systemInstruction and generationConfig in the vendor's fields (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const r = await generate(
				genai(acct),
				{
					model: MODEL[up],
					contents: 'count for me #stop',
					config: {
						systemInstruction: 'be brief',
						temperature: 0.4,
						topK: 8,
						topP: 0.9,
						maxOutputTokens: 64,
						stopSequences: ['STOP'],
						safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT' as never, threshold: 'BLOCK_ONLY_HIGH' as never }],
					},
				},
				stream,
			)
			expect(r.text).toBe(`${answer('count for me #stop')} one two `)
			// A stop sequence is a normal stop in Gemini's words.
			expect(r.finishReason).toBe(FinishReason.STOP)
			const b = lastRequest(m.mocks[up]).body
			if (up === 'openai') {
				expect(b.messages[0]).toEqual({ role: 'system', content: 'be brief' })
				expect(b).toMatchObject({ temperature: 0.4, top_p: 0.9, stop: ['STOP'] })
				expect(b.max_completion_tokens ?? b.max_tokens).toBe(64)
			} else if (up === 'anthropic') {
				expect(b.system).toBe('be brief')
				// Claude refuses temperature and top_p together: temperature, the common knob, goes alone.
				expect(b).toMatchObject({ temperature: 0.4, top_k: 8, stop_sequences: ['STOP'], max_tokens: 64 })
			} else {
				expect(b.systemInstruction.parts).toEqual([{ text: 'be brief' }])
				expect(b.generationConfig).toMatchObject({ temperature: 0.4, topK: 8, topP: 0.9, maxOutputTokens: 64, stopSequences: ['STOP'] })
				expect(b.safetySettings).toEqual([{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }])
			}
			const input = countWords('be brief count for me #stop')
			const output = countWords(r.text)
			expect(r.usage).toMatchObject({ promptTokenCount: input, candidatesTokenCount: output, totalTokenCount: input + output })
			await expectCharges(m, acct, [{ model: MODEL[up], input, output, stream }])
		})

		it(`should answer JSON for responseMimeType and responseSchema (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const schema = { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ['city'] }
			const r = await generate(genai(acct), { model: MODEL[up], contents: 'pick a city', config: { responseMimeType: 'application/json', responseSchema: schema } }, stream)
			const b = lastRequest(m.mocks[up]).body
			// Each vendor gets it in its own format field (Claude 4.5+: structured outputs, every object closed), which the
			// mocks answer with schema-shaped JSON.
			expect(JSON.parse(r.text)).toEqual({ city: 'pick a city' })
			if (up === 'anthropic')
				expect(b.output_config).toEqual({ format: { type: 'json_schema', schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } } })
			if (up === 'openai') expect(b.response_format.type).toBe('json_schema')
			if (up === 'gemini') expect(b.generationConfig.responseSchema).toEqual(schema)
		})

		// Gemini's Schema has its int64 fields (minItems, maxItems, minLength, maxLength, minProperties, maxProperties) as
		// JSON strings (https://ai.google.dev/api/caching#Schema), typed so by @google/genai; JSON Schema wants integers.
		if (up !== 'gemini')
			it(`should give the vendor a Gemini schema's int64 bounds as integers, in the format and the tools (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const schema = { type: Type.OBJECT, properties: { tags: { type: Type.ARRAY, items: { type: Type.STRING, minLength: '2', maxLength: '40' }, minItems: '1', maxItems: '3' } }, required: ['tags'] }
				const tools: Tool[] = [{ functionDeclarations: [{ name: 'tag', parameters: { type: Type.OBJECT, properties: { names: { type: Type.ARRAY, items: { type: Type.STRING }, minItems: '2' } }, minProperties: '1' } }] }]
				await generate(genai(acct), { model: MODEL[up], contents: 'tag this', config: { responseMimeType: 'application/json', responseSchema: schema, tools } }, stream)
				const b = lastRequest(m.mocks[up]).body
				const format = JSON.stringify(up === 'openai' ? b.response_format.json_schema.schema : b.output_config.format.schema)
				const params = JSON.stringify(up === 'openai' ? b.tools[0].function.parameters : b.tools[0].input_schema)
				for (const [k, v] of [['minItems', 1], ['maxItems', 3], ['minLength', 2], ['maxLength', 40]] as const) expect(format).not.toContain(`${k}\":\"${v}\"`)
				if (up === 'openai') expect(JSON.parse(format).properties.tags).toEqual({ type: 'array', items: { type: 'string', minLength: 2, maxLength: 40 }, minItems: 1, maxItems: 3 })
				expect(JSON.parse(params)).toMatchObject({ properties: { names: { minItems: 2 } }, minProperties: 1 })
			})

		it(`should return thoughts as thought parts and count them in thoughtsTokenCount and the bill (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const r = await generate(genai(acct), { model: THINKER[up], contents: 'ponder this', config: { maxOutputTokens: 4096, thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 } } }, stream)
			expect(r.thoughts).toBe('Let me think about ponder this.')
			expect(r.text).toBe(answer('ponder this'))
			const thoughts = countWords(r.thoughts)
			const output = countWords(r.text)
			expect(r.usage).toMatchObject({ promptTokenCount: 2, candidatesTokenCount: output, thoughtsTokenCount: thoughts, totalTokenCount: 2 + output + thoughts })
			await expectCharges(m, acct, [{ model: THINKER[up], input: 2, output: output + thoughts, reasoning: thoughts, stream }])
		})

		it(`should report cache reads as cachedContentTokenCount inside promptTokenCount and bill them as such (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const system = 'remember this long preamble #cache about nothing at all'
			const r = await generate(genai(acct), { model: MODEL[up], contents: 'hello there', config: { systemInstruction: system } }, stream)
			const input = countWords(system) + 2
			expect(r.usage).toMatchObject({ promptTokenCount: input, cachedContentTokenCount: 10 })
			await expectCharges(m, acct, [{ model: MODEL[up], input, output: countWords(answer('hello there')), cached: 10, stream }])
		})

		it(`should end with finishReason MAX_TOKENS at the cap and SAFETY on a refusal (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const ai = genai(acct)
			const capped = await generate(ai, { model: MODEL[up], contents: 'write a lot #length', config: { maxOutputTokens: 4 } }, stream)
			expect(capped.finishReason).toBe(FinishReason.MAX_TOKENS)
			expect(capped.usage?.candidatesTokenCount).toBe(4)
			const refused = await generate(ai, { model: MODEL[up], contents: 'do it #refusal' }, stream)
			expect(refused.finishReason).toBe(FinishReason.SAFETY)
		})
	}

	it('should give promptTokenCount with the cache writes of an Anthropic upstream inside it', async () => {
		// Gemini has no cache-write field: Anthropic's cache_creation_input_tokens are part of the prompt.
		const acct = await m.account()
		const system = 'a preamble worth caching #write-cache for later turns of this chat'
		const r = await generate(genai(acct), { model: MODEL.anthropic, contents: 'hello there', config: { systemInstruction: system } }, false)
		const input = countWords(system) + 2
		expect(r.usage?.promptTokenCount).toBe(input)
		expect(r.usage?.cachedContentTokenCount).toBeUndefined()
		const [row] = await usageRows(m, acct.accountId)
		expect(row).toMatchObject({ input_tokens: input, cached_tokens: 0 })
	})

	it('should give modelVersion and responseId on every answer', async () => {
		const acct = await m.account()
		for (const up of UPSTREAMS) {
			for (const stream of [false, true]) {
				const r = await generate(genai(acct), { model: MODEL[up], contents: 'hi' }, stream)
				for (const c of r.chunks) {
					expect(c.modelVersion).toBeTruthy()
					expect(c.responseId).toBeTruthy()
				}
				expect(new Set(r.chunks.map((c) => c.responseId)).size).toBe(1)
			}
		}
	})
})

describe('@google/genai inline data', () => {
	it("should refuse inlineData whose bytes are not base64 in Google's words, for every vendor's model, before any call", async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const before = UPSTREAMS.map((up) => m.mocks[up].requests.length)
		for (const up of ['openai', 'anthropic'] as const) {
			const e = await ai.models
				.generateContent({ model: MODEL[up], contents: [{ role: 'user', parts: [{ text: 'what is this?' }, { inlineData: { mimeType: 'image/png', data: up === 'openai' ? 'not*base64!' : 'not base64 at all!' } }] }] })
				.catch((x: unknown) => x)
			expect(e).toBeInstanceOf(ApiError)
			expect((e as ApiError).status).toBe(400)
			const { error } = JSON.parse((e as ApiError).message) as { error: { status: string; message: string } }
			expect(error.status).toBe('INVALID_ARGUMENT')
			expect(error.message).toBe("Invalid value at 'contents[0].parts[1].inline_data.data' (TYPE_BYTES), Base64 decoding failed")
		}
		expect(UPSTREAMS.map((up) => m.mocks[up].requests.length)).toEqual(before)
	})
})

describe('@google/genai function calling', () => {
	const weatherOnly: Tool[] = [{ functionDeclarations: [TOOLS[0]!.functionDeclarations![0]!] }]
	for (const [up, stream] of PAIRS) {
		it(`should honour mode ANY with allowedFunctionNames, and NONE (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const ai = genai(acct)
			const forced = await generate(ai, { model: MODEL[up], contents: 'find the docs', config: { tools: TOOLS, toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: ['lookup'] } } } }, stream)
			expect(forced.calls.map((c) => [c.name, c.args])).toEqual([['lookup', { query: 'find the docs' }]])
			expect(forced.finishReason).toBe(FinishReason.STOP)
			const none = await generate(ai, { model: MODEL[up], contents: 'weather #tools', config: { tools: TOOLS, toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.NONE } } } }, stream)
			expect(none.calls).toEqual([])
			expect(none.text).toBe(answer('weather #tools'))
			const auto = await generate(ai, { model: MODEL[up], contents: 'weather #tools', config: { tools: weatherOnly, toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.AUTO } } } }, stream)
			expect(auto.calls.map((c) => c.args)).toEqual([{ city: 'Paris' }, { city: 'Tokyo' }])
		})

		// allowedFunctionNames "limits the functions the model will call" (mode ANY or VALIDATED): another vendor has no such
		// list, so it must be offered only those functions, as for OpenAI's allowed_tools.
		it(`should let the model call only the allowedFunctionNames, several with ANY and one with VALIDATED (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const ai = genai(acct)
			const three: Tool[] = [{ functionDeclarations: [...TOOLS[0]!.functionDeclarations!, { name: 'notes', parameters: { type: Type.OBJECT, properties: { topic: { type: Type.STRING } } } }] }]
			const any = await generate(ai, { model: MODEL[up], contents: 'find the docs', config: { tools: three, toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: ['lookup', 'notes'] } } } }, stream)
			expect(any.calls.map((c) => [c.name, c.args])).toEqual([['lookup', { query: 'find the docs' }]])
			const validated = await generate(ai, { model: MODEL[up], contents: 'notes #tools', config: { tools: three, toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.VALIDATED, allowedFunctionNames: ['notes'] } } } }, stream)
			expect(validated.calls.map((c) => [c.name, c.args])).toEqual([
				['notes', { topic: 'Paris' }],
				['notes', { topic: 'Tokyo' }],
			])
			const missing = await generate(ai, { model: MODEL[up], contents: 'x', config: { tools: three, toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: ['missing'] } } } }, stream).catch((e: unknown) => e)
			expect(missing).toBeInstanceOf(ApiError)
			expect((missing as ApiError).status).toBe(400)
			expect((missing as ApiError).message).toContain('allowedFunctionNames names none of the functionDeclarations')
			if (up === 'gemini') return
			const offered = (lastRequest(m.mocks[up]).body.tools as Array<{ name?: string; function?: { name: string } }>).map((t) => t.name ?? t.function?.name)
			expect(offered).toEqual(['notes'])
		})

		// One name with ANY forces that function; Claude cannot force a tool while it thinks and is asked with `auto`: it
		// must then be offered that function alone, not every declaration.
		if (up !== 'gemini')
			it(`should offer only the one allowed function with ANY to a thinking model (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const config = { tools: TOOLS, toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: ['lookup'] } }, thinkingConfig: { thinkingBudget: 1024 }, maxOutputTokens: 4000 }
				// `#tools`: the mocks call every function offered when the choice is theirs.
				const r = await generate(genai(acct), { model: THINKER[up], contents: 'find the docs #tools', config }, stream)
				expect(r.calls.length).toBeGreaterThan(0)
				expect(new Set(r.calls.map((c) => c.name))).toEqual(new Set(['lookup']))
				const body = lastRequest(m.mocks[up]).body as { tools: Array<{ name?: string; function?: { name: string } }> }
				expect(body.tools.map((t) => t.name ?? t.function?.name)).toEqual(['lookup'])
			})
	}

	for (const up of UPSTREAMS) {
		it(`should run a function-calling round trip in a chat session (${up} upstream)`, async () => {
			const acct = await m.account()
			const chat = genai(acct).chats.create({ model: MODEL[up], config: { tools: weatherOnly } })
			const first = await chat.sendMessage({ message: 'weather in two cities #tools' })
			const calls = first.functionCalls ?? []
			expect(calls.map((c) => [c.name, c.args])).toEqual([
				['weather', { city: 'Paris' }],
				['weather', { city: 'Tokyo' }],
			])
			const second = await chat.sendMessage({
				message: calls.map((c) => ({ functionResponse: { id: c.id, name: c.name!, response: { result: `sunny in ${(c.args as { city: string }).city}` } } })),
			})
			expect(second.text).toBe('Tool results: sunny in Paris; sunny in Tokyo')
			expect(second.candidates?.[0]?.finishReason).toBe(FinishReason.STOP)
			expect(chat.getHistory().length).toBe(4)
		})

		// The SDK's streamed chat keeps each chunk as a model content of its own, so the history it sends back has a run
		// of model contents (thought pieces, the signature, the calls) before the function responses: Gemini reads such a
		// run as one turn, and so must the gateway, with the thinking whole and signed for Claude.
		it(`should run a function-calling round trip with thinking in a streamed chat session (${up} upstream)`, async () => {
			const acct = await m.account()
			const chat = genai(acct).chats.create({ model: THINKER[up], config: { tools: weatherOnly, thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 }, maxOutputTokens: 4000 } })
			const calls: FunctionCall[] = []
			for await (const c of await chat.sendMessageStream({ message: 'weather in two cities #tools' })) calls.push(...(c.functionCalls ?? []))
			expect(calls.map((c) => c.args)).toEqual([{ city: 'Paris' }, { city: 'Tokyo' }])
			let text = ''
			const message = calls.map((c) => ({ functionResponse: { id: c.id, name: c.name!, response: { result: `sunny in ${(c.args as { city: string }).city}` } } }))
			for await (const c of await chat.sendMessageStream({ message })) text += c.text ?? ''
			expect(text).toBe('Tool results: sunny in Paris; sunny in Tokyo')
			if (up === 'anthropic') {
				const assistant = lastRequest(m.mocks.anthropic).body.messages[1]
				expect(assistant.content.map((b: { type: string }) => b.type)).toEqual(['thinking', 'tool_use', 'tool_use'])
				expect(assistant.content[0].thinking).toBe('Let me think about weather in two cities #tools.')
			}
		})
	}

	// LangChain JS (`ChatGoogleGenerativeAI`) and the AI SDK's google provider keep a streamed thought part only when it
	// has text. Claude's signature used to come on an empty thought part of its own, so those clients lost it, and the
	// gateway had to turn thinking off for the turn after the tool call.
	it("should stream Claude's thinking signature on a thought part with text, kept by clients that drop empty parts", async () => {
		const acct = await m.account()
		const config = { tools: weatherOnly, thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 }, maxOutputTokens: 4000 }
		const first = await generate(genai(acct), { model: THINKER.anthropic, contents: '#call weather {"city": "Oslo"}', config }, true)
		const parts = first.chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? [])
		expect(parts.filter((p) => p.thoughtSignature && p.thought && !p.text)).toEqual([])
		const kept = parts.filter((p) => p.functionCall || (p.thought && p.text))
		const call = first.calls[0]!
		const contents = [
			{ role: 'user', parts: [{ text: '#call weather {"city": "Oslo"}' }] },
			{ role: 'model', parts: kept },
			{ role: 'user', parts: [{ functionResponse: { id: call.id, name: call.name!, response: { result: 'sunny' } } }] },
		]
		expect((await generate(genai(acct), { model: THINKER.anthropic, contents, config }, true)).text).toBe('Tool results: sunny')
		const body = lastRequest(m.mocks.anthropic).body
		expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 })
		expect(body.messages[1].content[0]).toEqual({ type: 'thinking', thinking: 'Let me think about #call weather {"city": "Oslo"}.', signature: thinkingSignature('Let me think about #call weather {"city": "Oslo"}.') })
	})
})

describe('@google/genai countTokens, embedContent and models', () => {
	const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
	for (const up of UPSTREAMS) {
		it(`should count tokens of text and an inline image without charging (${up} upstream)`, async () => {
			const acct = await m.account()
			const r = await genai(acct).models.countTokens({ model: MODEL[up], contents: [{ role: 'user', parts: [{ text: 'one two three' }, { inlineData: { mimeType: 'image/png', data: PNG } }] }] })
			if (up === 'openai') expect(r.totalTokens).toBeGreaterThan(3)
			else expect(r.totalTokens).toBe(3 + 85)
			expect(await usageRows(m, acct.accountId)).toEqual([])
		})

		it(`should read an inline image and bill its tokens (${up} upstream)`, async () => {
			const acct = await m.account()
			const r = await generate(genai(acct), { model: MODEL[up], contents: [{ role: 'user', parts: [{ text: 'what is it' }, { inlineData: { mimeType: 'image/png', data: PNG } }] }] }, false)
			expect(r.text).toBe(`I see 1 image. ${answer('what is it')}`)
			expect(r.usage?.promptTokenCount).toBe(3 + 85)
			await expectCharges(m, acct, [{ model: MODEL[up], input: 3 + 85, output: countWords(r.text) }])
		})
	}

	it('should embed one content and several contents, in order', async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const one = await ai.models.embedContent({ model: MODEL.gemini, contents: 'alpha beta' })
		expect(one.embeddings?.length).toBe(1)
		const many = await ai.models.embedContent({ model: MODEL.gemini, contents: ['alpha beta', 'gamma', 'delta epsilon zeta'] })
		expect(many.embeddings?.length).toBe(3)
		expect(many.embeddings![0]!.values).toEqual(one.embeddings![0]!.values!)
		expect(many.embeddings![1]!.values).not.toEqual(one.embeddings![0]!.values!)
	})

	it("should refuse a batch request naming another model than the URL's, and content with no parts, before any call", async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const before = UPSTREAMS.map((up) => m.mocks[up].requests.length)
		const refusal = async (call: Promise<unknown>) => {
			const e = await call.catch((x: unknown) => x)
			expect(e).toBeInstanceOf(ApiError)
			expect((e as ApiError).status).toBe(400)
			return (JSON.parse((e as ApiError).message) as { error: { status: string; message: string } }).error
		}
		for (const model of [MODEL.gemini, MODEL.openai]) {
			// The SDK names the URL's model in each request: another one, written in by hand, is Gemini's 400.
			const other = model === MODEL.gemini ? MODEL.openai : MODEL.gemini
			const requests = [
				{ model: `models/${model}`, content: { parts: [{ text: 'alpha' }] } },
				{ model: `models/${other}`, content: { parts: [{ text: 'beta' }] } },
			]
			const named = await refusal(ai.models.embedContent({ model, contents: 'alpha', config: { httpOptions: { extraBody: { requests } } } }))
			expect(named.status).toBe('INVALID_ARGUMENT')
			expect(named.message).toContain(`requests[1].model "models/${other}"`)
			const empty = await refusal(ai.models.embedContent({ model, contents: [{ parts: [] }] }))
			expect(empty.status).toBe('INVALID_ARGUMENT')
			expect(empty.message).toContain('requests[0].content.parts must contain at least one part')
			// `:embedContent` itself (the SDK asks batchEmbedContents of the Gemini API).
			const res = await fetch(`${m.app.url}/v1beta/models/${model}:embedContent`, {
				method: 'POST',
				headers: { 'x-goog-api-key': acct.key, 'content-type': 'application/json' },
				body: JSON.stringify({ content: { parts: [] } }),
			})
			expect(res.status).toBe(400)
			const { error } = (await res.json()) as { error: { status: string; message: string } }
			expect(error.status).toBe('INVALID_ARGUMENT')
			expect(error.message).toStartWith('content.parts must contain at least one part')
		}
		expect(UPSTREAMS.map((up) => m.mocks[up].requests.length)).toEqual(before)
		// The URL's model named either way is taken.
		const ok = await ai.models.embedContent({ model: MODEL.gemini, contents: 'alpha', config: { httpOptions: { extraBody: { requests: [{ model: MODEL.gemini, content: { parts: [{ text: 'alpha' }] } }, { model: `models/${MODEL.gemini}`, content: { parts: [{ text: 'beta' }] } }] } } } })
		expect(ok.embeddings).toHaveLength(2)
	})

	it('should list the models and get one by name', async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const names: string[] = []
		for await (const model of await ai.models.list()) names.push(model.name!)
		for (const up of UPSTREAMS) expect(names).toContain(`models/${MODEL[up]}`)
		const got = await ai.models.get({ model: MODEL.anthropic })
		expect(got.name).toBe(`models/${MODEL.anthropic}`)
		expect(got.supportedActions).toContain('generateContent')
	})
})
