/**
 * Feeds encodeStream / encodeResponse output, as HTTP responses, to the official `openai` SDK: `responses.stream`
 * accumulates the events and checks item ids, call_ids and indexes against the final response; `responses.create`
 * parses the non-stream body and derives `output_text`.
 */
import { describe, expect, it } from 'bun:test'
import OpenAI, { APIError } from 'openai'
import { GatewayError } from '../../../../src/core/errors'
import type { StreamEvent } from '../../../../src/core/events'
import type { ChatResponse } from '../../../../src/core/ir'
import { openaiChat } from '../../../../src/protocols/openai-chat'
import { openaiResponses } from '../../../../src/protocols/openai-responses'
import { gemini } from '../../../../src/protocols/gemini'
import { agentTurn, collect, from, sseResponse } from './helpers'
import { fixtureFrames as geminiFrames } from '../gemini/helpers'
import { fixtureFrames as chatFrames } from '../openai-chat/helpers'

const streamFetch = (events: StreamEvent[]): typeof fetch =>
	Object.assign(async () => sseResponse(await collect(openaiResponses.encodeStream(from(events), { model: 'client-model' }))), { preconnect: fetch.preconnect })

const client = (f: typeof fetch) => new OpenAI({ apiKey: 'sk-test', baseURL: 'http://gateway.test/v1', fetch: f, maxRetries: 0 })

const params = { model: 'client-model', input: 'Weather?' }

describe('openai-responses encodeStream with the openai SDK', () => {
	it('should let responses.stream rebuild reasoning, text, function calls, status and usage', async () => {
		const final = await client(streamFetch(agentTurn())).responses.stream(params).finalResponse()
		expect(final.status).toBe('completed')
		expect(final.output_text).toBe('Let me check.')
		expect(final.output.map((o) => o.type)).toEqual(['reasoning', 'message', 'function_call', 'function_call'])
		const calls = final.output.flatMap((o) => (o.type === 'function_call' ? [[o.call_id, o.name, o.arguments]] : []))
		expect(calls).toEqual([
			['toolu_A', 'get_weather', '{"city":"Paris"}'],
			// The second call of the answer is marked as such (call-ids.ts).
			['sbp_toolu_B__ts_Z2VtaW5p', 'get_time', '{}'],
		])
		const reasoning = final.output[0]
		expect(reasoning.type === 'reasoning' && reasoning.summary.map((s) => s.text)).toEqual(['Thinking.'])
		expect(final.usage).toMatchObject({ input_tokens: 100, output_tokens: 42, total_tokens: 142 })
	})

	it('should deliver text deltas to create({stream:true}) iteration in order', async () => {
		const stream = await client(streamFetch(agentTurn())).responses.create({ ...params, stream: true })
		let text = ''
		const types: string[] = []
		for await (const e of stream) {
			types.push(e.type)
			if (e.type === 'response.output_text.delta') text += e.delta
		}
		expect(text).toBe('Let me check.')
		expect(types[0]).toBe('response.created')
		expect(types.at(-1)).toBe('response.completed')
	})

	it('should surface a mid-stream error as an APIError carrying our message', async () => {
		const events: StreamEvent[] = [
			{ type: 'start', id: 'x', model: 'm' },
			{ type: 'block_start', index: 0, block: { kind: 'text' } },
			{ type: 'text_delta', index: 0, text: 'part' },
			{ type: 'error', error: new GatewayError('upstream', 'upstream went away') },
		]
		const err = await client(streamFetch(events)).responses.stream(params).finalResponse().then(
			() => undefined,
			(e: unknown) => e,
		)
		expect(err).toBeInstanceOf(APIError)
		expect((err as APIError).message).toContain('upstream went away')
	})

	it('should accept Gemini and OpenAI-chat upstream streams decoded and re-encoded end to end', async () => {
		const fromGemini = await collect(gemini.decodeStream(geminiFrames('thinking-tool.sse')))
		const g = await client(streamFetch(fromGemini)).responses.stream(params).finalResponse()
		expect(g.output.some((o) => o.type === 'function_call' && o.call_id.includes('__ts_'))).toBe(true)
		const fromChat = await collect(openaiChat.decodeStream(chatFrames('parallel-tools.sse')))
		const c = await client(streamFetch(fromChat)).responses.stream(params).finalResponse()
		expect(c.output.flatMap((o) => (o.type === 'function_call' ? [o.arguments] : []))).toEqual(['{"city": "Paris"}', '{"city": "Tokyo"}'])
	})
})

describe('openai-responses encodeResponse with the openai SDK', () => {
	it('should parse as a Response with output_text derived from the message', async () => {
		const res: ChatResponse = {
			id: 'msg_1',
			model: 'claude',
			content: [
				{ type: 'thinking', text: 'Hm.', signature: 's' },
				{ type: 'text', text: 'Hello!' },
			],
			stopReason: 'end_turn',
			usage: { input: 3, output: 4, cacheRead: 0, cacheWrite: 0, reasoning: 1 },
		}
		const body = openaiResponses.encodeResponse(res, { model: 'client-model' })
		const f = Object.assign(async () => Response.json(body), { preconnect: fetch.preconnect })
		const parsed = await client(f).responses.create(params)
		expect(parsed.output_text).toBe('Hello!')
		expect(parsed.model).toBe('client-model')
		expect(parsed.usage?.output_tokens_details.reasoning_tokens).toBe(1)
	})
})
