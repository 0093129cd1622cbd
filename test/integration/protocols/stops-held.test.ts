/**
 * Stop sequences a vendor cannot take: OpenAI chat takes 4 (none on its reasoning models), Gemini 5, as the mocks
 * enforce with the vendors' 400s. The gateway sends the vendor the first ones and cuts the text at the rest itself:
 * the caller gets the text before the match, its protocol's stop reason (Anthropic callers the sequence matched), the
 * upstream stream is aborted there, and the charge is the vendor's usage, or, for a stream cut before its usage came,
 * the abort path's counts (input as reported or counted, output the larger of the reported and the counted output).
 * A Gemini caller may send at most 5, as Gemini takes: more is refused with Gemini's 400 before any call.
 */
import { ApiError, GoogleGenAI } from '@google/genai'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { countText } from '../../../src/relay/estimate'
import { countWords } from '../../mocks'
import { type Answer, chat, messages } from './clients'
import { type Account, CAPPED, expectCharges, label, lastRequest, type Matrix, MODEL, PAIRS, SETUP_MS, startMatrix, type Upstream, UPSTREAMS, usageRows } from './harness'

let m: Matrix
beforeAll(async () => {
	// Chunks apart, so a cut stream leaves the rest of the answer (and its usage) unsent: 40 ms, as the two or three
	// chunks after the match are all the time the abort has to reach the mock (15 ms was too little on a loaded machine).
	m = await startMatrix({ mock: { chunkDelayMs: 40 } })
}, SETUP_MS)
afterAll(() => m.close())

type Caller = 'chat' | 'messages' | 'gemini'
const CALLERS: Caller[] = ['chat', 'messages', 'gemini']

/** Six sequences: the one that matches is the last, beyond both OpenAI's four and Gemini's five. */
const STOPS = ['<a>', '<b>', '<c>', '<d>', '<e>', 'STOP']
/** A Gemini caller's five (the most Gemini takes, and so they): the one that matches is beyond OpenAI's four. */
const FIVE = ['<a>', '<b>', '<c>', '<d>', 'STOP']
/** The caller's sequences, and what each vendor takes of them. */
const stopsOf = (caller: Caller) => (caller === 'gemini' ? FIVE : STOPS)
const sent = (caller: Caller, up: Upstream) => (up === 'openai' ? stopsOf(caller).slice(0, 4) : up === 'gemini' ? stopsOf(caller).slice(0, 5) : stopsOf(caller))

async function gemini(acct: Account, model: string, user: string, stop: string[], stream: boolean): Promise<Answer> {
	const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
	const params = { model, contents: user, config: { stopSequences: stop } }
	const chunks = stream ? [] : [await ai.models.generateContent(params)]
	if (stream) for await (const c of await ai.models.generateContentStream(params)) chunks.push(c)
	const last = chunks.at(-1)!
	const u = last.usageMetadata!
	return {
		text: chunks.map((c) => c.text ?? '').join(''),
		reasoning: '',
		signatures: [],
		calls: [],
		stop: last.candidates?.[0]?.finishReason ?? null,
		usage: { input: u.promptTokenCount ?? 0, output: u.candidatesTokenCount ?? 0, cached: 0 },
		replay: undefined,
	}
}

function ask(caller: Caller, acct: Account, model: string, stream: boolean, user: string, stop: string[]): Promise<Answer> {
	if (caller === 'chat') return chat(acct.openai, { model, messages: [{ role: 'user', content: user }], stop }, stream)
	if (caller === 'messages') return messages(acct.anthropic, { model, max_tokens: 256, messages: [{ role: 'user', content: user }], stop_sequences: stop }, stream)
	return gemini(acct, model, user, stop, stream)
}

/** The stop list as the vendor received it. */
function sentStops(up: Upstream): unknown {
	const b = lastRequest(m.mocks[up]).body
	return up === 'openai' ? b.stop : up === 'anthropic' ? b.stop_sequences : b.generationConfig?.stopSequences
}

/** Polls until the mock saw `n` aborted calls (the gateway's abort reaches it asynchronously). */
async function abortsReach(up: Upstream, n: number): Promise<number> {
	for (let i = 0; i < 100 && m.mocks[up].aborts.length < n; i++) await Bun.sleep(10)
	return m.mocks[up].aborts.length
}

const stopReason = (caller: Caller) => (caller === 'chat' ? 'stop' : caller === 'messages' ? 'stop_sequence' : 'STOP')

for (const caller of CALLERS) {
	describe(`${caller} stop sequences beyond the vendor's limit`, () => {
		for (const [up, stream] of PAIRS) {
			it(`should cut at the sequence the vendor was not sent (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const user = 'count for me #stop'
				const aborts = m.mocks[up].aborts.length
				const a = await ask(caller, acct, MODEL[up], stream, user, stopsOf(caller))
				const text = `Hello! You said: ${user} one two `
				expect(a.text).toBe(text)
				expect(a.stop).toBe(stopReason(caller))
				if (caller === 'messages') expect(a.stopSequence).toBe('STOP')
				expect(sentStops(up)).toEqual(sent(caller, up))
				const input = countWords(user)
				if (sent(caller, up).length === stopsOf(caller).length) {
					// The vendor took them all and stopped itself.
					await expectCharges(m, acct, [{ model: MODEL[up], input, output: countWords(text), stream }])
					return
				}
				if (!stream) {
					// The whole answer came: the vendor's usage, the words past the cut included.
					expect(a.usage).toMatchObject({ input, output: countWords(`${text}STOP three`) })
					await expectCharges(m, acct, [{ model: MODEL[up], input, output: countWords(`${text}STOP three`), stream }])
					return
				}
				// Streamed: the call was aborted at the match, before the vendor's final usage.
				expect(await abortsReach(up, aborts + 1)).toBe(aborts + 1)
				const produced = `${text}STOP`
				// Gemini reports its running count on every chunk; OpenAI nothing before the end (its input is counted).
				const output = Math.max(countText(produced), up === 'gemini' ? countWords(produced) : 0)
				const [row] = await usageRows(m, acct.accountId)
				const billedInput = up === 'openai' ? row!.input_tokens : input
				expect(billedInput).toBeGreaterThan(0)
				await expectCharges(m, acct, [{ model: MODEL[up], input: billedInput, output, stream, estimated: true }])
				// Shown as billed.
				expect(a.usage).toMatchObject({ input: billedInput, output })
			})
		}
	})
}

describe('more than five stopSequences from a Gemini caller', () => {
	it('should be refused as Gemini refuses them, naming the field, before any call', async () => {
		const acct = await m.account()
		const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
		const before = UPSTREAMS.map((up) => m.mocks[up].requests.length)
		for (const up of UPSTREAMS) {
			const err = await ai.models.generateContent({ model: MODEL[up], contents: 'six stops', config: { stopSequences: STOPS } }).catch((e: unknown) => e)
			expect(err).toBeInstanceOf(ApiError)
			expect((err as ApiError).status).toBe(400)
			const { error } = JSON.parse((err as ApiError).message) as { error: { status: string; message: string } }
			expect(error.status).toBe('INVALID_ARGUMENT')
			expect(error.message).toContain('generationConfig.stopSequences')
		}
		expect(UPSTREAMS.map((up) => m.mocks[up].requests.length)).toEqual(before)
		expect(await usageRows(m, acct.accountId)).toHaveLength(0)
	})
})

describe("stop sequences on an OpenAI reasoning model, which refuses `stop`", () => {
	for (const [caller, stream] of [['chat', false], ['messages', true]] as const) {
		it(`should send none and cut itself (${caller}, ${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const user = 'count for me #stop'
			const a = await ask(caller, acct, CAPPED.openai, stream, user, ['STOP'])
			expect(a.text).toBe(`Hello! You said: ${user} one two `)
			expect(a.stop).toBe(stopReason(caller))
			expect('stop' in lastRequest(m.mocks.openai).body).toBe(false)
			const [row] = await usageRows(m, acct.accountId)
			expect(row!.status).toBe(200)
		})
	}
})

// Anthropic refuses a stop sequence of whitespace alone ("\n", "\n\n": common in OpenAI and Gemini clients), which the
// Claude request leaves out: the gateway cuts there itself.
describe('whitespace-only stop sequences on a Claude model, which refuses them', () => {
	for (const caller of ['chat', 'gemini'] as const)
		for (const stream of [false, true])
			it(`should send none and cut itself (${caller}, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				const user = 'first para\n\nsecond para'
				const a = await ask(caller, acct, MODEL.anthropic, stream, user, ['\n\n'])
				expect(a.text).toBe('Hello! You said: first para')
				expect(a.stop).toBe(stopReason(caller))
				expect(sentStops('anthropic')).toBeUndefined()
				const [row] = await usageRows(m, acct.accountId)
				expect(row!.status).toBe(200)
			})
})
