/**
 * Bedrock models that are not Claude (Amazon Nova, Meta Llama…) over the Converse API, through the official SDKs and
 * the AI SDK: whole and streamed answers (ConverseStream's event-stream re-framed and decoded), tools and their
 * results, reasoning with Converse's signature taken back, images as bytes, both auth forms, the charges from
 * Converse's usage, errors whole and mid-stream with failover; and a Claude model on the same channel still over
 * InvokeModel. The mock validates as Bedrock does (test/mocks/bedrock/converse.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { createOpenAI } from '@ai-sdk/openai'
import { GoogleGenAI } from '@google/genai'
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai'
import OpenAI from 'openai'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { type BedrockMock, converseSignature, countWords, startBedrockMock } from '../../mocks'
import { chat, messages, type Protocol, PROTOCOLS } from './clients'
import { type Account, expectCharges, lastRequest, type Matrix, PRICE, SETUP_MS, startMatrix, usageRows } from './harness'

;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false

const REGION = 'us-east-1'
const API_KEY = 'ABSKQmVkcm9ja0FQSUtleS1jb252ZXJzZQ=='
const IAM = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' }
const NOVA_ID = 'us.amazon.nova-pro-v1:0'
const NOVA2_ID = 'us.amazon.nova-2-lite-v1:0'
const LLAMA_ID = 'meta.llama3-3-70b-instruct-v1:0'
const CLAUDE_ID = 'us.anthropic.claude-sonnet-4-6-v1:0'

const NOVA = 'nova-br'
const NOVA2 = 'nova2-br'
const LLAMA = 'llama-br-iam'
const CLAUDE = 'claude-br-same'
/** Nova on Bedrock first, OpenAI second, for failover. */
const FAILOVER = 'nova-br-fo'
const NAMES = [NOVA, NOVA2, LLAMA, CLAUDE, FAILOVER]

let m: Matrix
let br: BedrockMock
beforeAll(async () => {
	br = await startBedrockMock({ apiKey: API_KEY, iam: IAM, region: REGION, models: [NOVA_ID, NOVA2_ID, LLAMA_ID, CLAUDE_ID] })
	for (const name of NAMES) PRICE[name] = { input: 0.8, output: 3.2, cacheRead: 0.2 }
	m = await startMatrix({
		models: NAMES.map((name) => ({ name, input_per_mtok: 0.8, output_per_mtok: 3.2, cache_read_per_mtok: 0.2 })),
		channels: (mocks): GatewayConfig['channels'] => [
			{
				name: 'br-key',
				type: 'bedrock',
				base_url: br.url,
				api_key: API_KEY,
				models: [NOVA, NOVA2, CLAUDE, FAILOVER],
				model_map: { [NOVA]: NOVA_ID, [NOVA2]: NOVA2_ID, [CLAUDE]: CLAUDE_ID, [FAILOVER]: NOVA_ID },
				priority: 0,
			},
			{ name: 'br-iam', type: 'bedrock', base_url: br.url, api_key: `${IAM.accessKeyId}:${IAM.secretAccessKey}`, models: [LLAMA], model_map: { [LLAMA]: LLAMA_ID }, settings: { region: REGION } },
			{ name: 'fo-openai-nova', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: [FAILOVER], model_map: { [FAILOVER]: 'gpt-4o' }, priority: 1 },
		],
	})
}, SETUP_MS)
afterAll(async () => {
	await m.close()
	await br.stop()
})

const last = () => lastRequest(br)

const ask = (proto: Protocol, acct: Account, model: string, text: string, stream: boolean, extra: Record<string, unknown> = {}) =>
	proto === 'chat'
		? chat(acct.openai, { model, messages: [{ role: 'user', content: text }], ...extra }, stream)
		: messages(acct.anthropic, { model, max_tokens: 256, messages: [{ role: 'user', content: text }], ...extra } as never, stream)

const TOOLS = {
	chat: { tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }] },
	messages: { tools: [{ name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }] },
}

/** The tool results of the answer's calls (rain, sun), in the client's protocol. */
const resultsOf = (proto: Protocol, calls: Array<{ id: string }>) =>
	proto === 'chat'
		? calls.map((c, i) => ({ role: 'tool', tool_call_id: c.id, content: ['rain', 'sun'][i] }))
		: [{ role: 'user', content: calls.map((c, i) => ({ type: 'tool_result', tool_use_id: c.id, content: ['rain', 'sun'][i] })) }]

describe('bedrock channel, Converse models', () => {
	for (const proto of PROTOCOLS)
		for (const stream of [false, true])
			for (const model of [NOVA, LLAMA])
				it(`should answer ${proto} clients (${stream ? 'stream' : 'non-stream'}, ${model === NOVA ? 'Nova, API key' : 'Llama, SigV4'}) over Converse, billed from its usage`, async () => {
					const acct = await m.account()
					const a = await ask(proto, acct, model, 'hello from converse', stream)
					expect(a.text).toBe('Hello! You said: hello from converse')
					expect(a.stop).toBe(proto === 'chat' ? 'stop' : 'end_turn')
					const input = countWords('hello from converse')
					const output = countWords(a.text)
					expect(a.usage).toMatchObject({ input, output, cached: 0 })
					const r = last()
					const id = model === NOVA ? 'us.amazon.nova-pro-v1%3A0' : 'meta.llama3-3-70b-instruct-v1%3A0'
					expect(r.path).toBe(`/model/${id}/${stream ? 'converse-stream' : 'converse'}`)
					expect(r.body.messages).toEqual([{ role: 'user', content: [{ text: 'hello from converse' }] }])
					expect(r.body.anthropic_version).toBeUndefined()
					expect(r.body.model).toBeUndefined()
					if (proto === 'messages') expect(r.body.inferenceConfig).toEqual({ maxTokens: 256 })
					if (model === NOVA) expect(r.headers.authorization).toBe(`Bearer ${API_KEY}`)
					else expect(r.headers.authorization).toStartWith(`AWS4-HMAC-SHA256 Credential=${IAM.accessKeyId}/`)
					await expectCharges(m, acct, [{ model, input, output, stream }])
				})

	it('should keep InvokeModel for a Claude model on the same channel', async () => {
		const acct = await m.account()
		for (const stream of [false, true]) {
			const a = await ask('messages', acct, CLAUDE, 'claude still invokes', stream)
			expect(a.text).toBe('Hello! You said: claude still invokes')
			expect(last().path).toBe(`/model/us.anthropic.claude-sonnet-4-6-v1%3A0/${stream ? 'invoke-with-response-stream' : 'invoke'}`)
			expect(last().body.anthropic_version).toBe('bedrock-2023-05-31')
		}
	})

	for (const proto of PROTOCOLS)
		for (const stream of [false, true])
			it(`should carry tool calls and their results (${proto}, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				const a = await ask(proto, acct, NOVA, 'weather #tools', stream, TOOLS[proto])
				expect(a.calls.map((c) => [c.name, c.args])).toEqual([
					['get_weather', { city: 'Paris' }],
					['get_weather', { city: 'Tokyo' }],
				])
				expect(a.stop).toBe(proto === 'chat' ? 'tool_calls' : 'tool_use')
				const sent = last().body
				expect(sent.toolConfig.tools).toEqual([
					{ toolSpec: { name: 'get_weather', description: 'Weather for a city', inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } } } } } },
				])
				const history = [{ role: 'user', content: 'weather #tools' }, a.replay, ...resultsOf(proto, a.calls)]
				const b =
					proto === 'chat'
						? await chat(acct.openai, { model: NOVA, messages: history, ...TOOLS.chat } as never, stream)
						: await messages(acct.anthropic, { model: NOVA, max_tokens: 256, messages: history, ...TOOLS.messages } as never, stream)
				expect(b.text).toBe('Tool results: rain; sun')
				// The mock refuses a toolResult answering no toolUse of the turn before: the ids went back as Converse gave them.
				const [assistant, results] = last().body.messages.slice(1)
				expect(assistant.content.map((c: any) => c.toolUse.toolUseId)).toEqual(a.calls.map((c) => c.id))
				expect(results.content).toEqual(a.calls.map((c, i) => ({ toolResult: { toolUseId: c.id, content: [{ text: ['rain', 'sun'][i] }] } })))
			})

	for (const stream of [false, true])
		it(`should keep only the first call when the client turned parallel calls off, which Converse cannot be told (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const a = await ask('chat', acct, NOVA, 'weather #tools', stream, { ...TOOLS.chat, parallel_tool_calls: false })
			expect(a.calls.map((c) => [c.name, c.args])).toEqual([['get_weather', { city: 'Paris' }]])
			expect(a.stop).toBe('tool_calls')
		})

	it('should force a named tool with toolChoice.tool, and any tool with toolChoice.any', async () => {
		const acct = await m.account()
		const named = await chat(acct.openai, { model: NOVA, messages: [{ role: 'user', content: 'use it' }], ...TOOLS.chat, tool_choice: { type: 'function', function: { name: 'get_weather' } } } as never, false)
		expect(named.calls.map((c) => c.name)).toEqual(['get_weather'])
		expect(last().body.toolConfig.toolChoice).toEqual({ tool: { name: 'get_weather' } })
		await chat(acct.openai, { model: NOVA, messages: [{ role: 'user', content: 'use one' }], ...TOOLS.chat, tool_choice: 'required' } as never, false)
		expect(last().body.toolConfig.toolChoice).toEqual({ any: {} })
	})

	for (const proto of PROTOCOLS)
		for (const stream of [false, true])
			it(`should return Nova 2's signed reasoning and take it back on the tool-result turn (${proto}, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				const think = proto === 'chat' ? { reasoning_effort: 'low' } : { thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 4096 }
				const user = 'weather please #tools'
				const a = await ask(proto, acct, NOVA2, user, stream, { ...think, ...TOOLS[proto] })
				expect(last().body.additionalModelRequestFields).toEqual({ reasoningConfig: { type: 'enabled', maxReasoningEffort: proto === 'chat' ? 'low' : 'medium' } })
				const thinking = `Let me think about ${user}.`
				expect(a.reasoning).toBe(thinking)
				// Converse's signature, tagged as the gateway's clients are shown another vendor's (core/signatures.ts).
				expect(a.signatures).toEqual([`c2JzaWc6Y3Ytc2ln${converseSignature(thinking)}`])
				const history = [{ role: 'user', content: user }, a.replay, ...resultsOf(proto, a.calls)]
				const b =
					proto === 'chat'
						? await chat(acct.openai, { model: NOVA2, messages: history, ...think, ...TOOLS.chat } as never, stream)
						: await messages(acct.anthropic, { model: NOVA2, max_tokens: 4096, messages: history, ...think, ...TOOLS.messages } as never, stream)
				expect(b.text).toBe('Tool results: rain; sun')
				const assistant = last().body.messages[1]
				expect(assistant.content[0]).toEqual({ reasoningContent: { reasoningText: { text: thinking, signature: converseSignature(thinking) } } })
			})

	it('should send an OpenAI data URI image as Converse image bytes', async () => {
		const acct = await m.account()
		const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
		const a = await chat(acct.openai, { model: NOVA, messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] }] }, true)
		expect(a.text).toBe('I see 1 image. Hello! You said: what is this')
		expect(last().body.messages[0].content).toEqual([{ text: 'what is this' }, { image: { format: 'png', source: { bytes: png } } }])
	})

	it("should send an Anthropic PDF document as a Converse document, its name as Converse takes names", async () => {
		const acct = await m.account()
		const pdf = Buffer.from('%PDF-1.4 mock').toString('base64')
		const r = await acct.anthropic.messages.create({
			model: NOVA,
			max_tokens: 64,
			messages: [{ role: 'user', content: [{ type: 'document', title: 'Q3 report.pdf', source: { type: 'base64', media_type: 'application/pdf', data: pdf } }, { type: 'text', text: 'sum it up' }] }],
		})
		expect(r.content.map((b) => (b.type === 'text' ? b.text : b.type))).toEqual(['Hello! You said: sum it up'])
		expect(last().body.messages[0].content[0]).toEqual({ document: { format: 'pdf', name: 'Q3 report-pdf', source: { bytes: pdf } } })
	})

	it('should map max_tokens and stop_sequence, with the cap and stops in inferenceConfig', async () => {
		const acct = await m.account()
		const a = await ask('chat', acct, NOVA, 'cut me #length', true, { max_tokens: 3 })
		expect(a.stop).toBe('length')
		expect(last().body.inferenceConfig).toEqual({ maxTokens: 3 })
		const b = await ask('messages', acct, NOVA, 'stop me #stop', false, { stop_sequences: ['STOP'], temperature: 0.5, top_p: 0.9 })
		expect(b.stop).toBe('stop_sequence')
		expect(last().body.inferenceConfig).toEqual({ maxTokens: 256, temperature: 0.5, topP: 0.9, stopSequences: ['STOP'] })
	})

	it('should bill cache reads as Converse reports them apart from inputTokens', async () => {
		const acct = await m.account()
		const text = 'reuse the prefix please #cache'
		for (const stream of [false, true]) {
			const a = await ask('messages', acct, NOVA, text, stream)
			expect(a.usage.cached).toBe(5)
			expect(last().path).toEndWith(stream ? '/converse-stream' : '/converse')
		}
		const input = countWords(text)
		const output = countWords(`Hello! You said: ${text}`)
		await expectCharges(m, acct, [
			{ model: NOVA, input, output, cached: 5, stream: false },
			{ model: NOVA, input, output, cached: 5, stream: true },
		])
	})

	it('should answer Responses and Gemini clients, streamed, with usage', async () => {
		const acct = await m.account()
		const s = await acct.openai.responses.create({ model: NOVA, input: 'responses over converse', stream: true })
		let text = ''
		let usage: { input_tokens: number; output_tokens: number } | undefined
		for await (const ev of s) {
			if (ev.type === 'response.output_text.delta') text += ev.delta
			if (ev.type === 'response.completed') usage = ev.response.usage ?? undefined
		}
		expect(text).toBe('Hello! You said: responses over converse')
		expect(usage).toMatchObject({ input_tokens: countWords('responses over converse'), output_tokens: countWords(text) })
		expect(last().path).toEndWith('/converse-stream')
		const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
		let said = ''
		for await (const c of await ai.models.generateContentStream({ model: LLAMA, contents: 'gemini over converse' })) said += c.text ?? ''
		expect(said).toBe('Hello! You said: gemini over converse')
		expect(last().path).toEndWith('/converse-stream')
	})

	it('should give several choices (n: 2) with one Converse call per answer', async () => {
		const acct = await m.account()
		const before = br.requests.length
		const r = await acct.openai.chat.completions.create({ model: NOVA, n: 2, messages: [{ role: 'user', content: 'two of them' }] })
		expect(r.choices.map((c) => c.message.content)).toEqual(['Hello! You said: two of them', 'Hello! You said: two of them'])
		expect(br.requests.slice(before).map((x) => x.path)).toEqual(['/model/us.amazon.nova-pro-v1%3A0/converse', '/model/us.amazon.nova-pro-v1%3A0/converse'])
	})

	it("should pass the console's Test call over Converse, and count tokens locally", async () => {
		const list = (await m.app.admin('/api/channels')).body.data as { id: number; name: string }[]
		const id = list.find((c) => c.name === 'br-iam')!.id
		const ok = await m.app.admin(`/api/channels/${id}/test`, { method: 'POST', body: { model: LLAMA } })
		expect(ok.body).toMatchObject({ ok: true, testable: true, status: 200 })
		expect(last().path).toBe('/model/meta.llama3-3-70b-instruct-v1%3A0/converse')
		expect(last().body.inferenceConfig).toEqual({ maxTokens: 1 })
		const acct = await m.account()
		const before = br.requests.length
		const counted = await acct.anthropic.messages.countTokens({ model: NOVA, messages: [{ role: 'user', content: 'how many tokens is this' }] })
		expect(counted.input_tokens).toBeGreaterThan(0)
		expect(br.requests.length).toBe(before)
	})

	for (const stream of [false, true])
		it(`should run the AI SDK's tool loop over Converse (@ai-sdk/openai chat, ${stream ? 'streamText' : 'generateText'})`, async () => {
			const acct = await m.account()
			const model = createOpenAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1` }).chat(LLAMA)
			const weather = tool({
				description: 'Weather for a city',
				inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
				execute: async ({ city }) => `sunny in ${city}`,
			})
			const opts = { model, prompt: 'weather twice #tools', tools: { weather }, stopWhen: stepCountIs(3), maxOutputTokens: 500 }
			let text: string
			let steps: Array<{ finishReason: string; toolCalls: Array<{ toolName: string; input: unknown }> }>
			if (stream) {
				const s = streamText(opts)
				const parts: string[] = []
				for await (const p of s.fullStream) parts.push(p.type)
				expect(parts).not.toContain('error')
				text = await s.text
				steps = await s.steps
			} else ({ text, steps } = await generateText(opts))
			expect(steps.map((s) => [s.finishReason, s.toolCalls.map((c) => [c.toolName, c.input])])).toEqual([
				['tool-calls', [['weather', { city: 'Paris' }], ['weather', { city: 'Tokyo' }]]],
				['stop', []],
			])
			expect(text).toBe('Tool results: sunny in Paris; sunny in Tokyo')
			expect(last().path).toBe(`/model/meta.llama3-3-70b-instruct-v1%3A0/${stream ? 'converse-stream' : 'converse'}`)
			const results = countWords('sunny in Paris') + countWords('sunny in Tokyo')
			await expectCharges(m, acct, [
				{ model: LLAMA, input: 3, output: 4, stream },
				{ model: LLAMA, input: 3 + results, output: countWords(text), stream },
			])
		})
})

describe('bedrock Converse errors', () => {
	it("should give a ValidationException's 400 and words to the caller, in its protocol", async () => {
		const acct = await m.account()
		br.faultOnce = { kind: 'status', status: 400, type: 'ValidationException', message: 'messages.0.content.0: bad block' }
		const e1 = await acct.openai.chat.completions.create({ model: NOVA, messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e)
		expect(e1).toBeInstanceOf(OpenAI.BadRequestError)
		expect(e1.message).toContain('messages.0.content.0: bad block')
		expect(last().path).toEndWith('/converse')
	})

	it('should fail over from a 429 ThrottlingException to the next channel', async () => {
		const acct = await m.account()
		br.faultOnce = { kind: 'status', status: 429, type: 'ThrottlingException', message: 'Too many requests, please wait before trying your request again.' }
		const a = await ask('messages', acct, FAILOVER, 'fail over', true)
		expect(a.text).toBe('Hello! You said: fail over')
		expect((await usageRows(m, acct.accountId)).map((r) => r.channel)).toEqual(['fo-openai-nova'])
	})

	it('should fail over when ConverseStream throttles before any content', async () => {
		const acct = await m.account()
		br.faultOnce = { kind: 'exception', afterEvents: 1, type: 'throttlingException', message: 'Too many tokens, please wait before trying again.' }
		const a = await ask('chat', acct, FAILOVER, 'fail over in stream', true)
		expect(a.text).toBe('Hello! You said: fail over in stream')
		expect(last().path).toEndWith('/converse-stream')
		expect((await usageRows(m, acct.accountId)).map((r) => r.channel)).toEqual(['fo-openai-nova'])
	})

	it('should surface a mid-stream exception to Anthropic clients as an error event, and to OpenAI clients as an error', async () => {
		const acct = await m.account()
		br.faultOnce = { kind: 'exception', afterEvents: 3, type: 'modelStreamErrorException', message: 'The model stopped unexpectedly.' }
		const s = acct.anthropic.messages.stream({ model: NOVA, max_tokens: 64, messages: [{ role: 'user', content: 'cut me off please' }] })
		const err = await s.finalMessage().catch((e) => e)
		expect(err).toBeInstanceOf(Anthropic.APIError)
		expect(String(err.message)).toContain('The model stopped unexpectedly.')
		br.faultOnce = { kind: 'exception', afterEvents: 3, type: 'throttlingException', message: 'Too many tokens, please wait before trying again.' }
		const c = await acct.openai.chat.completions.create({ model: NOVA, stream: true, messages: [{ role: 'user', content: 'cut me off please' }] })
		const err2 = await (async () => {
			for await (const _ of c) {
			}
		})().catch((e) => e)
		expect(err2).toBeInstanceOf(OpenAI.APIError)
		expect(String(err2.message)).toContain('rate limiting')
	})

	it('should treat a ConverseStream frame with a bad CRC as a broken stream', async () => {
		const acct = await m.account()
		br.faultOnce = { kind: 'bad-crc', atEvent: 3 }
		const s = acct.anthropic.messages.stream({ model: NOVA, max_tokens: 64, messages: [{ role: 'user', content: 'one two three four' }] })
		const err = await s.finalMessage().catch((e) => e)
		expect(err).toBeInstanceOf(Anthropic.APIError)
		expect(String(err.message)).toContain('"type":"api_error"')
		expect(last().path).toEndWith('/converse-stream')
	})
})
