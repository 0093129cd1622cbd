import { describe, expect, it, spyOn } from 'bun:test'
import { isPreambleFrame } from '../../../src/relay/frame-checks'
import { prefetch } from '../../../src/relay/stream'
import { watchLateness } from '../../helpers/lateness'

const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
	data: JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta, logprobs: null, finish_reason: null }], ...extra }),
})

describe('isPreambleFrame (Anthropic messages)', () => {
	const pre = (event: string, data: object) => isPreambleFrame('anthropic-messages', { event, data: JSON.stringify(data) })
	it('should take message_start, ping and an empty text or thinking block start for preamble, and the rest for content', () => {
		expect(pre('message_start', { type: 'message_start', message: { id: 'm', content: [] } })).toBe(true)
		expect(pre('ping', { type: 'ping' })).toBe(true)
		expect(pre('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })).toBe(true)
		expect(pre('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '', citations: [] } })).toBe(true)
		expect(pre('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } })).toBe(true)
		expect(pre('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'Hi' } })).toBe(false)
		expect(pre('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} } })).toBe(false)
		expect(pre('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'redacted_thinking', data: 'x' } })).toBe(false)
		expect(pre('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '' } })).toBe(false)
		expect(pre('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' } })).toBe(false)
	})
})

describe('isPreambleFrame (OpenAI chat)', () => {
	const pre = (f: { data: string }) => isPreambleFrame('openai-chat', f)
	it('should take the role-only first chunk for preamble', () => {
		expect(pre(chunk({ role: 'assistant', content: '' }))).toBe(true)
		expect(pre(chunk({ role: 'assistant', content: '', refusal: null }))).toBe(true)
		expect(pre(chunk({ role: 'assistant', content: null }))).toBe(true)
	})
	it('should take chunks with text, tool calls, a finish or usage for content', () => {
		expect(pre(chunk({ content: 'Hi' }))).toBe(false)
		expect(pre(chunk({ role: 'assistant', content: 'Hi' }))).toBe(false)
		expect(pre(chunk({ content: '"' }))).toBe(false)
		expect(pre(chunk({ tool_calls: [{ index: 0, id: 't', type: 'function', function: { name: 'f', arguments: '' } }] }))).toBe(false)
		expect(pre({ data: JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) })).toBe(false)
		expect(pre({ data: JSON.stringify({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } }) })).toBe(false)
	})
	it('should not be misled by "content" inside a string value', () => {
		// The role chunk of a tool call whose arguments mention "content": the key in the text is escaped.
		expect(pre(chunk({ role: 'assistant', content: '' }, { note: '{"content":"x"}' }))).toBe(true)
		expect(pre(chunk({ role: 'assistant', refusal: 'say "content":"x"' }))).toBe(false)
	})
	it('should tell the usual role chunks without parsing them, and parse anything less plain', () => {
		const parse = spyOn(JSON, 'parse')
		try {
			// OpenAI's own first chunk, as it streams it (with include_usage: "usage":null on every chunk).
			const openai = '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","service_tier":"default","system_fingerprint":"fp","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}'
			for (const d of [openai, chunk({ role: 'assistant', content: '' }).data, chunk({ role: 'assistant', content: null }).data, chunk({ role: 'assistant' }).data])
				expect(pre({ data: d })).toBe(true)
			expect(parse).not.toHaveBeenCalled()
			// Two choices, a finish, usage beside the role, or an error member: decided by the parse, as before.
			const two = { data: JSON.stringify({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }, { index: 1, delta: { content: 'x' }, finish_reason: null }] }) }
			const finished = { data: JSON.stringify({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: 'stop' }] }) }
			const usage = chunk({ role: 'assistant', content: '' }, { usage: { prompt_tokens: 1, completion_tokens: 0 } })
			const error = chunk({ role: 'assistant', content: '' }, { error: { message: 'x' } })
			expect([two, finished, usage, error].map(pre)).toEqual([false, false, false, false])
			expect(parse).toHaveBeenCalledTimes(4)
		} finally {
			parse.mockRestore()
		}
	})
	it('should take [DONE], errors and broken frames for content (they end the window)', () => {
		expect(pre({ data: '[DONE]' })).toBe(false)
		expect(pre({ data: '{"error":{"message":"x"}}' })).toBe(false)
		expect(pre({ data: '{"choices":[{"delta":{"role":"assistant"' })).toBe(false)
	})
})

/** An iterator over `items`, each delivered after its delay (ms); never ends when `stall`. */
function source<T>(items: Array<[T, number]>, stall = false): AsyncIterator<T> {
	let i = 0
	return {
		async next() {
			if (i >= items.length) {
				if (stall) await new Promise(() => {})
				return { value: undefined, done: true }
			}
			const [value, ms] = items[i++]!
			await Bun.sleep(ms)
			return { value, done: false }
		},
	}
}

describe('prefetch (the window before a stream commits to its channel)', () => {
	const isPre = (v: string) => v === 'role'
	it('should stop at the first item that is not preamble', async () => {
		const r = await prefetch(source([['role', 0], ['text', 0], ['more', 0]]), isPre, 1_000)
		expect(r).toEqual({ buffered: ['role', 'text'], pending: undefined, done: false })
	})
	it('should report an upstream that ended inside the window', async () => {
		expect(await prefetch(source([['role', 0]]), isPre, 1_000)).toEqual({ buffered: ['role'], pending: undefined, done: true })
	})
	it('should give up at the end of the window, handing over the read still running', async () => {
		const started = Date.now()
		const lateness = watchLateness()
		const r = await prefetch(source([['role', 0], ['text', 400]]), isPre, 150)
		const took = Date.now() - started
		expect(r.buffered).toEqual(['role'])
		expect(took).toBeGreaterThanOrEqual(150)
		expect(took).toBeLessThan(390 + lateness.stop())
		expect(await r.pending).toEqual({ value: 'text', done: false })
	})
	it('should keep each window its own length when several overlap', async () => {
		const started = Date.now()
		const lateness = watchLateness()
		const [a, b] = await Promise.all([
			prefetch(source([['role', 0]], true), isPre, 100).then(() => Date.now() - started),
			prefetch(source([['role', 0]], true), isPre, 300).then(() => Date.now() - started),
		])
		expect(a).toBeGreaterThanOrEqual(100)
		expect(a).toBeLessThan(290 + lateness.stop())
		expect(b).toBeGreaterThanOrEqual(300)
	})
})
