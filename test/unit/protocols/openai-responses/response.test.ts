import { describe, expect, it } from 'bun:test'
import { decodeUsage } from '../../../../src/protocols/openai-responses/usage'
import { GatewayError } from '../../../../src/core/errors'
import type { ChatResponse } from '../../../../src/core/ir'
import { decodeResponse, encodeResponse, usageOf } from '../../../../src/protocols/openai-responses/response'
import { fixtureJson } from './helpers'

describe('openaiResponses.decodeResponse', () => {
	it('should decode a text response and subtract nothing when there is no cache', async () => {
		const res = decodeResponse(await fixtureJson('response-text.json'))
		expect(res).toMatchObject({ model: 'gpt-4.1-2025-04-14', created: 1741476542, stopReason: 'end_turn' })
		expect(res.content).toEqual([{ type: 'text', text: 'Hi there! How can I help?' }])
		expect(res.usage).toEqual({ input: 36, output: 87, cacheRead: 0, cacheWrite: 0, reasoning: 0 })
	})

	it('should decode reasoning and parallel calls, end in tool_use and take cached tokens out of input', async () => {
		const res = decodeResponse(await fixtureJson('response-tools.json'))
		expect(res.stopReason).toBe('tool_use')
		expect(res.content.map((p) => p.type)).toEqual(['thinking', 'tool_call', 'tool_call'])
		expect(res.content[1]).toEqual({ type: 'tool_call', id: 'call_Pq1Rw2', name: 'get_weather', input: { city: 'Paris' } })
		expect(res.usage).toEqual({ input: 20, output: 64, cacheRead: 100, cacheWrite: 0, reasoning: 40 })
		expect(usageOf(await fixtureJson('response-tools.json'))).toEqual(res.usage)
	})

	it('should turn an incomplete response into max_tokens', async () => {
		expect(decodeResponse(await fixtureJson('response-incomplete.json')).stopReason).toBe('max_tokens')
	})

	it('should throw an upstream error for a failed response instead of an empty success', () => {
		const err = (() => {
			try {
				decodeResponse({ id: 'resp_1', status: 'failed', error: { code: 'server_error', message: 'boom' }, output: [] })
			} catch (e) {
				return e
			}
		})()
		expect(err).toBeInstanceOf(GatewayError)
		expect((err as GatewayError).message).toBe('boom')
	})
})

describe('openaiResponses.encodeResponse', () => {
	const res: ChatResponse = {
		id: 'msg_01',
		model: 'claude-sonnet-4-5',
		created: 1700000000,
		content: [
			{ type: 'thinking', text: 'Hm.', signature: 'sig-A' },
			{ type: 'redacted_thinking', data: 'ZW5j' },
			{ type: 'text', text: 'Let me ' },
			{ type: 'text', text: 'check.' },
			{ type: 'tool_call', id: 'toolu_1', name: 'get_time', input: {}, signature: 'Z2Vt' },
		],
		stopReason: 'tool_use',
		usage: { input: 10, output: 5, cacheRead: 90, cacheWrite: 3, reasoning: 2 },
	}

	it('should list reasoning, one message per text run and function calls, with the client model name', () => {
		const body = encodeResponse(res, { model: 'my-claude' })
		expect(body).toMatchObject({ object: 'response', status: 'completed', model: 'my-claude', created_at: 1700000000, incomplete_details: null, error: null, store: false })
		expect(body.id).toStartWith('resp_')
		expect(body.output.map((o) => o.type)).toEqual(['reasoning', 'reasoning', 'message', 'function_call'])
		expect(body.output[0]).toMatchObject({ summary: [{ type: 'summary_text', text: 'Hm.' }], encrypted_content: 'sbsig:sig-A' })
		expect(body.output[1]).toMatchObject({ summary: [], encrypted_content: 'sbred:ZW5j' })
		expect(body.output[2]).toMatchObject({ role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Let me check.', annotations: [] }] })
		expect(body.output[3]).toMatchObject({ status: 'completed', call_id: 'toolu_1__ts_Z2Vt', name: 'get_time', arguments: '{}' })
		expect(new Set(body.output.map((o) => o.id)).size).toBe(4)
	})

	it('should report prompt tokens including cache reads and writes, as OpenAI counts them', () => {
		expect(encodeResponse(res, { model: 'm' }).usage).toEqual({
			input_tokens: 103,
			input_tokens_details: { cached_tokens: 90, cache_write_tokens: 3 },
			output_tokens: 5,
			output_tokens_details: { reasoning_tokens: 2 },
			total_tokens: 108,
		})
	})

	it('should read the 12-hour share of the cache writes, which GPT-5.6 and later bill above the 30-minute one', () => {
		const input_tokens_details = { cached_tokens: 90, cache_write_tokens: 8, cache_write_tokens_details: { ttl_30m_tokens: 3, ttl_12h_tokens: 5 } }
		expect(decodeUsage({ input_tokens: 103, input_tokens_details, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 } })).toEqual({
			input: 5,
			output: 5,
			cacheRead: 90,
			cacheWrite: 8,
			cacheWriteLong: 5,
			reasoning: 0,
		})
		// Never more than the writes themselves.
		const odd = { cached_tokens: 0, cache_write_tokens: 2, cache_write_tokens_details: { ttl_30m_tokens: 0, ttl_12h_tokens: 9 } }
		expect(decodeUsage({ input_tokens: 10, input_tokens_details: odd, output_tokens: 1 })?.cacheWriteLong).toBe(2)
	})

	it('should mark a truncated answer incomplete with max_output_tokens', () => {
		const body = encodeResponse({ ...res, stopReason: 'max_tokens' }, { model: 'm' })
		expect(body.status).toBe('incomplete')
		expect(body.incomplete_details).toEqual({ reason: 'max_output_tokens' })
	})

	it('should decode what it encodes back to the same content', () => {
		const again = decodeResponse(encodeResponse(res, { model: 'm' }))
		expect(again.content).toEqual([res.content[0], res.content[1], { type: 'text', text: 'Let me check.' }, res.content[4]])
		expect(again.usage).toEqual(res.usage)
	})
})
