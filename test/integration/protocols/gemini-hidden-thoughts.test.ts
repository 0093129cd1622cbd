/**
 * A Gemini client that sets a thinking budget without `includeThoughts` asks Claude or an OpenAI reasoning model to
 * think without showing it: as from Gemini (https://ai.google.dev/gemini-api/docs/thinking), it gets no `thought: true`
 * part, the thinking is billed and counted in `thoughtsTokenCount`, and what the next turn needs (Claude's signed
 * thinking blocks, a reasoner's `reasoning_content`) rides in a `thoughtSignature` the client sends back as it got it
 * (protocols/gemini/carried-thinking.ts). The Anthropic mock, like the API, refuses a tool-result turn whose assistant
 * turn does not start with its signed thinking ("Expected `thinking` or `redacted_thinking`"), and the gateway would
 * rather turn thinking off than send that: so the thinking must come back whole. With `includeThoughts: true` the
 * client sees the thoughts, as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createGoogleGenerativeAI } from '@ai-sdk/google'
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai'
import { ApiError, type Chat, type Content, type GenerateContentResponse, GoogleGenAI, type Part, type PartUnion, type Tool, Type } from '@google/genai'
import { CARRIED_THINKING_TAG } from '../../../src/core/signatures'
import { SKIP_SIGNATURE } from '../../../src/protocols/gemini/signatures'
import { countWords, thinkingSignature } from '../../mocks'
import { type Account, type Expected, expectCharges, lastRequest, type Matrix, MODEL, SETUP_MS, GEMINI_3, startMatrixWithGemini3, THINKER } from './harness'

;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false

let m: Matrix
beforeAll(async () => {
	m = await startMatrixWithGemini3()
}, SETUP_MS)
afterAll(() => m.close())

type Up = 'anthropic' | 'openai'
const UPS: Up[] = ['anthropic', 'openai']

const TOOLS: Tool[] = [{ functionDeclarations: [{ name: 'weather', parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } } } }] }]
const ASK = 'weather in two cities #tools'
const RESULTS = 'Tool results: sunny in Paris; sunny in Tokyo'
/** What the mocks think (shared/scenario.ts): about the last user text, which tool results do not change. */
const thought = (text: string) => `Let me think about ${text}.`

const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })

type Answer = { parts: Part[]; text: string; thoughts: string; calls: Array<{ name: string; args: unknown; id?: string }>; usage: GenerateContentResponse['usageMetadata'] }

/** One message of a chat session, streamed or not, as the client got it. */
async function send(chat: Chat, message: PartUnion[] | string, stream: boolean): Promise<Answer> {
	const chunks: GenerateContentResponse[] = []
	if (stream) for await (const c of await chat.sendMessageStream({ message })) chunks.push(c)
	else chunks.push(await chat.sendMessage({ message }))
	const parts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? [])
	return {
		parts,
		text: parts.filter((p) => !p.thought).map((p) => p.text ?? '').join(''),
		thoughts: parts.filter((p) => p.thought).map((p) => p.text ?? '').join(''),
		calls: parts.flatMap((p) => (p.functionCall ? [{ name: p.functionCall.name!, args: p.functionCall.args, id: p.functionCall.id }] : [])),
		usage: chunks[chunks.length - 1]!.usageMetadata,
	}
}

/** The charge the answer's own usageMetadata says, thoughts billed as output. */
const charged = (a: Answer, stream: boolean): Expected => ({
	model: '',
	input: a.usage!.promptTokenCount!,
	output: a.usage!.candidatesTokenCount! + (a.usage!.thoughtsTokenCount ?? 0),
	reasoning: a.usage!.thoughtsTokenCount ?? 0,
	stream,
})

/** The assistant turns the upstream got in its last request, as [kind, text, signature] per thinking and call. */
function upstreamAssistant(up: Up): unknown[][] {
	const messages = lastRequest(m.mocks[up]).body.messages as Array<Record<string, any>>
	return messages
		.filter((x) => x.role === 'assistant')
		.map((x) =>
			up === 'anthropic'
				? (x.content as Array<Record<string, any>>).map((b) => (b.type === 'thinking' ? ['thinking', b.thinking, b.signature] : b.type === 'tool_use' ? ['call', b.input.city] : [b.type, b.text ?? b.data]))
				: [
						...(x.reasoning_content ? [['thinking', x.reasoning_content]] : []),
						...(x.content ? [['text', x.content]] : []),
						...((x.tool_calls as Array<Record<string, any>> | undefined) ?? []).map((c) => ['call', JSON.parse(c.function.arguments).city]),
					],
		)
}

/** The thinking an upstream gave back, as the test expects it in the upstream's own shape. */
const given = (up: Up, text: string) => (up === 'anthropic' ? ['thinking', text, thinkingSignature(text)] : ['thinking', text])

for (const up of UPS)
	for (const stream of [false, true])
		for (const include of [false, true]) {
			const how = `${up} upstream, ${stream ? 'sendMessageStream' : 'sendMessage'}, ${include ? 'includeThoughts' : 'no includeThoughts'}`
			describe(`@google/genai chat with thinking and function calls (${how})`, () => {
				it(include ? 'should show the thoughts as thought parts' : 'should show no thought part, and give the upstream its thinking back on the tool-result turn', async () => {
					const acct = await m.account()
					const thinkingConfig = { thinkingBudget: 1024, ...(include && { includeThoughts: true }) }
					const chat = genai(acct).chats.create({ model: THINKER[up], config: { tools: TOOLS, thinkingConfig, maxOutputTokens: 4000 } })

					const one = await send(chat, ASK, stream)
					expect(one.calls.map((c) => [c.name, c.args])).toEqual([
						['weather', { city: 'Paris' }],
						['weather', { city: 'Tokyo' }],
					])
					expect(one.thoughts).toBe(include ? thought(ASK) : '')
					if (!include) expect(one.parts.filter((p) => p.thought)).toEqual([])
					expect(one.text).toBe('')
					expect(one.usage?.thoughtsTokenCount).toBe(countWords(thought(ASK)))
					expect(one.usage?.candidatesTokenCount).toBe(4) // the mocks' 2 per call

					const results = one.calls.map((c) => ({ functionResponse: { id: c.id, name: c.name, response: { result: `sunny in ${(c.args as { city: string }).city}` } } }))
					const two = await send(chat, results, stream)
					expect(two.text).toBe(RESULTS)
					expect(two.thoughts).toBe(include ? thought(ASK) : '')
					if (!include) expect(two.parts.filter((p) => p.thought)).toEqual([])
					expect(two.usage?.thoughtsTokenCount).toBe(countWords(thought(ASK)))
					// The tool-result turn: thinking still on, the assistant turn with its thinking first, as given.
					if (up === 'anthropic') expect(lastRequest(m.mocks.anthropic).body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 })
					expect(upstreamAssistant(up)).toEqual([[given(up, thought(ASK)), ['call', 'Paris'], ['call', 'Tokyo']]])

					const three = await send(chat, 'thanks', stream)
					expect(three.text).toBe('Hello! You said: thanks')
					expect(three.thoughts).toBe(include ? thought('thanks') : '')
					if (!include) expect(three.parts.filter((p) => p.thought)).toEqual([])
					expect(upstreamAssistant(up)).toEqual([
						[given(up, thought(ASK)), ['call', 'Paris'], ['call', 'Tokyo']],
						[given(up, thought(ASK)), ['text', RESULTS]],
					])

					await expectCharges(
						m,
						acct,
						[one, two, three].map((a) => ({ ...charged(a, stream), model: THINKER[up] })),
					)
				})
			})
		}

/** The Vercel AI SDK's Google provider, which sends back each part's `thoughtSignature` from its provider metadata. */
for (const up of UPS)
	for (const stream of [false, true])
		for (const include of [false, true]) {
			const how = `${up} upstream, ${stream ? 'streamText' : 'generateText'}, ${include ? 'includeThoughts' : 'no includeThoughts'}`
			describe(`@ai-sdk/google tool loop with thinking (${how})`, () => {
				it(include ? 'should give the thoughts as reasoning' : 'should give no reasoning, and the upstream its thinking back on the tool-result step and the next turn', async () => {
					const acct = await m.account()
					const model = createGoogleGenerativeAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1beta` })(THINKER[up])
					const weather = tool({
						inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
						execute: async ({ city }) => `sunny in ${city}`,
					})
					const providerOptions = { google: { thinkingConfig: { thinkingBudget: 1024, ...(include && { includeThoughts: true }) } } }
					const run = async (messages: Parameters<typeof generateText>[0]['messages']) => {
						const opts = { model, tools: { weather }, stopWhen: stepCountIs(3), maxOutputTokens: 4000, providerOptions, messages: messages! }
						if (!stream) return generateText(opts)
						const s = streamText(opts)
						await s.consumeStream()
						return { text: await s.text, steps: await s.steps, responseMessages: await s.responseMessages }
					}
					const first = await run([{ role: 'user', content: ASK }])
					expect(first.text).toBe(RESULTS)
					expect(first.steps.map((s) => s.toolCalls.map((c) => c.input))).toEqual([[{ city: 'Paris' }, { city: 'Tokyo' }], []])
					expect(first.steps.map((s) => s.reasoningText ?? '')).toEqual(include ? [thought(ASK), thought(ASK)] : ['', ''])
					expect(upstreamAssistant(up)).toEqual([[given(up, thought(ASK)), ['call', 'Paris'], ['call', 'Tokyo']]])

					// Every step's messages: the calls, their results and the answer.
					const second = await run([{ role: 'user', content: ASK }, ...first.responseMessages, { role: 'user', content: 'thanks' }])
					expect(second.text).toBe('Hello! You said: thanks')
					expect(upstreamAssistant(up)).toEqual([
						[given(up, thought(ASK)), ['call', 'Paris'], ['call', 'Tokyo']],
						[given(up, thought(ASK)), ['text', RESULTS]],
					])
					const steps = [...first.steps, ...second.steps]
					expect(steps.map((s) => s.usage.outputTokenDetails?.reasoningTokens)).toEqual([thought(ASK), thought(ASK), thought('thanks')].map(countWords))
					await expectCharges(
						m,
						acct,
						steps.map((s) => ({ model: THINKER[up], input: s.usage.inputTokens!, output: s.usage.outputTokens!, reasoning: s.usage.outputTokenDetails!.reasoningTokens!, stream })),
					)
				})
			})
		}

describe('carried thinking in a Gemini client history', () => {
	const config = { tools: TOOLS, thinkingConfig: { thinkingBudget: 1024 }, maxOutputTokens: 4000 }

	it('should leave it out for a Gemini 3 model, with the placeholder on the call it rode on', async () => {
		const acct = await m.account()
		const history = genai(acct).chats.create({ model: MODEL.anthropic, config })
		const one = await send(history, ASK, false)
		const carried = one.parts.filter((p) => p.thoughtSignature?.startsWith(CARRIED_THINKING_TAG))
		expect(carried.map((p) => p.functionCall?.args)).toEqual([{ city: 'Paris' }])
		// The same history, continued by Gemini 3 (the fast path: the body goes as written but for such signatures).
		const chat = genai(acct).chats.create({ model: GEMINI_3, config, history: history.getHistory(true) })
		const results = one.calls.map((c) => ({ functionResponse: { id: c.id, name: c.name, response: { result: `sunny in ${(c.args as { city: string }).city}` } } }))
		expect((await send(chat, results, false)).text).toBe(RESULTS)
		const sent = lastRequest(m.mocks.gemini).body.contents as Content[]
		expect(sent[1]!.parts!.map((p) => [p.functionCall!.args, p.thoughtSignature])).toEqual([
			[{ city: 'Paris' }, SKIP_SIGNATURE],
			[{ city: 'Tokyo' }, undefined],
		])
		expect(JSON.stringify(sent)).not.toContain(CARRIED_THINKING_TAG)
	})

	// Gemini streams parallel calls in one chunk, and @google/genai's chat keeps each chunk as a model content: calls in
	// chunks of their own would come back as two model contents, the second's call without the signature Gemini 3 wants.
	for (const up of UPS)
		it(`should stream parallel calls in one chunk, so a Gemini 3 model can take the history on (${up} upstream)`, async () => {
			const acct = await m.account()
			const history = genai(acct).chats.create({ model: THINKER[up], config })
			const chunks: GenerateContentResponse[] = []
			for await (const c of await history.sendMessageStream({ message: ASK })) chunks.push(c)
			const withCalls = chunks.map((c) => (c.candidates?.[0]?.content?.parts ?? []).filter((p) => p.functionCall).map((p) => p.functionCall!.args))
			expect(withCalls.filter((calls) => calls.length)).toEqual([[{ city: 'Paris' }, { city: 'Tokyo' }]])
			const calls = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []).flatMap((p) => (p.functionCall ? [p.functionCall] : []))
			const chat = genai(acct).chats.create({ model: GEMINI_3, config, history: history.getHistory(true) })
			const results = calls.map((c) => ({ functionResponse: { id: c.id, name: c.name, response: { result: `sunny in ${(c.args as { city: string }).city}` } } }))
			expect((await send(chat, results, true)).text).toBe(RESULTS)
			expect(JSON.stringify(lastRequest(m.mocks.gemini).body.contents)).not.toContain(CARRIED_THINKING_TAG)
		})

	it('should leave out the empty text part that carried a streamed answer\'s thinking, for a Gemini 3 model', async () => {
		const acct = await m.account()
		const history = genai(acct).chats.create({ model: MODEL.anthropic, config: { thinkingConfig: { thinkingBudget: 1024 } } })
		const one = await send(history, 'Plan the trip', true)
		expect(one.parts.filter((p) => p.thoughtSignature?.startsWith(CARRIED_THINKING_TAG)).map((p) => p.text)).toEqual([''])
		const chat = genai(acct).chats.create({ model: GEMINI_3, config: { thinkingConfig: { thinkingBudget: 1024 } }, history: history.getHistory(true) })
		expect((await send(chat, 'And the budget?', true)).text).toBe('Hello! You said: And the budget?')
		const sent = lastRequest(m.mocks.gemini).body.contents as Content[]
		// The chat sends each streamed chunk back as a model content of its own; the one that only carried thinking goes.
		expect(sent.filter((c) => !(c.parts ?? []).some((p) => p.text))).toEqual([])
		const turns = sent.reduce<string[][]>((acc, c) => {
			const text = (c.parts ?? []).map((p) => p.text).join('')
			if (acc[acc.length - 1]?.[0] === c.role) acc[acc.length - 1]![1] += text
			else acc.push([c.role!, text])
			return acc
		}, [])
		expect(turns).toEqual([
			['user', 'Plan the trip'],
			['model', 'Hello! You said: Plan the trip'],
			['user', 'And the budget?'],
		])
		expect(JSON.stringify(sent)).not.toContain(CARRIED_THINKING_TAG)
	})

	// `streamGenerateContent` without `alt=sse` answers one JSON array of the same chunks (the REST docs' default).
	it('should carry it the same way in a streamed JSON array, and take it back', async () => {
		const acct = await m.account()
		const post = async (contents: Content[]) => {
			const res = await fetch(`${m.app.url}/v1beta/models/${MODEL.anthropic}:streamGenerateContent`, {
				method: 'POST',
				headers: { 'content-type': 'application/json', 'x-goog-api-key': acct.key },
				body: JSON.stringify({ contents, tools: TOOLS, generationConfig: { thinkingConfig: { thinkingBudget: 1024 }, maxOutputTokens: 4000 } }),
			})
			expect(res.status).toBe(200)
			return ((await res.json()) as GenerateContentResponse[]).map((c) => ({ role: 'model', parts: c.candidates![0]!.content!.parts! }))
		}
		const ask: Content = { role: 'user', parts: [{ text: ASK }] }
		const answer = await post([ask])
		const parts = answer.flatMap((c) => c.parts)
		expect(parts.filter((p) => p.thought)).toEqual([])
		expect(parts.filter((p) => p.thoughtSignature?.startsWith(CARRIED_THINKING_TAG)).map((p) => p.functionCall?.args)).toEqual([{ city: 'Paris' }])
		const results: Content = { role: 'user', parts: ['Paris', 'Tokyo'].map((city) => ({ functionResponse: { name: 'weather', response: { result: `sunny in ${city}` } } })) }
		const next = await post([ask, ...answer, results])
		expect(next.flatMap((c) => c.parts).map((p) => p.text ?? '').join('')).toBe(RESULTS)
		expect(upstreamAssistant('anthropic')).toEqual([[given('anthropic', thought(ASK)), ['call', 'Paris'], ['call', 'Tokyo']]])
	})

	it('should refuse an altered one with a 400 in Gemini shape, before any upstream call or charge', async () => {
		const acct = await m.account()
		const one = await send(genai(acct).chats.create({ model: MODEL.anthropic, config }), ASK, false)
		const [call] = one.parts.filter((p) => p.functionCall)
		const before = m.mocks.anthropic.requests.length
		const contents: Content[] = [
			{ role: 'user', parts: [{ text: ASK }] },
			{ role: 'model', parts: [{ ...call, thoughtSignature: `${call!.thoughtSignature!.slice(0, -8)}AAAAAAAA` }] },
			{ role: 'user', parts: [{ functionResponse: { name: 'weather', response: { result: 'sunny' } } }] },
		]
		const err = await genai(acct).models.generateContent({ model: MODEL.anthropic, contents, config }).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(ApiError)
		expect((err as ApiError).status).toBe(400)
		expect((err as ApiError).message).toContain('INVALID_ARGUMENT')
		expect((err as ApiError).message).toContain('contents[1].parts[0].thoughtSignature')
		expect(m.mocks.anthropic.requests.length).toBe(before)
		await expectCharges(m, acct, [{ ...charged(one, false), model: MODEL.anthropic }])
	})
})
