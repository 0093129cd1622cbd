/**
 * Named end-to-end regressions for the stream bugs other gateways shipped (../shared/WIRE-NOTES.md), read off the
 * wire bytes the gateway sends. Each title names the public issue.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { thinkingSignature } from '../../mocks'
import { type Matrix, MODEL, SETUP_MS, startMatrix, THINKER, UPSTREAMS } from './harness'
import { postRaw, simpleBody } from './raw'
import { sseFrames } from './wire-checks'
import { watchLateness } from '../../helpers/lateness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const TOOLS_MSG = [
	{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
	{ name: 'get_time', input_schema: { type: 'object', properties: { tz: { type: 'string' } } } },
]
const TOOLS_CHAT = TOOLS_MSG.map((t) => ({ type: 'function', function: { name: t.name, parameters: t.input_schema } }))

/** The events of a messages stream (pings dropped), parsed. */
async function messageEvents(body: Record<string, unknown>) {
	const acct = await m.account()
	const res = await postRaw(m, 'messages', acct, { max_tokens: 2048, stream: true, ...body })
	expect(res.status).toBe(200)
	return sseFrames(await res.text())
		.filter((f) => f.event !== 'ping')
		.map((f) => ({ event: f.event, ...JSON.parse(f.data) }))
}

/** The chunks of a chat stream (without [DONE]), parsed. */
async function chatChunks(body: Record<string, unknown>) {
	const acct = await m.account()
	const res = await postRaw(m, 'chat', acct, { stream: true, ...body })
	expect(res.status).toBe(200)
	const frames = sseFrames(await res.text())
	expect(frames[frames.length - 1]!.data).toBe('[DONE]')
	return frames.slice(0, -1).map((f) => JSON.parse(f.data))
}

describe('WIRE-NOTES stream regressions', () => {
	it('BerriAI/litellm#25561: Gemini tool calls reach a messages stream with their arguments, as one input_json_delta each', async () => {
		const events = await messageEvents({ model: MODEL.gemini, tools: TOOLS_MSG, messages: [{ role: 'user', content: 'both #tools' }] })
		const toolBlocks = events.filter((e) => e.type === 'content_block_start' && e.content_block.type === 'tool_use').map((e) => e.index)
		expect(toolBlocks).toHaveLength(2)
		const deltas = toolBlocks.map((i) => events.filter((e) => e.type === 'content_block_delta' && e.index === i).map((e) => e.delta))
		expect(deltas).toEqual([[{ type: 'input_json_delta', partial_json: '{"city":"Paris"}' }], [{ type: 'input_json_delta', partial_json: '{"tz":"Tokyo"}' }]])
		expect(events.find((e) => e.type === 'message_delta').delta.stop_reason).toBe('tool_use')
	})

	for (const up of UPSTREAMS)
		it(`maximhq/bifrost#5907, #4556 & vercel/ai#17326: exactly one well-formed message_start with real input usage (${up} upstream)`, async () => {
			const events = await messageEvents({ model: MODEL[up], messages: [{ role: 'user', content: 'four words right here' }] })
			const starts = events.filter((e) => e.type === 'message_start')
			expect(starts).toHaveLength(1)
			expect(events[0]!.type).toBe('message_start')
			const msg = starts[0].message
			expect(msg).toMatchObject({ type: 'message', role: 'assistant', model: MODEL[up], content: [], stop_reason: null })
			expect(msg.id).toMatch(/^msg_/)
			expect(msg.usage.input_tokens).toBeGreaterThan(0)
			expect(typeof msg.usage.output_tokens).toBe('number')
			expect(typeof msg.usage.cache_read_input_tokens).toBe('number')
			expect(typeof msg.usage.cache_creation_input_tokens).toBe('number')
		})

	it('Portkey-AI/gateway#1275, #1399: parallel Anthropic tool_use blocks become chat tool_calls with their own indexes, role first', async () => {
		const chunks = await chatChunks({ model: MODEL.anthropic, tools: TOOLS_CHAT, messages: [{ role: 'user', content: 'both #tools' }] })
		expect(chunks[0].choices[0].delta.role).toBe('assistant')
		const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? [])
		const heads = calls.filter((c) => c.id)
		expect(heads.map((c) => [c.index, c.type, c.function.name, c.function.arguments])).toEqual([
			[0, 'function', 'get_weather', ''],
			[1, 'function', 'get_time', ''],
		])
		const args = [0, 1].map((i) => calls.filter((c) => c.index === i).map((c) => c.function.arguments).join(''))
		expect(args.map((a) => JSON.parse(a))).toEqual([{ city: 'Paris' }, { tz: 'Tokyo' }])
		expect(chunks[chunks.length - 1].choices[0].finish_reason).toBe('tool_calls')
	})

	it('QuantumNous/new-api PR #2854, #6394: reasoning then parallel tools from OpenAI become closed blocks with increasing indexes', async () => {
		const events = await messageEvents({ model: THINKER.openai, thinking: { type: 'enabled', budget_tokens: 1024 }, tools: TOOLS_MSG, messages: [{ role: 'user', content: 'think #tools' }] })
		const lifecycle = events.filter((e) => e.type.startsWith('content_block_') && e.type !== 'content_block_delta').map((e) => [e.type.slice(14), e.index, e.content_block?.type])
		expect(lifecycle).toEqual([
			['start', 0, 'thinking'],
			['stop', 0, undefined],
			['start', 1, 'tool_use'],
			['stop', 1, undefined],
			['start', 2, 'tool_use'],
			['stop', 2, undefined],
		])
	})

	it('WIRE-NOTES wire §3: cumulative message_delta usage is replaced, not added (Anthropic upstream → chat usage)', async () => {
		const chunks = await chatChunks({ model: MODEL.anthropic, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'count me right' }] })
		// message_start says output_tokens 1, message_delta says 6 in total: 6, not 7.
		expect(chunks[chunks.length - 1].usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 6, total_tokens: 9 })
	})

	it('WIRE-NOTES wire §13: a signed thinking block reaches a chat client as reasoning_content plus its signature', async () => {
		const chunks = await chatChunks({ model: MODEL.anthropic, reasoning_effort: 'low', messages: [{ role: 'user', content: 'ponder' }] })
		const deltas = chunks.map((c) => c.choices[0]?.delta ?? {})
		expect(deltas.map((d) => d.reasoning_content ?? '').join('')).toBe('Let me think about ponder.')
		const details = deltas.flatMap((d) => d.reasoning_details ?? [])
		expect(details.map((d: { signature?: string }) => d.signature).filter(Boolean)).toEqual([thinkingSignature('Let me think about ponder.')])
	})

	it('WIRE-NOTES wire §16: Gemini is streamed with alt=sse and authenticated by header, never ?key=', async () => {
		const acct = await m.account()
		await (await postRaw(m, 'chat', acct, simpleBody('chat', MODEL.gemini, 'sse please', true))).text()
		const sent = m.mocks.gemini.requests[m.mocks.gemini.requests.length - 1]!
		expect(sent.path).toEndWith(':streamGenerateContent')
		expect(sent.query).toEqual({ alt: 'sse' })
		expect(sent.headers['x-goog-api-key']).toBe('up-gemini')
	})
})

describe('WIRE-NOTES #19: long silent reasoning', () => {
	let slow: Matrix
	beforeAll(async () => {
		slow = await startMatrix({ mock: { chunkDelayMs: 2000 } })
	}, SETUP_MS)
	afterAll(() => slow.close())

	for (const up of UPSTREAMS)
		it(`BerriAI/litellm PR #37322: should send the response headers before the first token arrives (${up} upstream)`, async () => {
			const acct = await slow.account()
			const ctl = new AbortController()
			const t0 = Date.now()
			const lateness = watchLateness()
			const res = await postRaw(slow, 'messages', acct, simpleBody('messages', MODEL[up], 'take your time', true), { signal: ctl.signal })
			const elapsed = Date.now() - t0
			expect(res.status).toBe(200)
			expect(res.headers.get('content-type')).toStartWith('text/event-stream')
			// The second upstream chunk (the first words) comes 2 s in; the headers must not wait for it.
			expect(elapsed).toBeLessThan(1800 + lateness.stop())
			ctl.abort()
		})
})
