/**
 * Stop sequences a vendor cannot take, on requests for several answers (OpenAI `n`, Gemini `candidateCount`): the
 * vendor is sent what it takes (the mocks refuse more with the vendors' 400s) and the gateway cuts each answer at the
 * rest itself, streamed (the answers interleaved by index) and not, each answer ending as a stop sequence ends it.
 * A whole answer is billed on the vendor's usage; a stream cut before the vendor's end by the abort rule (the output
 * the larger of the reported and the counted), and the client is shown what it is billed.
 */
import { GoogleGenAI } from '@google/genai'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type OpenAI from 'openai'
import { countText } from '../../../src/relay/estimate'
import { countWords } from '../../mocks'
import { type Account, CAPPED, expectCharges, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, type Upstream, usageRows } from './harness'

let m: Matrix
beforeAll(async () => {
	// Chunks apart, so a cut stream leaves the rest of the answers (and their usage) unsent.
	m = await startMatrix({ mock: { chunkDelayMs: 15 } })
}, SETUP_MS)
afterAll(() => m.close())

/**
 * Six sequences for OpenAI callers, the one that matches the last, beyond every vendor's limit; five for Gemini's (the
 * most Gemini takes, and so they), the match beyond OpenAI's four.
 */
const SIX = ['<a>', '<b>', '<c>', '<d>', '<e>', 'STOP']
const FIVE = ['<a>', '<b>', '<c>', '<d>', 'STOP']
const USER = 'count for me #stop'
/** Each answer as the caller gets it, and as the vendor produced it up to the cut (a stream read no further). */
const CUT = `Hello! You said: ${USER} one two `
const PRODUCED = `${CUT}STOP`
const WHOLE = `${CUT}STOP three`
const say = (text: string) => [{ role: 'user' as const, content: text }]

/**
 * The vendor's stream stalls after the chunk of the last answer's match (Gemini sends the candidates together, a word a
 * chunk; OpenAI one choice after the other, each its role chunk, a word a chunk and its finish): only an abort ends it.
 */
const stallAfterStop = (up: Upstream) => {
	m.mocks[up].faultOnce = { kind: 'stall', afterChunks: up === 'gemini' ? 10 : 25 }
}

/** Polls until the mock saw `n` aborted calls (the gateway's abort reaches it asynchronously). */
async function abortsReach(up: Upstream, n: number): Promise<number> {
	for (let i = 0; i < 100 && m.mocks[up].aborts.length < n; i++) await Bun.sleep(10)
	return m.mocks[up].aborts.length
}

/** The text and finish reason of each choice of a chunk stream, by index. */
function byChoice(chunks: OpenAI.Chat.Completions.ChatCompletionChunk[], n: number) {
	const text = Array.from({ length: n }, () => '')
	const finish = Array.from({ length: n }, () => null as string | null)
	for (const c of chunks)
		for (const ch of c.choices) {
			text[ch.index] += ch.delta.content ?? ''
			if (ch.finish_reason) finish[ch.index] = ch.finish_reason
		}
	return { text, finish }
}

/** The cases: an OpenAI caller's `n` = 2 to a Gemini model (5 sequences sent) and to a reasoning model (none sent). */
const OPENAI_CASES = [
	{ name: 'a Gemini model', up: 'gemini' as const, model: MODEL.gemini, sent: (b: Record<string, any>) => [b.generationConfig?.candidateCount, b.generationConfig?.stopSequences], expected: [2, SIX.slice(0, 5)] },
	{ name: 'an OpenAI reasoning model (no stop taken)', up: 'openai' as const, model: CAPPED.openai, sent: (b: Record<string, any>) => [b.n, 'stop' in b], expected: [2, false] },
]

for (const c of OPENAI_CASES) {
	describe(`OpenAI n = 2 with six stop sequences to ${c.name}`, () => {
		it('should cut each whole choice, billed on the vendor usage', async () => {
			const acct = await m.account()
			const r = await acct.openai.chat.completions.create({ model: c.model, n: 2, messages: say(USER), stop: SIX })
			expect(c.sent(lastRequest(m.mocks[c.up]).body)).toEqual(c.expected)
			expect(r.choices.map((ch) => [ch.index, ch.message.content, ch.finish_reason])).toEqual([
				[0, CUT, 'stop'],
				[1, CUT, 'stop'],
			])
			// The vendor generated both answers whole: its usage, the words past the cut included.
			const input = countWords(USER)
			expect(r.usage).toMatchObject({ prompt_tokens: input, completion_tokens: 2 * countWords(WHOLE) })
			await expectCharges(m, acct, [{ model: c.model, input, output: 2 * countWords(WHOLE) }])
		})

		it('should cut each streamed choice, abort the call once both matched and bill by the abort rule', async () => {
			const acct = await m.account()
			const aborts = m.mocks[c.up].aborts.length
			stallAfterStop(c.up)
			const stream = await acct.openai.chat.completions.create({ model: c.model, n: 2, stream: true, stream_options: { include_usage: true }, messages: say(USER), stop: SIX })
			const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = []
			for await (const ch of stream) chunks.push(ch)
			expect(c.sent(lastRequest(m.mocks[c.up]).body)).toEqual(c.expected)
			expect(byChoice(chunks, 2)).toEqual({ text: [CUT, CUT], finish: ['stop', 'stop'] })
			expect(await abortsReach(c.up, aborts + 1)).toBe(aborts + 1)
			// Gemini reports its running count (both candidates) on every chunk; OpenAI nothing before its end.
			const output = 2 * Math.max(countText(PRODUCED), c.up === 'gemini' ? countWords(PRODUCED) : 0)
			const [row] = await usageRows(m, acct.accountId)
			const input = c.up === 'gemini' ? countWords(USER) : row!.input_tokens
			expect(input).toBeGreaterThan(0)
			await expectCharges(m, acct, [{ model: c.model, input, output, stream: true, estimated: true }])
			const usage = chunks.filter((ch) => ch.usage)
			expect(usage).toHaveLength(1)
			expect(usage[0]!.usage).toMatchObject({ prompt_tokens: input, completion_tokens: output })
		})
	})
}

/** The case: a Gemini caller's `candidateCount` = 2 to an OpenAI model (4 sequences sent; a Gemini model takes all 5). */
const GEMINI_CASES: { name: string; up: Upstream; model: string; sent: (b: Record<string, any>) => unknown[]; expected: unknown[] }[] = [
	{ name: 'an OpenAI model', up: 'openai', model: MODEL.openai, sent: (b: Record<string, any>) => [b.n, b.stop], expected: [2, FIVE.slice(0, 4)] },
]

const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })

for (const c of GEMINI_CASES) {
	describe(`Gemini candidateCount = 2 with five stop sequences to ${c.name}`, () => {
		const params = { model: c.model, contents: USER, config: { candidateCount: 2, stopSequences: FIVE } }

		it('should cut each whole candidate, billed on the vendor usage', async () => {
			const acct = await m.account()
			const r = await genai(acct).models.generateContent(params)
			expect(c.sent(lastRequest(m.mocks[c.up]).body)).toEqual(c.expected)
			expect(r.candidates?.map((ca) => [ca.index ?? 0, ca.content?.parts?.map((p) => p.text).join(''), ca.finishReason])).toEqual([
				[0, CUT, 'STOP'],
				[1, CUT, 'STOP'],
			])
			const input = countWords(USER)
			expect(r.usageMetadata).toMatchObject({ promptTokenCount: input, candidatesTokenCount: 2 * countWords(WHOLE) })
			await expectCharges(m, acct, [{ model: c.model, input, output: 2 * countWords(WHOLE) }])
		})

		it('should cut each streamed candidate, abort the call and bill by the abort rule', async () => {
			const acct = await m.account()
			const aborts = m.mocks[c.up].aborts.length
			stallAfterStop(c.up)
			const text = ['', '']
			const finish: Array<string | undefined> = [undefined, undefined]
			let last: { promptTokenCount?: number; candidatesTokenCount?: number } | undefined
			for await (const ch of await genai(acct).models.generateContentStream(params)) {
				for (const ca of ch.candidates ?? []) {
					text[ca.index ?? 0] += ca.content?.parts?.map((p) => p.text ?? '').join('') ?? ''
					if (ca.finishReason) finish[ca.index ?? 0] = ca.finishReason
				}
				if (ch.usageMetadata) last = ch.usageMetadata
			}
			expect(c.sent(lastRequest(m.mocks[c.up]).body)).toEqual(c.expected)
			expect({ text, finish }).toEqual({ text: [CUT, CUT], finish: ['STOP', 'STOP'] })
			expect(await abortsReach(c.up, aborts + 1)).toBe(aborts + 1)
			const output = 2 * Math.max(countText(PRODUCED), c.up === 'gemini' ? countWords(PRODUCED) : 0)
			const [row] = await usageRows(m, acct.accountId)
			const input = c.up === 'gemini' ? countWords(USER) : row!.input_tokens
			expect(input).toBeGreaterThan(0)
			await expectCharges(m, acct, [{ model: c.model, input, output, stream: true, estimated: true }])
			expect(last).toMatchObject({ promptTokenCount: input, candidatesTokenCount: output })
		})
	})
}
