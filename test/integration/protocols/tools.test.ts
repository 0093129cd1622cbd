/**
 * Issue 3 matrix, tools: a round trip with two parallel calls and their results, in both protocols over every
 * vendor, streamed and not. Asserts the calls and their arguments, the stop reasons, that tool-call ids survive
 * (the vendor's own ids, or invented ones that carry Gemini's thought signature back, WIRE-NOTES #7), the usage and
 * the charge; and how tool_choice and parallel_tool_calls reach each vendor (WIRE-NOTES wire §10).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { thoughtSignatureFor } from '../../mocks'
import { stableId } from '../../mocks/shared/text'
import { type Answer, chat, messages, type Protocol, PROTOCOLS } from './clients'
import { type Account, expectCharges, label, lastRequest, type Matrix, MODEL, PAIRS, SETUP_MS, startMatrix, type Upstream, UPSTREAMS } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const USER = 'weather and time #tools'
// `additionalProperties`, `$schema` and a union type are JSON Schema Gemini's `parameters` rejects (wire §11).
const WEATHER = {
	$schema: 'http://json-schema.org/draft-07/schema#',
	type: 'object',
	properties: { city: { type: 'string' }, units: { type: ['string', 'null'], enum: ['c', 'f', null] } },
	required: ['city'],
	additionalProperties: false,
}
const TIME = { type: 'object', properties: { timezone: { type: 'string' } }, required: ['timezone'] }

const CHAT_TOOLS = [
	{ type: 'function' as const, function: { name: 'get_weather', description: 'Weather for a city', parameters: WEATHER } },
	{ type: 'function' as const, function: { name: 'get_time', description: 'Local time in a timezone', parameters: TIME } },
]
const MESSAGE_TOOLS = [
	{ name: 'get_weather', description: 'Weather for a city', input_schema: WEATHER as { type: 'object' } },
	{ name: 'get_time', description: 'Local time in a timezone', input_schema: TIME as { type: 'object' } },
]

const STOP: Record<Protocol, { tools: string; done: string }> = { chat: { tools: 'tool_calls', done: 'stop' }, messages: { tools: 'tool_use', done: 'end_turn' } }

async function firstTurn(proto: Protocol, acct: Account, up: Upstream, stream: boolean, extra: Record<string, unknown> = {}): Promise<Answer> {
	const model = MODEL[up]
	if (proto === 'chat') return chat(acct.openai, { model, messages: [{ role: 'user', content: USER }], tools: CHAT_TOOLS, ...extra }, stream)
	return messages(acct.anthropic, { model, max_tokens: 512, messages: [{ role: 'user', content: USER }], tools: MESSAGE_TOOLS, ...extra }, stream)
}

async function secondTurn(proto: Protocol, acct: Account, up: Upstream, stream: boolean, first: Answer, results: string[]): Promise<Answer> {
	const model = MODEL[up]
	if (proto === 'chat') {
		const toolMsgs = first.calls.map((c, i) => ({ role: 'tool' as const, tool_call_id: c.id, content: results[i]! }))
		return chat(acct.openai, { model, messages: [{ role: 'user', content: USER }, first.replay, ...toolMsgs], tools: CHAT_TOOLS }, stream)
	}
	const blocks = first.calls.map((c, i) => ({ type: 'tool_result' as const, tool_use_id: c.id, content: results[i]! }))
	return messages(acct.anthropic, { model, max_tokens: 512, messages: [{ role: 'user', content: USER }, first.replay, { role: 'user', content: blocks }], tools: MESSAGE_TOOLS }, stream)
}

/** The ids the vendor itself issued for the two calls (the mocks derive them from the conversation). */
const vendorIds = (up: Upstream) => [0, 1].map((i) => stableId(up === 'openai' ? 'call_' : 'toolu_', `${USER}|1|${i}`))

/** Tool-call ids (OpenAI) / tool_use ids (Anthropic) and the result ids that answer them, as the vendor received them. */
function upstreamIds(up: Upstream, body: Record<string, any>): { calls: string[]; results: string[] } {
	if (up === 'openai') {
		const msgs = body.messages as any[]
		return { calls: msgs.flatMap((x) => (x.tool_calls ?? []).map((c: any) => c.id)), results: msgs.filter((x) => x.role === 'tool').map((x) => x.tool_call_id) }
	}
	const blocks = (body.messages as any[]).flatMap((x) => (Array.isArray(x.content) ? x.content : []))
	return { calls: blocks.filter((b) => b.type === 'tool_use').map((b) => b.id), results: blocks.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id) }
}

for (const proto of PROTOCOLS) {
	describe(`${proto} tools`, () => {
		for (const [up, stream] of PAIRS) {
			it(`should round-trip two parallel tool calls and their results (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const a = await firstTurn(proto, acct, up, stream)
				expect(a.calls.map((c) => ({ name: c.name, args: c.args }))).toEqual([
					{ name: 'get_weather', args: { city: 'Paris' } },
					{ name: 'get_time', args: { timezone: 'Tokyo' } },
				])
				expect(a.stop).toBe(STOP[proto].tools)
				expect(a.text).toBe('')
				expect(a.usage).toMatchObject({ input: 4, output: 4 })
				// Anthropic's tool_use id pattern is ^[a-zA-Z0-9_-]+$; ids must be distinct.
				for (const c of a.calls) expect(c.id).toMatch(/^[A-Za-z0-9_-]+$/)
				expect(new Set(a.calls.map((c) => c.id)).size).toBe(2)
				if (up !== 'gemini') expect(a.calls.map((c) => c.id)).toEqual(vendorIds(up))
				if (proto === 'messages') {
					// BerriAI/litellm#34692: no spurious empty text block next to the tool_use blocks.
					expect(a.replay.content.map((b: { type: string }) => b.type)).toEqual(['tool_use', 'tool_use'])
				}
				const sent = lastRequest(m.mocks[up]).body
				if (up === 'gemini') {
					// Sanitised to the OpenAPI subset Gemini accepts, or the mock would have answered 400.
					const decl = sent.tools[0].functionDeclarations[0]
					expect(JSON.stringify(decl)).not.toContain('additionalProperties')
					expect(JSON.stringify(decl)).not.toContain('$schema')
				}

				const b = await secondTurn(proto, acct, up, stream, a, ['sunny', 'night'])
				expect(b.text).toBe('Tool results: sunny; night')
				expect(b.stop).toBe(STOP[proto].done)
				expect(b.calls).toEqual([])
				const second = lastRequest(m.mocks[up]).body
				if (up === 'gemini') {
					const parts = second.contents.flatMap((c: any) => c.parts)
					const calls = parts.filter((p: any) => p.functionCall)
					expect(calls.map((p: any) => p.functionCall)).toEqual([
						{ name: 'get_weather', args: { city: 'Paris' } },
						{ name: 'get_time', args: { timezone: 'Tokyo' } },
					])
					// theopenco/llmgateway#1267: the signature comes back on the same part, or Gemini 3 answers 400.
					expect(calls[0].thoughtSignature).toBe(thoughtSignatureFor('get_weather', { city: 'Paris' }))
					expect(parts.filter((p: any) => p.functionResponse).map((p: any) => p.functionResponse.name)).toEqual(['get_weather', 'get_time'])
				} else {
					expect(upstreamIds(up, second)).toEqual({ calls: vendorIds(up), results: vendorIds(up) })
				}
				await expectCharges(m, acct, [
					{ model: MODEL[up], input: 4, output: 4, stream },
					{ model: MODEL[up], input: 6, output: 4, stream },
				])
			})
		}
	})
}

/** How a named tool choice and parallel_tool_calls:false look at each vendor (wire §10). */
const NAMED_CHOICE: Record<Upstream, (body: Record<string, any>) => unknown> = {
	openai: (b) => ({ choice: b.tool_choice, parallel: b.parallel_tool_calls }),
	anthropic: (b) => b.tool_choice,
	gemini: (b) => b.toolConfig?.functionCallingConfig ?? b.tool_config?.function_calling_config,
}
const EXPECTED_CHOICE: Record<Upstream, unknown> = {
	openai: { choice: { type: 'function', function: { name: 'get_time' } }, parallel: false },
	anthropic: { type: 'tool', name: 'get_time', disable_parallel_tool_use: true },
	gemini: { mode: 'ANY', allowedFunctionNames: ['get_time'] },
}

describe('tool_choice', () => {
	for (const proto of PROTOCOLS)
		for (const up of UPSTREAMS) {
			it(`should send a named tool choice without parallel calls as the vendor spells it (${proto} → ${up})`, async () => {
				const acct = await m.account()
				const extra =
					proto === 'chat'
						? { tool_choice: { type: 'function', function: { name: 'get_time' } }, parallel_tool_calls: false }
						: { tool_choice: { type: 'tool', name: 'get_time', disable_parallel_tool_use: true } }
				await firstTurn(proto, acct, up, false, extra)
				expect(NAMED_CHOICE[up](lastRequest(m.mocks[up]).body)).toEqual(EXPECTED_CHOICE[up])
			})
		}

	it('should map "required" to Anthropic any and Gemini ANY', async () => {
		const acct = await m.account()
		await firstTurn('chat', acct, 'anthropic', false, { tool_choice: 'required' })
		expect(lastRequest(m.mocks.anthropic).body.tool_choice).toEqual({ type: 'any' })
		await firstTurn('chat', acct, 'gemini', false, { tool_choice: 'required' })
		expect(NAMED_CHOICE.gemini(lastRequest(m.mocks.gemini).body)).toEqual({ mode: 'ANY' })
	})

	it('should map Anthropic "none" to OpenAI none and Gemini NONE', async () => {
		const acct = await m.account()
		await firstTurn('messages', acct, 'openai', false, { tool_choice: { type: 'none' } })
		expect(lastRequest(m.mocks.openai).body.tool_choice).toBe('none')
		await firstTurn('messages', acct, 'gemini', false, { tool_choice: { type: 'none' } })
		expect(NAMED_CHOICE.gemini(lastRequest(m.mocks.gemini).body)).toEqual({ mode: 'NONE' })
	})
})
