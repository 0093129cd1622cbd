/**
 * Sampling settings another protocol's client sends, encoded for OpenAI's reasoning models: refused by them (400
 * "Unsupported parameter: 'temperature'"), so left out, except by GPT-5.1 and later at effort none, their default,
 * which take `temperature`, `top_p` and `logprobs` (platform.openai.com/docs/guides/latest-model).
 */
import { describe, expect, it } from 'bun:test'
import type { ChatRequest } from '../../../src/core/ir'
import { openaiAdapter } from '../../../src/providers/openai'
import { encodeRequest as encodeChat } from '../../../src/protocols/openai-chat/request'
import { encodeRequest as encodeResponses } from '../../../src/protocols/openai-responses/request'
import type { Channel } from '../../../src/routing/catalog'

const channel = { id: 1, type: 'openai', baseUrl: 'https://api.openai.com/v1', apiKey: 'k', settings: {} } as unknown as Channel
const ask = (reasoning?: ChatRequest['reasoning']): ChatRequest => ({
	model: 'm',
	messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
	stream: false,
	temperature: 0.2,
	topP: 0.9,
	...(reasoning && { reasoning }),
})
const chat = (model: string, req: ChatRequest) => encodeChat(req, model, openaiAdapter.upstreamOptions!(channel, model)) as Record<string, unknown>
const responses = (model: string, req: ChatRequest) => encodeResponses(req, model, openaiAdapter.upstreamOptions!(channel, model)) as Record<string, unknown>
const sampling = (b: Record<string, unknown>) => [b.temperature, b.top_p]

describe('sampling for OpenAI reasoning models, by effort', () => {
	it('should send it to GPT-5.1 and later at effort none, asked or by default (chat completions)', () => {
		expect(sampling(chat('gpt-5.2', ask()))).toEqual([0.2, 0.9])
		const off = chat('gpt-5.1', ask({ enabled: false }))
		expect([off.reasoning_effort, ...sampling(off)]).toEqual(['none', 0.2, 0.9])
		// Log probabilities too, but not the penalties, which no reasoning model takes.
		const more = chat('gpt-5.2', { ...ask(), logprobs: true, topLogprobs: 2, presencePenalty: 1, frequencyPenalty: 1 })
		expect([more.logprobs, more.top_logprobs, more.presence_penalty, more.frequency_penalty]).toEqual([true, 2, undefined, undefined])
	})
	it('should leave it out at any other effort, and for models without effort none (chat completions)', () => {
		const high = chat('gpt-5.2', ask({ enabled: true, effort: 'high' }))
		expect([high.reasoning_effort, ...sampling(high)]).toEqual(['high', undefined, undefined])
		// gpt-5's least effort is minimal: thinking off goes as that, and it never samples.
		const off = chat('gpt-5', ask({ enabled: false }))
		expect([off.reasoning_effort, ...sampling(off)]).toEqual(['minimal', undefined, undefined])
		expect(sampling(chat('o4-mini', ask()))).toEqual([undefined, undefined])
		expect(sampling(chat('gpt-4.1', ask({ enabled: true, effort: 'high' })))).toEqual([0.2, 0.9])
	})
	it('should do the same over the Responses API', () => {
		expect(sampling(responses('gpt-5.2', ask()))).toEqual([0.2, 0.9])
		const off = responses('gpt-5.1', ask({ enabled: false }))
		expect([(off.reasoning as Record<string, unknown>)?.effort, ...sampling(off)]).toEqual(['none', 0.2, 0.9])
		const high = responses('gpt-5.2', ask({ enabled: true, effort: 'high' }))
		expect([(high.reasoning as Record<string, unknown>)?.effort, ...sampling(high)]).toEqual(['high', undefined, undefined])
		expect(sampling(responses('o3', ask()))).toEqual([undefined, undefined])
	})
})
