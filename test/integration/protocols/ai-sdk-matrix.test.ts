/**
 * The Vercel AI SDK the way users run it, against every upstream: `@ai-sdk/openai` (chat and Responses models),
 * `@ai-sdk/anthropic` and `@ai-sdk/google` (pointed at the gateway's `/v1beta`). Each SDK validates every chunk against
 * its schema, so a malformed event, a missing finish reason, wrong usage, a lost tool call or lost reasoning fails
 * here. ai-sdk.test.ts covers the chat and Anthropic providers' basics; this file adds the Responses and Google
 * providers, images in input and structured output, over the same (provider × upstream × stream) matrix.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createAnthropic } from '@ai-sdk/anthropic'
import { createGoogleGenerativeAI } from '@ai-sdk/google'
import { createOpenAI } from '@ai-sdk/openai'
import { generateObject, generateText, jsonSchema, type LanguageModel, type ModelMessage, stepCountIs, streamObject, streamText, tool } from 'ai'
import { countWords } from '../../mocks'
import { type Account, expectCharges, label, lastRequest, type Matrix, MODEL, PAIRS, SETUP_MS, startMatrix, THINKER, type Upstream } from './harness'

// The SDK warns on stderr about model names it does not know (ours are aliases).
;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

export type Provider = 'openai.chat' | 'openai.responses' | 'anthropic' | 'google'
type ProviderOptions = NonNullable<Parameters<typeof generateText>[0]['providerOptions']>
const PROVIDERS: Provider[] = ['openai.chat', 'openai.responses', 'anthropic', 'google']

/** The provider's model for `up`: the vendor's model, or (`names` THINKER) one that reasons. */
function modelFor(p: Provider, acct: Account, up: Upstream, names: Record<Upstream, string> = MODEL): LanguageModel {
	if (p === 'openai.chat') return createOpenAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1` }).chat(names[up])
	if (p === 'openai.responses') return createOpenAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1` }).responses(names[up])
	if (p === 'google') return createGoogleGenerativeAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1beta` })(names[up])
	return createAnthropic({ apiKey: acct.key, baseURL: `${m.app.url}/v1` })(names[up])
}

/** Each provider's way of asking for reasoning. */
const REASONING: Record<Provider, ProviderOptions> = {
	// Our model names are aliases the SDK does not know as reasoning models: `forceReasoning` makes it send the effort.
	'openai.chat': { openai: { reasoningEffort: 'low', forceReasoning: true } },
	'openai.responses': { openai: { reasoningEffort: 'low', reasoningSummary: 'auto', forceReasoning: true } },
	anthropic: { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } },
	google: { google: { thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } } },
}

type Run = {
	text: string
	reasoning: string
	finishReason: string
	steps: Array<{ finishReason: string; calls: Array<[string, unknown]> }>
	input: number
	output: number
	reasoningTokens?: number
	parts: string[]
	/** The assistant messages to append for the next turn (`response.messages`). */
	messages: ModelMessage[]
}

type Result = {
	text: string
	reasoningText?: string
	finishReason: string
	steps: Array<{ finishReason: string; toolCalls: Array<{ toolName: string; input: unknown }> }>
	totalUsage: { inputTokens?: number; outputTokens?: number; outputTokenDetails?: { reasoningTokens?: number } }
	response: { messages: ModelMessage[] }
}

/** generateText or streamText with the same options, reduced to what the tests compare. */
async function run(stream: boolean, opts: Parameters<typeof generateText>[0]): Promise<Run> {
	const shape = (r: Result, parts: string[]): Run => ({
		text: r.text,
		reasoning: r.reasoningText ?? '',
		finishReason: r.finishReason,
		steps: r.steps.map((s) => ({ finishReason: s.finishReason, calls: s.toolCalls.map((c) => [c.toolName, c.input] as [string, unknown]) })),
		input: r.totalUsage.inputTokens ?? -1,
		output: r.totalUsage.outputTokens ?? -1,
		reasoningTokens: r.totalUsage.outputTokenDetails?.reasoningTokens,
		parts,
		messages: r.response.messages,
	})
	if (!stream) return shape(await generateText(opts), [])
	let failure: unknown
	const s = streamText({ ...(opts as Parameters<typeof streamText>[0]), onError: ({ error }) => void (failure = error) })
	const parts: string[] = []
	for await (const p of s.fullStream) parts.push(p.type)
	if (failure) throw failure
	expect(parts).not.toContain('error')
	return shape({ text: await s.text, reasoningText: await s.reasoningText, finishReason: await s.finishReason, steps: await s.steps, totalUsage: await s.totalUsage, response: await s.response }, parts)
}

const weather = tool({
	description: 'Weather for a city',
	inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
	execute: async ({ city }) => `sunny in ${city}`,
})

/**
 * The text the tool step answers with. @ai-sdk/google wraps every tool result as `{name, content}`: converted for
 * OpenAI or Anthropic the gateway passes the content; a Gemini upstream gets the object as sent, which the mock
 * reads back as JSON.
 */
function toolAnswer(provider: Provider, up: Upstream): string {
	const result = (city: string) => (provider === 'google' && up === 'gemini' ? JSON.stringify({ name: 'weather', content: `sunny in ${city}` }) : `sunny in ${city}`)
	return `Tool results: ${result('Paris')}; ${result('Tokyo')}`
}

type Forecast = { city: string; degrees: number; sunny: boolean; tags: string[]; unit: 'C' | 'F' }
const forecastSchema = jsonSchema<Forecast>({
	type: 'object',
	properties: { city: { type: 'string' }, degrees: { type: 'number' }, sunny: { type: 'boolean' }, tags: { type: 'array', items: { type: 'string' } }, unit: { type: 'string', enum: ['C', 'F'] } },
	required: ['city', 'degrees', 'sunny', 'tags', 'unit'],
	additionalProperties: false,
})

/** generateObject or streamObject; the object, finish reason and usage. */
async function object(stream: boolean, opts: { model: LanguageModel; prompt: string; providerOptions?: ProviderOptions }) {
	const args = { ...opts, schema: forecastSchema, maxOutputTokens: 500 }
	if (!stream) {
		const r = await generateObject(args)
		return { object: r.object, finishReason: r.finishReason, input: r.usage.inputTokens, output: r.usage.outputTokens }
	}
	let failure: unknown
	const s = streamObject({ ...args, onError: ({ error }) => void (failure = error) })
	for await (const _ of s.partialObjectStream);
	if (failure) throw failure
	return { object: await s.object, finishReason: await s.finishReason, input: (await s.usage).inputTokens, output: (await s.usage).outputTokens }
}

const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='

for (const provider of PROVIDERS) {
	describe(`AI SDK ${provider} matrix`, () => {
		for (const [up, stream] of PAIRS) {
			it(`should generate text with usage and finish reason (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const r = await run(stream, { model: modelFor(provider, acct, up), system: 'be kind', prompt: 'hello from the matrix', maxOutputTokens: 500 })
				expect(r.text).toBe('Hello! You said: hello from the matrix')
				expect(r.finishReason).toBe('stop')
				expect([r.input, r.output]).toEqual([6, 7])
				if (stream) expect([r.parts[0], r.parts.at(-2), r.parts.at(-1)]).toEqual(['start', 'finish-step', 'finish'])
				await expectCharges(m, acct, [{ model: MODEL[up], input: 6, output: 7, stream }])
			})

			it(`should run a multi-step tool loop with parallel calls (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const r = await run(stream, { model: modelFor(provider, acct, up), prompt: 'weather twice #tools', tools: { weather }, stopWhen: stepCountIs(3), maxOutputTokens: 500 })
				expect(r.steps).toEqual([
					{ finishReason: 'tool-calls', calls: [['weather', { city: 'Paris' }], ['weather', { city: 'Tokyo' }]] },
					{ finishReason: 'stop', calls: [] },
				])
				expect(r.text).toBe(toolAnswer(provider, up))
				const results = provider === 'google' && up === 'gemini' ? countWords(toolAnswer(provider, up)) - 2 : countWords('sunny in Paris') + countWords('sunny in Tokyo')
				await expectCharges(m, acct, [
					{ model: MODEL[up], input: 3, output: 4, stream },
					{ model: MODEL[up], input: 3 + results, output: countWords(r.text), stream },
				])
			})

			it(`should surface reasoning and carry it through a tool step (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const r = await run(stream, { model: modelFor(provider, acct, up, THINKER), prompt: 'think then act #tools', tools: { weather }, stopWhen: stepCountIs(3), maxOutputTokens: 4000, providerOptions: REASONING[provider] })
				const thinking = 'Let me think about think then act #tools.'
				expect(r.steps.map((s) => s.finishReason)).toEqual(['tool-calls', 'stop'])
				expect(r.text).toBe(toolAnswer(provider, up))
				// @ai-sdk/openai's chat model has no reasoning_content; the others show the reasoning text.
				if (provider !== 'openai.chat') expect(r.reasoning).toContain(thinking)
				expect(r.reasoningTokens).toBeGreaterThanOrEqual(countWords(thinking))
			})

			// @ai-sdk/openai's Responses model stores by default, so it sends earlier assistant items back as
			// `item_reference`s: a converted model must resolve them (modules/responses/converted-items.ts).
			it(`should hold a two-turn conversation from the SDK's response messages (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const model = modelFor(provider, acct, up)
				const first = await run(stream, { model, prompt: 'first turn please', maxOutputTokens: 500 })
				expect(first.text).toBe('Hello! You said: first turn please')
				const messages = [{ role: 'user' as const, content: 'first turn please' }, ...first.messages, { role: 'user' as const, content: 'second turn' }]
				const second = await run(stream, { model, messages, maxOutputTokens: 500 })
				expect(second.text).toBe('Hello! You said: second turn')
				if (provider === 'openai.responses' && up === 'openai') {
					// OpenAI resolves the reference from its own store: the body goes through verbatim. (The mock stores
					// nothing, so it does not count the referenced words.)
					expect(lastRequest(m.mocks.openai).body.input.map((i: { type?: string }) => i.type ?? 'message')).toEqual(['message', 'item_reference', 'message'])
				}
				// The upstream read the first answer back: its words count as input.
				else expect(second.input).toBe(3 + countWords(first.text) + 2)
			})

			it(`should hold a reasoning conversation across turns (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const model = modelFor(provider, acct, up, THINKER)
				const first = await run(stream, { model, prompt: 'ponder cats', maxOutputTokens: 4000, providerOptions: REASONING[provider] })
				expect(first.text).toBe('Hello! You said: ponder cats')
				const messages = [{ role: 'user' as const, content: 'ponder cats' }, ...first.messages, { role: 'user' as const, content: 'and dogs' }]
				const second = await run(stream, { model, messages, maxOutputTokens: 4000, providerOptions: REASONING[provider] })
				expect(second.text).toBe('Hello! You said: and dogs')
				if (provider !== 'openai.chat') expect(second.reasoning).toContain('Let me think about and dogs.')
			})

			it(`should generate an object that satisfies the schema (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const r = await object(stream, { model: modelFor(provider, acct, up), prompt: 'forecast for Oslo' })
				expect(r.object).toEqual({ city: 'forecast for Oslo', degrees: 42, sunny: true, tags: ['forecast for Oslo'], unit: 'C' })
				expect(r.finishReason).toBe('stop')
				expect(r.input).toBeGreaterThan(0)
				expect(r.output).toBeGreaterThan(0)
				// Converted for a Claude 4.5+ model, the format is Claude's structured outputs, not a prompt instruction.
				if (up === 'anthropic' && provider !== 'anthropic') {
					const body = lastRequest(m.mocks.anthropic).body
					expect(body.output_config).toMatchObject({ format: { type: 'json_schema', schema: { type: 'object', additionalProperties: false } } })
					expect(JSON.stringify(body.system ?? '')).not.toContain('Respond with')
				}
			})

			if (provider === 'anthropic')
				it(`should generate an object through Anthropic's output format mode (${label(up, stream)})`, async () => {
					const acct = await m.account()
					const r = await object(stream, { model: modelFor(provider, acct, up), prompt: 'forecast for Oslo', providerOptions: { anthropic: { structuredOutputMode: 'outputFormat' } } })
					expect(r.object).toEqual({ city: 'forecast for Oslo', degrees: 42, sunny: true, tags: ['forecast for Oslo'], unit: 'C' })
					expect(r.finishReason).toBe('stop')
				})

			it(`should report cache reads in the usage details (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const prompt = 'one two three four five six seven eight nine ten eleven #cache'
				const model = modelFor(provider, acct, up)
				const usage = stream ? await streamText({ model, prompt, maxOutputTokens: 500 }).totalUsage : (await generateText({ model, prompt, maxOutputTokens: 500 })).totalUsage
				// The SDKs' inputTokens is the whole prompt, cache reads included, whatever the vendor's convention.
				expect(usage.inputTokens).toBe(12)
				expect(usage.inputTokenDetails?.cacheReadTokens).toBe(10)
				expect(usage.outputTokens).toBe(countWords(`Hello! You said: ${prompt}`))
				await expectCharges(m, acct, [{ model: MODEL[up], input: 12, output: countWords(`Hello! You said: ${prompt}`), cached: 10, stream }])
			})

			it(`should pass an image in the prompt (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const r = await run(stream, {
					model: modelFor(provider, acct, up),
					messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this' }, { type: 'image', image: Buffer.from(PNG_1X1, 'base64'), mediaType: 'image/png' }] }],
					maxOutputTokens: 500,
				})
				expect(r.text).toBe('I see 1 image. Hello! You said: what is this')
				expect(r.finishReason).toBe('stop')
				expect(r.input).toBe(3 + 85)
			})
		}
	})
}
