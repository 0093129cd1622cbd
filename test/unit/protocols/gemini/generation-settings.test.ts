/**
 * Gemini generation settings against the QA conversion report (items 5, 7, 11): thinking budgets that fit the cap,
 * seed / penalties / log probabilities both ways, candidateCount, and the documented ranges.
 */
import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../../src/core/errors'
import type { ChatRequest, ChatResponse, Message } from '../../../../src/core/ir'
import { gemini } from '../../../../src/protocols/gemini'
import { decodeRequest, encodeRequest } from '../../../../src/protocols/gemini/request'

const u = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] })
const base = (more: Partial<ChatRequest> = {}): ChatRequest => ({ model: 'm', messages: [u('x')], stream: false, ...more })
const cfgOf = (req: ChatRequest) => encodeRequest(req, 'm').generationConfig as Record<string, any> | undefined

function rejection(body: unknown): GatewayError {
	try {
		decodeRequest(body as never)
	} catch (e) {
		if (e instanceof GatewayError) return e
		throw e
	}
	throw new Error('expected decodeRequest to throw')
}

describe('gemini thinking budget under maxOutputTokens', () => {
	it('should send no cap and the effort’s budget when the client set no cap', () => {
		expect(cfgOf(base({ reasoning: { enabled: true, effort: 'high' } }))).toEqual({ thinkingConfig: { includeThoughts: true, thinkingBudget: 4096 } })
	})

	it('should keep the budget below the cap with room for an answer (Gemini counts thoughts against maxOutputTokens)', () => {
		expect(cfgOf(base({ maxTokens: 4096, reasoning: { enabled: true, effort: 'high' } }))?.thinkingConfig.thinkingBudget).toBe(2048)
		expect(cfgOf(base({ maxTokens: 1000, reasoning: { enabled: true, effort: 'high' } }))).toEqual({ maxOutputTokens: 1000, thinkingConfig: { includeThoughts: true, thinkingBudget: 500 } })
		expect(cfgOf(base({ maxTokens: 3000, reasoning: { enabled: true, budgetTokens: 2048 } }))?.thinkingConfig.thinkingBudget).toBe(2048)
	})

	it('should turn thinking off (budget 0) when no budget fits the cap', () => {
		expect(cfgOf(base({ maxTokens: 200, reasoning: { enabled: true, effort: 'low' } }))).toEqual({ maxOutputTokens: 200, thinkingConfig: { thinkingBudget: 0 } })
	})
})

describe('gemini seed, penalties and log probabilities', () => {
	it('should decode them into canonical slots, in either spelling', () => {
		const req = decodeRequest({ contents: [{ role: 'user', parts: [{ text: 'x' }] }], generationConfig: { seed: 3, presencePenalty: 0.1, frequencyPenalty: 0.2, responseLogprobs: true, logprobs: 4 } })
		expect([req.seed, req.presencePenalty, req.frequencyPenalty, req.logprobs, req.topLogprobs]).toEqual([3, 0.1, 0.2, true, 4])
		expect(req.extra?.generationConfig).toBeUndefined()
		const snake = decodeRequest({ contents: [{ role: 'user', parts: [{ text: 'x' }] }], generation_config: { response_logprobs: true, presence_penalty: 1 } } as never)
		expect([snake.logprobs, snake.presencePenalty]).toEqual([true, 1])
	})

	it('should encode them, with logprobs only alongside responseLogprobs', () => {
		expect(cfgOf(base({ seed: 1, presencePenalty: -1, frequencyPenalty: 1, logprobs: true, topLogprobs: 5 }))).toEqual({
			seed: 1,
			presencePenalty: -1,
			frequencyPenalty: 1,
			responseLogprobs: true,
			logprobs: 5,
		})
		expect(cfgOf(base({ topLogprobs: 5 }))).toBeUndefined()
	})

	it('should read logprobsResult into the canonical response and write it back', () => {
		const body = {
			candidates: [
				{
					content: { role: 'model', parts: [{ text: 'Hi there' }] },
					finishReason: 'STOP',
					logprobsResult: {
						topCandidates: [{ candidates: [{ token: 'Hi', tokenId: 1, logProbability: -0.1 }, { token: 'Hey', logProbability: -2 }] }, { candidates: [] }],
						chosenCandidates: [{ token: 'Hi', tokenId: 1, logProbability: -0.1 }, { token: ' there', logProbability: -0.5 }],
					},
				},
			],
		}
		const res = gemini.decodeResponse(body)
		expect(res.logprobs).toEqual([
			{ token: 'Hi', logprob: -0.1, top: [{ token: 'Hi', logprob: -0.1 }, { token: 'Hey', logprob: -2 }] },
			{ token: ' there', logprob: -0.5, top: [] },
		])
		const out = gemini.encodeResponse(res, { model: 'm' }) as Record<string, any>
		expect(out.candidates[0].logprobsResult).toEqual({
			topCandidates: [{ candidates: [{ token: 'Hi', logProbability: -0.1 }, { token: 'Hey', logProbability: -2 }] }, { candidates: [] }],
			chosenCandidates: [{ token: 'Hi', logProbability: -0.1 }, { token: ' there', logProbability: -0.5 }],
		})
		const plain: ChatResponse = { ...res, logprobs: undefined }
		expect((gemini.encodeResponse(plain, { model: 'm' }) as Record<string, any>).candidates[0]).not.toHaveProperty('logprobsResult')
	})
})

describe('gemini candidateCount and ranges', () => {
	const contents = [{ role: 'user' as const, parts: [{ text: 'x' }] }]
	it('should mark several candidates as choices, keeping the field for the same-protocol body', () => {
		const req = decodeRequest({ contents, generationConfig: { candidateCount: 3 } })
		expect(req.choices).toBe(3)
		expect(req.extra?.generationConfig).toEqual({ candidateCount: 3 })
		expect(decodeRequest({ contents, generationConfig: { candidateCount: 1 } }).choices).toBeUndefined()
	})

	it('should refuse values outside the documented ranges with a 400 naming the field', () => {
		const cases: Array<[Record<string, unknown>, string]> = [
			[{ maxOutputTokens: -1 }, 'generationConfig.maxOutputTokens'],
			[{ max_output_tokens: 0 }, 'generationConfig.maxOutputTokens'],
			[{ temperature: -0.5 }, 'generationConfig.temperature'],
			[{ temperature: 2.1 }, 'generationConfig.temperature'],
			[{ topP: 1.5 }, 'generationConfig.topP'],
			[{ responseLogprobs: true, logprobs: 21 }, 'generationConfig.logprobs'],
			[{ candidateCount: 0 }, 'generationConfig.candidateCount'],
			[{ seed: 1.5 }, 'generationConfig.seed'],
		]
		for (const [generationConfig, param] of cases) {
			const err = rejection({ contents, generationConfig })
			expect([err.status, err.param]).toEqual([400, param])
		}
	})

	it('should refuse to encode a conversation with nothing but a system prompt, naming messages, retryable on another channel', () => {
		let err: unknown
		try {
			encodeRequest({ model: 'm', system: [{ type: 'text', text: 'sys' }], messages: [], stream: false }, 'm')
		} catch (e) {
			err = e
		}
		expect(err).toBeInstanceOf(GatewayError)
		expect(err).toMatchObject({ status: 400, param: 'messages', code: 'unsupported_for_model', retryable: true })
	})
})
