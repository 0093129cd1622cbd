/**
 * Issue 3 matrix, text scenarios: {chat-completions, messages} × {OpenAI, Anthropic, Gemini} × {non-stream, stream} ×
 * {plain text, system prompt, multi-turn}. Each asserts the answer, the stop reason, the usage the client sees,
 * what reached the vendor (model after model_map, system slot, turns) and the charge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { countWords } from '../../mocks'
import { type Answer, chat, messages, type Protocol, PROTOCOLS } from './clients'
import { type Account, expectCharges, label, lastRequest, type Matrix, MODEL, PAIRS, SETUP_MS, startMatrix, type Upstream, UPSTREAM_MODEL } from './harness'
import { upstreamView } from './upstream-view'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const ENDPOINT: Record<Protocol, string> = { chat: '/v1/chat/completions', messages: '/v1/messages' }
const STOP: Record<Protocol, string> = { chat: 'stop', messages: 'end_turn' }

type Conv = { system?: string; turns: Array<{ role: 'user' | 'assistant'; text: string }> }

async function ask(proto: Protocol, acct: Account, up: Upstream, stream: boolean, c: Conv): Promise<Answer> {
	const model = MODEL[up]
	if (proto === 'chat') {
		const msgs = [...(c.system ? [{ role: 'system' as const, content: c.system }] : []), ...c.turns.map((t) => ({ role: t.role, content: t.text }))]
		return chat(acct.openai, { model, messages: msgs }, stream)
	}
	return messages(acct.anthropic, { model, max_tokens: 256, ...(c.system && { system: c.system }), messages: c.turns.map((t) => ({ role: t.role, content: t.text })) }, stream)
}

/** Runs a conversation and asserts everything the scenario determines. */
async function check(proto: Protocol, up: Upstream, stream: boolean, c: Conv) {
	const acct = await m.account()
	const a = await ask(proto, acct, up, stream, c)
	const last = c.turns[c.turns.length - 1]!.text
	const text = `Hello! You said: ${last}`
	const input = countWords([c.system ?? '', ...c.turns.map((t) => t.text)].join(' '))
	const output = countWords(text)
	expect(a.text).toBe(text)
	expect(a.stop).toBe(STOP[proto])
	expect(a.calls).toEqual([])
	expect(a.usage).toMatchObject({ input, output, cached: 0 })
	if (a.startInput !== undefined) {
		// message_start must carry a real count (vercel/ai#17326): exact when the vendor states it up front.
		expect(a.startInput).toBeGreaterThan(0)
		if (up === 'anthropic') expect(a.startInput).toBe(input)
	}
	const view = upstreamView(up, lastRequest(m.mocks[up]))
	expect(view.model).toBe(UPSTREAM_MODEL[up])
	expect(view.system).toEqual(c.system ? [c.system] : [])
	expect(view.turns).toEqual(c.turns)
	await expectCharges(m, acct, [{ model: MODEL[up], input, output, endpoint: ENDPOINT[proto], stream }])
}

for (const proto of PROTOCOLS) {
	describe(`${proto} text`, () => {
		for (const [up, stream] of PAIRS) {
			it(`should answer plain text (${label(up, stream)})`, () => check(proto, up, stream, { turns: [{ role: 'user', text: 'hello there friend' }] }))

			it(`should put the system prompt in the vendor's slot (${label(up, stream)})`, () =>
				check(proto, up, stream, { system: 'Answer briefly and kindly', turns: [{ role: 'user', text: 'hi' }] }))

			it(`should carry every turn of a multi-turn conversation (${label(up, stream)})`, () =>
				check(proto, up, stream, {
					turns: [
						{ role: 'user', text: 'my name is Ada' },
						{ role: 'assistant', text: 'Hello! You said: my name is Ada' },
						{ role: 'user', text: 'what is my name' },
					],
				}))
		}
	})
}

describe('billing across protocols', () => {
	it('should charge the same for the same content whatever the protocol and stream mode', async () => {
		const costs: number[] = []
		for (const proto of PROTOCOLS)
			for (const stream of [false, true]) {
				const acct = await m.account()
				await ask(proto, acct, 'gemini', stream, { turns: [{ role: 'user', text: 'the same words every time' }] })
				const rows = await expectCharges(m, acct, [{ model: MODEL.gemini, input: 5, output: 8, stream }])
				costs.push(rows[0]!.cost)
			}
		expect(new Set(costs).size).toBe(1)
		expect(costs[0]).toBeGreaterThan(0)
	})
})
