/**
 * Chat-completions generation settings against the QA conversion report (items 7, 11): seed, penalties and log
 * probabilities as canonical fields both ways, the ranges OpenAI documents, and `choices[].logprobs` in answers.
 */
import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../../src/core/errors'
import type { ChatResponse } from '../../../../src/core/ir'
import { openaiChat } from '../../../../src/protocols/openai-chat'
import { decodeRequest, encodeRequest } from '../../../../src/protocols/openai-chat/request'

const base = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] }

function rejection(body: unknown): GatewayError {
	try {
		decodeRequest(body)
	} catch (e) {
		if (e instanceof GatewayError) return e
		throw e
	}
	throw new Error('expected decodeRequest to throw')
}

describe('openai-chat sampling settings', () => {
	it('should decode seed, penalties and logprobs into canonical slots and encode them back', () => {
		const req = decodeRequest({ ...base, seed: 42, presence_penalty: 1.5, frequency_penalty: -1, logprobs: true, top_logprobs: 3 })
		expect([req.seed, req.presencePenalty, req.frequencyPenalty, req.logprobs, req.topLogprobs]).toEqual([42, 1.5, -1, true, 3])
		expect(req.extra).toBeUndefined()
		expect(encodeRequest(req, 'gpt-4o')).toMatchObject({ seed: 42, presence_penalty: 1.5, frequency_penalty: -1, logprobs: true, top_logprobs: 3 })
	})

	it('should clamp penalties from another protocol to OpenAI’s range', () => {
		const body = encodeRequest({ model: 'm', messages: [], stream: false, presencePenalty: 5, frequencyPenalty: -5, topLogprobs: 3 }, 'gpt-4o')
		expect([body.presence_penalty, body.frequency_penalty, body.top_logprobs]).toEqual([2, -2, undefined])
	})

	it('should refuse values outside OpenAI’s documented ranges with a 400 naming the field', () => {
		const cases: Array<[Record<string, unknown>, string]> = [
			[{ temperature: -1 }, 'temperature'],
			[{ temperature: 2.01 }, 'temperature'],
			[{ top_p: -0.1 }, 'top_p'],
			[{ presence_penalty: 2.5 }, 'presence_penalty'],
			[{ frequency_penalty: -3 }, 'frequency_penalty'],
			[{ logprobs: true, top_logprobs: 21 }, 'top_logprobs'],
			[{ logprobs: true, top_logprobs: 1.5 }, 'top_logprobs'],
			[{ top_logprobs: 2 }, 'top_logprobs'],
			[{ seed: 1.5 }, 'seed'],
		]
		for (const [extra, param] of cases) expect([rejection({ ...base, ...extra }).status, rejection({ ...base, ...extra }).param]).toEqual([400, param])
		expect(decodeRequest({ ...base, temperature: 2, top_p: 0 }).temperature).toBe(2)
	})
})

describe('openai-chat logprobs in answers', () => {
	const upstream = {
		id: 'chatcmpl-1',
		object: 'chat.completion',
		created: 1,
		model: 'gpt-4o',
		choices: [
			{
				index: 0,
				message: { role: 'assistant', content: 'Hé' },
				logprobs: { content: [{ token: 'Hé', logprob: -0.25, bytes: [72, 195, 169], top_logprobs: [{ token: 'Hé', logprob: -0.25, bytes: [72, 195, 169] }, { token: 'Hi', logprob: -1.5, bytes: [72, 105] }] }], refusal: null },
				finish_reason: 'stop',
			},
		],
		usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
	}

	it('should read choices[0].logprobs and write them back with UTF-8 bytes', () => {
		const res = openaiChat.decodeResponse(upstream)
		expect(res.logprobs).toEqual([{ token: 'Hé', logprob: -0.25, top: [{ token: 'Hé', logprob: -0.25 }, { token: 'Hi', logprob: -1.5 }] }])
		const out = openaiChat.encodeResponse(res, { model: 'gpt-4o' })
		expect(out.choices[0]!.logprobs).toEqual(upstream.choices[0]!.logprobs)
	})

	it('should keep logprobs null when the answer has none', () => {
		const res: ChatResponse = { id: 'x', model: 'm', content: [{ type: 'text', text: 'a' }], stopReason: 'end_turn', usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, reasoning: 0 } }
		expect(openaiChat.encodeResponse(res, { model: 'm' }).choices[0]!.logprobs).toBeNull()
	})
})
