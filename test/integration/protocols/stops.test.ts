/**
 * Issue 3 matrix, stops: a stop sequence and the length limit, in both protocols over every vendor, streamed and
 * not. Asserts the cut text, the stop reason mapping (WIRE-NOTES wire §5: stop_sequence/end_turn → stop,
 * max_tokens → length, MAX_TOKENS → length), that the stop list and the cap reached the vendor in its own field,
 * and the charge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { countWords } from '../../mocks'
import { chat, messages, type Protocol, PROTOCOLS } from './clients'
import { type Account, expectCharges, label, lastRequest, type Matrix, MODEL, PAIRS, SETUP_MS, startMatrix, type Upstream } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

function ask(proto: Protocol, acct: Account, up: Upstream, stream: boolean, user: string, opts: { stop?: string[]; max?: number }) {
	const model = MODEL[up]
	if (proto === 'chat') {
		return chat(acct.openai, { model, messages: [{ role: 'user', content: user }], ...(opts.stop && { stop: opts.stop }), ...(opts.max && { max_completion_tokens: opts.max }) }, stream)
	}
	return messages(acct.anthropic, { model, max_tokens: opts.max ?? 256, messages: [{ role: 'user', content: user }], ...(opts.stop && { stop_sequences: opts.stop }) }, stream)
}

/** The stop list and the output cap as the vendor received them. */
function upstreamLimits(up: Upstream, b: Record<string, any>): { stop: unknown; max: unknown } {
	if (up === 'openai') return { stop: b.stop, max: b.max_completion_tokens ?? b.max_tokens }
	if (up === 'anthropic') return { stop: b.stop_sequences, max: b.max_tokens }
	return { stop: b.generationConfig?.stopSequences, max: b.generationConfig?.maxOutputTokens }
}

for (const proto of PROTOCOLS) {
	describe(`${proto} stops`, () => {
		for (const [up, stream] of PAIRS) {
			it(`should cut at a stop sequence (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const user = 'count for me #stop'
				const a = await ask(proto, acct, up, stream, user, { stop: ['STOP', 'never'] })
				const text = `Hello! You said: ${user} one two `
				expect(a.text).toBe(text)
				if (proto === 'chat') expect(a.stop).toBe('stop')
				else if (up === 'anthropic') {
					expect(a.stop).toBe('stop_sequence')
					expect(a.stopSequence).toBe('STOP')
				} else {
					// OpenAI and Gemini say only "stop": which sequence matched, if any, is unknown.
					expect(a.stop).toBe('end_turn')
					expect(a.stopSequence ?? null).toBeNull()
				}
				expect(upstreamLimits(up, lastRequest(m.mocks[up]).body).stop).toEqual(['STOP', 'never'])
				expect(a.usage).toMatchObject({ input: countWords(user), output: countWords(text) })
				await expectCharges(m, acct, [{ model: MODEL[up], input: countWords(user), output: countWords(text), stream }])
			})

			it(`should stop at the output cap with a length stop (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const user = 'write a lot #length'
				const a = await ask(proto, acct, up, stream, user, { max: 5 })
				expect(a.text).toBe('Hello! You said: write a')
				expect(a.stop).toBe(proto === 'chat' ? 'length' : 'max_tokens')
				expect(upstreamLimits(up, lastRequest(m.mocks[up]).body).max).toBe(5)
				expect(a.usage).toMatchObject({ input: countWords(user), output: 5 })
				await expectCharges(m, acct, [{ model: MODEL[up], input: countWords(user), output: 5, stream }])
			})
		}
	})
}
