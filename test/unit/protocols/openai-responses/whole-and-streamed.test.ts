/**
 * The output items a converted answer gets, whole (encodeOutput) and streamed (the final `response.completed` of
 * encodeStream), are the same: a run of text is one `message` with one `output_text` part (its annotations at their
 * place in it), and anything else between text (a function call, reasoning, a web search) ends the message, as OpenAI
 * never puts a call inside a message item.
 */
import { describe, expect, it } from 'bun:test'
import type { StreamEvent } from '../../../../src/core/events'
import type { ChatResponse } from '../../../../src/core/ir'
import { encodeOutput } from '../../../../src/protocols/openai-responses/response'
import { encodeStream } from '../../../../src/protocols/openai-responses/stream-encode'
import { collect, from, payloads } from './helpers'

type Content = ChatResponse['content']

/** A whole answer's content as a stream of it: Anthropic's order (a block's citations before its text), text in two pieces. */
function eventsOf(content: Content, reason: ChatResponse['stopReason']): StreamEvent[] {
	const events: StreamEvent[] = [{ type: 'start', id: 'msg_up', model: 'm' }]
	content.forEach((p, index) => {
		if (p.type === 'text') {
			events.push({ type: 'block_start', index, block: { kind: 'text' } })
			for (const citation of p.citations ?? []) events.push({ type: 'citation', index, citation })
			const half = Math.ceil(p.text.length / 2)
			for (const text of [p.text.slice(0, half), p.text.slice(half)]) if (text) events.push({ type: 'text_delta', index, text })
		} else if (p.type === 'tool_call') {
			events.push({ type: 'block_start', index, block: { kind: 'tool_call', id: p.id, name: p.name } }, { type: 'json_delta', index, json: JSON.stringify(p.input) })
		} else if (p.type === 'thinking') {
			events.push({ type: 'block_start', index, block: { kind: 'thinking' } }, { type: 'thinking_delta', index, text: p.text })
			if (p.signature) events.push({ type: 'signature_delta', index, signature: p.signature })
		} else if (p.type === 'web_search') events.push({ type: 'block_start', index, block: { kind: 'web_search', id: p.id, queries: p.queries, sources: p.sources } })
		else if (p.type === 'mcp_tool_use') events.push({ type: 'block_start', index, block: { kind: 'mcp_tool_use', id: p.id, name: p.name, serverName: p.serverName } }, { type: 'json_delta', index, json: '{}' })
		else if (p.type === 'mcp_tool_result') events.push({ type: 'block_start', index, block: { kind: 'mcp_tool_result', toolUseId: p.toolUseId, isError: p.isError, content: p.content } })
		events.push({ type: 'block_stop', index })
	})
	events.push({ type: 'finish', reason })
	return events
}

/** Output items with their fresh ids reduced to their prefixes. */
const shape = (output: unknown) => JSON.parse(JSON.stringify(output).replace(/"(msg|ws|fc|rs)_[A-Za-z0-9_-]+"/g, '"$1_*"'))

async function both(content: Content, reason: ChatResponse['stopReason'] = 'end_turn') {
	const data = payloads(await collect(encodeStream(from(eventsOf(content, reason)), { model: 'client-model' })))
	return { whole: shape(encodeOutput(content, reason)), streamed: shape(data.at(-1)!.response.output), data }
}

const cited = { url: 'https://example.com/a', title: 'A' }
const types = (items: Array<{ type: string }>) => items.map((i) => i.type)

describe('Responses output items, whole and streamed', () => {
	it('should give text blocks in a row as one message with one output_text part, its annotations spanning the whole text', async () => {
		const content: Content = [
			{ type: 'text', text: 'Café 😀 news: ' },
			{ type: 'text', text: 'it rained.', citations: [cited] },
			{ type: 'text', text: ' And 🌧 more', citations: [{ ...cited, start: 5, end: 7 }] },
		]
		const { whole, streamed, data } = await both(content)
		expect(streamed).toEqual(whole)
		expect(whole).toEqual([
			{
				id: 'msg_*',
				type: 'message',
				role: 'assistant',
				status: 'completed',
				content: [
					{
						type: 'output_text',
						text: 'Café 😀 news: it rained. And 🌧 more',
						logprobs: [],
						// Code points: an emoji is one; the third block's span (UTF-16 5 to 7) is its `🌧`.
						annotations: [
							{ type: 'url_citation', start_index: 13, end_index: 23, url: cited.url, title: 'A' },
							{ type: 'url_citation', start_index: 28, end_index: 29, url: cited.url, title: 'A' },
						],
					},
				],
			},
		])
		expect(data.filter((d) => d.type === 'response.content_part.added')).toHaveLength(1)
		expect(data.filter((d) => 'content_index' in d).every((d) => d.content_index === 0)).toBe(true)
		expect(data.filter((d) => d.type === 'response.output_text.annotation.added').map((d) => d.annotation_index)).toEqual([0, 1])
	})

	for (const between of [
		{ type: 'tool_call', id: 'toolu_1', name: 'lookup', input: { q: 'x' } },
		{ type: 'thinking', text: 'hmm', signature: 'sig' },
		{ type: 'web_search', id: 'srvtoolu_1', queries: ['x'], sources: [{ url: 'https://example.com/a' }] },
	] satisfies Content)
		it(`should end the message at a ${between.type} between text, as OpenAI gives separate items`, async () => {
			const content: Content = [{ type: 'text', text: 'Looking.' }, between, { type: 'text', text: 'Found it.', citations: [cited] }]
			const { whole, streamed } = await both(content, between.type === 'tool_call' ? 'tool_use' : 'end_turn')
			expect(streamed).toEqual(whole)
			expect(types(whole)).toEqual(['message', between.type === 'tool_call' ? 'function_call' : between.type === 'thinking' ? 'reasoning' : 'web_search_call', 'message'])
			expect(whole[2].content[0]).toMatchObject({ text: 'Found it.', annotations: [{ start_index: 0, end_index: 9 }] })
		})

	it("should give each message of text split by a function call its own text's logprobs, whole as streamed", async () => {
		const lp = (token: string) => ({ token, logprob: -0.5, top: [] })
		const first = ['Lo', 'ok', 'ing', '.'].map(lp)
		const second = ['Fo', 'und', ' ', 'it', '.'].map(lp)
		const content: Content = [{ type: 'text', text: 'Looking.' }, { type: 'tool_call', id: 'toolu_1', name: 'lookup', input: { q: 'x' } }, { type: 'text', text: 'Found it.' }]
		// The stream's text deltas carry their own tokens' logprobs (as decoded from the vendor's chunks).
		const events: StreamEvent[] = [
			{ type: 'start', id: 'msg_up', model: 'm' },
			{ type: 'block_start', index: 0, block: { kind: 'text' } },
			{ type: 'text_delta', index: 0, text: 'Look', logprobs: first.slice(0, 2) },
			{ type: 'text_delta', index: 0, text: 'ing.', logprobs: first.slice(2) },
			{ type: 'block_stop', index: 0 },
			{ type: 'block_start', index: 1, block: { kind: 'tool_call', id: 'toolu_1', name: 'lookup' } },
			{ type: 'json_delta', index: 1, json: '{"q":"x"}' },
			{ type: 'block_stop', index: 1 },
			{ type: 'block_start', index: 2, block: { kind: 'text' } },
			{ type: 'text_delta', index: 2, text: 'Found it.', logprobs: second },
			{ type: 'block_stop', index: 2 },
			{ type: 'finish', reason: 'tool_use' },
		]
		const data = payloads(await collect(encodeStream(from(events), { model: 'client-model' })))
		const streamed = shape(data.at(-1)!.response.output)
		// The whole answer has its logprobs as one list, in the order of its text.
		const whole = shape(encodeOutput(content, 'tool_use', [...first, ...second]))
		expect(streamed).toEqual(whole)
		const tokens = (item: { content: Array<{ logprobs: Array<{ token: string }> }> }) => item.content[0]!.logprobs.map((l) => l.token)
		expect(tokens(whole[0])).toEqual(['Lo', 'ok', 'ing', '.'])
		expect(tokens(whole[2])).toEqual(['Fo', 'und', ' ', 'it', '.'])
	})

	it("should keep one message across an MCP connector's blocks, which have no item", async () => {
		const content: Content = [
			{ type: 'text', text: 'Asking the server. ' },
			{ type: 'mcp_tool_use', id: 'mcptoolu_1', serverName: 's', name: 'echo', input: {} },
			{ type: 'mcp_tool_result', toolUseId: 'mcptoolu_1', isError: false, content: [{ type: 'text', text: 'ok' }] },
			{ type: 'text', text: 'It said ok.' },
		]
		const { whole, streamed } = await both(content)
		expect(streamed).toEqual(whole)
		expect(whole).toMatchObject([{ type: 'message', content: [{ type: 'output_text', text: 'Asking the server. It said ok.' }] }])
	})

	it('should end an answer refused after several text blocks with one message of its text and a refusal part', async () => {
		const { whole, streamed } = await both([{ type: 'text', text: "I'm sorry, " }, { type: 'text', text: "I can't." }], 'refusal')
		expect(streamed).toEqual(whole)
		expect(whole).toMatchObject([{ type: 'message', content: [{ type: 'output_text', text: "I'm sorry, I can't." }, { type: 'refusal', refusal: '' }] }])
	})
})
