/**
 * The Anthropic encoder against the QA conversion report (items 5, 11): the caller's cap is a total, so a thinking
 * budget is fitted under it and never raises it; a cap is always sent (required); a conversation of only a system
 * prompt is refused, naming messages.
 */
import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../../src/core/errors'
import type { ChatRequest } from '../../../../src/core/ir'
import { anthropicMessages } from '../../../../src/protocols/anthropic-messages'

type Body = Record<string, any>
const base: ChatRequest = { model: 'gpt-4o', messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }], stream: false }
const encode = (req: Partial<ChatRequest>): Body => anthropicMessages.encodeRequest({ ...base, ...req }, 'claude') as Body

describe('anthropic encodeRequest output cap', () => {
	it('should never send more than the caller’s cap, turning thinking off when the 1024 minimum does not fit', () => {
		const body = encode({ maxTokens: 1000, reasoning: { enabled: true, effort: 'high' } })
		expect([body.max_tokens, body.thinking]).toEqual([1000, { type: 'disabled' }])
		const fits = encode({ maxTokens: 4000, reasoning: { enabled: true, effort: 'high' } })
		expect([fits.max_tokens, fits.thinking]).toEqual([4000, { type: 'enabled', budget_tokens: 2000 }])
	})

	it('should default max_tokens to a default answer above the thinking budget when the caller set none', () => {
		expect(encode({}).max_tokens).toBe(4096)
		const body = encode({ reasoning: { enabled: true, effort: 'high' } })
		expect([body.max_tokens, body.thinking]).toEqual([8192, { type: 'enabled', budget_tokens: 4096 }])
	})

	it('should refuse a conversation with nothing but a system prompt, naming messages, retryable on another channel', () => {
		let err: unknown
		try {
			encode({ system: [{ type: 'text', text: 'sys' }], messages: [] })
		} catch (e) {
			err = e
		}
		expect(err).toBeInstanceOf(GatewayError)
		expect(err).toMatchObject({ status: 400, param: 'messages', code: 'unsupported_for_model', retryable: true })
	})
})
