/** Test helpers for the Responses codec: fixtures as frames, events as streams, frames as an HTTP body. */
import { join } from 'node:path'
import type { StreamEvent } from '../../../../src/core/events'
import { parseSse, type SseFrame } from '../../../../src/core/sse'
export { collect, sseResponse } from '../../../helpers/sse'

export { checkInvariants } from '../gemini/helpers'

const FIXTURES = join(import.meta.dir, '../../../fixtures/openai-responses')

/** A recorded upstream body, parsed into SSE frames as the relay would. */
export const fixtureFrames = (name: string): AsyncGenerator<SseFrame> => parseSse(Bun.file(join(FIXTURES, name)).stream())

export const fixtureJson = async (name: string): Promise<Record<string, unknown>> => Bun.file(join(FIXTURES, name)).json()


export async function* from<T>(items: T[]): AsyncGenerator<T> {
	for (const x of items) yield x
}


/** The JSON payloads of encoded frames. */
export const payloads = (frames: SseFrame[]): Array<Record<string, any>> => frames.map((f) => JSON.parse(f.data))

/** A typical canonical stream: signed thinking, text, two tool calls (one with a Gemini signature), usage, finish. */
export const agentTurn = (): StreamEvent[] => [
	{ type: 'start', id: 'msg_01', model: 'claude-sonnet-4-5', usage: { input: 10, cacheRead: 90 } },
	{ type: 'block_start', index: 0, block: { kind: 'thinking' } },
	{ type: 'thinking_delta', index: 0, text: 'Think' },
	{ type: 'thinking_delta', index: 0, text: 'ing.' },
	{ type: 'signature_delta', index: 0, signature: 'sig-A' },
	{ type: 'block_stop', index: 0 },
	{ type: 'block_start', index: 1, block: { kind: 'text' } },
	{ type: 'text_delta', index: 1, text: 'Let me ' },
	{ type: 'text_delta', index: 1, text: 'check.' },
	{ type: 'block_stop', index: 1 },
	{ type: 'block_start', index: 2, block: { kind: 'tool_call', id: 'toolu_A', name: 'get_weather' } },
	{ type: 'json_delta', index: 2, json: '{"city":' },
	{ type: 'json_delta', index: 2, json: '"Paris"}' },
	{ type: 'block_stop', index: 2 },
	{ type: 'block_start', index: 3, block: { kind: 'tool_call', id: 'toolu_B', name: 'get_time', signature: 'Z2VtaW5p' } },
	{ type: 'block_stop', index: 3 },
	{ type: 'usage', usage: { output: 42, reasoning: 12 } },
	{ type: 'finish', reason: 'tool_use' },
]
