/**
 * LlamaIndex.TS as a client: its OpenAI class (`/v1/chat/completions`), Anthropic class (`/v1/messages`) and Gemini
 * class (`/v1beta`, through `@google/genai`) against every vendor, with chat and complete (streamed and not), its
 * workflow agent running a two-step tool loop on a streamed chat, structured output, images, `OpenAIEmbedding` and an
 * in-memory VectorStoreIndex queried end to end. The usage LlamaIndex hands back (each class's `raw`) is compared
 * with the gateway's usage rows and charges.
 *
 * What the classes do themselves: Anthropic's takes tools only for names with `-3` or `-4` in them, Gemini's only for
 * the Gemini names on its list (FunctionAgent refuses other names before sending), so the tool loops here ask for
 * such names, served by each vendor through `model_map`. The Gemini class replays a function call without Gemini's
 * `thoughtSignature`, which Gemini's own models refuse on the next step (400, as Gemini does), so its loop runs on
 * names other vendors serve; Gemini's models run tool loops through the OpenAI class, whose call ids carry the
 * signature.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Anthropic, AnthropicSession } from '@llamaindex/anthropic'
import { Gemini, type GEMINI_MODEL } from '@llamaindex/google'
import { OpenAI, OpenAIEmbedding, OpenAIResponses } from '@llamaindex/openai'
import { agent } from '@llamaindex/workflow'
// Tools, memory and the LLM type from the core the provider and agent packages use (llamaindex 0.12.1, for the index,
// pins an older one, 0.6.22, whose classes the agent's types do not take).
import type { ToolCallLLM } from '@llamaindex/core/llms'
import { createMemory } from '@llamaindex/core/memory'
import { tool } from '@llamaindex/core/tools'
import { Document, MetadataMode, Settings, VectorStoreIndex } from 'llamaindex'
import { z } from 'zod'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { countWords, vector } from '../../mocks'
import { type Account, expectCharges, GEMINI_3, lastRequest, type Matrix, MODEL, PRICE, SETUP_MS, startMatrix, THINKER, THINKER_UPSTREAM, type Upstream, UPSTREAMS } from './harness'

const EMBEDDING = 'text-embedding-3-small'

/** This file's models beside the matrix's, USD per million tokens (added to the harness's table, which expectCharges prices by). */
const PRICES: typeof PRICE = {
	[EMBEDDING]: { input: 0.02, output: 0 },
	'gpt-4.1': { input: 2, output: 8 },
	'gemini-2.5-flash-lite': { input: 0.1, output: 0.4 },
	'claude-sonnet-4-6': { input: 3, output: 15 },
	'gemini-2.5-pro': { input: 1.25, output: 10 },
	[GEMINI_3]: { input: 0.3, output: 2.5 },
}

/** Names each vendor class runs tools with (see above), per upstream vendor; the Gemini class has none on Gemini's models. */
const TOOL_MODEL: Record<'anthropic' | 'gemini', Partial<Record<Upstream, string>>> = {
	anthropic: { openai: 'gpt-4.1', anthropic: 'claude-sonnet-4-6', gemini: GEMINI_3 },
	gemini: { openai: 'gemini-2.5-flash-lite', anthropic: 'gemini-2.5-pro' },
}

let m: Matrix
beforeAll(async () => {
	Object.assign(PRICE, PRICES)
	m = await startMatrix({
		channels: (mocks): GatewayConfig['channels'] => [
			{ name: 'li-embed', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: [EMBEDDING] },
			{ name: 'li-openai', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: ['gpt-4.1', 'gemini-2.5-flash-lite'], model_map: { 'gemini-2.5-flash-lite': 'gpt-4.1' } },
			{ name: 'li-anthropic', type: 'anthropic', base_url: mocks.anthropic.url, api_key: 'up-anthropic', models: ['claude-sonnet-4-6', 'gemini-2.5-pro'], model_map: { 'gemini-2.5-pro': 'claude-sonnet-4-6' } },
			// Priority 1: Gemini uploads go to the first Gemini channel in routing order, so the Gemini class's images are
			// held by ch-gemini (gemini-m), and GEMINI_3 reads them through this other channel of the same key.
			{ name: 'li-gemini-3', type: 'gemini', base_url: mocks.gemini.url, api_key: 'up-gemini', models: [GEMINI_3], model_map: { [GEMINI_3]: 'gemini-3-pro-preview' }, priority: 1 },
		],
		models: Object.entries(PRICES).map(([name, p]) => ({ name, input_per_mtok: p.input, output_per_mtok: p.output })),
	})
}, SETUP_MS)
afterAll(() => m.close())

type Class = 'openai' | 'anthropic' | 'gemini'
const CLASSES: Class[] = ['openai', 'anthropic', 'gemini']

/** The class's LLM for `model`, pointed at the gateway with the account's key (each as its README row says). */
function llmFor(c: Class, acct: Account, model: string, options: Record<string, unknown> = {}): ToolCallLLM {
	if (c === 'openai') return new OpenAI({ model, apiKey: acct.key, baseURL: `${m.app.url}/v1`, maxRetries: 0, ...options })
	if (c === 'anthropic') return new Anthropic({ model, session: new AnthropicSession({ apiKey: acct.key, baseURL: m.app.url, maxRetries: 0 }), ...options })
	return new Gemini({ model: model as GEMINI_MODEL, apiKey: acct.key, httpOptions: { baseUrl: m.app.url }, ...options })
}

/** Input and output tokens as each class's raw answer (or its last raw chunk carrying usage) reports them. */
function reported(c: Class, raw: unknown): [number, number] {
	const r = raw as Record<string, any>
	if (c === 'openai') return [r.usage.prompt_tokens, r.usage.completion_tokens]
	if (c === 'anthropic') return [r.usage.input_tokens, r.usage.output_tokens]
	return [r.usageMetadata.promptTokenCount, r.usageMetadata.candidatesTokenCount]
}

const text = (content: unknown) => (typeof content === 'string' ? content : (content as Array<{ text?: string }>).map((p) => p.text ?? '').join(''))

const weather = tool({ name: 'weather', description: 'Weather for a city', parameters: z.object({ city: z.string() }), execute: ({ city }) => `sunny in ${city}` })

/** FunctionAgent's default system prompt (@llamaindex/workflow), counted as input on every step. */
const AGENT_SYSTEM = 'You are a helpful assistant. Use the provided tools to answer questions.'

/** A 1×1 PNG. */
const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='

for (const c of CLASSES) {
	describe(`LlamaIndex ${c} class`, () => {
		for (const up of UPSTREAMS) {
			it(`should chat and complete, streamed and not, billed as it reports (${up} upstream)`, async () => {
				const acct = await m.account()
				const llm = llmFor(c, acct, MODEL[up])
				const said = await llm.chat({ messages: [{ role: 'user', content: 'hello there' }] })
				expect(text(said.message.content)).toBe('Hello! You said: hello there')
				expect(reported(c, said.raw)).toEqual([2, 5])
				let streamed = ''
				for await (const chunk of await llm.chat({ messages: [{ role: 'user', content: 'hello there' }], stream: true })) streamed += chunk.delta
				expect(streamed).toBe('Hello! You said: hello there')
				expect((await llm.complete({ prompt: 'complete me' })).text).toBe('Hello! You said: complete me')
				let completed = ''
				for await (const chunk of await llm.complete({ prompt: 'complete me', stream: true })) completed += chunk.text
				expect(completed).toBe('Hello! You said: complete me')
				await expectCharges(m, acct, [
					{ model: MODEL[up], input: 2, output: 5, stream: false },
					{ model: MODEL[up], input: 2, output: 5, stream: true },
					{ model: MODEL[up], input: 2, output: 5, stream: false },
					{ model: MODEL[up], input: 2, output: 5, stream: true },
				])
			})

			const toolModel = c === 'openai' ? MODEL[up] : TOOL_MODEL[c][up]
			if (toolModel)
				it(`should run the agent's two-step tool loop with parallel calls (${up} upstream, ${toolModel})`, async () => {
					const acct = await m.account()
					const run = await agent({ llm: llmFor(c, acct, toolModel), tools: [weather] }).run('weather twice #tools')
					expect(run.data.result).toBe('Tool results: sunny in Paris; sunny in Tokyo')
					const input = countWords(AGENT_SYSTEM) + 3
					await expectCharges(m, acct, [
						{ model: toolModel, input, output: 4, stream: true },
						{ model: toolModel, input: input + countWords('sunny in Paris') + countWords('sunny in Tokyo'), output: countWords(run.data.result as string), stream: true },
					])
				})

			if (c !== 'gemini')
				it(`should read an image sent as an image_url data URI (${up} upstream)`, async () => {
					const acct = await m.account()
					const r = await llmFor(c, acct, MODEL[up]).chat({
						messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_B64}` } }] }],
					})
					expect(text(r.message.content)).toBe('I see 1 image. Hello! You said: what is this')
					await expectCharges(m, acct, [{ model: MODEL[up], input: 3 + 85, output: countWords(text(r.message.content)) }])
				})
		}
	})
}

describe('LlamaIndex OpenAI class, more', () => {
	for (const up of UPSTREAMS) {
		it(`should give structured output for a zod responseFormat, and exec's format_output tool (${up} upstream)`, async () => {
			const acct = await m.account()
			const Person = z.object({ name: z.string(), age: z.number() })
			const llm = llmFor('openai', acct, MODEL[up])
			const r = await llm.chat({ messages: [{ role: 'user', content: 'a person' }], responseFormat: Person })
			expect(JSON.parse(text(r.message.content))).toEqual({ name: 'a person', age: 42 })
			const exec = await llm.exec({ messages: [{ role: 'user', content: '#call format_output {"name":"Ann","age":30}' }], responseFormat: Person })
			expect(exec.object).toEqual({ name: 'Ann', age: 30 })
		})

		it(`should report the streamed usage it asks for with stream_options (${up} upstream)`, async () => {
			const acct = await m.account()
			const llm = llmFor('openai', acct, MODEL[up], { additionalChatOptions: { stream_options: { include_usage: true } } })
			const usage: unknown[] = []
			for await (const chunk of await llm.chat({ messages: [{ role: 'user', content: 'hello there' }], stream: true })) {
				const raw = chunk.raw as { usage?: unknown } | null
				if (raw?.usage) usage.push(raw.usage)
			}
			expect(usage).toHaveLength(1)
			expect(reported('openai', { usage: usage[0] })).toEqual([2, 5])
			await expectCharges(m, acct, [{ model: MODEL[up], input: 2, output: 5, stream: true }])
		})
	}

	for (const up of UPSTREAMS)
		it(`should continue an agent's conversation, its earlier tool calls and results replayed, on a second run (${up} upstream)`, async () => {
			const acct = await m.account()
			const chat = agent({ llm: llmFor('openai', acct, MODEL[up]), tools: [weather], memory: createMemory() })
			expect((await chat.run('weather twice #tools')).data.result).toBe('Tool results: sunny in Paris; sunny in Tokyo')
			expect((await chat.run('#call weather {"city":"Oslo"}')).data.result).toBe('Tool results: sunny in Oslo')
			// The second run's steps carry the first run's turns: its question, both calls, both results and its answer.
			const first = countWords(AGENT_SYSTEM) + 3 + countWords('sunny in Paris') + countWords('sunny in Tokyo') + countWords('Tool results: sunny in Paris; sunny in Tokyo')
			await expectCharges(m, acct, [
				{ model: MODEL[up], input: countWords(AGENT_SYSTEM) + 3, output: 4 },
				{ model: MODEL[up], input: first - countWords('Tool results: sunny in Paris; sunny in Tokyo'), output: 8 },
				{ model: MODEL[up], input: first + 3, output: 2 },
				{ model: MODEL[up], input: first + 3 + countWords('sunny in Oslo'), output: countWords('Tool results: sunny in Oslo') },
			])
		})

	it('should run a Gemini 3 tool loop, its thought signature riding in the call ids LlamaIndex sends back', async () => {
		const acct = await m.account()
		const run = await agent({ llm: llmFor('openai', acct, GEMINI_3), tools: [weather] }).run('weather twice #tools')
		expect(run.data.result).toBe('Tool results: sunny in Paris; sunny in Tokyo')
		const sent = lastRequest(m.mocks.gemini).body.contents.find((x: { role: string }) => x.role === 'model')
		expect(sent.parts[0].thoughtSignature).toBeString()
	})

	it('should answer with a reasoning model although the class sends its default temperature 0.1 to every model', async () => {
		// The class sends `temperature: 0.1` and `top_p: 1` unless the name starts o3 or o4, and OpenAI's reasoning models
		// refuse a temperature (400 "Unsupported parameter: 'temperature' is not supported with this model."): a gateway
		// name served by one (`gpt-think` is o4-mini) gets the model's fixed sampling, as through the other protocols.
		const acct = await m.account()
		const llm = llmFor('openai', acct, THINKER.openai)
		expect((await llm.chat({ messages: [{ role: 'user', content: 'hello there' }] })).message.content).toBe('Hello! You said: hello there')
		const body = lastRequest(m.mocks.openai).body
		expect(body.model).toBe(THINKER_UPSTREAM)
		expect(body.temperature).toBeUndefined()
		let streamed = ''
		for await (const chunk of await llm.chat({ messages: [{ role: 'user', content: 'hello there' }], stream: true })) streamed += chunk.delta
		expect(streamed).toBe('Hello! You said: hello there')
	})
})

describe('LlamaIndex OpenAIResponses class', () => {
	// Not streamed: its stream repeats the last text delta on every later event (output_text.done, content_part.done,
	// output_item.done, response.completed), whatever the server, so streamed text and agent answers end garbled.
	for (const up of UPSTREAMS) {
		it(`should chat, complete and read an image through /v1/responses, billed as it reports (${up} upstream)`, async () => {
			const acct = await m.account()
			const llm = new OpenAIResponses({ model: MODEL[up], apiKey: acct.key, baseURL: `${m.app.url}/v1`, maxRetries: 0 })
			const said = await llm.chat({ messages: [{ role: 'user', content: 'hello there' }] })
			expect(said.message.content).toBe('Hello! You said: hello there')
			const usage = (said.raw as { usage: { input_tokens: number; output_tokens: number } }).usage
			expect([usage.input_tokens, usage.output_tokens]).toEqual([2, 5])
			expect((await llm.complete({ prompt: 'complete me' })).text).toBe('Hello! You said: complete me')
			const seen = await llm.chat({ messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_B64}` } }] }] })
			expect(seen.message.content).toBe('I see 1 image. Hello! You said: what is this')
			await expectCharges(m, acct, [
				{ model: MODEL[up], input: 2, output: 5, endpoint: '/v1/responses' },
				{ model: MODEL[up], input: 2, output: 5, endpoint: '/v1/responses' },
				{ model: MODEL[up], input: 3 + 85, output: 10, endpoint: '/v1/responses' },
			])
		})
	}
})

describe('LlamaIndex Gemini class, images', () => {
	it("should upload an image through the gateway's Files API and read it on a Gemini model", async () => {
		const acct = await m.account()
		const r = await llmFor('gemini', acct, MODEL.gemini).chat({
			messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this' }, { type: 'image', mimeType: 'image/png', data: PNG_B64 }] }],
		})
		expect(r.message.content).toBe('I see 1 image. Hello! You said: what is this')
	})

	it('should read it on a model another Gemini channel with the same base URL and key serves', async () => {
		// The file is held by ch-gemini (the upload's channel); GEMINI_3 is served only by li-gemini-3, the same Google
		// project: before, a 400 "A file this request names is held by a Gemini channel that does not serve the model".
		const acct = await m.account()
		const r = await llmFor('gemini', acct, GEMINI_3).chat({
			messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this' }, { type: 'image', mimeType: 'image/png', data: PNG_B64 }] }],
		})
		expect(r.message.content).toBe('I see 1 image. Hello! You said: what is this')
		expect(lastRequest(m.mocks.gemini).path).toContain('gemini-3-pro-preview')
		await expectCharges(m, acct, [{ model: GEMINI_3, input: 3 + 85, output: countWords('I see 1 image. Hello! You said: what is this') }])
	})
})

describe('LlamaIndex embeddings and VectorStoreIndex', () => {
	it('should embed through /v1/embeddings and answer a query over an in-memory index, each call billed', async () => {
		const acct = await m.account()
		const embedModel = new OpenAIEmbedding({ model: EMBEDDING, apiKey: acct.key, baseURL: `${m.app.url}/v1`, maxRetries: 0, dimensions: 8 })
		// The OpenAI SDK under it asks for base64 and decodes it: the vector must survive the relay exactly (float32).
		expect(await embedModel.getTextEmbedding('one two three')).toEqual(vector('one two three', 8).map((x) => Math.fround(x)))
		// Global in LlamaIndex: the index embeds with it, and the query engine answers with Claude through the OpenAI class.
		Settings.llm = llmFor('openai', acct, MODEL.anthropic)
		Settings.embedModel = embedModel
		const docs = ['Paris is in France.', 'Tokyo is in Japan.', 'Oslo is in Norway.']
		const index = await VectorStoreIndex.fromDocuments(docs.map((d) => new Document({ text: d })))
		// The mock's vectors are a hash of the text: the query equal to a document is the one it finds.
		const r = await index.asQueryEngine({ similarityTopK: 1 }).query({ query: 'Tokyo is in Japan.' })
		expect(r.sourceNodes?.map((n) => n.node.getContent(MetadataMode.NONE))).toEqual(['Tokyo is in Japan.'])
		const answer = r.toString()
		expect(answer).toContain('Tokyo is in Japan.\n---------------------')
		// The mock echoes the prompt the query engine wrote (context and query) after "Hello! You said: ".
		const promptWords = countWords(answer) - countWords('Hello! You said:')
		const rows = await expectCharges(m, acct, [
			{ model: EMBEDDING, input: 3, output: 0 },
			{ model: EMBEDDING, input: docs.reduce((n, d) => n + countWords(d), 0), output: 0 },
			{ model: EMBEDDING, input: 4, output: 0 },
			{ model: MODEL.anthropic, input: promptWords, output: countWords(answer) },
		])
		expect(rows.map((x) => x.endpoint)).toEqual(['/v1/embeddings', '/v1/embeddings', '/v1/embeddings', '/v1/chat/completions'])
	})
})
