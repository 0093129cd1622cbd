/**
 * A Bedrock channel's guardrail (providers/bedrock-guardrail.ts): the settings read and InvokeModel's headers; Claude's
 * answers read for an intervention wherever Bedrock says it (the whole answer, `message_start`'s message, any event up
 * to the last, Bedrock's own `guardrail_intervened` stop reason), the guardrail members dropped; and the channel
 * settings check (config/channel-settings.ts).
 */
import { describe, expect, it } from 'bun:test'
import { guardrailProblem } from '../../../src/config/channel-settings'
import { guardedEvent, guardedJson, guardrailHeaders, guardrailOf, withStreamMode } from '../../../src/providers/bedrock-guardrail'
import { anthropicSseOf } from '../../../src/providers/bedrock-stream'
import { chunkMessage, exceptionMessage } from '../../mocks/bedrock/event-stream'

const ch = (settings: Record<string, unknown>) => ({ settings })

const streamOf = (chunks: Uint8Array[]) =>
	new ReadableStream<Uint8Array>({
		start(ctl) {
			for (const c of chunks) ctl.enqueue(c)
			ctl.close()
		},
	})

/** Claude's stream events as Bedrock frames them, re-framed by the guarded reader; the SSE frames' data back. */
async function guardedStream(events: unknown[], end?: Uint8Array): Promise<Array<{ event: string; data: any }>> {
	const body = streamOf([...events.map((e) => chunkMessage(JSON.stringify(e))), ...(end ? [end] : [])])
	const text = await new Response(anthropicSseOf(body, true)).text()
	return text
		.split('\n\n')
		.filter(Boolean)
		.map((f) => ({ event: /^event: (.*)$/m.exec(f)![1]!, data: JSON.parse(/^data: (.*)$/m.exec(f)![1]!) }))
}

const START = { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 3, output_tokens: 0 } } }
const TEXT = [
	{ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
	{ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Blocked.' } },
	{ type: 'content_block_stop', index: 0 },
]
const DELTA = { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 0 } }
const TRACE = { guardrail: { inputAssessment: { gr1: { topicPolicy: { topics: [{ name: 'Secret policy', action: 'BLOCKED' }] } } } } }

describe('bedrock guardrail', () => {
	it("should read the channel's guardrail and give InvokeModel its headers, the trace upper case", () => {
		expect(guardrailOf(ch({}))).toBeUndefined()
		expect(guardrailHeaders(ch({}))).toEqual({})
		expect(guardrailOf(ch({ guardrail_identifier: 'gr1', guardrail_version: '3', guardrail_trace: 'enabled', guardrail_stream_mode: 'async' }))).toEqual({
			identifier: 'gr1',
			version: '3',
			trace: 'enabled',
			streamMode: 'async',
		})
		expect(guardrailHeaders(ch({ guardrail_identifier: 'gr1', guardrail_version: 'DRAFT', guardrail_trace: 'enabled_full' }))).toEqual({
			'x-amzn-bedrock-guardrailidentifier': 'gr1',
			'x-amzn-bedrock-guardrailversion': 'DRAFT',
			'x-amzn-bedrock-trace': 'ENABLED_FULL',
		})
	})

	it("should put the async stream mode in InvokeModel's body only for a guardrail that asks it", () => {
		const body = (settings: Record<string, unknown>) => {
			const b: Record<string, unknown> = { max_tokens: 5 }
			withStreamMode(ch(settings), b)
			return b
		}
		expect(body({ guardrail_identifier: 'gr1', guardrail_version: '1', guardrail_stream_mode: 'async' })).toEqual({ max_tokens: 5, 'amazon-bedrock-guardrailConfig': { streamProcessingMode: 'ASYNCHRONOUS' } })
		// Sync is Bedrock's default; without a guardrail Bedrock refuses the member.
		expect(body({ guardrail_identifier: 'gr1', guardrail_version: '1', guardrail_stream_mode: 'sync' })).toEqual({ max_tokens: 5 })
		expect(body({ guardrail_stream_mode: 'async' })).toEqual({ max_tokens: 5 })
	})

	it('should end an async stream whose guardrail intervened after the text as a refusal, the text kept', async () => {
		const frames = await guardedStream([
			START,
			{ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
			{ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'The secret is' } },
			{ type: 'content_block_stop', index: 0 },
			{ type: 'message_delta', delta: { stop_reason: 'guardrail_intervened', stop_sequence: null }, usage: { output_tokens: 4 } },
			{ type: 'message_stop', 'amazon-bedrock-guardrailAction': 'INTERVENED' },
		])
		expect(frames.map((f) => f.event)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop'])
		expect(frames[2]!.data.delta.text).toBe('The secret is')
		expect(frames[4]!.data).toEqual({ type: 'message_delta', delta: { stop_reason: 'refusal', stop_sequence: null }, usage: { output_tokens: 4 } })
		expect(frames[5]!.data).toEqual({ type: 'message_stop' })
	})

	it('should leave an event that names no guardrail member as it came, unparsed', () => {
		const json = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}'
		expect(guardedEvent(json)).toEqual({ json, intervened: false })
	})

	it('should read a whole answer that intervened as a refusal, without the action or the trace', () => {
		const seen = guardedEvent(JSON.stringify({ type: 'message', content: [{ type: 'text', text: 'Blocked.' }], stop_reason: 'end_turn', 'amazon-bedrock-guardrailAction': 'INTERVENED', 'amazon-bedrock-trace': TRACE }))
		expect(seen.intervened).toBe(true)
		expect(JSON.parse(seen.json)).toEqual({ type: 'message', content: [{ type: 'text', text: 'Blocked.' }], stop_reason: 'refusal' })
		// NONE: the answer stands; the trace is dropped all the same.
		const none = guardedEvent(JSON.stringify({ type: 'message', stop_reason: 'end_turn', 'amazon-bedrock-guardrailAction': 'NONE', 'amazon-bedrock-trace': TRACE }))
		expect(none).toEqual({ json: '{"type":"message","stop_reason":"end_turn"}', intervened: false })
	})

	it('should rewrite a whole JSON answer, and pass one without guardrail members byte for byte', async () => {
		const plain = '{"type":"message",  "stop_reason":"end_turn"}'
		expect(await guardedJson(new Response(plain, { headers: { 'content-type': 'application/json' } })).text()).toBe(plain)
		const hit = guardedJson(new Response(JSON.stringify({ type: 'message', stop_reason: 'end_turn', 'amazon-bedrock-guardrailAction': 'INTERVENED' }), { headers: { 'content-length': '99' } }))
		expect(hit.headers.get('content-length')).toBeNull()
		expect(await hit.json()).toEqual({ type: 'message', stop_reason: 'refusal' })
	})

	it("should end a stream whose last event says the guardrail intervened with message_delta's refusal, in order", async () => {
		const frames = await guardedStream([START, ...TEXT, DELTA, { type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 3 }, 'amazon-bedrock-guardrailAction': 'INTERVENED', 'amazon-bedrock-trace': TRACE }])
		expect(frames.map((f) => f.event)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop'])
		expect(frames[4]!.data.delta).toEqual({ stop_reason: 'refusal', stop_sequence: null })
		expect(frames[5]!.data).toEqual({ type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 3 } })
	})

	it("should read an intervention said on message_start's message, dropping it there", async () => {
		const start = { ...START, message: { ...START.message, 'amazon-bedrock-guardrailAction': 'INTERVENED' } }
		const frames = await guardedStream([start, ...TEXT, DELTA, { type: 'message_stop' }])
		expect(frames[0]!.data).toEqual(START)
		expect(frames[4]!.data.delta.stop_reason).toBe('refusal')
	})

	it("should read Bedrock's own guardrail_intervened stop reason as a refusal", async () => {
		const frames = await guardedStream([START, ...TEXT, { type: 'message_delta', delta: { stop_reason: 'guardrail_intervened' }, usage: { output_tokens: 0 } }, { type: 'message_stop' }])
		expect(frames[4]!.data.delta).toEqual({ stop_reason: 'refusal' })
	})

	it('should keep the stop reason of a stream the guardrail let pass, and flush a held message_delta before an error or the end', async () => {
		const passed = await guardedStream([START, ...TEXT, DELTA, { type: 'message_stop', 'amazon-bedrock-guardrailAction': 'NONE' }])
		expect(passed[4]!.data).toEqual(DELTA)
		expect(passed[5]!.data).toEqual({ type: 'message_stop' })
		const cut = await guardedStream([START, ...TEXT, DELTA])
		expect(cut.map((f) => f.event).at(-1)).toBe('message_delta')
		const failed = await guardedStream([START, ...TEXT, DELTA], exceptionMessage('throttlingException', 'slow down'))
		expect(failed.slice(-2).map((f) => f.event)).toEqual(['message_delta', 'error'])
	})

	it('should refuse guardrail settings that cannot work alone, naming the field to set', () => {
		expect(guardrailProblem(undefined)).toBeUndefined()
		expect(guardrailProblem({ guardrail_identifier: 'gr1', guardrail_version: '1', guardrail_trace: 'enabled' })).toBeUndefined()
		expect(guardrailProblem({ guardrail_identifier: 'gr1' })).toMatchObject({ field: 'guardrail_version', given: 'guardrail_identifier' })
		expect(guardrailProblem({ guardrail_version: 'DRAFT' })).toMatchObject({ field: 'guardrail_identifier', given: 'guardrail_version' })
		expect(guardrailProblem({ guardrail_stream_mode: 'async' })?.message).toBe('guardrail_stream_mode applies to a guardrail: set guardrail_identifier and guardrail_version too')
	})
})
