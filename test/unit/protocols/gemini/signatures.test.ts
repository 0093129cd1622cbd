/**
 * Gemini thought signatures in every place Gemini puts them (a text part, an empty text part at the end of a stream,
 * a thought part, a function call part): read from an answer with their origin tag (core/signatures.ts), given back
 * to Gemini untagged on the same kind of part, and never sent to Anthropic as a thinking signature (QA report item 2:
 * Anthropic refused the whole request over a Gemini signature).
 */
import { describe, expect, it } from 'bun:test'
import type { StreamEvent } from '../../../../src/core/events'
import type { Message, Part } from '../../../../src/core/ir'
import { tagSignature } from '../../../../src/core/signatures'
import { packToolCallId } from '../../../../src/core/tool-ids'
import { anthropicMessages } from '../../../../src/protocols/anthropic-messages'
import { gemini } from '../../../../src/protocols/gemini'
import type { GeminiResponse } from '../../../../src/protocols/gemini/model'
import { collect, fromArray } from './helpers'

const SIG = 'R0VNX1NJR18y'
const u = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] })
const answer = (parts: unknown[]): GeminiResponse => ({ candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }] }) as GeminiResponse
const decode = (parts: unknown[]) => gemini.decodeResponse(answer(parts)).content as Part[]

/** The parts of the model turn Gemini gets when a client sends `content` back as the assistant's turn. */
const toGemini = (content: Part[]) =>
	gemini.encodeRequest({ model: 'm', stream: false, messages: [u('q'), { role: 'assistant', content }, u('next')] }, 'gemini-3-pro-preview').contents[1]!.parts

/** The assistant turn Anthropic gets for the same history, thinking on. */
const toAnthropic = (content: Part[]) => {
	const body = anthropicMessages.encodeRequest(
		{ model: 'm', stream: false, maxTokens: 4096, reasoning: { enabled: true, budgetTokens: 1024 }, messages: [u('q'), { role: 'assistant', content }, u('next')] },
		'claude',
	) as { messages: Array<{ content: Array<Record<string, unknown>> }>; thinking?: unknown }
	return { blocks: body.messages[1]!.content, thinking: body.thinking }
}

describe('Gemini thought signatures across vendors', () => {
	it('should tag a text part signature (Gemini 3, no function call) and give it back on that text part', () => {
		const content = decode([{ text: 'Pondering.', thought: true }, { text: 'Answer.', thoughtSignature: SIG }])
		expect(content).toEqual([
			{ type: 'thinking', text: 'Pondering.', signature: tagSignature('gemini-text', SIG) },
			{ type: 'text', text: 'Answer.' },
		])
		expect(toGemini(content)).toEqual([{ text: 'Answer.', thoughtSignature: SIG }])
		expect(toAnthropic(content).blocks).toEqual([{ type: 'text', text: 'Answer.' }])
	})

	it('should tag a text part signature with no thoughts before it as a signature-only thinking part after the text', () => {
		const content = decode([{ text: 'Answer.', thoughtSignature: SIG }])
		expect(content).toEqual([
			{ type: 'text', text: 'Answer.' },
			{ type: 'thinking', text: '', signature: tagSignature('gemini-text', SIG) },
		])
		expect(toGemini(content)).toEqual([{ text: 'Answer.', thoughtSignature: SIG }])
		expect(toAnthropic(content).blocks).toEqual([{ type: 'text', text: 'Answer.' }])
	})

	it('should give a thought part signature back on a thought part with its text, not on the answer', () => {
		const content = decode([{ text: 'Pondering.', thought: true, thoughtSignature: SIG }, { text: 'Answer.' }])
		expect(content[0]).toEqual({ type: 'thinking', text: 'Pondering.', signature: tagSignature('gemini-thought', SIG) })
		expect(toGemini(content)).toEqual([{ text: 'Pondering.', thought: true, thoughtSignature: SIG }, { text: 'Answer.' }])
		expect(toAnthropic(content).blocks).toEqual([{ type: 'text', text: 'Answer.' }])
	})

	it('should keep a function call signature untagged on the call, packed into the id clients see', () => {
		const content = decode([{ text: 'Pondering.', thought: true }, { functionCall: { name: 'f', args: { a: 1 } }, thoughtSignature: SIG }])
		const call = content.find((p) => p.type === 'tool_call')
		expect(call).toMatchObject({ type: 'tool_call', name: 'f', signature: SIG })
		// An Anthropic or chat client sends the packed id back, and nothing else of the signature.
		const replay: Part[] = [{ type: 'thinking', text: 'Pondering.' }, { type: 'tool_call', id: packToolCallId(call!.id, SIG), name: 'f', input: { a: 1 } }]
		expect(toGemini(replay)).toEqual([{ functionCall: { name: 'f', args: { a: 1 } }, thoughtSignature: SIG }])
	})

	it('should tag the signatures of a stream: on the text after thoughts, on a trailing empty text part, on a thought part', async () => {
		const chunk = (parts: unknown[], finishReason?: string) => ({ data: JSON.stringify({ candidates: [{ content: { role: 'model', parts }, index: 0, ...(finishReason && { finishReason }) }] }) })
		const signatures = async (...chunks: Array<ReturnType<typeof chunk>>) =>
			(await collect(gemini.decodeStream(fromArray(chunks)))).filter((e): e is Extract<StreamEvent, { type: 'signature_delta' }> => e.type === 'signature_delta').map((e) => e.signature)
		expect(await signatures(chunk([{ text: 'P', thought: true }]), chunk([{ text: 'A', thoughtSignature: SIG }], 'STOP'))).toEqual([tagSignature('gemini-text', SIG)])
		expect(await signatures(chunk([{ text: 'A' }]), chunk([{ text: '', thoughtSignature: SIG }], 'STOP'))).toEqual([tagSignature('gemini-text', SIG)])
		expect(await signatures(chunk([{ text: 'P', thought: true }, { text: '', thought: true, thoughtSignature: SIG }]), chunk([{ text: 'A' }], 'STOP'))).toEqual([
			tagSignature('gemini-thought', SIG),
		])
	})

	it("should leave another vendor's signature out for Gemini: a tagged one, and Anthropic's (untagged)", () => {
		const foreign = `${Buffer.from('sbsig:xx-yyy').toString('base64')}QUJD`
		expect(toGemini([{ type: 'thinking', text: 'x', signature: foreign }, { type: 'text', text: 'A' }])).toEqual([{ text: 'A' }])
		// Claude's signature on a Gemini text part was the gap of a Gemini client switching to Gemini (turns.ts).
		expect(toGemini([{ type: 'thinking', text: 'x', signature: 'EqQBCkgI' }, { type: 'text', text: 'A' }])).toEqual([{ text: 'A' }])
		expect(toGemini([{ type: 'text', text: 'A' }, { type: 'thinking', text: '', signature: 'EqQBCkgI' }])).toEqual([{ text: 'A' }])
	})
})

describe('Gemini-signed thinking to Anthropic (converted path)', () => {
	it("should send Anthropic's own signature byte for byte and leave the tagged one out", () => {
		const own = 'EqQBCkgIARABGAIiQL5ZtMmXqy+/=='
		const { blocks } = toAnthropic([
			{ type: 'thinking', text: 'Mine.', signature: own },
			{ type: 'thinking', text: 'Gemini.', signature: tagSignature('gemini-text', SIG) },
			{ type: 'text', text: 'Answer.' },
		])
		expect(blocks).toEqual([{ type: 'thinking', thinking: 'Mine.', signature: own }, { type: 'text', text: 'Answer.' }])
	})

	it('should turn thinking off when the tool turn being continued loses its Gemini-signed thinking', () => {
		const messages: Message[] = [
			u('q'),
			{ role: 'assistant', content: [{ type: 'thinking', text: 'P', signature: tagSignature('gemini-thought', SIG) }, { type: 'tool_call', id: 'c1', name: 'f', input: {} }] },
			{ role: 'user', content: [{ type: 'tool_result', toolCallId: 'c1', content: [{ type: 'text', text: 'ok' }] }] },
		]
		const body = anthropicMessages.encodeRequest({ model: 'm', stream: false, maxTokens: 4096, reasoning: { enabled: true, budgetTokens: 1024 }, messages }, 'claude') as {
			messages: Array<{ content: Array<{ type: string }> }>
			thinking?: unknown
		}
		expect(body.messages[1]!.content.map((b) => b.type)).toEqual(['tool_use'])
		// Said off outright: vendors that think by default refuse such a turn otherwise.
		expect(body.thinking).toEqual({ type: 'disabled' })
	})
})
