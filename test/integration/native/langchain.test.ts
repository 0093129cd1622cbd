/**
 * An outside audit through LangChain JS: `ChatOpenAI` (chat completions and `useResponsesApi`), `ChatAnthropic`,
 * `ChatGoogleGenerativeAI` and `OpenAIEmbeddings` pointed at the gateway, against models served by the three mock
 * vendors. Each test pins a behaviour LangChain users rely on, or a defect the audit found.
 * @module
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ChatAnthropic } from '@langchain/anthropic'
import type { BaseChatModel } from '@langchain/core/language_models/chat_models'
import { AIMessageChunk, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages'
import { tool } from '@langchain/core/tools'
import { ChatGoogleGenerativeAI } from '@langchain/google-genai'
import { ChatOpenAI, OpenAIEmbeddings } from '@langchain/openai'
import { z } from 'zod'
import { thinkingSignature } from '../../mocks'
import { lastRequest, type Native, SETUP_MS, startNative } from './setup'

let n: Native
let key = ''
beforeAll(async () => {
	n = await startNative()
	key = (await n.app.account(100)).key
}, SETUP_MS)
afterAll(() => n.close())

const MODELS = ['gpt-4o-mini', 'claude-sonnet-5', 'gemini-2.5-flash'] as const
/** The model of the vendor that thinks: gpt-4o-mini does not (OpenAI refuses it an effort), o4-mini does. */
const thinker = (model: string) => (model === 'gpt-4o-mini' ? 'o4-mini' : model)
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='

const chatOpenAI = (model: string, fields: Record<string, unknown> = {}) => new ChatOpenAI({ model, apiKey: key, configuration: { baseURL: `${n.app.url}/v1` }, maxRetries: 0, ...fields })
const chatAnthropic = (model: string, fields: Record<string, unknown> = {}) => new ChatAnthropic({ model, apiKey: key, anthropicApiUrl: n.app.url, maxRetries: 0, ...fields })
const chatGemini = (model: string, fields: Record<string, unknown> = {}) => new ChatGoogleGenerativeAI({ model, apiKey: key, baseUrl: n.app.url, maxRetries: 0, ...fields })

const weather = tool(async ({ city }: { city: string }) => `sunny in ${city}`, { name: 'get_weather', description: 'The weather in a city', schema: z.object({ city: z.string() }) })

describe('ChatOpenAI with useResponsesApi: image content blocks', () => {
	// LangChain turns a standard `image` data block into a chat-style `image_url` part on the Responses API
	// (langchain-ai/langchainjs#11248). OpenAI answers 400 "Invalid value: 'image_url'"; the gateway used to drop the
	// part silently for Claude and Gemini models, so the model answered without the image.
	for (const model of MODELS) {
		it(`should refuse a chat-style image_url part with OpenAI's 400 naming the part (${model}), not drop it`, async () => {
			const before = n.anthropic.requests.length + n.gemini.requests.length + n.openai.requests.length
			const image = new HumanMessage({ content: [{ type: 'text', text: 'what is it' }, { type: 'image', source_type: 'base64', mime_type: 'image/png', data: PNG }] })
			const e: any = await chatOpenAI(model, { useResponsesApi: true })
				.invoke([image])
				.catch((err: unknown) => err)
			expect(e?.status).toBe(400)
			expect(e.message).toContain("Invalid value: 'image_url'")
			expect(e.error?.param).toBe('input[0].content[1].type')
			expect(n.anthropic.requests.length + n.gemini.requests.length + n.openai.requests.length).toBe(before)
		})
	}

	it('should see an input_image part from the chat-style image_url block LangChain converts right', async () => {
		for (const model of MODELS) {
			const r = await chatOpenAI(model, { useResponsesApi: true }).invoke([
				new HumanMessage({ content: [{ type: 'text', text: 'what is it' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] }),
			])
			expect(r.text).toBe('I see 1 image. Hello! You said: what is it')
		}
	})
})

/** Tool calls, their ToolMessages, and the answer to them, through `model.bindTools([weather])`. */
async function toolRoundTrip(llm: { invoke(m: BaseMessage[]): Promise<AIMessageChunk> }, streamed?: (m: BaseMessage[]) => Promise<AIMessageChunk>) {
	const messages: BaseMessage[] = [new HumanMessage('#tools the weather please')]
	const ai = streamed ? await streamed(messages) : await llm.invoke(messages)
	expect(ai.tool_calls?.map((c) => [c.name, c.args])).toEqual([
		['get_weather', { city: 'Paris' }],
		['get_weather', { city: 'Tokyo' }],
	])
	messages.push(ai)
	for (const call of ai.tool_calls!) messages.push(new ToolMessage({ content: `sunny in ${call.args.city}`, tool_call_id: call.id!, name: call.name }))
	return llm.invoke(messages)
}

describe('ChatGoogleGenerativeAI: parallel tool results', () => {
	// LangChain sends each ToolMessage as its own `user` content. Gemini refuses that ("the number of function response
	// parts is equal to the number of function call parts of the function call turn"); the gateway merges such turns for
	// Claude and GPT models, and used to relay them to Gemini models as they came.
	for (const model of MODELS) {
		it(`should answer both tool results on a ${model} model`, async () => {
			const llm = chatGemini(model).bindTools([weather])
			const answer = await toolRoundTrip(llm)
			expect(answer.text).toBe('Tool results: sunny in Paris; sunny in Tokyo')
			if (model.startsWith('gemini')) {
				const contents = lastRequest(n.gemini).body.contents as Array<{ role: string; parts: Array<Record<string, unknown>> }>
				expect(contents.map((c) => [c.role, c.parts.length])).toEqual([
					['user', 1],
					['model', 2],
					['user', 2],
				])
			}
		})
	}
})

describe('the LangChain chat classes on every vendor', () => {
	const CLASSES: Record<string, (model: string, fields?: Record<string, unknown>) => BaseChatModel> = {
		'ChatOpenAI (chat completions)': (model: string, f?: Record<string, unknown>) => chatOpenAI(model, f),
		'ChatOpenAI (useResponsesApi)': (model: string, f?: Record<string, unknown>) => chatOpenAI(model, { useResponsesApi: true, ...f }),
		ChatAnthropic: (model: string, f?: Record<string, unknown>) => chatAnthropic(model, f),
		ChatGoogleGenerativeAI: (model: string, f?: Record<string, unknown>) => chatGemini(model, f),
	}
	for (const [name, make] of Object.entries(CLASSES)) {
		for (const model of MODELS) {
			it(`${name} → ${model}: invoke, stream with usage, batch, streamed parallel tool calls and their results, structured output`, async () => {
				const r = await make(model).invoke('hello there')
				expect(r.text).toBe('Hello! You said: hello there')
				expect(r.usage_metadata).toMatchObject({ input_tokens: 2, output_tokens: 5, total_tokens: 7 })

				let acc: AIMessageChunk | undefined
				for await (const chunk of await make(model, name.startsWith('ChatOpenAI') ? { streamUsage: true } : {}).stream('stream me')) acc = acc ? acc.concat(chunk) : chunk
				expect(acc!.text).toBe('Hello! You said: stream me')
				expect(acc!.usage_metadata?.output_tokens).toBeGreaterThanOrEqual(5)

				expect((await make(model).batch(['one', 'two'])).map((m) => m.text)).toEqual(['Hello! You said: one', 'Hello! You said: two'])

				// tool_call_chunks merge by index and id: two calls, each with its own id and whole arguments.
				const llm = make(model).bindTools!([weather])
				const streamed = async (messages: BaseMessage[]) => {
					let all: AIMessageChunk | undefined
					for await (const chunk of await llm.stream(messages)) all = all ? all.concat(chunk) : chunk
					expect(new Set(all!.tool_calls!.map((c) => c.id)).size).toBe(2)
					return all!
				}
				expect((await toolRoundTrip(llm, streamed)).text).toBe('Tool results: sunny in Paris; sunny in Tokyo')

				const methods = ['jsonSchema', 'functionCalling'] as const
				for (const method of methods) {
					const out = await make(model).withStructuredOutput(z.object({ answer: z.string(), score: z.number() }), { method, name: 'reply' }).invoke('rate it')
					expect(out).toEqual({ answer: expect.any(String), score: 42 })
				}
			})
		}
	}

	for (const model of MODELS) {
		it(`ChatOpenAI → ${model}: interleaved streamed tool call deltas merge by index`, async () => {
			let acc: AIMessageChunk | undefined
			for await (const chunk of await chatOpenAI(model).bindTools([weather]).stream('#tools #interleave the weather')) acc = acc ? acc.concat(chunk) : chunk
			expect(acc!.tool_calls?.map((c) => c.args)).toEqual([{ city: 'Paris' }, { city: 'Tokyo' }])
		})

		it(`ChatOpenAI → ${model}: n = 2 gives two generations, streamed and not`, async () => {
			for (const streaming of [false, true]) {
				const r = await chatOpenAI(model, { n: 2, streaming }).generate([[new HumanMessage('twice')]])
				expect(r.generations[0]!.map((g) => g.text)).toEqual(['Hello! You said: twice', 'Hello! You said: twice'])
			}
		})

		it(`ChatOpenAI → ${model}: an image content block is seen`, async () => {
			const r = await chatOpenAI(model).invoke([new HumanMessage({ content: [{ type: 'text', text: 'what is it' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] })])
			expect(r.text).toBe('I see 1 image. Hello! You said: what is it')
		})

		it(`ChatAnthropic → ${model}: adaptive thinking round trip keeps the thinking block and its signature`, async () => {
			const llm = chatAnthropic(model, { thinking: { type: 'adaptive' }, maxTokens: 2048 }).bindTools([weather])
			const answer = await toolRoundTrip(llm)
			expect(answer.text).toBe('Tool results: sunny in Paris; sunny in Tokyo')
			if (model.startsWith('claude')) {
				const turn = lastRequest(n.anthropic).body.messages[1]
				expect(turn.content[0]).toMatchObject({ type: 'thinking', signature: expect.stringMatching(/^\+\+\/\//) })
			}
		})

		if (model.startsWith('claude'))
			it(`ChatGoogleGenerativeAI → ${model}: a streamed thinking round trip keeps the thinking and its signature`, async () => {
				// The class keeps a streamed thought part only when it has text; Claude's signature came on one without.
				const llm = chatGemini(model, { thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } }).bindTools([weather])
				const streamed = async (messages: BaseMessage[]) => {
					let all: AIMessageChunk | undefined
					for await (const chunk of await llm.stream(messages)) all = all ? all.concat(chunk) : chunk
					return all!
				}
				expect((await toolRoundTrip(llm, streamed)).text).toBe('Tool results: sunny in Paris; sunny in Tokyo')
				const body = lastRequest(n.anthropic).body
				// Claude Sonnet 5 takes adaptive thinking only: the budget goes as the effort it stands for.
				expect([body.thinking, body.output_config]).toEqual([{ type: 'adaptive' }, { effort: 'low' }])
				expect(body.messages[1].content[0]).toMatchObject({ type: 'thinking', thinking: 'Let me think about #tools the weather please.', signature: thinkingSignature('Let me think about #tools the weather please.') })
			})

		it(`ChatGoogleGenerativeAI → ${thinker(model)}: thinkingBudget with includeThoughts gives the thoughts`, async () => {
			const r = await chatGemini(thinker(model), { thinkingConfig: { thinkingBudget: 2048, includeThoughts: true } }).invoke('think hard')
			expect(r.content).toEqual([expect.objectContaining({ type: 'thinking', thinking: 'Let me think about think hard.' }), expect.objectContaining({ type: 'text', text: 'Hello! You said: think hard' })])
		})
	}
})

describe('errors reach LangChain with their status', () => {
	const classes = (k: string) => [
		['ChatOpenAI', new ChatOpenAI({ model: 'gpt-4o-mini', apiKey: k, configuration: { baseURL: `${n.app.url}/v1` }, maxRetries: 0 })],
		['ChatOpenAI (useResponsesApi)', new ChatOpenAI({ model: 'claude-sonnet-5', apiKey: k, configuration: { baseURL: `${n.app.url}/v1` }, maxRetries: 0, useResponsesApi: true })],
		['ChatAnthropic', new ChatAnthropic({ model: 'gemini-2.5-flash', apiKey: k, anthropicApiUrl: n.app.url, maxRetries: 0 })],
		['ChatGoogleGenerativeAI', new ChatGoogleGenerativeAI({ model: 'gpt-4o-mini', apiKey: k, baseUrl: n.app.url, maxRetries: 0 })],
	] as const
	it("should give 401 for a bad key (Gemini's 400, as Google answers), 402 for an empty balance and 404 for an unknown model", async () => {
		const empty = await n.app.account(0)
		for (const [name, llm] of classes('sk-not-a-key'))
			expect([name, ((await llm.invoke('x').catch((e) => e)) as { status?: number }).status]).toEqual([name, name === 'ChatGoogleGenerativeAI' ? 400 : 401])
		for (const [name, llm] of classes(empty.key)) {
			const e = (await llm.invoke('x').catch((err) => err)) as { status?: number; message: string }
			expect([name, e.status]).toEqual([name, 402])
			expect(e.message).toContain('account balance exhausted')
		}
		const unknown = [chatOpenAI('no-such-model'), chatAnthropic('no-such-model'), chatGemini('no-such-model')]
		for (const llm of unknown) expect(((await llm.invoke('x').catch((e) => e)) as { status?: number }).status).toBe(404)
	})
})

describe('OpenAIEmbeddings', () => {
	for (const model of ['text-embedding-3-small', 'gemini-embedding-001']) {
		it(`should embed documents and a query with ${model}, at the asked dimensions`, async () => {
			const e = new OpenAIEmbeddings({ model, apiKey: key, configuration: { baseURL: `${n.app.url}/v1` }, maxRetries: 0, dimensions: 256 })
			const docs = await e.embedDocuments(['a b', 'c d e'])
			expect(docs.map((v) => v.length)).toEqual([256, 256])
			expect((await e.embedQuery('hello')).length).toBe(256)
		})
	}
})
