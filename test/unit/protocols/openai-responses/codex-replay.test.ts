/**
 * Codex CLI replays (store: false): items without ids, reasoning with `content: null`, and each function call followed
 * by its output, so parallel calls come back interleaved (call A, output A, call B, output B).
 */
import { describe, expect, it } from 'bun:test'
import { packToolCallId } from '../../../../src/core/tool-ids'
import type { StreamEvent } from '../../../../src/core/events'
import { customInputDelta, customInputReader } from '../../../../src/protocols/openai-responses/custom-tools'
import { decodeRequest, unconvertible } from '../../../../src/protocols/openai-responses/request'
import { encodeOutput } from '../../../../src/protocols/openai-responses/response'
import { encodeStream } from '../../../../src/protocols/openai-responses/stream'
import { collect, from, payloads } from './helpers'

const user = (text: string) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] })
const call = (call_id: string, name = 'shell') => ({ type: 'function_call', name, arguments: '{"command":["ls"]}', call_id })
const output = (call_id: string, out: string) => ({ type: 'function_call_output', call_id, output: out })
const reasoning = (text: string, encrypted_content: string | null) => ({ type: 'reasoning', summary: [{ type: 'summary_text', text }], content: null, encrypted_content })

/** Each turn's role and part types (tool calls and results with their ids). */
const shape = (input: unknown[]) =>
	decodeRequest({ model: 'm', input }).messages.map((m) => [
		m.role,
		m.content.map((p) => (p.type === 'tool_call' ? `call:${p.id}` : p.type === 'tool_result' ? `result:${p.toolCallId}` : p.type)),
	])

describe('openaiResponses.decodeRequest of Codex replays', () => {
	it('should put interleaved parallel calls of one answer back into one assistant turn', () => {
		expect(shape([user('go'), reasoning('Plan.', 'sbsig:sig_1'), call('toolu_a'), output('toolu_a', 'A'), call('sbp_toolu_b'), output('sbp_toolu_b', 'B')])).toEqual([
			['user', ['text']],
			['assistant', ['thinking', 'call:toolu_a', 'call:toolu_b']],
			['user', ['result:toolu_a', 'result:toolu_b']],
		])
	})

	it("should regroup a Gemini answer's calls with the first one's signature, and start a new step at the next answer's call", () => {
		const signed = (id: string, sig: string) => call(packToolCallId(id, sig))
		const input = [user('go'), signed('c1', 'c2lnMQ=='), output('c1', 'A'), call('sbp_c2'), output('sbp_c2', 'B'), signed('c3', 'c2lnMw=='), output('c3', 'C')]
		expect(shape(input)).toEqual([
			['user', ['text']],
			['assistant', ['call:c1', 'call:c2']],
			['user', ['result:c1', 'result:c2']],
			['assistant', ['call:c3']],
			['user', ['result:c3']],
		])
		expect(decodeRequest({ model: 'm', input }).messages[1]!.content[0]).toMatchObject({ id: 'c1', signature: 'c2lnMQ==' })
	})

	// Claude thinks at the start of a tool loop, not before each later step: steps without thinking are its own.
	it('should keep the steps of separate answers as written, thinking or not', () => {
		expect(shape([user('go'), reasoning('One.', 'sbsig:s1'), call('a'), output('a', 'A'), call('b'), output('b', 'B')])).toEqual([
			['user', ['text']],
			['assistant', ['thinking', 'call:a']],
			['user', ['result:a']],
			['assistant', ['call:b']],
			['user', ['result:b']],
		])
	})

	it('should leave a later call as written when a message came between', () => {
		expect(shape([user('go'), call('a'), output('a', 'A'), user('also this'), call('sbp_b'), output('sbp_b', 'B')])).toEqual([
			['user', ['text']],
			['assistant', ['call:a']],
			['user', ['result:a', 'text']],
			['assistant', ['call:b']],
			['user', ['result:b']],
		])
	})
})

describe('openaiResponses output call_ids', () => {
	const content = [
		{ type: 'thinking' as const, text: 'T', signature: 's' },
		{ type: 'tool_call' as const, id: 'toolu_a', name: 'shell', input: {} },
		{ type: 'tool_call' as const, id: 'toolu_b', name: 'shell', input: {}, signature: 'Z2Vt' },
	]
	it('should mark the later calls of an answer, in the body and in the stream alike', async () => {
		const body = encodeOutput(content, 'tool_use')
		expect(body.flatMap((o) => (o.type === 'function_call' ? [o.call_id] : []))).toEqual(['toolu_a', 'sbp_toolu_b__ts_Z2Vt'])
		const events: StreamEvent[] = [{ type: 'start', id: 'msg_1', model: 'c' }]
		content.forEach((p, index) => {
			events.push({ type: 'block_start', index, block: p.type === 'thinking' ? { kind: 'thinking' } : { kind: 'tool_call', id: p.id, name: p.name, ...(p.signature && { signature: p.signature }) } })
			events.push({ type: 'block_stop', index })
		})
		events.push({ type: 'finish', reason: 'tool_use' })
		const frames = await collect(encodeStream(from(events), { model: 'c' }))
		const done = payloads(frames).at(-1)!.response.output as Array<{ type: string; call_id?: string }>
		expect(done.flatMap((o) => (o.type === 'function_call' ? [o.call_id] : []))).toEqual(['toolu_a', 'sbp_toolu_b__ts_Z2Vt'])
	})
})

describe('openaiResponses.unconvertible of Codex tools', () => {
	it("should convert the client's freeform tool to a function of one string, and refuse an OpenAI built-in", () => {
		const body = { model: 'm', input: 'x', tools: [{ type: 'function', name: 'shell' }, { type: 'custom', name: 'apply_patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: "x"' } }] }
		expect(unconvertible(body)).toBeUndefined()
		const patch = decodeRequest(body).tools?.find((t) => t.name === 'apply_patch')
		expect(patch?.parameters).toEqual({ type: 'object', properties: { input: { type: 'string', description: "The tool's whole input. Raw text in the lark grammar below (not JSON, not quoted):\nstart: \"x\"" } }, required: ['input'] })
		expect(unconvertible({ model: 'm', input: 'x', tools: [{ type: 'image_generation' }] })).toBe("tools[0] of type 'image_generation' is an OpenAI built-in tool")
	})

	it('should read a replayed custom_tool_call as a call of that function, and its output as its result', () => {
		const input = [{ type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input: '*** Begin Patch' }, { type: 'custom_tool_call_output', call_id: 'c1', output: 'Done!' }]
		const req = decodeRequest({ model: 'm', input })
		expect(req.messages.map((x) => x.content)).toEqual([[{ type: 'tool_call', id: 'c1', name: 'apply_patch', input: { input: '*** Begin Patch' } }], [{ type: 'tool_result', toolCallId: 'c1', name: 'apply_patch', content: [{ type: 'text', text: 'Done!' }] }]])
	})
})

describe('customInputDelta', () => {
	const read = (...fragments: string[]) => {
		const r = customInputReader()
		return fragments.map((f) => customInputDelta(r, f))
	}
	it('should read the input of streamed arguments up to the last whole character, each piece once', () => {
		expect(read('{"inp', 'ut": "*** Begin\\', 'nA \\"b\\" \\u00', 'e9', '"}')).toEqual(['', '*** Begin', '\nA "b" ', 'é', ''])
		expect(read('{"input":"done"}', 'ignored')).toEqual(['done', ''])
		expect(read('{"patch":"x"}')).toEqual([''])
	})
})
