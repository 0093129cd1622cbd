import { describe, expect, it } from 'bun:test'
import type { ChatRequest } from '../../../src/core/ir'
import { nearestEffort } from '../../../src/core/reasoning'
import { encodeRequest as encodeChat } from '../../../src/protocols/openai-chat/request'
import { encodeRequest as encodeResponses } from '../../../src/protocols/openai-responses/request'
import { openaiAdapter } from '../../../src/providers/openai'
import type { Channel } from '../../../src/routing/catalog'
import { takesReasoningEffort } from '../../../src/routing/reasoning-models'

const ch = (settings: Record<string, unknown> = {}): Channel =>
	({ id: 1, name: 'c', type: 'openai', baseUrl: 'https://api.openai.com/v1', apiKey: 'k', models: ['*'], modelMap: {}, priority: 0, weight: 1, settings })

/** What Claude Code asks: thinking on (adaptive) at high effort. */
const thinking: ChatRequest = { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }], stream: false, reasoning: { enabled: true, effort: 'high' } }

/** The chat body sent to `model` on a channel with `settings`, as the relay encodes it. */
const chatBody = (model: string, settings?: Record<string, unknown>) => encodeChat(thinking, model, openaiAdapter.upstreamOptions!(ch(settings), model))

describe('reasoning effort to OpenAI models', () => {
	it('should know which OpenAI models reason, and not guess about other names', () => {
		for (const m of ['gpt-4o', 'gpt-4o-mini-2024-07-18', 'gpt-4.1-nano', 'gpt-3.5-turbo', 'chatgpt-4o-latest', 'gpt-5-chat-latest', 'gpt-4-turbo', 'openai/gpt-4o'])
			expect([m, takesReasoningEffort(m)]).toEqual([m, false])
		for (const m of ['o1', 'o3-mini', 'o4-mini-2025-04-16', 'gpt-5', 'gpt-5-mini', 'gpt-5.1-codex', 'codex-mini-latest', 'gpt-oss-120b', 'openai/o3'])
			expect([m, takesReasoningEffort(m)]).toEqual([m, true])
		for (const m of ['deepseek-reasoner', 'deepseek-chat', 'llama-3.3-70b', 'm']) expect([m, takesReasoningEffort(m)]).toEqual([m, undefined])
	})

	it('should leave reasoning_effort out for a model that does not reason, and send it to a reasoning or unknown one', () => {
		expect('reasoning_effort' in chatBody('gpt-4o-mini')).toBe(false)
		expect('reasoning_effort' in chatBody('gpt-5-chat-latest')).toBe(false)
		expect(chatBody('o4-mini').reasoning_effort).toBe('high')
		expect(chatBody('deepseek-reasoner').reasoning_effort).toBe('high')
	})

	it("should follow the channel's reasoning_effort setting over the model's name", () => {
		expect('reasoning_effort' in chatBody('llama-3.3-70b', { reasoning_effort: false })).toBe(false)
		expect(chatBody('gpt-4o', { reasoning_effort: true }).reasoning_effort).toBe('high')
	})

	it("should keep an OpenAI client's own reasoning_effort, for the vendor to judge", () => {
		const own: ChatRequest = { ...thinking, extra: { __protocol: 'openai-chat', reasoning_effort: 'low' } }
		expect(encodeChat(own, 'gpt-4o', openaiAdapter.upstreamOptions!(ch(), 'gpt-4o')).reasoning_effort).toBe('low')
	})

	it('should leave reasoning out of a Responses body for a model that does not reason', () => {
		const body = (model: string) => encodeResponses({ ...thinking, reasoning: { enabled: true, effort: 'high', includeThoughts: true } }, model, openaiAdapter.upstreamOptions!(ch(), model))
		expect('reasoning' in body('gpt-4.1')).toBe(false)
		expect(body('gpt-5-mini').reasoning).toEqual({ effort: 'high', summary: 'auto' })
	})

	it('should send each OpenAI model the nearest effort it takes (developers.openai.com/api/docs/models)', () => {
		const chatEffort = (model: string, effort: ChatRequest['reasoning']) =>
			encodeChat({ ...thinking, reasoning: effort }, model, openaiAdapter.upstreamOptions!(ch(), model)).reasoning_effort
		// Gemini's MINIMAL: gpt-5 takes it; gpt-5.1 and the o-series do not ("Unsupported value: 'minimal'…").
		expect(chatEffort('gpt-5-nano', { enabled: true, effort: 'minimal' })).toBe('minimal')
		expect(chatEffort('gpt-5.1', { enabled: true, effort: 'minimal' })).toBe('low')
		expect(chatEffort('o4-mini-2025-04-16', { enabled: true, effort: 'minimal' })).toBe('low')
		// gpt-5.x-chat-latest takes medium alone; gpt-5-pro high alone.
		expect(chatEffort('gpt-5.2-chat-latest', { enabled: true, effort: 'high' })).toBe('medium')
		expect(chatEffort('gpt-5-pro', { enabled: true, effort: 'low' })).toBe('high')
		// Other vendors' models get the effort as asked.
		expect(chatEffort('deepseek-reasoner', { enabled: true, effort: 'minimal' })).toBe('minimal')
		// Thinking off on the Responses API: none where the model takes it, else its least effort.
		const off = (model: string) => encodeResponses({ ...thinking, reasoning: { enabled: false } }, model, openaiAdapter.upstreamOptions!(ch(), model)).reasoning
		expect(off('gpt-5.1')).toEqual({ effort: 'none' })
		expect(off('gpt-5')).toEqual({ effort: 'minimal' })
		expect(off('o3')).toEqual({ effort: 'low' })
	})

	it('should round an effort above every one a model takes down to its most, max included', () => {
		expect(nearestEffort('max', ['low', 'medium', 'high'])).toBe('high')
		expect(nearestEffort('xhigh', ['none', 'low', 'medium', 'high'])).toBe('high')
		expect(nearestEffort('max', ['none', 'low', 'medium', 'high', 'xhigh'])).toBe('xhigh')
	})
})
