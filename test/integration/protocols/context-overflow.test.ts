/**
 * A prompt longer than the model's context window, as each vendor refuses it (400): OpenAI `code:
 * "context_length_exceeded"` ("This model's maximum context length is 128000 tokens. However, your messages resulted in
 * 130532 tokens…"), Gemini INVALID_ARGUMENT ("The input token count (1196265) exceeds the maximum number of tokens
 * allowed (1048575).") and Anthropic ("prompt is too long: 208656 tokens > 200000 maximum",
 * https://docs.anthropic.com/en/api/errors). Agents compact their history on this error, recognising it in their own
 * protocol's terms: Claude Code by Anthropic's words, OpenAI clients (Codex, the Agents SDK) by the
 * `context_length_exceeded` code. An Anthropic client on a GPT or Gemini model got the vendor's words, and an OpenAI
 * client on Claude or Gemini no code, so neither compacted and the conversation was stuck.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { type Matrix, MODEL, SETUP_MS, startMatrix, type Upstream, UPSTREAMS } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())
afterEach(() => {
	for (const u of UPSTREAMS) m.mocks[u].reset()
})

/** Each vendor's refusal of an overlong prompt, as its API words it, and the numbers in it. */
const REFUSAL: Record<Upstream, { body: unknown; tokens: number; max: number }> = {
	openai: {
		body: {
			error: {
				message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.",
				type: 'invalid_request_error',
				param: 'messages',
				code: 'context_length_exceeded',
			},
		},
		tokens: 130532,
		max: 128000,
	},
	gemini: {
		body: { error: { code: 400, message: 'The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).', status: 'INVALID_ARGUMENT' } },
		tokens: 1196265,
		max: 1048575,
	},
	anthropic: {
		body: { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 208656 tokens > 200000 maximum' }, request_id: 'req_011CUp' },
		tokens: 208656,
		max: 200000,
	},
}

describe('a prompt longer than the context window', () => {
	for (const up of UPSTREAMS)
		for (const stream of [false, true]) {
			it(`should tell an Anthropic client "prompt is too long" in Anthropic's words (${up} upstream, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				m.mocks[up].fault = { kind: 'status', status: 400, body: REFUSAL[up].body }
				const params = { model: MODEL[up], max_tokens: 50, messages: [{ role: 'user' as const, content: 'a very long history' }] }
				const call = stream ? acct.anthropic.messages.stream(params).finalMessage() : acct.anthropic.messages.create(params)
				const err = (await call.catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>
				expect(err).toBeInstanceOf(Anthropic.BadRequestError)
				const { tokens, max } = REFUSAL[up]
				expect((err.error as { error: unknown }).error).toEqual({ type: 'invalid_request_error', message: `prompt is too long: ${tokens} tokens > ${max} maximum` })
			})

			it(`should give an OpenAI client the context_length_exceeded code (${up} upstream, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				m.mocks[up].fault = { kind: 'status', status: 400, body: REFUSAL[up].body }
				const err = (await acct.openai.chat.completions
					.create({ model: MODEL[up], stream, messages: [{ role: 'user', content: 'a very long history' }] })
					.catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>
				expect(err).toBeInstanceOf(OpenAI.BadRequestError)
				expect(err.code).toBe('context_length_exceeded')
				expect((err.error as { type: string }).type).toBe('invalid_request_error')
				// The vendor's own explanation stays.
				expect(err.message).toContain(String(REFUSAL[up].tokens))
			})
		}
})
