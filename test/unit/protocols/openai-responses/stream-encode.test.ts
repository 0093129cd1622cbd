import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../../src/core/errors'
import type { StreamEvent } from '../../../../src/core/events'
import { decodeStream } from '../../../../src/protocols/openai-responses/stream-decode'
import { encodeStream } from '../../../../src/protocols/openai-responses/stream-encode'
import { agentTurn, checkInvariants, collect, from, payloads } from './helpers'

const encode = async (events: StreamEvent[]) => collect(encodeStream(from(events), { model: 'client-model' }))

describe('openaiResponses.encodeStream', () => {
	it('should emit the documented event order with event names equal to types and sequence numbers from 0', async () => {
		const frames = await encode(agentTurn())
		const data = payloads(frames)
		expect(frames.every((f, i) => f.event === data[i].type)).toBe(true)
		expect(data.map((d) => d.sequence_number)).toEqual(data.map((_, i) => i))
		expect(data.map((d) => d.type)).toEqual([
			'response.created',
			'response.in_progress',
			'response.output_item.added',
			'response.reasoning_summary_part.added',
			'response.reasoning_summary_text.delta',
			'response.reasoning_summary_text.delta',
			'response.reasoning_summary_text.done',
			'response.reasoning_summary_part.done',
			'response.output_item.done',
			'response.output_item.added',
			'response.content_part.added',
			'response.output_text.delta',
			'response.output_text.delta',
			'response.output_text.done',
			'response.content_part.done',
			'response.output_item.done',
			'response.output_item.added',
			'response.function_call_arguments.delta',
			'response.function_call_arguments.delta',
			'response.function_call_arguments.done',
			'response.output_item.done',
			'response.output_item.added',
			'response.function_call_arguments.done',
			'response.output_item.done',
			'response.completed',
		])
	})

	it('should put the final items, status, client model and usage in response.completed', async () => {
		const data = payloads(await encode(agentTurn()))
		const done = data.at(-1)!.response
		expect(done).toMatchObject({ status: 'completed', model: 'client-model', usage: { input_tokens: 100, input_tokens_details: { cached_tokens: 90 }, output_tokens: 42, output_tokens_details: { reasoning_tokens: 12 }, total_tokens: 142 } })
		expect(done.output.map((o: { type: string }) => o.type)).toEqual(['reasoning', 'message', 'function_call', 'function_call'])
		expect(done.output[0].encrypted_content).toBe('sbsig:sig-A')
		expect(done.output[3]).toMatchObject({ call_id: 'sbp_toolu_B__ts_Z2VtaW5p', arguments: '{}' }) // the second call of the answer: marked (call-ids.ts)
		const streamedIds = data.filter((d) => d.type === 'response.output_item.added').map((d) => d.item.id)
		expect(done.output.map((o: { id: string }) => o.id)).toEqual(streamedIds)
		expect(data[0].response).toMatchObject({ status: 'in_progress', output: [], usage: null })
	})

	it('should end a truncated answer with response.incomplete', async () => {
		const events: StreamEvent[] = [{ type: 'start', id: 'x', model: 'm' }, { type: 'block_start', index: 0, block: { kind: 'text' } }, { type: 'text_delta', index: 0, text: 'a b' }, { type: 'block_stop', index: 0 }, { type: 'finish', reason: 'max_tokens' }]
		const last = payloads(await encode(events)).at(-1)!
		expect(last.type).toBe('response.incomplete')
		expect(last.response.incomplete_details).toEqual({ reason: 'max_output_tokens' })
	})

	it('should turn an upstream error into an error event followed by response.failed', async () => {
		const events: StreamEvent[] = [{ type: 'start', id: 'x', model: 'm' }, { type: 'block_start', index: 0, block: { kind: 'text' } }, { type: 'text_delta', index: 0, text: 'part' }, { type: 'error', error: new GatewayError('upstream', 'upstream went away', { code: 'upstream_error' }) }]
		const data = payloads(await encode(events))
		expect(data.slice(-2).map((d) => d.type)).toEqual(['error', 'response.failed'])
		expect(data.at(-2)).toMatchObject({ code: 'upstream_error', message: 'upstream went away', param: null })
		// response.error.code takes OpenAI's codes only (openai-python types it as their Literal): the gateway's is server_error there.
		expect(data.at(-1)!.response).toMatchObject({ status: 'failed', error: { code: 'server_error', message: 'upstream went away' } })
	})

	it("should fail the response with OpenAI's code for another vendor's, and keep OpenAI's own", async () => {
		const failedWith = async (error: GatewayError) => payloads(await encode([{ type: 'start', id: 'x', model: 'm' }, { type: 'error', error }])).at(-1)!.response.error.code
		expect(await failedWith(new GatewayError('overloaded', 'The model is overloaded.', { code: 'UNAVAILABLE', retryable: true }))).toBe('server_error')
		expect(await failedWith(new GatewayError('upstream', 'Overloaded', { code: 'overloaded_error', retryable: true }))).toBe('server_error')
		expect(await failedWith(new GatewayError('rate_limit', 'slow down', { code: 'upstream_rate_limited' }))).toBe('rate_limit_exceeded')
		expect(await failedWith(new GatewayError('invalid_request', 'too long', { code: 'context_length_exceeded' }))).toBe('context_length_exceeded')
	})

	it('should fail a stream whose events stop before finish', async () => {
		const data = payloads(await encode([{ type: 'start', id: 'x', model: 'm' }]))
		expect(data.map((d) => d.type)).toEqual(['response.created', 'response.in_progress', 'error', 'response.failed'])
	})

	it('should survive decode → encode → decode with the same canonical events', async () => {
		const once = await collect(decodeStream(from(await encode(agentTurn()))))
		checkInvariants(once)
		const twice = await collect(decodeStream(from(await encode(once))))
		expect(twice.slice(1)).toEqual(once.slice(1))
		expect(once.filter((e) => e.type === 'signature_delta')).toEqual([{ type: 'signature_delta', index: 0, signature: 'sig-A' }])
	})
})
