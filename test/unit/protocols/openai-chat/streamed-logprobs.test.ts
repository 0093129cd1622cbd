/**
 * Streamed log probabilities across codecs (each chunk scores its own tokens: OpenAI `choices[].logprobs` on the
 * chunk, Gemini `candidates[].logprobsResult` on the chunk), and the request fields the OpenAI SDK depth QA fixed:
 * safety_identifier as the user id, OpenAI-only features marked vendor-only, tool_choice naming an unknown function.
 */
import { describe, expect, it } from 'bun:test'
import type { StreamEvent } from '../../../../src/core/events'
import type { TokenLogprob } from '../../../../src/core/ir'
import { decodeStream as decodeGemini, encodeStream as encodeGemini } from '../../../../src/protocols/gemini/stream'
import { decodeRequest, encodeRequest } from '../../../../src/protocols/openai-chat/request'
import { decodeStream as decodeChat } from '../../../../src/protocols/openai-chat/stream-decode'
import { encodeStream as encodeChat } from '../../../../src/protocols/openai-chat/stream-encode'
import { collect, framesOf, from, payloads } from './helpers'

const HI: TokenLogprob[] = [{ token: 'Hi', logprob: -0.1, top: [{ token: 'Hi', logprob: -0.1 }, { token: 'Yo', logprob: -2 }] }]
const THERE: TokenLogprob[] = [{ token: ' there', logprob: -0.3, top: [] }]

const events = (): StreamEvent[] => [
	{ type: 'start', id: 'r1', model: 'm' },
	{ type: 'block_start', index: 0, block: { kind: 'text' } },
	{ type: 'text_delta', index: 0, text: 'Hi', logprobs: HI },
	{ type: 'text_delta', index: 0, text: ' there', logprobs: THERE },
	{ type: 'text_delta', index: 0, text: '!' },
	{ type: 'block_stop', index: 0 },
	{ type: 'finish', reason: 'end_turn' },
]

describe('streamed logprobs', () => {
	it('should decode each Gemini chunk logprobsResult onto that chunk text delta', async () => {
		const chunk = (text: string, lp?: object, finishReason?: string) =>
			JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text }] }, ...(lp && { logprobsResult: lp }), ...(finishReason && { finishReason }), index: 0 }], responseId: 'r1' })
		const out = await collect(
			decodeGemini(
				framesOf([
					chunk('Hi', { topCandidates: [{ candidates: [{ token: 'Hi', logProbability: -0.1 }, { token: 'Yo', logProbability: -2 }] }], chosenCandidates: [{ token: 'Hi', tokenId: 1, logProbability: -0.1 }] }),
					chunk(' there', { chosenCandidates: [{ token: ' there', logProbability: -0.3 }] }),
					chunk('!', undefined, 'STOP'),
				]),
			),
		)
		expect(out.filter((e) => e.type === 'text_delta')).toEqual([
			{ type: 'text_delta', index: 0, text: 'Hi', logprobs: HI },
			{ type: 'text_delta', index: 0, text: ' there', logprobs: THERE },
			{ type: 'text_delta', index: 0, text: '!' },
		])
	})

	it('should decode OpenAI chunk logprobs onto the content delta', async () => {
		const chunk = (content: string, logprobs: object | null) => JSON.stringify({ id: 'c1', choices: [{ index: 0, delta: { content }, logprobs, finish_reason: null }] })
		const out = await collect(
			decodeChat(
				framesOf([
					chunk('Hi', { content: [{ token: 'Hi', logprob: -0.1, bytes: [72, 105], top_logprobs: [{ token: 'Hi', logprob: -0.1, bytes: null }, { token: 'Yo', logprob: -2, bytes: null }] }], refusal: null }),
					chunk('!', null),
					JSON.stringify({ id: 'c1', choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }] }),
					'[DONE]',
				]),
			),
		)
		expect(out.filter((e) => e.type === 'text_delta')).toEqual([
			{ type: 'text_delta', index: 0, text: 'Hi', logprobs: HI },
			{ type: 'text_delta', index: 0, text: '!' },
		])
	})

	it('should encode them on the OpenAI chunk of their text, and null elsewhere', async () => {
		const chunks = payloads(await collect(encodeChat(from(events()), { model: 'client-model', includeUsage: false })))
		const text = chunks.filter((c) => c.choices[0]?.delta.content)
		expect(text.map((c) => [c.choices[0]!.delta.content, c.choices[0]!.logprobs])).toEqual([
			['Hi', { content: [{ token: 'Hi', logprob: -0.1, bytes: [72, 105], top_logprobs: [{ token: 'Hi', logprob: -0.1, bytes: [72, 105] }, { token: 'Yo', logprob: -2, bytes: [89, 111] }] }], refusal: null }],
			[' there', { content: [{ token: ' there', logprob: -0.3, bytes: [32, 116, 104, 101, 114, 101], top_logprobs: [] }], refusal: null }],
			['!', null],
		])
		// The chunks with logprobs keep the exact shape of the others.
		expect(Object.keys(text[0]!.choices[0]!)).toEqual(Object.keys(text[2]!.choices[0]!))
	})

	it('should encode them as the Gemini chunk logprobsResult of their text', async () => {
		const frames = await collect(encodeGemini(from(events()), { model: 'gemini-m', includeUsage: false }))
		const text = frames.map((f) => JSON.parse(f.data)).filter((c) => c.candidates[0].content.parts[0]?.text)
		expect(text.map((c) => c.candidates[0].logprobsResult)).toEqual([
			{ topCandidates: [{ candidates: [{ token: 'Hi', logProbability: -0.1 }, { token: 'Yo', logProbability: -2 }] }], chosenCandidates: [{ token: 'Hi', logProbability: -0.1 }] },
			{ topCandidates: [{ candidates: [] }], chosenCandidates: [{ token: ' there', logProbability: -0.3 }] },
			undefined,
		])
	})
})

describe('openai-chat request fields for other vendors', () => {
	const base = { model: 'claude-m', messages: [{ role: 'user', content: 'hi' }] }

	it('should take safety_identifier as the user id when user is absent, and user over it', () => {
		expect(decodeRequest({ ...base, safety_identifier: 's-1' }).user).toBe('s-1')
		expect(decodeRequest({ ...base, user: 'u-1', safety_identifier: 's-1' }).user).toBe('u-1')
	})

	it('should give an OpenAI upstream safety_identifier back alone, without a user field it was not sent', () => {
		const body = encodeRequest(decodeRequest({ ...base, safety_identifier: 's-1' }), 'gpt-4o-mini')
		expect(body.safety_identifier).toBe('s-1')
		expect(body.user).toBeUndefined()
		expect(encodeRequest(decodeRequest({ ...base, user: 'u-1', safety_identifier: 's-1' }), 'gpt-4o-mini')).toMatchObject({ user: 'u-1', safety_identifier: 's-1' })
	})

	it('should mark audio output and legacy functions as OpenAI-only, and read web_search_options as the canonical search', () => {
		const req = decodeRequest({ ...base, web_search_options: { user_location: { type: 'approximate', approximate: { city: 'Paris' } } }, modalities: ['text', 'audio'] })
		expect(req.vendorOnly).toEqual([{ protocol: 'openai-chat', what: 'audio output (modalities "audio")', path: 'modalities' }])
		expect(req.webSearch).toEqual({ userLocation: { city: 'Paris' } })
		expect(decodeRequest({ ...base, functions: [{ name: 'f' }] }).vendorOnly).toEqual([{ protocol: 'openai-chat', what: 'legacy function calling (functions; send tools instead)', path: 'functions' }])
		expect(decodeRequest({ ...base, modalities: ['text'], functions: [] }).vendorOnly).toBeUndefined()
	})

	it('should refuse a tool_choice naming a function that is not among the tools', () => {
		const tools = [{ type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: {} } } }]
		expect(() => decodeRequest({ ...base, tools, tool_choice: { type: 'function', function: { name: 'nope' } } })).toThrow("function 'nope' is not among the tools")
		expect(() => decodeRequest({ ...base, tool_choice: { type: 'function', function: { name: 'weather' } } })).toThrow("function 'weather'")
		expect(decodeRequest({ ...base, tools, tool_choice: { type: 'function', function: { name: 'weather' } } }).toolChoice).toEqual({ type: 'tool', name: 'weather' })
	})
})
