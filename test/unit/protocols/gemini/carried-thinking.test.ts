/**
 * Thinking hidden from a Gemini client that did not ask for thoughts (`includeThoughts`), carried in a
 * `thoughtSignature` and put back where it stood when the client sends its history (protocols/gemini/carried-thinking.ts).
 */
import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../../src/core/errors'
import type { StreamEvent } from '../../../../src/core/events'
import type { ChatResponse, Part } from '../../../../src/core/ir'
import { CARRIED_THINKING_TAG, tagSignature } from '../../../../src/core/signatures'
import { anthropicMessages } from '../../../../src/protocols/anthropic-messages'
import { gemini } from '../../../../src/protocols/gemini'
import { carryThinking } from '../../../../src/protocols/gemini/carried-thinking'
import type { GeminiContent, GeminiPart, GeminiRequest } from '../../../../src/protocols/gemini/model'
import { ownSignaturesOnly, SKIP_SIGNATURE } from '../../../../src/protocols/gemini/signatures'
import { collect, fromArray } from './helpers'

const CLAUDE = 'EqQBCkgIARABGAIiQL5ZtMmXqy+/=='
const GEMINI = 'R0VNX1NJR18y'
const ctx = { model: 'm' } // no includeThoughts: as a Gemini client that set only a budget
const user = (text: string): GeminiContent => ({ role: 'user', parts: [{ text }] })
const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, reasoning: 0 }

const toClient = (content: Part[]): GeminiPart[] =>
	gemini.encodeResponse({ id: 'r', model: 'x', content, stopReason: 'end_turn', usage } as ChatResponse, ctx).candidates![0]!.content!.parts as GeminiPart[]

const request = (parts: unknown[]) => gemini.decodeRequest({ contents: [user('q'), { role: 'model', parts }, user('next')] } as GeminiRequest)
const fromClient = (parts: unknown[]) => request(parts).messages[1]!.content

const thinking = (text: string, signature?: string): Part => (signature ? { type: 'thinking', text, signature } : { type: 'thinking', text })
const call = (id: string): Part => ({ type: 'tool_call', id, name: 'f', input: { n: id } })
const text = (t: string): Part => ({ type: 'text', text: t })

describe('answers for a Gemini client that did not ask for thoughts', () => {
	it("should show no thought part and carry Claude's thinking on the first function call, back before the text it preceded", () => {
		const content = [thinking('Plan.', CLAUDE), text('Checking.'), call('a'), call('b')]
		const parts = toClient(content)
		expect(parts.some((p) => p.thought)).toBe(false)
		expect(parts.map((p) => Object.keys(p).sort())).toEqual([['text'], ['functionCall', 'thoughtSignature'], ['functionCall']])
		expect(parts[1]!.thoughtSignature).toStartWith(CARRIED_THINKING_TAG)
		expect(fromClient(parts)).toEqual(content)
		// Claude gets its turn as it gave it: the thinking first, text and signature verbatim.
		const body = anthropicMessages.encodeRequest({ ...request(parts), maxTokens: 4096, reasoning: { enabled: true, budgetTokens: 1024 } }, 'claude') as { messages: Array<{ content: unknown[] }> }
		expect(body.messages[1]!.content[0]).toEqual({ type: 'thinking', thinking: 'Plan.', signature: CLAUDE })
	})

	it('should carry it on the first text part when nothing is called, and on an empty text part when nothing else is shown', () => {
		const answer = [thinking('Plan.', CLAUDE), text('Done.')]
		const parts = toClient(answer)
		expect(parts).toEqual([{ text: 'Done.', thoughtSignature: parts[0]!.thoughtSignature }])
		expect(fromClient(parts)).toEqual(answer)
		const only = [thinking('Plan.', CLAUDE)]
		expect(toClient(only)).toEqual([{ text: '', thoughtSignature: carryThinking([{ at: 0, part: only[0] as never }]) }])
		expect(fromClient(toClient(only))).toEqual(only)
	})

	it('should carry redacted thinking and unsigned reasoning (an OpenAI-compatible reasoner), each back where it stood', () => {
		const content: Part[] = [{ type: 'redacted_thinking', data: 'ZW5j' }, thinking('Reasoned.'), text('A'), thinking('Again.', CLAUDE), call('c')]
		const parts = toClient(content)
		expect(parts.filter((p) => p.thoughtSignature).length).toBe(1)
		expect(fromClient(parts)).toEqual(content)
	})

	it("should show Gemini's own text signature as Gemini does without thoughts, and carry a thought part's", () => {
		expect(toClient([thinking('P', tagSignature('gemini-text', GEMINI)), text('A')])).toEqual([{ text: 'A', thoughtSignature: GEMINI }])
		const onThought = [thinking('P', tagSignature('gemini-thought', GEMINI)), text('A')]
		expect(toClient(onThought)[0]!.thought).toBeUndefined()
		expect(fromClient(toClient(onThought))).toEqual(onThought)
	})

	it('should keep a Gemini function call signature and carry the thinking on a later call', () => {
		const content = [thinking('Plan.', CLAUDE), { ...call('a'), signature: GEMINI } as Part, call('b')]
		const parts = toClient(content)
		expect(parts[0]!.thoughtSignature).toBe(GEMINI)
		expect(parts[1]!.thoughtSignature).toStartWith(CARRIED_THINKING_TAG)
	})

	it('should read the signature back when an SDK re-encodes it URL-safe (pydantic bytes), or splits the turn into one content per part', () => {
		const content = [thinking('Which city? >>> ~~~', CLAUDE), call('a')]
		const parts = toClient(content)
		const urlSafe = parts[0]!.thoughtSignature!.replace(/\+/g, '-').replace(/\//g, '_')
		expect(urlSafe).not.toBe(parts[0]!.thoughtSignature)
		expect(fromClient([{ ...parts[0], thoughtSignature: urlSafe }])).toEqual(content)
		const split = gemini.decodeRequest({ contents: [user('q'), { role: 'model', parts: [{ text: 'Hm.' }] }, { role: 'model', parts: [parts[0]] }, user('next')] } as GeminiRequest)
		expect(split.messages[1]!.content).toEqual([thinking('Which city? >>> ~~~', CLAUDE), text('Hm.'), call('a')])
	})

	it('should refuse an altered carried signature with a 400 naming the part', () => {
		const sig = toClient([thinking('Plan.', CLAUDE), call('a')])[0]!.thoughtSignature!
		const body = (s: string) => Buffer.from(s).toString('base64')
		const altered = [
			sig.slice(0, -4),
			`${sig}!`,
			CARRIED_THINKING_TAG + body('not json'),
			CARRIED_THINKING_TAG + body('[]'),
			CARRIED_THINKING_TAG + body('{"at":0,"text":"x"}'),
			CARRIED_THINKING_TAG + body('[{"at":-1,"text":"x"}]'),
			CARRIED_THINKING_TAG + body('[{"at":0.5,"text":"x"}]'),
			CARRIED_THINKING_TAG + body('[{"at":0,"text":"x","signature":""}]'),
			CARRIED_THINKING_TAG + body('[{"at":0,"text":"x","data":"y"}]'),
			CARRIED_THINKING_TAG + body('[{"at":0,"text":1}]'),
		]
		for (const s of altered) {
			let err: unknown
			try {
				fromClient([{ text: 'A' }, { functionCall: { name: 'f', args: {} }, thoughtSignature: s }])
			} catch (e) {
				err = e
			}
			expect(err).toBeInstanceOf(GatewayError)
			expect((err as GatewayError).status).toBe(400)
			expect((err as GatewayError).message).toContain('contents[1].parts[1].thoughtSignature')
		}
	})

	// Bounded: what a signature decodes to is no larger than the request, and putting it back is one pass, so a request
	// that carries a great many pieces of thinking costs no more than its size.
	it('should put back a hundred thousand carried pieces in one pass', () => {
		const n = 100_000
		const carried = Array.from({ length: n }, (_, i) => ({ at: i % 3, part: { type: 'redacted_thinking', data: 'x' } as const }))
		const parts = [{ text: 'A' }, { functionCall: { name: 'f', args: {} }, thoughtSignature: carryThinking(carried) }, { functionCall: { name: 'g', args: {} } }]
		const content = fromClient(parts)
		expect(content.length).toBe(n + 3)
		expect(content.map((p) => p.type).filter((t) => t !== 'redacted_thinking')).toEqual(['text', 'tool_call', 'tool_call'])
		expect(content.findIndex((p) => p.type === 'text')).toBe(Math.ceil(n / 3))
	}, 5000)

	it('should leave it out when the history goes to Gemini as written (fast path): the call gets the placeholder, text its part alone', () => {
		const parts = toClient([thinking('Plan.', CLAUDE), call('a')])
		const text = toClient([thinking('Plan.', CLAUDE), { type: 'text', text: 'Done.' }])
		expect(ownSignaturesOnly([user('q'), { role: 'model', parts }, user('r'), { role: 'model', parts: text }])).toEqual([
			user('q'),
			{ role: 'model', parts: [{ ...parts[0], thoughtSignature: SKIP_SIGNATURE }] },
			user('r'),
			{ role: 'model', parts: [{ text: 'Done.' }] },
		])
	})
})

describe('streams for a Gemini client that did not ask for thoughts', () => {
	const frames = async (events: StreamEvent[]) =>
		(await collect(gemini.encodeStream(fromArray([{ type: 'start', id: 'r', model: 'x' }, ...events, { type: 'finish', reason: 'end_turn' }] as StreamEvent[]), ctx))).map(
			(f) => JSON.parse(f.data).candidates[0].content.parts as GeminiPart[],
		)
	const thinkingBlock = (index: number, t: string, signature?: string): StreamEvent[] => [
		{ type: 'block_start', index, block: { kind: 'thinking' } },
		{ type: 'thinking_delta', index, text: t },
		...(signature ? [{ type: 'signature_delta', index, signature } as StreamEvent] : []),
		{ type: 'block_stop', index },
	]
	const textBlock = (index: number): StreamEvent[] => [
		{ type: 'block_start', index, block: { kind: 'text' } },
		{ type: 'text_delta', index, text: 'A' },
		{ type: 'text_delta', index, text: 'B' },
		{ type: 'block_stop', index },
	]
	const callBlock = (index: number, id: string): StreamEvent[] => [
		{ type: 'block_start', index, block: { kind: 'tool_call', id, name: 'f' } },
		{ type: 'json_delta', index, json: JSON.stringify({ n: id }) },
		{ type: 'block_stop', index },
	]

	it('should carry the thinking on the first call, back before the text it preceded', async () => {
		const out = await frames([...thinkingBlock(0, 'Plan.', CLAUDE), ...textBlock(1), ...callBlock(2, 'a'), ...callBlock(3, 'b')])
		expect(out.flat().some((p) => p.thought)).toBe(false)
		expect(out.map((parts) => parts.map((p) => Object.keys(p).sort()))).toEqual([[['text']], [['text']], [['functionCall', 'thoughtSignature'], ['functionCall']], [['text']]])
		// As @google/genai's streamed chat sends it back: each chunk a model content of its own.
		const contents = out.map((parts) => ({ role: 'model', parts }))
		const req = gemini.decodeRequest({ contents: [user('q'), ...contents, user('next')] } as GeminiRequest)
		expect(req.messages[1]!.content).toEqual([thinking('Plan.', CLAUDE), text('AB'), call('a'), call('b')])
	})

	it('should carry it on the empty text part that ends a stream without calls, with redacted and unsigned thinking', async () => {
		const events: StreamEvent[] = [
			{ type: 'block_start', index: 0, block: { kind: 'redacted_thinking', data: 'ZW5j' } },
			{ type: 'block_stop', index: 0 },
			...thinkingBlock(1, 'Reasoned.'),
			...textBlock(2),
		]
		const out = await frames(events)
		expect(out.slice(0, 2)).toEqual([[{ text: 'A' }], [{ text: 'B' }]])
		expect(out[2]![0]!.text).toBe('')
		expect(out[2]![0]!.thoughtSignature).toStartWith(CARRIED_THINKING_TAG)
		expect(fromClient(out.flat())).toEqual([{ type: 'redacted_thinking', data: 'ZW5j' }, thinking('Reasoned.'), text('AB')])
	})

	it("should send Gemini's own text signature raw, without the thought text", async () => {
		const out = await frames([...thinkingBlock(0, 'P', tagSignature('gemini-text', GEMINI)), ...textBlock(1)])
		expect(out).toEqual([[{ text: 'A' }], [{ text: 'B' }], [{ text: '', thoughtSignature: GEMINI }], [{ text: '' }]])
	})
})
