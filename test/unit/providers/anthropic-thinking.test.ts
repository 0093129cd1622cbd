/**
 * Thinking and sampling settings another protocol's client asks of Claude, per model generation
 * (src/routing/claude-models.ts): a budget up to Claude 4.6, adaptive thinking with an effort from Opus 4.7 on (a budget
 * is a 400 there, as are sampling settings), and never "off" for the models that always think.
 */
import { describe, expect, it } from 'bun:test'
import type { ChatRequest } from '../../../src/core/ir'
import { encodeRequest } from '../../../src/protocols/anthropic-messages/request-encode'
import { anthropicAdapter } from '../../../src/providers/anthropic'
import type { Channel } from '../../../src/routing/catalog'
import { claudeFixedSampling, claudeThinking } from '../../../src/routing/claude-models'

const ch: Channel = { id: 1, name: 'c', type: 'anthropic', baseUrl: 'https://api.anthropic.com', apiKey: 'k', models: ['*'], modelMap: {}, priority: 0, weight: 1, settings: {} }

/** What an OpenAI client asks: thinking at high effort, and a temperature. */
const asked: ChatRequest = {
	model: 'm',
	messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
	stream: false,
	maxTokens: 16_000,
	temperature: 0.2,
	topP: 0.9,
	reasoning: { enabled: true, effort: 'high' },
}

/** The body sent to `model`, as the relay encodes it. */
const body = (model: string, req: ChatRequest = asked) => encodeRequest(req, model, anthropicAdapter.upstreamOptions!(ch, model)) as Record<string, any>

describe('Claude thinking by model', () => {
	it('should know how each generation takes thinking, by alias, dated snapshot, Bedrock and Vertex names', () => {
		for (const m of ['claude-sonnet-4-5-20250929', 'claude-haiku-4-5', 'claude-opus-4-6', 'claude-sonnet-4-6', 'claude-3-7-sonnet-latest', 'kimi-k2'])
			expect([m, claudeThinking(m), claudeFixedSampling(m)]).toEqual([m, 'budget', false])
		for (const m of ['claude-opus-4-7', 'claude-opus-4-8', 'anthropic.claude-opus-4-7', 'claude-sonnet-5', 'claude-opus-5-20260724', 'claude-sonnet-5-5', 'claude-haiku-5-5@20261001'])
			expect([m, claudeThinking(m), claudeFixedSampling(m)]).toEqual([m, 'adaptive', true])
		for (const m of ['claude-opus-5-5', 'claude-fable-5', 'claude-fable-5-1', 'claude-mythos-5', 'claude-mythos-preview'])
			expect([m, claudeThinking(m), claudeFixedSampling(m)]).toEqual([m, 'always', true])
	})

	it('should send a budget and the sampling settings to a model that takes them', () => {
		const b = body('claude-sonnet-4-6')
		expect(b.thinking).toEqual({ type: 'enabled', budget_tokens: 4096 })
		expect(b.output_config).toBeUndefined()
		// Thinking allows top_p only in [0.95, 1] (and no temperature): the existing rule, unchanged.
		expect([b.temperature, b.top_p]).toEqual([undefined, 0.95])
	})

	it('should ask Claude Opus 4.7 and later for adaptive thinking at the effort asked, with no sampling settings', () => {
		for (const model of ['claude-opus-4-7', 'claude-sonnet-5', 'claude-opus-5-5']) {
			const b = body(model)
			expect([model, b.thinking, b.output_config]).toEqual([model, { type: 'adaptive' }, { effort: 'high' }])
			expect([model, b.temperature, b.top_p, b.top_k]).toEqual([model, undefined, undefined, undefined])
		}
		// A budget (Gemini's thinkingBudget, OpenRouter's max_tokens) stands for its effort; minimal is Claude's low.
		expect(body('claude-opus-4-7', { ...asked, reasoning: { enabled: true, budgetTokens: 1024 } }).output_config).toEqual({ effort: 'low' })
		expect(body('claude-opus-4-7', { ...asked, reasoning: { enabled: true, effort: 'minimal' } }).output_config).toEqual({ effort: 'low' })
		// Thinking on without a depth: the model's default effort.
		const plain = body('claude-opus-4-7', { ...asked, reasoning: { enabled: true } })
		expect([plain.thinking, plain.output_config]).toEqual([{ type: 'adaptive' }, undefined])
		// Without thinking, still no sampling settings.
		const off = body('claude-opus-4-7', { ...asked, reasoning: undefined })
		expect([off.thinking, off.temperature, off.top_p]).toEqual([undefined, undefined, undefined])
	})

	it('should keep the JSON format beside the effort in output_config', () => {
		const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false }
		const b = body('claude-opus-4-7', { ...asked, responseFormat: { type: 'json_schema', name: 'r', schema } })
		expect(b.output_config).toEqual({ format: { type: 'json_schema', schema }, effort: 'high' })
	})

	it('should not turn thinking off for a model that always thinks, and still turn it off for one that may', () => {
		const off: ChatRequest = { ...asked, reasoning: { enabled: false, budgetTokens: 0 } }
		expect(body('claude-fable-5-1', off).thinking).toBeUndefined()
		expect(body('claude-opus-4-7', off).thinking).toEqual({ type: 'disabled' })
		expect(body('claude-sonnet-4-6', off).thinking).toEqual({ type: 'disabled' })
	})
})
