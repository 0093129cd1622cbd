/**
 * A Gemini client (`@google/genai`) that switches one conversation between Gemini 3 and Claude, with thinking on.
 * A Gemini client is shown Gemini's signatures raw (Gemini 3 answers reach it on the fast path, as Google sent them)
 * and Claude's with an origin tag (protocols/gemini/signatures.ts), so when it sends its history back the gateway knows
 * whose each is: Claude must get only its own, verbatim (the Anthropic mock, like the API, refuses a thinking block
 * whose signature it did not issue: "Invalid `signature` in `thinking` block"), and Gemini only its own, on their
 * parts (the Gemini mock refuses its text signature elsewhere or wrapped in other bytes, and a function call of the
 * current turn without a signature).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type Content, GoogleGenAI, type Part } from '@google/genai'
import { CARRIED_THINKING_TAG, untagSignature } from '../../../src/core/signatures'
import { SKIP_SIGNATURE } from '../../../src/protocols/gemini/signatures'
import { textSignatureFor, thinkingSignature } from '../../mocks'
import { type Account, lastRequest, type Matrix, MODEL, SETUP_MS, GEMINI_3, startMatrixWithGemini3 } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrixWithGemini3()
}, SETUP_MS)
afterAll(() => m.close())

const CONFIG = { thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } }
const TOOLS = [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } } }] }]
const answer = (text: string) => `Hello! You said: ${text}`
const thought = (text: string) => `Let me think about ${text}.`
const user = (text: string): Content => ({ role: 'user', parts: [{ text }] })

/**
 * A streamed turn as a chat client keeps it: the chunks' parts in order, the pieces of one text (or one thought)
 * joined, a signature staying with the text it came after.
 */
function joined(parts: Part[]): Part[] {
	const out: Part[] = []
	const plain = (p: Part) => Object.keys(p).every((k) => k === 'text' || k === 'thought' || k === 'thoughtSignature')
	for (const p of parts) {
		const last = out[out.length - 1]
		if (last && plain(last) && plain(p) && !last.thoughtSignature && !!last.thought === !!p.thought) {
			last.text = (last.text ?? '') + (p.text ?? '')
			if (p.thoughtSignature) last.thoughtSignature = p.thoughtSignature
		} else out.push({ ...p })
	}
	return out
}

type Turn = { text: string; content: Content }

/** One generateContent call (or a stream), and the model turn the client keeps for its history. */
async function turn(acct: Account, model: string, contents: Content[], stream: boolean, tools = false): Promise<Turn> {
	const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
	const params = { model, contents, config: { ...CONFIG, ...(tools && { tools: TOOLS }) } }
	let parts: Part[] = []
	if (!stream) parts = (await ai.models.generateContent(params)).candidates?.[0]?.content?.parts ?? []
	else for await (const c of await ai.models.generateContentStream(params)) parts.push(...(c.candidates?.[0]?.content?.parts ?? []))
	parts = joined(parts)
	return { text: parts.map((p) => (p.thought ? '' : (p.text ?? ''))).join(''), content: { role: 'model', parts } }
}

/** The thinking blocks the Anthropic mock got, all turns. */
const anthropicThinking = () =>
	(lastRequest(m.mocks.anthropic).body.messages as Array<{ content: Array<{ type: string; signature?: string }> | string }>).flatMap((x) =>
		Array.isArray(x.content) ? x.content.filter((b) => b.type === 'thinking').map((b) => b.signature) : [],
	)

/** The contents the Gemini mock got. */
const geminiContents = () => lastRequest(m.mocks.gemini).body.contents as Content[]

const signatures = (c: Content) => (c.parts ?? []).flatMap((p) => (p.thoughtSignature ? [p.thoughtSignature] : []))

for (const stream of [false, true]) {
	const how = stream ? ' (streamed)' : ''

	describe(`a @google/genai conversation across Gemini 3 and Claude${how}`, () => {
		it("should give Claude none of Gemini's signatures, and Gemini its own back as it issued them: Gemini 3 → Claude → Gemini 3", async () => {
			const acct = await m.account()
			const history = [user('Plan the trip')]
			const one = await turn(acct, GEMINI_3, history, stream)
			expect(one.text).toBe(answer('Plan the trip'))
			// As Google sends it: Gemini's raw signature on the answer's text.
			expect(signatures(one.content)).toEqual([textSignatureFor(answer('Plan the trip'))])

			history.push(one.content, user('And the budget?'))
			const two = await turn(acct, MODEL.anthropic, history, stream)
			expect(two.text).toBe(answer('And the budget?'))
			expect(anthropicThinking()).toEqual([])
			expect(lastRequest(m.mocks.anthropic).body.messages[1].content).toEqual([{ type: 'text', text: answer('Plan the trip') }])
			// Claude's signature, shown with its origin tag on the thought part.
			const [shown] = signatures(two.content)
			expect(untagSignature(shown!)).toEqual({ origin: 'anthropic', signature: thinkingSignature(thought('And the budget?')) })

			history.push(two.content, user('Thanks'))
			const three = await turn(acct, GEMINI_3, history, stream)
			expect(three.text).toBe(answer('Thanks'))
			const sent = geminiContents()
			// Gemini's own turn goes back as the client kept it; Claude's loses its thinking, which only Claude can read.
			expect(sent[1]).toEqual(one.content)
			expect(sent[3]).toEqual({ role: 'model', parts: [{ text: answer('And the budget?') }] })
			expect(sent.flatMap(signatures)).toEqual([textSignatureFor(answer('Plan the trip'))])
		})

		it("should give Gemini none of Claude's signatures, and Claude its own back verbatim: Claude → Gemini 3 → Claude", async () => {
			const acct = await m.account()
			const history = [user('Plan the trip')]
			const one = await turn(acct, MODEL.anthropic, history, stream)
			expect(one.text).toBe(answer('Plan the trip'))
			const claudeSignature = thinkingSignature(thought('Plan the trip'))
			expect(signatures(one.content).map((s) => untagSignature(s))).toEqual([{ origin: 'anthropic', signature: claudeSignature }])

			history.push(one.content, user('And the budget?'))
			const two = await turn(acct, GEMINI_3, history, stream)
			expect(two.text).toBe(answer('And the budget?'))
			expect(geminiContents()[1]).toEqual({ role: 'model', parts: [{ text: answer('Plan the trip') }] })
			expect(geminiContents().flatMap(signatures)).toEqual([])

			history.push(two.content, user('Thanks'))
			const three = await turn(acct, MODEL.anthropic, history, stream)
			expect(three.text).toBe(answer('Thanks'))
			// Claude's own signature byte for byte; Gemini's turn without its (Gemini-signed) thinking.
			expect(anthropicThinking()).toEqual([claudeSignature])
			expect(lastRequest(m.mocks.anthropic).body.messages[3].content).toEqual([{ type: 'text', text: answer('And the budget?') }])
		})

		it("should let Gemini 3 take Claude's function calls in the current turn (placeholder signature), and Claude its tool turn back", async () => {
			const acct = await m.account()
			const history = [user('Weather in two cities #tools')]
			const one = await turn(acct, MODEL.anthropic, history, stream, true)
			const calls = (one.content.parts ?? []).filter((p) => p.functionCall)
			// Claude's thinking rides on the first call too (shown, it is also carried: Gemini CLI keeps no thought part).
			expect(calls.map((p) => [p.functionCall!.args, p.thoughtSignature?.startsWith(CARRIED_THINKING_TAG)])).toEqual([
				[{ city: 'Paris' }, true],
				[{ city: 'Tokyo' }, undefined],
			])

			const results: Content = { role: 'user', parts: calls.map((p) => ({ functionResponse: { id: p.functionCall!.id, name: 'get_weather', response: { result: 'sunny' } } })) }
			history.push(one.content, results)
			const two = await turn(acct, GEMINI_3, history, stream, true)
			expect(two.text).toBe('Tool results: sunny; sunny')
			expect(geminiContents()[1]!.parts!.map((p) => [Object.keys(p).sort(), p.thoughtSignature])).toEqual([
				[['functionCall', 'thoughtSignature'], SKIP_SIGNATURE],
				[['functionCall'], undefined],
			])

			history.push(two.content, user('Thanks'))
			const three = await turn(acct, MODEL.anthropic, history, stream, true)
			expect(three.text).toBe(answer('Thanks'))
			expect(anthropicThinking()).toEqual([thinkingSignature(thought('Weather in two cities #tools'))])
			expect(lastRequest(m.mocks.anthropic).body.messages[1].content.map((b: { type: string }) => b.type)).toEqual(['thinking', 'tool_use', 'tool_use'])
		})
	})
}
