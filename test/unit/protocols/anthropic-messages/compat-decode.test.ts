/**
 * The Anthropic stream decoder against what Anthropic-compatible vendors send that Anthropic does not
 * (test/mocks/compat-anthropic documents each source).
 */
import { describe, expect, it } from 'bun:test'
import type { StreamEvent } from '../../../../src/core/events'
import type { SseFrame } from '../../../../src/core/sse'
import { anthropicMessages } from '../../../../src/protocols/anthropic-messages'
import { decodePartialUsage } from '../../../../src/protocols/anthropic-messages/usage'
import { collect, from } from './helpers'

const f = (data: Record<string, unknown>): SseFrame => ({ event: String(data.type), data: JSON.stringify(data) })
const decode = (frames: SseFrame[]): Promise<StreamEvent[]> => collect(anthropicMessages.decodeStream(from(frames)))

const start = (usage: Record<string, unknown>) => f({ type: 'message_start', message: { id: 'msg_v', type: 'message', role: 'assistant', model: 'glm-4.6', content: [], usage } })
const text = [
	f({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
	f({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } }),
	f({ type: 'content_block_stop', index: 0 }),
]
const delta = (usage: Record<string, unknown>, stop: string | null = 'end_turn') => f({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage })
const stop = f({ type: 'message_stop' })
const lastUsage = (events: StreamEvent[]) => events.filter((e) => e.type === 'usage').at(-1)

describe('anthropicMessages.decodeStream with Anthropic-compatible vendors', () => {
	it('should skip an unknown event before message_start and keep that message_start (id, model, input usage)', async () => {
		const events = await decode([f({ type: 'vendor_metadata', request_id: 'r' }), start({ input_tokens: 12, output_tokens: 0 }), ...text, delta({ output_tokens: 7 }), stop])
		expect(events[0]).toEqual({ type: 'start', id: 'msg_v', model: 'glm-4.6', usage: { input: 12, output: 0 } })
		expect(lastUsage(events)).toEqual({ type: 'usage', usage: { input: 12, output: 7 } })
	})

	it('should finish normally when the body ends after a message_delta with a stop_reason but no message_stop', async () => {
		const events = await decode([start({ input_tokens: 12, output_tokens: 1 }), ...text, delta({ output_tokens: 7 }, 'max_tokens')])
		expect(events.at(-1)).toEqual({ type: 'finish', reason: 'max_tokens' })
		expect(events.some((e) => e.type === 'error')).toBe(false)
	})

	it('should still end with upstream_cut when the body ends before any stop_reason', async () => {
		const events = await decode([start({ input_tokens: 12, output_tokens: 1 }), ...text, delta({ output_tokens: 7 }, null)])
		const last = events.at(-1)!
		expect(last.type === 'error' && last.error.code).toBe('upstream_cut')
	})

	it('should not let zero input/cache placeholders in message_delta replace the counts of message_start', async () => {
		const events = await decode([start({ input_tokens: 12, output_tokens: 1, cache_read_input_tokens: 4, cache_creation_input_tokens: 2 }), ...text, delta({ input_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 7 }), stop])
		expect(lastUsage(events)).toEqual({ type: 'usage', usage: { input: 12, output: 7, cacheRead: 4, cacheWrite: 2 } })
	})

	it('should take the input of a message_delta after the zeros of a GLM message_start', async () => {
		const events = await decode([start({ input_tokens: 0, output_tokens: 0 }), ...text, delta({ input_tokens: 14, output_tokens: 7, cache_read_input_tokens: 4 }), stop])
		expect(events[0]).toEqual({ type: 'start', id: 'msg_v', model: 'glm-4.6', usage: { output: 0 } })
		expect(lastUsage(events)).toEqual({ type: 'usage', usage: { input: 14, output: 7, cacheRead: 4 } })
	})
})

describe('decodePartialUsage', () => {
	it('should read null and zero input/cache counters as absent, and keep a zero output', () => {
		expect(decodePartialUsage({ input_tokens: 0, output_tokens: 0, cache_read_input_tokens: null, cache_creation_input_tokens: 0 })).toEqual({ output: 0 })
	})

	it('should keep a zero input_tokens when the prompt was all read from or written to the cache', () => {
		expect(decodePartialUsage({ input_tokens: 0, output_tokens: 3, cache_creation_input_tokens: 10 })).toEqual({ input: 0, output: 3, cacheWrite: 10 })
	})
})
