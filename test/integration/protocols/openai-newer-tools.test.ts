/**
 * Chat-completions inputs OpenAI documents beyond function tools: custom (freeform) tools and their calls, the
 * `allowed_tools` tool choice, and the legacy `function` role with `function_call`. A GPT model takes them verbatim
 * (the fast path: they used to be refused 400 by the request schema). For Claude and Gemini, `allowed_tools`
 * becomes the subset of tools it allows; what they cannot take is refused 400 naming the field, before any upstream
 * call, rather than dropped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const fn = (name: string) => ({ type: 'function' as const, function: { name, description: `${name} it`, parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } } })
const patch = { type: 'custom' as const, custom: { name: 'apply_patch', description: 'Apply a patch', format: { type: 'grammar' as const, grammar: { syntax: 'lark' as const, definition: 'start: /.+/' } } } }
const allowed = { type: 'allowed_tools' as const, allowed_tools: { mode: 'required' as const, tools: [{ type: 'function' as const, function: { name: 'search' } }] } }

async function post(key: string, body: Record<string, unknown>) {
	const res = await fetch(`${m.app.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
	return { status: res.status, body: (await res.json()) as Record<string, any> }
}

describe('a GPT model', () => {
	it('should take custom tools, a custom tool choice and custom tool calls in history verbatim', async () => {
		const acct = await m.account()
		const messages = [
			{ role: 'user', content: 'fix the bug' },
			{ role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'custom', custom: { name: 'apply_patch', input: '*** Begin Patch' } }] },
			{ role: 'tool', tool_call_id: 'call_1', content: 'applied' },
		]
		const body = { model: MODEL.openai, messages, tools: [fn('search'), patch], tool_choice: { type: 'custom', custom: { name: 'apply_patch' } } }
		const r = await post(acct.key, body)
		expect(r.status).toBe(200)
		const sent = lastRequest(m.mocks.openai).body
		expect([sent.tools, sent.tool_choice, sent.messages]).toEqual([body.tools, body.tool_choice, messages])
	})

	it('should take the allowed_tools tool choice verbatim', async () => {
		const acct = await m.account()
		const r = await acct.openai.chat.completions.create({ model: MODEL.openai, messages: [{ role: 'user', content: 'find cats' }], tools: [fn('search'), fn('delete')], tool_choice: allowed })
		expect(r.choices[0].finish_reason).toBe('tool_calls')
		expect(lastRequest(m.mocks.openai).body.tool_choice).toEqual(allowed)
	})

	it('should take legacy function messages verbatim', async () => {
		const acct = await m.account()
		const messages = [
			{ role: 'user', content: 'weather?' },
			{ role: 'assistant', content: null, function_call: { name: 'weather', arguments: '{"q":"Oslo"}' } },
			{ role: 'function', name: 'weather', content: 'sunny' },
		]
		const r = await post(acct.key, { model: MODEL.openai, messages })
		expect(r.status).toBe(200)
		expect(lastRequest(m.mocks.openai).body.messages).toEqual(messages)
	})
})

describe('Claude and Gemini models', () => {
	for (const up of ['anthropic', 'gemini'] as const) {
		it(`should offer only the tools allowed_tools allows, and require one (${up})`, async () => {
			const acct = await m.account()
			const r = await acct.openai.chat.completions.create({ model: MODEL[up], messages: [{ role: 'user', content: 'find cats' }], tools: [fn('search'), fn('delete')], tool_choice: allowed })
			expect(r.choices[0].message.tool_calls?.map((c) => (c.type === 'function' ? c.function.name : c.type))).toEqual(['search'])
			const sent = lastRequest(m.mocks[up]).body
			if (up === 'anthropic') expect([sent.tools.map((t: { name: string }) => t.name), sent.tool_choice]).toEqual([['search'], { type: 'any' }])
			else
				expect([sent.tools[0].functionDeclarations.map((t: { name: string }) => t.name), sent.toolConfig.functionCallingConfig.mode]).toEqual([['search'], 'ANY'])
		})

		it(`should refuse a custom tool, naming it, without calling the vendor or charging (${up})`, async () => {
			const acct = await m.account()
			const before = m.mocks[up].requests.length
			const r = await post(acct.key, { model: MODEL[up], messages: [{ role: 'user', content: 'fix' }], tools: [fn('search'), patch] })
			expect(r.status).toBe(400)
			expect(r.body.error).toMatchObject({ code: 'unsupported_for_model', param: 'tools[1]' })
			expect(r.body.error.message).toContain("custom (freeform) tool 'apply_patch'")
			expect(m.mocks[up].requests.length).toBe(before)
		})

		it(`should refuse legacy function messages, naming them (${up})`, async () => {
			const acct = await m.account()
			const r = await post(acct.key, { model: MODEL[up], messages: [{ role: 'user', content: 'weather?' }, { role: 'assistant', content: null, function_call: { name: 'weather', arguments: '{}' } }, { role: 'function', name: 'weather', content: 'sunny' }] })
			expect(r.status).toBe(400)
			expect(r.body.error).toMatchObject({ code: 'unsupported_for_model', param: 'messages[1].function_call' })
		})
	}
})
