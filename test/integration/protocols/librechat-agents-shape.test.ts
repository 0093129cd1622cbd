/**
 * @librechat/agents 3.2 (LibreChat's agent library, on LangChain's ChatOpenAI) pointed at the gateway as an
 * OpenAI-compatible endpoint: the request shape its `Run` sends, as seen on the wire, through the official `openai`
 * SDK. For Claude behind an OpenAI-compatible proxy, LibreChat's own configs put Anthropic's `thinking` object (and
 * `metadata.user_id`) in `modelKwargs`, which LangChain writes into the chat-completions body as they are: LiteLLM's
 * reading of `thinking` on /chat/completions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { countWords } from '../../mocks'
import { expectCharges, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, THINKER, THINKER_UPSTREAM, type Upstream } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const SYSTEM = 'You are helpful.'
const ASK = 'What is two plus two?'
const WEATHER = {
	type: 'function' as const,
	function: {
		name: 'weather',
		description: 'weather for a city',
		parameters: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
	},
}

/** A Run's first turn, as langchainjs-openai 1.0 writes it with LibreChat's `modelKwargs`. */
const body = (model: string, thinking: Record<string, unknown>) => ({
	model,
	stream: true,
	tools: [WEATHER],
	stream_options: { include_usage: true },
	metadata: { user_id: 'some_user_id' },
	thinking,
	max_tokens: 8192,
	messages: [
		{ role: 'system', content: SYSTEM },
		{ role: 'user', content: ASK },
	],
})

async function read(stream: unknown) {
	let text = ''
	let reasoning = ''
	for await (const c of stream as AsyncIterable<any>) {
		text += c.choices[0]?.delta?.content ?? ''
		reasoning += c.choices[0]?.delta?.reasoning_content ?? ''
	}
	return { text, reasoning }
}

describe('@librechat/agents through /v1/chat/completions (ChatOpenAI with modelKwargs)', () => {
	const converted: Upstream[] = ['anthropic', 'gemini']
	for (const up of converted)
		it(`should think with the budget in its Anthropic-shaped thinking object, from ${up}`, async () => {
			const acct = await m.account()
			const { text, reasoning } = await read(await acct.openai.chat.completions.create(body(MODEL[up], { type: 'enabled', budget_tokens: 2000 }) as never))
			expect(text).toBe(`Hello! You said: ${ASK}`)
			expect(reasoning).toBe(`Let me think about ${ASK}.`)
			const sent = lastRequest(m.mocks[up]).body
			if (up === 'anthropic') expect([sent.thinking, sent.max_tokens]).toEqual([{ type: 'enabled', budget_tokens: 2000 }, 8192])
			else expect(sent.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 2000, includeThoughts: true })
			const think = countWords(reasoning)
			await expectCharges(m, acct, [{ model: MODEL[up], input: countWords(SYSTEM) + countWords(ASK), output: think + countWords(text), reasoning: think, stream: true }])
		})

	it('should answer without thinking when its thinking object says disabled', async () => {
		const acct = await m.account()
		const { text, reasoning } = await read(await acct.openai.chat.completions.create(body(MODEL.gemini, { type: 'disabled' }) as never))
		expect([text, reasoning]).toEqual([`Hello! You said: ${ASK}`, ''])
		expect(lastRequest(m.mocks.gemini).body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 0 })
	})

	it('should pass the thinking object to an OpenAI-compatible channel as written (the vendor judges it)', async () => {
		const acct = await m.account()
		await read(await acct.openai.chat.completions.create(body(THINKER.openai, { type: 'enabled', budget_tokens: 2000 }) as never))
		const sent = lastRequest(m.mocks.openai).body
		expect([sent.model, sent.thinking, 'reasoning_effort' in sent]).toEqual([THINKER_UPSTREAM, { type: 'enabled', budget_tokens: 2000 }, false])
	})

	it('should refuse a thinking object of an unknown type with a 400 in OpenAI shape', async () => {
		const acct = await m.account()
		const err = await acct.openai.chat.completions.create(body(MODEL.anthropic, { type: 'sometimes' }) as never).catch((e) => e)
		expect(err.status).toBe(400)
		expect(err.error.param).toBe('thinking.type')
	})
})
