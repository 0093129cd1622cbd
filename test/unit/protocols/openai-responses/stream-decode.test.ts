import { describe, expect, it } from 'bun:test'
import type { StreamEvent } from '../../../../src/core/events'
import { decodeStream } from '../../../../src/protocols/openai-responses/stream-decode'
import { checkInvariants, collect, fixtureFrames, from } from './helpers'

const decode = async (name: string) => {
	const events = await collect(decodeStream(fixtureFrames(name)))
	checkInvariants(events)
	return events
}
const last = (events: StreamEvent[]) => events[events.length - 1]

describe('openaiResponses.decodeStream', () => {
	it('should decode a text stream into start, one text block, usage and finish', async () => {
		expect(await decode('text.sse')).toEqual([
			{ type: 'start', id: 'resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b', model: 'gpt-4.1-2025-04-14', created: 1741476542 },
			{ type: 'block_start', index: 0, block: { kind: 'text' } },
			{ type: 'text_delta', index: 0, text: 'Hi' },
			{ type: 'text_delta', index: 0, text: ' there!' },
			{ type: 'text_delta', index: 0, text: ' How can I help?' },
			{ type: 'block_stop', index: 0 },
			{ type: 'usage', usage: { input: 36, output: 87, cacheRead: 0, cacheWrite: 0, reasoning: 0 } },
			{ type: 'finish', reason: 'end_turn' },
		])
	})

	it('should decode reasoning summary and parallel calls with their argument fragments, ending in tool_use', async () => {
		const events = await decode('reasoning-tools.sse')
		expect(events.slice(1, 4)).toEqual([
			{ type: 'block_start', index: 0, block: { kind: 'thinking' } },
			{ type: 'thinking_delta', index: 0, text: '**Checking weather**\n\n' },
			{ type: 'thinking_delta', index: 0, text: 'The user wants two cities.' },
		])
		const calls = events.filter((e) => e.type === 'block_start' && e.block.kind === 'tool_call')
		expect(calls.map((e) => (e.type === 'block_start' && e.block.kind === 'tool_call' ? [e.index, e.block.id, e.block.name] : []))).toEqual([
			[1, 'call_Pq1Rw2', 'get_weather'],
			[2, 'call_Tk9Zx8', 'get_weather'],
		])
		const args = (i: number) => events.flatMap((e) => (e.type === 'json_delta' && e.index === i ? [e.json] : [])).join('')
		expect([args(1), args(2)]).toEqual(['{"city":"Paris"}', '{"city":"Tokyo"}'])
		expect(events.find((e) => e.type === 'usage')).toEqual({ type: 'usage', usage: { input: 20, output: 64, cacheRead: 100, cacheWrite: 0, reasoning: 40 } })
		expect(last(events)).toEqual({ type: 'finish', reason: 'tool_use' })
	})

	it('should not treat OpenAI encrypted reasoning as a signature another vendor could replay', async () => {
		const events = await decode('reasoning-tools.sse')
		expect(events.some((e) => e.type === 'signature_delta')).toBe(false)
	})

	it('should end an incomplete response with max_tokens', async () => {
		expect(last(await decode('incomplete.sse'))).toEqual({ type: 'finish', reason: 'max_tokens' })
	})

	it('should turn response.failed into an error, not an empty success', async () => {
		const e = last(await decode('failed.sse'))
		expect(e.type === 'error' && e.error.message).toBe('The model failed to generate a response.')
	})

	it('should turn an error event into an error after closing the open block', async () => {
		const events = await decode('error-mid.sse')
		expect(events.at(-2)).toEqual({ type: 'block_stop', index: 0 })
		const e = last(events)
		expect(e.type === 'error' && [e.error.code, e.error.retryable]).toEqual(['server_error', true])
	})

	it('should report a body cut before response.completed as an error', async () => {
		const e = last(await decode('cut.sse'))
		expect(e.type === 'error' && e.error.code).toBe('upstream_cut')
	})
})

describe('openaiResponses.decodeStream web search', () => {
	const frames = (events: Array<Record<string, unknown>>) => from(events.map((e) => ({ event: String(e.type), data: JSON.stringify(e) })))
	const completed = (output: unknown[] = []) => ({ type: 'response.completed', response: { id: 'resp_1', status: 'completed', output, usage: { input_tokens: 5, output_tokens: 7 } } })
	const search = { id: 'ws_1', type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'bun news', sources: [{ type: 'url', url: 'https://bun.sh/blog' }] } }
	const cite = (start: number, end: number) => ({ type: 'url_citation', start_index: start, end_index: end, url: 'https://bun.sh/blog', title: 'Bun blog' })

	it("should give a search its block, and a citation in a message's second part a span into the block's text", async () => {
		const events = await collect(
			decodeStream(
				frames([
					{ type: 'response.output_item.added', output_index: 0, item: { id: 'ws_1', type: 'web_search_call', status: 'in_progress', action: { type: 'search' } } },
					{ type: 'response.web_search_call.searching', output_index: 0, item_id: 'ws_1' },
					{ type: 'response.output_item.done', output_index: 0, item: search },
					{ type: 'response.output_item.added', output_index: 1, item: { id: 'msg_1', type: 'message', content: [] } },
					{ type: 'response.content_part.added', item_id: 'msg_1', content_index: 0, part: { type: 'output_text', text: '' } },
					{ type: 'response.output_text.delta', item_id: 'msg_1', content_index: 0, delta: 'Café ' },
					{ type: 'response.content_part.added', item_id: 'msg_1', content_index: 1, part: { type: 'output_text', text: '' } },
					{ type: 'response.output_text.delta', item_id: 'msg_1', content_index: 1, delta: 'Bun 1.3 東京' },
					{ type: 'response.output_text.annotation.added', item_id: 'msg_1', content_index: 1, annotation_index: 0, annotation: cite(4, 10) },
					{ type: 'response.output_item.done', output_index: 1, item: { id: 'msg_1', type: 'message', content: [{ type: 'output_text', text: 'Café ' }, { type: 'output_text', text: 'Bun 1.3 東京', annotations: [cite(4, 10)] }] } },
					completed([search]),
				]),
			),
		)
		checkInvariants(events)
		expect(events.slice(1, 3)).toEqual([
			{ type: 'block_start', index: 0, block: { kind: 'web_search', id: 'ws_1', queries: ['bun news'], sources: [{ url: 'https://bun.sh/blog' }] } },
			{ type: 'block_stop', index: 0 },
		])
		// Once, from the event (the done item repeats it), at its place in the block's text "Café Bun 1.3 東京".
		expect(events.filter((e) => e.type === 'citation')).toEqual([{ type: 'citation', index: 1, citation: { url: 'https://bun.sh/blog', title: 'Bun blog', start: 9, end: 15, citedText: '1.3 東京' } }])
		expect(events.find((e) => e.type === 'usage')).toMatchObject({ usage: { webSearches: 1 } })
	})

	it('should take the citations of a done message item when no annotation event came', async () => {
		const events = await collect(
			decodeStream(
				frames([
					{ type: 'response.output_item.added', output_index: 0, item: { id: 'msg_1', type: 'message', content: [] } },
					{ type: 'response.output_text.delta', item_id: 'msg_1', content_index: 0, delta: 'Bun 1.3' },
					{ type: 'response.output_item.done', output_index: 0, item: { id: 'msg_1', type: 'message', content: [{ type: 'output_text', text: 'Bun 1.3', annotations: [cite(0, 3)] }] } },
					completed(),
				]),
			),
		)
		checkInvariants(events)
		expect(events.filter((e) => e.type === 'citation')).toEqual([{ type: 'citation', index: 0, citation: { url: 'https://bun.sh/blog', title: 'Bun blog', start: 0, end: 3, citedText: 'Bun' } }])
		expect(events.find((e) => e.type === 'usage')).not.toMatchObject({ usage: { webSearches: expect.anything() } })
	})
})
