/**
 * Thought signatures as Gemini clients see them (protocols/gemini/signatures.ts): Gemini's raw on their kind of part,
 * Claude's with the `anthropic` origin tag; and read back from a Gemini client's history into the canonical model,
 * where Gemini's are tagged and Claude's verbatim (core/signatures.ts), so each vendor gets only its own.
 */
import { describe, expect, it } from 'bun:test'
import type { StreamEvent } from '../../../../src/core/events'
import type { ChatResponse, Part } from '../../../../src/core/ir'
import { tagSignature } from '../../../../src/core/signatures'
import { anthropicMessages } from '../../../../src/protocols/anthropic-messages'
import { gemini } from '../../../../src/protocols/gemini'
import type { GeminiContent, GeminiRequest } from '../../../../src/protocols/gemini/model'
import { REDACTED_PREFIX } from '../../../../src/protocols/gemini/read'
import { SKIP_SIGNATURE } from '../../../../src/protocols/gemini/signatures'
import { collect, fromArray } from './helpers'

const CLAUDE = 'EqQBCkgIARABGAIiQL5ZtMmXqy+/=='
const GEMINI = 'R0VNX1NJR18y'
// A client that asked for thoughts (`includeThoughts`); carried-thinking.test.ts has the one that did not.
const ctx = { model: 'm', includeThoughts: true }
const user = (text: string): GeminiContent => ({ role: 'user', parts: [{ text }] })

/** A Gemini client's model turn → the canonical assistant content. */
const fromClient = (parts: unknown[]) =>
	gemini.decodeRequest({ contents: [user('q'), { role: 'model', parts }, user('next')] } as GeminiRequest).messages[1]!.content

/** Canonical answer content → the parts a Gemini client gets. */
const toClient = (content: Part[]) =>
	gemini.encodeResponse({ id: 'r', model: 'x', content, stopReason: 'end_turn', usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, reasoning: 0 } } as ChatResponse, ctx).candidates![0]!.content!.parts

/** The assistant turn Anthropic gets for a Gemini client's history, thinking on. */
const toAnthropic = (parts: unknown[]) => {
	const req = gemini.decodeRequest({ contents: [user('q'), { role: 'model', parts }, user('next')] } as GeminiRequest)
	const body = anthropicMessages.encodeRequest({ ...req, maxTokens: 4096, reasoning: { enabled: true, budgetTokens: 1024 } }, 'claude') as { messages: Array<{ content: unknown[] }> }
	return body.messages[1]!.content
}

/** The model turn a Gemini upstream gets for a Gemini client's history (converted path). */
const toGemini = (parts: unknown[]) => {
	const req = gemini.decodeRequest({ contents: [user('q'), { role: 'model', parts }, user('next')] } as GeminiRequest)
	return gemini.encodeRequest(req, 'gemini-3-pro-preview').contents[1]!.parts
}

describe("a Gemini client's history into the canonical model", () => {
	it("should take an untagged signature for Gemini's own and tag it by its kind of part", () => {
		expect(fromClient([{ text: 'P', thought: true }, { text: 'A', thoughtSignature: GEMINI }])).toEqual([
			{ type: 'thinking', text: 'P', signature: tagSignature('gemini-text', GEMINI) },
			{ type: 'text', text: 'A' },
		])
		expect(fromClient([{ text: 'P', thought: true, thoughtSignature: GEMINI }, { text: 'A' }])).toEqual([
			{ type: 'thinking', text: 'P', signature: tagSignature('gemini-thought', GEMINI) },
			{ type: 'text', text: 'A' },
		])
	})

	it("should take the anthropic tag off Claude's signature, and keep a function call's own signature raw", () => {
		expect(fromClient([{ text: 'Mine.', thought: true, thoughtSignature: tagSignature('anthropic', CLAUDE) }, { text: 'A' }])).toEqual([
			{ type: 'thinking', text: 'Mine.', signature: CLAUDE },
			{ type: 'text', text: 'A' },
		])
		const calls = fromClient([{ functionCall: { name: 'f', args: {} }, thoughtSignature: GEMINI }, { functionCall: { name: 'g', args: {} }, thoughtSignature: SKIP_SIGNATURE }])
		expect(calls.map((p) => (p.type === 'tool_call' ? p.signature : p.type))).toEqual([GEMINI, undefined])
	})

	it("should send Claude only its own thinking, verbatim, and Gemini only its own signatures, raw on their parts", () => {
		const history = [
			{ text: 'Mine.', thought: true, thoughtSignature: tagSignature('anthropic', CLAUDE) },
			{ text: 'Gemini thought.', thought: true },
			{ text: 'A', thoughtSignature: GEMINI },
		]
		expect(toAnthropic(history)).toEqual([{ type: 'thinking', thinking: 'Mine.', signature: CLAUDE }, { type: 'text', text: 'A' }])
		expect(toGemini(history)).toEqual([{ text: 'A', thoughtSignature: GEMINI }])
		// Redacted thinking (Claude's) reaches Claude again, never Gemini.
		const redacted = [{ text: '', thought: true, thoughtSignature: `${REDACTED_PREFIX}ZW5j` }, { text: 'A' }]
		expect(toAnthropic(redacted)).toEqual([{ type: 'redacted_thinking', data: 'ZW5j' }, { type: 'text', text: 'A' }])
		expect(toGemini(redacted)).toEqual([{ text: 'A' }])
		// Sent back by a client that re-encoded the signature's bytes URL-safe (google-genai for Python).
		const data = 'EmwKAhgB+/8/ZW5j'
		const urlSafe = Buffer.from(`${REDACTED_PREFIX}${data}`, 'base64').toString('base64url')
		expect(toAnthropic([{ text: '', thought: true, thoughtSignature: urlSafe }, { text: 'A' }])).toEqual([{ type: 'redacted_thinking', data }, { type: 'text', text: 'A' }])
	})
})

describe('answers encoded for Gemini clients', () => {
	it("should show Claude's signature tagged on its thought part, and read it back verbatim", () => {
		const parts = toClient([{ type: 'thinking', text: 'Mine.', signature: CLAUDE }, { type: 'text', text: 'A' }])
		expect(parts).toEqual([{ text: 'Mine.', thought: true, thoughtSignature: tagSignature('anthropic', CLAUDE) }, { text: 'A' }])
		expect(fromClient(parts!)).toEqual([{ type: 'thinking', text: 'Mine.', signature: CLAUDE }, { type: 'text', text: 'A' }])
	})

	it("should read Claude's signature back verbatim after a client re-encoded the bytes, URL-safe or standard (google-genai for Python)", () => {
		// google-genai (Python) keeps thoughtSignature as bytes and sends it back as pydantic encodes bytes: URL-safe base64.
		const signature = 'EqQBCkgIARAB+/8/Zm9vYmFyEg==' // canonical base64, as Claude's are
		const shown = toClient([{ type: 'thinking', text: 'Mine.', signature }, { type: 'text', text: 'A' }])![0]!.thoughtSignature!
		const bytes = Buffer.from(shown, 'base64')
		for (const sent of [bytes.toString('base64url').padEnd(shown.length, '='), bytes.toString('base64'), shown]) {
			expect(fromClient([{ text: 'Mine.', thought: true, thoughtSignature: sent }, { text: 'A' }])).toEqual([{ type: 'thinking', text: 'Mine.', signature }, { type: 'text', text: 'A' }])
			expect(toAnthropic([{ text: 'Mine.', thought: true, thoughtSignature: sent }, { text: 'A' }])).toEqual([{ type: 'thinking', thinking: 'Mine.', signature }, { type: 'text', text: 'A' }])
		}
	})

	it("should read Claude's signature from Bedrock back verbatim after a client re-encoded it URL-safe", () => {
		const signature = tagSignature('converse', 'EqQBCkgIARAB+/8/Zm9vYmFyEg==') // Claude's on Bedrock Converse: standard base64
		const shown = toClient([{ type: 'thinking', text: 'Mine.', signature }, { type: 'text', text: 'A' }])![0]!.thoughtSignature!
		const sent = Buffer.from(shown, 'base64').toString('base64url').padEnd(shown.length, '=')
		expect(sent).not.toBe(shown)
		expect(fromClient([{ text: 'Mine.', thought: true, thoughtSignature: sent }, { text: 'A' }])).toEqual([{ type: 'thinking', text: 'Mine.', signature }, { type: 'text', text: 'A' }])
	})

	it("should show Gemini's signatures raw, back on the kind of part they came on", () => {
		const text = tagSignature('gemini-text', GEMINI)
		expect(toClient([{ type: 'thinking', text: 'P', signature: text }, { type: 'text', text: 'A' }])).toEqual([{ text: 'P', thought: true }, { text: 'A', thoughtSignature: GEMINI }])
		expect(toClient([{ type: 'text', text: 'A' }, { type: 'thinking', text: '', signature: text }])).toEqual([{ text: 'A', thoughtSignature: GEMINI }])
		expect(toClient([{ type: 'thinking', text: '', signature: text }])).toEqual([{ text: '', thoughtSignature: GEMINI }])
		const thought = tagSignature('gemini-thought', GEMINI)
		expect(toClient([{ type: 'thinking', text: 'P', signature: thought }, { type: 'text', text: 'A' }])).toEqual([{ text: 'P', thought: true, thoughtSignature: GEMINI }, { text: 'A' }])
		// And the client's history is read back to the same canonical content.
		for (const content of [
			[{ type: 'thinking', text: 'P', signature: text }, { type: 'text', text: 'A' }],
			[{ type: 'thinking', text: 'P', signature: thought }, { type: 'text', text: 'A' }],
		] as Part[][])
			expect(fromClient(toClient(content)!)).toEqual(content)
	})

	it("should give the first function call of another vendor's answer the documented placeholder, and keep Gemini's", () => {
		expect(toClient([{ type: 'tool_call', id: 'toolu_1', name: 'f', input: {} }, { type: 'tool_call', id: 'toolu_2', name: 'f', input: {} }])).toEqual([
			{ functionCall: { id: 'toolu_1', name: 'f', args: {} }, thoughtSignature: SKIP_SIGNATURE },
			{ functionCall: { id: 'toolu_2', name: 'f', args: {} } },
		])
		expect(toClient([{ type: 'tool_call', id: 'c', name: 'f', input: {}, signature: GEMINI }])).toEqual([{ functionCall: { id: 'c', name: 'f', args: {} }, thoughtSignature: GEMINI }])
	})
})

describe('streams encoded for Gemini clients', () => {
	const frames = async (events: StreamEvent[]) =>
		(await collect(gemini.encodeStream(fromArray([{ type: 'start', id: 'r', model: 'x' }, ...events, { type: 'finish', reason: 'end_turn' }] as StreamEvent[]), ctx))).map(
			(f) => JSON.parse(f.data).candidates[0].content.parts,
		)
	const thinking = (signature: string, text = 'P'): StreamEvent[] => [
		{ type: 'block_start', index: 0, block: { kind: 'thinking' } },
		...(text ? [{ type: 'thinking_delta', index: 0, text } as StreamEvent] : []),
		{ type: 'signature_delta', index: 0, signature },
		{ type: 'block_stop', index: 0 },
	]
	const textBlock = (index: number): StreamEvent[] => [
		{ type: 'block_start', index, block: { kind: 'text' } },
		{ type: 'text_delta', index, text: 'A' },
		{ type: 'text_delta', index, text: 'B' },
		{ type: 'block_stop', index },
	]

	it("should tag Claude's signature on its thought part", async () => {
		expect(await frames(thinking(CLAUDE))).toEqual([[{ text: 'P', thought: true, thoughtSignature: tagSignature('anthropic', CLAUDE) }], [{ text: '' }]])
	})

	it("should send a Gemini text part's signature raw after the text it signs, as Gemini streams it", async () => {
		const sig = tagSignature('gemini-text', GEMINI)
		expect(await frames([...thinking(sig), ...textBlock(1)])).toEqual([[{ text: 'P', thought: true }], [{ text: 'A' }], [{ text: 'B' }], [{ text: '', thoughtSignature: GEMINI }], [{ text: '' }]])
		const after = thinking(sig, '').map((e) => ('index' in e ? { ...e, index: 1 } : e)) as StreamEvent[]
		expect(await frames([...textBlock(0), ...after])).toEqual([[{ text: 'A' }], [{ text: 'B' }], [{ text: '', thoughtSignature: GEMINI }], [{ text: '' }]])
	})

	it("should send a Gemini thought part's signature raw on a thought part", async () => {
		expect(await frames(thinking(tagSignature('gemini-thought', GEMINI)))).toEqual([[{ text: 'P', thought: true, thoughtSignature: GEMINI }], [{ text: '' }]])
	})
})
