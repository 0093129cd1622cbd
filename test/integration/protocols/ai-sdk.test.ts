/**
 * The Vercel AI SDK as a client (issue 3): `@ai-sdk/openai` `.chat()` and `@ai-sdk/anthropic` validate every chunk
 * and event against their schemas, so a malformed stream fails the call (maximhq/bifrost#5907: a message_start
 * without usage aborts @ai-sdk/anthropic). Over every vendor, generate and stream: plain text, a multi-step tool
 * loop the SDK runs itself, and reasoning (with @ai-sdk/anthropic replaying signed thinking on the tool step).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createAnthropic } from '@ai-sdk/anthropic'
import { createOpenAI } from '@ai-sdk/openai'
import { generateText, jsonSchema, type LanguageModel, stepCountIs, streamText, tool } from 'ai'
import { countWords } from '../../mocks'
import { type Account, expectCharges, label, lastRequest, type Matrix, MODEL, PAIRS, SETUP_MS, startMatrix, THINKER, type Upstream } from './harness'

// The SDK warns on stderr about model names it does not know (ours are aliases).
;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

type Provider = 'openai.chat' | 'anthropic'
type ProviderOptions = NonNullable<Parameters<typeof generateText>[0]['providerOptions']>
const PROVIDERS: Provider[] = ['openai.chat', 'anthropic']

/** The provider's model for `up`: the vendor's model, or (`names` THINKER) one that reasons. */
function modelFor(p: Provider, acct: Account, up: Upstream, names: Record<Upstream, string> = MODEL): LanguageModel {
	if (p === 'openai.chat') return createOpenAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1` }).chat(names[up])
	return createAnthropic({ apiKey: acct.key, baseURL: `${m.app.url}/v1` })(names[up])
}

type Run = {
	text: string
	reasoning: string
	finishReason: string
	steps: Array<{ finishReason: string; calls: Array<[string, unknown]> }>
	input: number
	output: number
	reasoningTokens?: number
}

/** What generateText returns and streamText resolves to, as far as the tests read it. */
type Result = {
	text: string
	reasoningText?: string
	finishReason: string
	steps: Array<{ finishReason: string; toolCalls: Array<{ toolName: string; input: unknown }> }>
	totalUsage: { inputTokens?: number; outputTokens?: number; outputTokenDetails?: { reasoningTokens?: number } }
}

/** generateText or streamText with the same options, reduced to what the tests compare. */
async function run(stream: boolean, opts: Parameters<typeof generateText>[0]): Promise<Run> {
	const shape = (r: Result): Run => ({
		text: r.text,
		reasoning: r.reasoningText ?? '',
		finishReason: r.finishReason,
		steps: r.steps.map((s) => ({ finishReason: s.finishReason, calls: s.toolCalls.map((c) => [c.toolName, c.input] as [string, unknown]) })),
		input: r.totalUsage.inputTokens ?? -1,
		output: r.totalUsage.outputTokens ?? -1,
		reasoningTokens: r.totalUsage.outputTokenDetails?.reasoningTokens,
	})
	if (!stream) return shape(await generateText(opts))
	let failure: unknown
	const s = streamText({ ...(opts as Parameters<typeof streamText>[0]), onError: ({ error }) => void (failure = error) })
	const parts: string[] = []
	for await (const p of s.fullStream) parts.push(p.type)
	if (failure) throw failure
	expect(parts).not.toContain('error')
	return shape({ text: await s.text, reasoningText: await s.reasoningText, finishReason: await s.finishReason, steps: await s.steps, totalUsage: await s.totalUsage })
}

const weather = tool({
	description: 'Weather for a city',
	inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
	execute: async ({ city }) => `sunny in ${city}`,
})

for (const provider of PROVIDERS) {
	describe(`AI SDK ${provider}`, () => {
		for (const [up, stream] of PAIRS) {
			it(`should generate text (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const r = await run(stream, { model: modelFor(provider, acct, up), prompt: 'hello from the sdk', maxOutputTokens: 500 })
				expect(r.text).toBe('Hello! You said: hello from the sdk')
				expect(r.finishReason).toBe('stop')
				expect([r.input, r.output]).toEqual([4, 7])
				await expectCharges(m, acct, [{ model: MODEL[up], input: 4, output: 7, stream }])
			})

			it(`should run a two-step tool loop with parallel calls (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const r = await run(stream, { model: modelFor(provider, acct, up), prompt: 'weather twice #tools', tools: { weather }, stopWhen: stepCountIs(3), maxOutputTokens: 500 })
				expect(r.steps).toEqual([
					{ finishReason: 'tool-calls', calls: [['weather', { city: 'Paris' }], ['weather', { city: 'Tokyo' }]] },
					{ finishReason: 'stop', calls: [] },
				])
				expect(r.text).toBe('Tool results: sunny in Paris; sunny in Tokyo')
				const results = countWords('sunny in Paris') + countWords('sunny in Tokyo')
				await expectCharges(m, acct, [
					{ model: MODEL[up], input: 3, output: 4, stream },
					{ model: MODEL[up], input: 3 + results, output: countWords(r.text), stream },
				])
			})

			it(`should carry reasoning through a tool step (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const providerOptions: ProviderOptions = provider === 'anthropic' ? { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } } : { openai: { reasoningEffort: 'low' } }
				const r = await run(stream, { model: modelFor(provider, acct, up, THINKER), prompt: 'think then act #tools', tools: { weather }, stopWhen: stepCountIs(3), maxOutputTokens: 4000, providerOptions })
				const thinking = 'Let me think about think then act #tools.'
				expect(r.steps.map((s) => s.finishReason)).toEqual(['tool-calls', 'stop'])
				expect(r.text).toBe('Tool results: sunny in Paris; sunny in Tokyo')
				// @ai-sdk/openai's chat model has no reasoning_content; its reasoning shows only in the usage details.
				if (provider === 'anthropic') expect(r.reasoning).toBe(thinking)
				expect(r.reasoningTokens).toBe(2 * countWords(thinking))
				if (up === 'anthropic') {
					// The Anthropic SDK replayed the signed thinking block on the tool step; @ai-sdk/openai's chat model sends
					// no reasoning back, so the gateway put back the block it kept (modules/chat/kept-thinking.ts) and thinking
					// stayed on. The mock verified its signature either way.
					const body = lastRequest(m.mocks.anthropic).body
					expect(body.thinking.type).toBe('enabled')
					expect(body.messages.find((x: { role: string }) => x.role === 'assistant').content[0].type).toBe('thinking')
				}
			})
		}
	})
}
