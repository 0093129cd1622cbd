/**
 * `response.steer` on the Responses API WebSocket mode (src/modules/responses/steer.ts), driven by the openai SDK's
 * `ResponsesWS` (openai 7.57.0 types the event and its `response.steer.accepted`, `.pending` and `.failed` answers).
 * The mock vendors send their stream chunks 20 ms apart, so a response is still running when it is steered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type Account, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, UPSTREAMS, usageRows } from '../protocols/harness'
import { connectResponsesWS } from './responses-ws-client'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({ mock: { chunkDelayMs: 20 } })
}, SETUP_MS)
afterAll(async () => {
	await m?.close()
})

const connect = (a: Pick<Account, 'key'>) => connectResponsesWS(m.app.url, a.key)


const TOOL = { type: 'function', name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false }

describe('response.steer (openai SDK ResponsesWS)', () => {
	for (const up of UPSTREAMS)
		it(`should accept steering of a running response on ${MODEL[up]} and continue it with a successor that inherits its settings`, async () => {
			const a = await m.account(10)
			const c = connect(a)
			c.ws.send({ type: 'response.create', model: MODEL[up], store: false, instructions: 'Be brief', max_output_tokens: 500, input: 'tell me about apples' } as any)
			const created = await c.nth(['response.created'])
			const id = created.response.id
			c.ws.send({ type: 'response.steer', previous_response_id: id, input: 'also mention pears' })
			const ack = await c.nth(['response.steer.accepted'])
			expect(ack).toMatchObject({ type: 'response.steer.accepted', steer: { previous_response_id: id } })
			expect(ack.steer.id).toMatch(/^steer_/)
			expect(ack.sequence_number).toEqual(expect.any(Number))
			// Accepted while the response ran: it completes, then the successor is created without a response.create.
			const first = await c.nth(['response.completed'])
			expect(c.events.indexOf(ack)).toBeLessThan(c.events.indexOf(first))
			const successor = await c.nth(['response.created'], 1)
			expect(c.events.indexOf(successor)).toBeGreaterThan(c.events.indexOf(first))
			expect(successor.response.previous_response_id).toBe(id)
			const second = await c.nth(['response.completed'], 1)
			expect(second.response.output.find((o: any) => o.type === 'message').content[0].text).toContain('also mention pears')
			// The successor went upstream with the steered response's settings, its conversation and the steering input.
			const sent = JSON.stringify(lastRequest(m.mocks[up]).body)
			expect(sent).toContain('Be brief')
			expect(sent).toContain('tell me about apples')
			expect(sent).toContain('Hello! You said: tell me about apples')
			expect(sent).toContain('also mention pears')
			c.ws.close()
			const rows = await usageRows(m, a.accountId)
			expect(rows.length).toBe(2)
		})

	it('should hold steering of a response that calls the client\'s tool (response.steer.pending) and put it first in the response.create that answers it', async () => {
		const a = await m.account(10)
		const c = connect(a)
		c.ws.send({ type: 'response.create', model: MODEL.openai, store: false, tools: [TOOL], input: '#call get_weather {"city":"Paris"}' } as any)
		const id = (await c.nth(['response.created'])).response.id
		c.ws.send({ type: 'response.steer', previous_response_id: id, input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'in Celsius please' }] }] })
		const ack = await c.nth(['response.steer.accepted'])
		const first = await c.nth(['response.completed'])
		const call = first.response.output.find((o: any) => o.type === 'function_call')
		const held = await c.nth(['response.steer.pending'])
		expect(held).toEqual({
			type: 'response.steer.pending',
			sequence_number: expect.any(Number),
			reason: 'waiting_for_required_input',
			required_input: [{ type: 'function_call_output', call_id: call.call_id, name: 'get_weather' }],
			steer: { id: ack.steer.id, previous_response_id: id },
		})
		expect(c.events.indexOf(held)).toBeGreaterThan(c.events.indexOf(first))
		// No successor of its own: the client owes the tool result.
		await Bun.sleep(300)
		expect(c.events.filter((e) => e.type === 'response.created').length).toBe(1)
		c.ws.send({ type: 'response.create', model: MODEL.openai, store: false, tools: [TOOL], previous_response_id: id, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny, 21 C' }] } as any)
		const second = await c.nth(['response.completed'], 1)
		expect(second.response.output.find((o: any) => o.type === 'message').content[0].text).toContain('sunny, 21 C')
		const input = lastRequest(m.mocks.openai).body.input as any[]
		const steered = input.findIndex((i) => JSON.stringify(i).includes('in Celsius please'))
		const output = input.findIndex((i) => i.type === 'function_call_output')
		expect(steered).toBeGreaterThan(input.findIndex((i) => i.type === 'function_call'))
		expect(steered).toBeLessThan(output)
		c.ws.close()
	})

	for (const up of ['anthropic', 'gemini'] as const)
		it(`should send a converted vendor (${MODEL[up]}) a valid turn order when held steering answers a tool call: the result right after the call, the steering after it`, async () => {
			const a = await m.account(10)
			const c = connect(a)
			c.ws.send({ type: 'response.create', model: MODEL[up], store: false, tools: [TOOL], input: '#call get_weather {"city":"Paris"}' } as any)
			const id = (await c.nth(['response.created'])).response.id
			c.ws.send({ type: 'response.steer', previous_response_id: id, input: 'in Celsius please' })
			await c.nth(['response.steer.accepted'])
			const call = (await c.nth(['response.completed'])).response.output.find((o: any) => o.type === 'function_call')
			await c.nth(['response.steer.pending'])
			c.ws.send({ type: 'response.create', model: MODEL[up], store: false, tools: [TOOL], previous_response_id: id, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny, 21 C' }] } as any)
			// Anthropic refuses a user message between a tool_use and its tool_result, and text before the tool_result blocks
			// of a user turn; Gemini a user turn between a functionCall and its functionResponse.
			const second = await c.nth(['response.completed', 'error', 'response.failed'], 1)
			expect(second.type).toBe('response.completed')
			expect(second.response.output.find((o: any) => o.type === 'message').content[0].text).toContain('sunny, 21 C')
			const body = lastRequest(m.mocks[up]).body as any
			const turns: any[] = up === 'anthropic' ? body.messages : body.contents
			const parts = (t: any): any[] => (up === 'anthropic' ? (typeof t.content === 'string' ? [{ type: 'text', text: t.content }] : t.content) : t.parts)
			const isCall = (p: any) => (up === 'anthropic' ? p.type === 'tool_use' : !!p.functionCall)
			const isResult = (p: any) => (up === 'anthropic' ? p.type === 'tool_result' : !!p.functionResponse)
			const callAt = turns.findIndex((t) => parts(t).some(isCall))
			const answer = parts(turns[callAt + 1])
			// The very next turn starts with the result; the steering comes after it, in that turn or a later one.
			expect(isResult(answer[0])).toBe(true)
			const steerAt = turns.findIndex((t) => JSON.stringify(t).includes('in Celsius please'))
			expect(steerAt).toBeGreaterThanOrEqual(callAt + 1)
			if (steerAt === callAt + 1) expect(answer.findIndex((p) => JSON.stringify(p).includes('in Celsius please'))).toBeGreaterThan(answer.findLastIndex(isResult))
			c.ws.close()
		})

	it('should take a response.create on a lane (stream_id), keep it out of the POST, and echo it on the response\'s events and its steering answers', async () => {
		const a = await m.account(10)
		const c = connect(a)
		c.ws.send({ type: 'response.create', model: MODEL.openai, stream_id: 'lane-a', input: 'tell me about plums' } as any)
		const created = await c.nth(['response.created', 'error'])
		expect(created.type).toBe('response.created')
		c.ws.send({ type: 'response.steer', previous_response_id: created.response.id, input: 'and cherries' })
		await c.nth(['response.completed'], 1)
		// `stream_id` is WebSocket-only, "not part of POST /v1/responses" (the SDK's ResponseCreate): OpenAI's POST refuses it.
		expect(lastRequest(m.mocks.openai).body.stream_id).toBeUndefined()
		const lane = c.events.filter((e) => e.type.startsWith('response.'))
		expect(lane.length).toBeGreaterThan(4)
		for (const e of lane) expect(e.stream_id).toBe('lane-a')
		c.ws.close()
	})

	it('should refuse steering that is invalid, too late, or of a response that failed, handing the input back', async () => {
		const a = await m.account(10)
		const c = connect(a)
		c.ws.send({ type: 'response.create', model: MODEL.openai, input: 'hi' } as any)
		const done = await c.nth(['response.completed'])
		const id = done.response.id
		c.ws.send({ type: 'response.steer', previous_response_id: id, input: 'too late' })
		expect(await c.nth(['response.steer.failed'])).toMatchObject({ steer: { previous_response_id: id, input: 'too late' }, error: { type: 'invalid_request_error', code: 'response_already_completed' } })
		c.ws.send({ type: 'response.steer', previous_response_id: id, input: [{ role: 'assistant', content: 'not mine' }] } as any)
		expect(await c.nth(['response.steer.failed'], 1)).toMatchObject({ error: { code: 'invalid_input' } })
		c.ws.send({ type: 'response.steer', previous_response_id: id, input: 'x', stream_id: 'lane' } as any)
		expect(await c.nth(['response.steer.failed'], 2)).toMatchObject({ error: { code: 'invalid_input' } })
		// A response that breaks mid-stream: its steering is handed back, and no successor is made.
		m.mocks.openai.faultOnce = { kind: 'midstream', afterChunks: 6 }
		c.ws.send({ type: 'response.create', model: MODEL.openai, input: 'break later please' } as any)
		const broken = (await c.nth(['response.created'], 1)).response.id
		c.ws.send({ type: 'response.steer', previous_response_id: broken, input: 'and then?' })
		await c.nth(['response.steer.accepted'])
		expect(await c.nth(['response.steer.failed'], 3)).toMatchObject({ steer: { previous_response_id: broken, input: 'and then?', id: expect.stringMatching(/^steer_/) }, error: { code: 'response_not_active' } })
		expect(c.events.filter((e) => e.type === 'response.created').length).toBe(2)
		// A successor the upstream refuses: the input is handed back, and no error event stands for a create never sent.
		c.ws.send({ type: 'response.create', model: MODEL.openai, input: 'one more' } as any)
		const third = (await c.nth(['response.created'], 2)).response.id
		c.ws.send({ type: 'response.steer', previous_response_id: third, input: 'after that' })
		await c.nth(['response.steer.accepted'], 1)
		m.mocks.openai.faultOnce = { kind: 'status', status: 400 }
		expect(await c.nth(['response.steer.failed'], 4)).toMatchObject({ steer: { previous_response_id: third, input: 'after that' }, error: { code: 'successor_creation_failed' } })
		expect(c.events.filter((e) => e.type === 'error').length).toBe(1)
		c.ws.close()
	})
})
