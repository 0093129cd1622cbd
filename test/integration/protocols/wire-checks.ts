/**
 * Invariants of each protocol's stream as the vendors send it, checked on every stream the matrix reads, so a
 * gateway bug that the SDKs happen to tolerate still fails a test.
 * - chat-completions (WIRE-NOTES wire §7, §12; Portkey-AI/gateway#1399, #1275): one id and model throughout, the role
 *   on the first delta, each tool call introduced once with id, type, name and `arguments: ''` then fragments by
 *   index only, one finish_reason after all content, the usage chunk (`choices: []`) last when asked for.
 * - messages (wire §1; maximhq/bifrost#5907, #4556; QuantumNous/new-api PR #2854): exactly one well-formed
 *   message_start first, blocks opened and closed one at a time with indexes 0, 1, 2…, deltas of the block's type,
 *   then message_delta and message_stop last.
 * - responses (wire §15): sequence numbers 0, 1, 2…, created and in_progress first, each item opened once and closed
 *   with the same id, deltas naming the open item, and a completed response listing the items as they closed.
 * @module
 */
import { expect } from 'bun:test'
import type Anthropic from '@anthropic-ai/sdk'
import type OpenAI from 'openai'

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk
type Event = Anthropic.Messages.RawMessageStreamEvent | { type: 'ping' } | { type: string }

/** Checks a whole chat-completions stream; `model` is the name the client asked for. */
export function checkChatChunks(chunks: Chunk[], model: string, includeUsage: boolean): void {
	expect(chunks.length).toBeGreaterThan(0)
	const id = chunks[0]!.id
	expect(id).toStartWith('chatcmpl')
	const withChoices = chunks.filter((c) => c.choices.length > 0)
	expect(withChoices[0]!.choices[0]!.delta.role).toBe('assistant')
	const seen = new Set<number>()
	let finishes = 0
	for (const [i, c] of chunks.entries()) {
		expect(c.object).toBe('chat.completion.chunk')
		expect(c.id).toBe(id)
		expect(c.model).toBe(model)
		if (includeUsage && i < chunks.length - 1) expect(c.usage ?? null).toBeNull()
		if (!includeUsage) expect(c.usage ?? null).toBeNull()
		for (const choice of c.choices) {
			expect(choice.index).toBe(0)
			// Nothing may follow the finish_reason except the usage chunk.
			expect(finishes).toBe(0)
			if (choice.finish_reason) finishes++
			for (const tc of choice.delta.tool_calls ?? []) {
				if (!seen.has(tc.index)) {
					expect(tc.index).toBe(seen.size)
					expect(typeof tc.id).toBe('string')
					expect(tc.type).toBe('function')
					expect(typeof tc.function?.name).toBe('string')
					expect(typeof tc.function?.arguments).toBe('string')
					seen.add(tc.index)
				} else {
					expect(tc.id).toBeUndefined()
					expect(tc.function?.name).toBeUndefined()
					expect(typeof tc.function?.arguments).toBe('string')
				}
			}
		}
	}
	expect(finishes).toBe(1)
	const last = chunks[chunks.length - 1]!
	if (includeUsage) {
		expect(last.choices).toEqual([])
		expect(last.usage).toBeTruthy()
	}
}

const DELTA_OF: Record<string, string[]> = {
	text: ['text_delta', 'citations_delta'],
	thinking: ['thinking_delta', 'signature_delta'],
	redacted_thinking: [],
	tool_use: ['input_json_delta'],
	// The web search server tool (docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool#streaming).
	server_tool_use: ['input_json_delta'],
	web_search_tool_result: [],
}

/**
 * The blocks a streamed message built, as the Anthropic SDK's stream gives them back for a client to replay (text,
 * thinking with its signature, tool_use with its input parsed), with the stop reason and usage of its message_delta.
 */
export function messageBlocks(events: Array<{ type: string; [k: string]: any }>): { content: any[]; stop?: string; usage?: any } {
	const blocks: any[] = []
	for (const e of events) {
		if (e.type === 'content_block_start') blocks[e.index] = { ...e.content_block }
		if (e.type === 'content_block_delta') {
			const b = blocks[e.index]
			if (e.delta.type === 'text_delta') b.text += e.delta.text
			if (e.delta.type === 'thinking_delta') b.thinking += e.delta.thinking
			if (e.delta.type === 'signature_delta') b.signature = e.delta.signature
			if (e.delta.type === 'input_json_delta') b.json = (b.json ?? '') + e.delta.partial_json
		}
	}
	const content = blocks.map(({ json, ...b }) => (b.type === 'tool_use' ? { ...b, input: JSON.parse(json || '{}') } : b))
	const delta = events.find((e) => e.type === 'message_delta')
	return { content, stop: delta?.delta.stop_reason, usage: delta?.usage }
}

/** Checks a whole messages stream (events in arrival order, pings included). */
export function checkMessageEvents(events: Event[], model: string): void {
	const real = events.filter((e) => e.type !== 'ping')
	const start = real[0] as Anthropic.Messages.RawMessageStartEvent
	expect(start.type).toBe('message_start')
	expect(real.filter((e) => e.type === 'message_start')).toHaveLength(1)
	expect(start.message.id).toStartWith('msg_')
	expect(start.message.role).toBe('assistant')
	expect(start.message.model).toBe(model)
	expect(start.message.content).toEqual([])
	expect(typeof start.message.usage.input_tokens).toBe('number')
	expect(typeof start.message.usage.output_tokens).toBe('number')
	expect(real[real.length - 1]!.type).toBe('message_stop')
	const deltaAt = real.findIndex((e) => e.type === 'message_delta')
	expect(deltaAt).toBe(real.length - 2)
	let open: { index: number; type: string } | undefined
	let next = 0
	for (const e of real.slice(1, deltaAt)) {
		if (e.type === 'content_block_start') {
			const ev = e as Anthropic.Messages.RawContentBlockStartEvent
			expect(open).toBeUndefined()
			expect(ev.index).toBe(next++)
			open = { index: ev.index, type: ev.content_block.type }
			expect(Object.keys(DELTA_OF)).toContain(open.type)
			if (ev.content_block.type === 'tool_use') expect(ev.content_block.input).toEqual({})
			if (ev.content_block.type === 'text') expect(ev.content_block.text).toBe('')
		} else if (e.type === 'content_block_delta') {
			const ev = e as Anthropic.Messages.RawContentBlockDeltaEvent
			expect(ev.index).toBe(open!.index)
			expect(DELTA_OF[open!.type]).toContain(ev.delta.type)
		} else if (e.type === 'content_block_stop') {
			expect((e as Anthropic.Messages.RawContentBlockStopEvent).index).toBe(open!.index)
			open = undefined
		} else throw new Error(`unexpected event ${e.type} between blocks`)
	}
	expect(open).toBeUndefined()
	const delta = real[deltaAt] as Anthropic.Messages.RawMessageDeltaEvent
	expect(typeof delta.delta.stop_reason).toBe('string')
	expect(typeof delta.usage.output_tokens).toBe('number')
}

/** Parses an SSE body into frames (`event` may be absent), for tests that read the wire directly. */
export function sseFrames(text: string): Array<{ event?: string; data: string }> {
	return text
		.split(/\r?\n\r?\n/)
		.filter((f) => f.trim() !== '' && !f.startsWith(':'))
		.map((f) => {
			const lines = f.split(/\r?\n/)
			const event = lines.find((l) => l.startsWith('event:'))?.slice(6).trim()
			const data = lines
				.filter((l) => l.startsWith('data:'))
				.map((l) => l.slice(5).trimStart())
				.join('\n')
			return event === undefined ? { data } : { event, data }
		})
}

type ResponsesEvent = OpenAI.Responses.ResponseStreamEvent
type ResponsesResponse = OpenAI.Responses.Response

/**
 * Checks a whole Responses stream. `oneAtATime`: items open in output order, one at a time (Codex reads an item at its
 * output_item.done, so a converted answer must not interleave them); `final`: the SDK's `finalResponse()`, which must
 * be the completed one.
 */
export function checkResponsesEvents(events: ResponsesEvent[], opts: { oneAtATime?: boolean; final?: ResponsesResponse } = {}): void {
	expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
	expect(events.slice(0, 2).map((e) => e.type)).toEqual(['response.created', 'response.in_progress'])
	const open = new Map<number, string>()
	const done: unknown[] = []
	let next = 0
	for (const e of events) {
		if (e.type === 'response.output_item.added') {
			expect(open.has(e.output_index)).toBe(false)
			if (opts.oneAtATime) {
				expect(e.output_index).toBe(next++)
				expect(open.size).toBe(0)
			}
			open.set(e.output_index, e.item.id!)
		} else if (e.type === 'response.output_item.done') {
			expect(open.get(e.output_index)).toBe(e.item.id!)
			open.delete(e.output_index)
			done[e.output_index] = e.item
		} else if ('item_id' in e && 'output_index' in e) expect(open.get(e.output_index as number)).toBe(e.item_id as string)
	}
	expect(open.size).toBe(0)
	const last = events.at(-1)!
	expect(opts.final ? ['response.completed'] : ['response.completed', 'response.incomplete']).toContain(last.type)
	if (last.type !== 'response.completed') return
	expect(last.response.output).toEqual(done as ResponsesResponse['output'])
	if (opts.final) {
		expect(last.response.id).toBe(events[0]!.type === 'response.created' ? events[0].response.id : '')
		expect(opts.final.id).toBe(last.response.id)
	}
}
