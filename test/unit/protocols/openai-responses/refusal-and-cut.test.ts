/**
 * QA report item 10, for Responses clients: a refusal is a `refusal` content part (type "refusal", field `refusal`;
 * streamed with `response.refusal.delta` / `response.refusal.done`,
 * https://platform.openai.com/docs/api-reference/responses-streaming/response/refusal/delta), not ordinary
 * `output_text`; and a stream that fails mid-way leaves the cut item `incomplete`, not `completed`, before `error` and
 * `response.failed`.
 */
import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../../src/core/errors'
import type { StreamEvent } from '../../../../src/core/events'
import type { ChatResponse } from '../../../../src/core/ir'
import { streamDecoder as chatDecoder } from '../../../../src/protocols/openai-chat/stream-decode'
import { encodeResponse } from '../../../../src/protocols/openai-responses/response'
import { decodeStream } from '../../../../src/protocols/openai-responses/stream-decode'
import { encodeStream } from '../../../../src/protocols/openai-responses/stream-encode'
import { collect, from, payloads } from './helpers'

const encode = async (events: StreamEvent[]) => payloads(await collect(encodeStream(from(events), { model: 'client-model' })))
const REFUSAL = "I'm sorry, I can't help with that."
const usage = { input: 5, output: 8, cacheRead: 0, cacheWrite: 0, reasoning: 0 }

/** Types of the events after the two lifecycle ones, with the content part types where there is one. */
const shape = (data: Array<Record<string, any>>) => data.slice(2).map((d) => (d.part ? `${d.type}:${d.part.type}` : d.type))

describe('Responses refusals, non-stream', () => {
	it('should keep the text of a refused answer (Anthropic stop_reason refusal) and end its message with a refusal part', () => {
		const r = encodeResponse({ id: 'msg_1', model: 'claude', content: [{ type: 'text', text: REFUSAL }], stopReason: 'refusal', usage }, { model: 'client-model' })
		expect(r.status).toBe('completed')
		expect(r.output).toHaveLength(1)
		expect(r.output[0]).toMatchObject({ type: 'message', status: 'completed', content: [{ type: 'output_text', text: REFUSAL }, { type: 'refusal', refusal: '' }] })
		// Claude's explanation (stop_details) is the refusal part's text.
		const explained = encodeResponse({ id: 'msg_1', model: 'claude', content: [{ type: 'text', text: 'No.' }], stopReason: 'refusal', refusal: 'Harmful.', usage }, { model: 'client-model' })
		expect(explained.output[0]).toMatchObject({ content: [{ type: 'output_text', text: 'No.' }, { type: 'refusal', refusal: 'Harmful.' }] })
		// Words the upstream gave as the refusal itself (OpenAI chat's `refusal` field) are that part, not repeated.
		const marked = encodeResponse({ id: 'c', model: 'gpt', content: [{ type: 'text', text: REFUSAL }], stopReason: 'refusal', refusal: REFUSAL, usage }, { model: 'client-model' })
		expect(marked.output[0]).toMatchObject({ content: [{ type: 'refusal', refusal: REFUSAL }] })
		expect((marked.output[0] as { content: unknown[] }).content).toHaveLength(1)
	})

	it('should still show a refusal part when the refused answer has no text', () => {
		const r = encodeResponse({ id: 'msg_1', model: 'claude', content: [], stopReason: 'refusal', usage }, { model: 'client-model' })
		expect(r.output).toMatchObject([{ type: 'message', content: [{ type: 'refusal', refusal: '' }] }])
	})

	it('should keep ordinary answers as output_text', () => {
		const r = encodeResponse({ id: 'msg_1', model: 'claude', content: [{ type: 'text', text: 'hi' }], stopReason: 'end_turn', usage }, { model: 'client-model' })
		expect(r.output).toMatchObject([{ type: 'message', content: [{ type: 'output_text', text: 'hi' }] }])
	})
})

describe('Responses refusals, stream', () => {
	it('should stream text the upstream marked as a refusal as a refusal part (refusal.delta / refusal.done)', async () => {
		const data = await encode([
			{ type: 'start', id: 'c', model: 'gpt' },
			{ type: 'block_start', index: 0, block: { kind: 'text', refusal: true } },
			{ type: 'text_delta', index: 0, text: "I'm sorry, " },
			{ type: 'text_delta', index: 0, text: "I can't help with that." },
			{ type: 'block_stop', index: 0 },
			{ type: 'finish', reason: 'refusal' },
		])
		expect(shape(data)).toEqual([
			'response.output_item.added',
			'response.content_part.added:refusal',
			'response.refusal.delta',
			'response.refusal.delta',
			'response.refusal.done',
			'response.content_part.done:refusal',
			'response.output_item.done',
			'response.completed',
		])
		const delta = data.find((d) => d.type === 'response.refusal.delta')!
		expect(Object.keys(delta).sort()).toEqual(['content_index', 'delta', 'item_id', 'output_index', 'sequence_number', 'type'])
		expect(data.find((d) => d.type === 'response.refusal.done')).toMatchObject({ content_index: 0, output_index: 0, refusal: REFUSAL })
		const item = { type: 'message', status: 'completed', content: [{ type: 'refusal', refusal: REFUSAL }] }
		expect(data.find((d) => d.type === 'response.output_item.done')!.item).toMatchObject(item)
		expect(data.at(-1)!.response).toMatchObject({ status: 'completed', output: [item] })
	})

	it('should close the streamed text as output_text and follow it with a refusal part when the upstream tells the refusal only at the end (Anthropic)', async () => {
		const data = await encode([
			{ type: 'start', id: 'm', model: 'claude' },
			{ type: 'block_start', index: 0, block: { kind: 'text' } },
			{ type: 'text_delta', index: 0, text: "I'm sorry, " },
			{ type: 'text_delta', index: 0, text: "I can't help with that." },
			{ type: 'block_stop', index: 0 },
			{ type: 'usage', usage: { output: 1 } },
			{ type: 'finish', reason: 'refusal', refusal: 'Harmful request.' },
		])
		expect(shape(data)).toEqual([
			'response.output_item.added',
			'response.content_part.added:output_text',
			'response.output_text.delta',
			'response.output_text.delta',
			// The text part closes as what it was opened as, then the refusal is a part of its own (Claude's explanation).
			'response.output_text.done',
			'response.content_part.done:output_text',
			'response.content_part.added:refusal',
			'response.refusal.delta',
			'response.refusal.done',
			'response.content_part.done:refusal',
			'response.output_item.done',
			'response.completed',
		])
		expect(data.filter((d) => d.type.startsWith('response.content_part.')).map((d) => d.content_index)).toEqual([0, 0, 1, 1])
		expect(data.find((d) => d.type === 'response.refusal.done')).toMatchObject({ content_index: 1, refusal: 'Harmful request.' })
		const content = [
			{ type: 'output_text', text: REFUSAL, annotations: [], logprobs: [] },
			{ type: 'refusal', refusal: 'Harmful request.' },
		]
		expect(data.find((d) => d.type === 'response.output_item.done')!.item.content).toEqual(content)
		expect(data.at(-1)!.response.output).toMatchObject([{ type: 'message', content }])
	})

	/** Refused answers whose refusal was told at the end, as canonical events and as the whole answer. */
	const answers: Array<{ name: string; events: StreamEvent[]; content: ChatResponse['content'] }> = [
		{
			name: 'text, a call, then text',
			events: [
				{ type: 'block_start', index: 0, block: { kind: 'text' } },
				{ type: 'text_delta', index: 0, text: 'Looking.' },
				{ type: 'block_stop', index: 0 },
				{ type: 'block_start', index: 1, block: { kind: 'tool_call', id: 'call_1', name: 'f' } },
				{ type: 'json_delta', index: 1, json: '{}' },
				{ type: 'block_stop', index: 1 },
				{ type: 'block_start', index: 2, block: { kind: 'text' } },
				{ type: 'text_delta', index: 2, text: REFUSAL },
				{ type: 'block_stop', index: 2 },
			],
			content: [{ type: 'text', text: 'Looking.' }, { type: 'tool_call', id: 'call_1', name: 'f', input: {} }, { type: 'text', text: REFUSAL }],
		},
		{
			name: 'text then a call',
			events: [
				{ type: 'block_start', index: 0, block: { kind: 'text' } },
				{ type: 'text_delta', index: 0, text: 'Looking.' },
				{ type: 'block_stop', index: 0 },
				{ type: 'block_start', index: 1, block: { kind: 'tool_call', id: 'call_1', name: 'f' } },
				{ type: 'json_delta', index: 1, json: '{}' },
				{ type: 'block_stop', index: 1 },
			],
			content: [{ type: 'text', text: 'Looking.' }, { type: 'tool_call', id: 'call_1', name: 'f', input: {} }],
		},
	]
	const parts = (output: Array<Record<string, any>>) => output.map((o) => (o.type === 'message' ? o.content : o.type))
	for (const a of answers)
		it(`should end a refused answer (${a.name}) with the items its whole answer has`, async () => {
			const data = await encode([{ type: 'start', id: 'm', model: 'claude' }, ...a.events, { type: 'finish', reason: 'refusal' }])
			const whole = encodeResponse({ id: 'm', model: 'claude', content: a.content, stopReason: 'refusal', usage }, { model: 'client-model' })
			expect(parts(data.at(-1)!.response.output)).toEqual(parts(whole.output as Array<Record<string, any>>))
			const last = parts(whole.output as Array<Record<string, any>>).at(-1)
			expect(last).toEqual(a.name === 'text then a call' ? [{ type: 'refusal', refusal: '' }] : [{ type: 'output_text', text: REFUSAL, annotations: [], logprobs: [] }, { type: 'refusal', refusal: '' }])
		})

	it('should give a refused answer with no text a message with a refusal part', async () => {
		const data = await encode([{ type: 'start', id: 'm', model: 'claude' }, { type: 'finish', reason: 'refusal' }])
		expect(shape(data)).toEqual(['response.output_item.added', 'response.content_part.added:refusal', 'response.refusal.done', 'response.content_part.done:refusal', 'response.output_item.done', 'response.completed'])
	})

	it("should mark OpenAI chat's streamed refusal field as refusal text, which survives a Responses round trip", async () => {
		const d = chatDecoder()
		const events: StreamEvent[] = []
		const chunk = (delta: object, finish: string | null = null) => ({ data: JSON.stringify({ id: 'c', choices: [{ index: 0, delta, finish_reason: finish }] }) })
		for (const f of [chunk({ role: 'assistant', content: null, refusal: '' }), chunk({ refusal: "I'm sorry" }), chunk({ refusal: '.' }), chunk({}, 'stop'), { data: '[DONE]' }]) d.push(f, events)
		expect(events.slice(1)).toEqual([
			{ type: 'block_start', index: 0, block: { kind: 'text', refusal: true } },
			{ type: 'text_delta', index: 0, text: "I'm sorry" },
			{ type: 'text_delta', index: 0, text: '.' },
			{ type: 'block_stop', index: 0 },
			{ type: 'finish', reason: 'refusal' },
		])
		const again = await collect(decodeStream(from(await collect(encodeStream(from(events), { model: 'm' })))))
		const kept: StreamEvent[] = again.slice(1).filter((e) => e.type !== 'usage')
		expect(kept).toEqual(events.slice(1))
	})
})

describe('Responses stream cut by a failure', () => {
	const cut = (stopFirst: boolean): StreamEvent[] => [
		{ type: 'start', id: 'x', model: 'm' },
		{ type: 'block_start', index: 0, block: { kind: 'text' } },
		{ type: 'text_delta', index: 0, text: 'Partial' },
		// Decoders close the open block before their error event; the relay's own failures may not.
		...(stopFirst ? [{ type: 'block_stop', index: 0 } as const] : []),
		{ type: 'error', error: new GatewayError('upstream', 'upstream went away', { code: 'upstream_error' }) },
	]

	for (const stopFirst of [true, false])
		it(`should send the cut message as incomplete before error and response.failed (${stopFirst ? 'block closed first' : 'block still open'})`, async () => {
			const data = await encode(cut(stopFirst))
			expect(shape(data)).toEqual([
				'response.output_item.added',
				'response.content_part.added:output_text',
				'response.output_text.delta',
				'response.output_text.done',
				'response.content_part.done:output_text',
				'response.output_item.done',
				'error',
				'response.failed',
			])
			expect(data.find((d) => d.type === 'response.output_item.done')!.item).toMatchObject({ type: 'message', status: 'incomplete', content: [{ type: 'output_text', text: 'Partial' }] })
			expect(data.at(-1)!.response).toMatchObject({ status: 'failed', output: [{ type: 'message', status: 'incomplete' }] })
		})

	it('should keep items that were followed by another one completed, and the cut function call incomplete', async () => {
		const data = await encode([
			{ type: 'start', id: 'x', model: 'm' },
			{ type: 'block_start', index: 0, block: { kind: 'text' } },
			{ type: 'text_delta', index: 0, text: 'Calling.' },
			{ type: 'block_stop', index: 0 },
			{ type: 'block_start', index: 1, block: { kind: 'tool_call', id: 'call_1', name: 'f' } },
			{ type: 'json_delta', index: 1, json: '{"a":' },
			{ type: 'block_stop', index: 1 },
			{ type: 'error', error: new GatewayError('upstream', 'cut', { code: 'upstream_cut' }) },
		])
		expect(data.filter((d) => d.type === 'response.output_item.done').map((d) => [d.item.type, d.item.status])).toEqual([
			['message', 'completed'],
			['function_call', 'incomplete'],
		])
	})

	it('should emit the same events as before for a stream that completes', async () => {
		const data = await encode([
			{ type: 'start', id: 'x', model: 'm' },
			{ type: 'block_start', index: 0, block: { kind: 'text' } },
			{ type: 'text_delta', index: 0, text: 'ok' },
			{ type: 'block_stop', index: 0 },
			{ type: 'finish', reason: 'end_turn' },
		])
		expect(data.find((d) => d.type === 'response.output_item.done')!.item.status).toBe('completed')
		expect(data.at(-1)!.type).toBe('response.completed')
	})
})
