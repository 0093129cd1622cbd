/**
 * The Responses API's WebSocket mode (GET /v1/responses, src/modules/responses/socket.ts) driven by the real openai JS
 * SDK's `ResponsesWS` (openai 7.57.0: it builds `ws://…/v1/responses` from `baseURL` and sends `Authorization: Bearer`
 * on the handshake), against the protocol matrix: OpenAI, Anthropic and Gemini models, billed as streamed POSTs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Agent, OpenAIResponsesWSModel, run, setTracingDisabled, tool } from '@openai/agents'
import OpenAI from 'openai'
import { z } from 'zod'
import { MAX_WAITING } from '../../../src/modules/responses/socket'
import { type Account, expectCharges, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, THINKER, type Upstream, UPSTREAMS, usageRows } from '../protocols/harness'
import { connectResponsesWS, type WsEvent as Event } from './responses-ws-client'

// Traces would go to OpenAI's own endpoint with the key.
setTracingDisabled(true)

/** The body limit of this gateway (MAX_JSON_BYTES), which each message is held to. */
const LIMIT = 256 * 1024

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({ env: { MAX_JSON_BYTES: String(LIMIT) } })
}, SETUP_MS)
afterAll(async () => {
	await m?.close()
})

/** A connection for the account, and what it received. */
const connect = (a: Pick<Account, 'key'>) => connectResponsesWS(m.app.url, a.key)

/** Sends a response.create and waits for its end event; the events of that response. */
async function create(c: ReturnType<typeof connect>, body: Record<string, unknown>): Promise<Event[]> {
	const from = c.events.length
	c.ws.send({ type: 'response.create', ...body } as any)
	const end = await c.next(['response.completed', 'response.failed', 'response.incomplete', 'error'], from)
	return c.events.slice(from, c.events.indexOf(end) + 1)
}

describe('Responses WebSocket mode (openai SDK ResponsesWS)', () => {
	for (const up of UPSTREAMS) {
		it(`should answer text on ${MODEL[up]} and bill it as a streamed POST`, async () => {
			const a = await m.account(10)
			const c = connect(a)
			const evs = await create(c, { model: MODEL[up], input: 'Say hello' })
			const types = evs.map((e) => e.type)
			expect(types[0]).toBe('response.created')
			expect(types).toContain('response.output_text.delta')
			const done = evs.at(-1)!
			expect(done.type).toBe('response.completed')
			expect(done.response.output_text ?? done.response.output.find((o: any) => o.type === 'message').content[0].text).toBeTruthy()
			expect(evs.map((e) => e.sequence_number)).toEqual(evs.map((_, i) => i))
			c.ws.close()
			await expectCharges(m, a, [{ model: MODEL[up], input: done.response.usage.input_tokens, output: done.response.usage.output_tokens, endpoint: '/v1/responses', stream: true }])
		})
	}

	const TOOL = { type: 'function', name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false }

	for (const up of UPSTREAMS) {
		it(`should run a tool-call round trip on ${MODEL[up]} continued by previous_response_id with store: false`, async () => {
			const a = await m.account(10)
			const c = connect(a)
			const first = (await create(c, { model: MODEL[up], store: false, tools: [TOOL], input: '#call get_weather {"city":"Paris"}' })).at(-1)!
			expect(first.type).toBe('response.completed')
			const call = first.response.output.find((o: any) => o.type === 'function_call')
			expect(call).toMatchObject({ name: 'get_weather', arguments: '{"city":"Paris"}' })
			const second = (
				await create(c, { model: MODEL[up], store: false, tools: [TOOL], previous_response_id: first.response.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny, 21 C' }] })
			).at(-1)!
			expect(second.type).toBe('response.completed')
			const text = second.response.output.find((o: any) => o.type === 'message').content[0].text
			expect(text).toContain('sunny, 21 C')
			// The continuation went upstream whole (the call and its result), though nothing was stored.
			const sent = JSON.stringify(lastRequest(m.mocks[up]).body)
			expect(sent).toContain('Paris')
			expect(sent).toContain('sunny, 21 C')
			expect(lastRequest(m.mocks[up]).body.previous_response_id).toBeUndefined()
			c.ws.close()
			const u = (e: Event) => ({ model: MODEL[up], input: e.response.usage.input_tokens, output: e.response.usage.output_tokens, endpoint: '/v1/responses', stream: true })
			await expectCharges(m, a, [u(first), u(second)])
		})
	}

	it('should continue the previous response of the same connection with store: false, and not another connection\'s', async () => {
		const a = await m.account(10)
		const c = connect(a)
		const first = (await create(c, { model: MODEL.openai, store: false, input: 'remember the word kumquat' })).at(-1)!
		const secondEvents = await create(c, { model: MODEL.openai, store: false, previous_response_id: first.response.id, input: 'which word?' })
		const second = secondEvents.at(-1)!
		expect(second.type).toBe('response.completed')
		// The Response objects name the response continued, as any continuation's do.
		expect(secondEvents.filter((e) => e.response).map((e) => e.response.previous_response_id)).toEqual(secondEvents.filter((e) => e.response).map(() => first.response.id))
		expect(first.response.previous_response_id ?? null).toBeNull()
		const body = lastRequest(m.mocks.openai).body
		expect(body.previous_response_id).toBeUndefined()
		expect(JSON.stringify(body.input)).toContain('kumquat')
		expect(JSON.stringify(body.input)).toContain('which word?')
		// Nothing was stored: another connection cannot name it.
		const other = connect(a)
		const refused = (await create(other, { model: MODEL.openai, store: false, previous_response_id: first.response.id, input: 'which word?' })).at(-1)!
		expect(refused).toMatchObject({ type: 'error', status: 400, error: { code: 'previous_response_not_found', param: 'previous_response_id' } })
		c.ws.close()
		other.ws.close()
		const rows = await usageRows(m, a.accountId)
		expect(rows.length).toBe(2)
	})

	it('should continue a store: false reasoning response of an OpenAI channel from memory, its reasoning replayed encrypted though the client did not ask', async () => {
		const a = await m.account(10)
		const c = connect(a)
		const body = { model: THINKER.openai, store: false, reasoning: { effort: 'low', summary: 'auto' } }
		const firstEvents = await create(c, { ...body, input: 'think about plums' })
		const first = firstEvents.at(-1)!
		expect(first.type).toBe('response.completed')
		const reasoning = first.response.output.find((o: any) => o.type === 'reasoning')
		expect(reasoning.summary[0].text).toContain('plums')
		// Not asked for: no encrypted content in any event, the final response included.
		expect(JSON.stringify(firstEvents)).not.toContain('encrypted_content')
		const second = (await create(c, { ...body, previous_response_id: first.response.id, input: 'and pears?' })).at(-1)!
		expect(second.type).toBe('response.completed')
		// OpenAI keeps nothing of a store: false response: its reasoning went back with the encrypted content.
		const sent = lastRequest(m.mocks.openai).body
		expect(sent.previous_response_id).toBeUndefined()
		expect(sent.input.find((i: any) => i.type === 'reasoning')).toMatchObject({ id: reasoning.id, encrypted_content: expect.any(String) })
		c.ws.close()
	})

	it('should give a client that asks for reasoning.encrypted_content the encrypted content, and replay it', async () => {
		const a = await m.account(10)
		const c = connect(a)
		const body = { model: THINKER.openai, store: false, reasoning: { effort: 'low' }, include: ['reasoning.encrypted_content'] }
		const firstEvents = await create(c, { ...body, input: 'think about figs' })
		const first = firstEvents.at(-1)!
		const reasoning = first.response.output.find((o: any) => o.type === 'reasoning')
		expect(reasoning.encrypted_content).toEqual(expect.any(String))
		expect(firstEvents.find((e) => e.type === 'response.output_item.done' && e.item.type === 'reasoning')!.item.encrypted_content).toBe(reasoning.encrypted_content)
		const second = (await create(c, { ...body, previous_response_id: first.response.id, input: 'and dates?' })).at(-1)!
		expect(second.type).toBe('response.completed')
		expect(lastRequest(m.mocks.openai).body.input.find((i: any) => i.type === 'reasoning').encrypted_content).toBe(reasoning.encrypted_content)
		c.ws.close()
	})

	it('should ask for encrypted reasoning for an alias of a reasoning model (model_map) that reasons at its default effort, and not for a model that does not reason', async () => {
		const a = await m.account(10)
		const c = connect(a)
		// gpt-think is this gateway's name for o4-mini, which reasons (at medium effort) though no `reasoning` is sent.
		expect((await create(c, { model: THINKER.openai, store: false, input: 'think about kiwis' })).at(-1)!.type).toBe('response.completed')
		expect(lastRequest(m.mocks.openai).body.include).toEqual(['reasoning.encrypted_content'])
		expect((await create(c, { model: THINKER.openai, store: false, reasoning: { summary: 'auto' }, input: 'and limes?' })).at(-1)!.type).toBe('response.completed')
		expect(lastRequest(m.mocks.openai).body.include).toEqual(['reasoning.encrypted_content'])
		// gpt-m is gpt-4o-mini, which takes no such `include`.
		expect((await create(c, { model: MODEL.openai, store: false, input: 'no thinking' })).at(-1)!.type).toBe('response.completed')
		expect(lastRequest(m.mocks.openai).body.include).toBeUndefined()
		c.ws.close()
	})

	it('should run a response.create sent while one runs after it, in order', async () => {
		const a = await m.account(10)
		const c = connect(a)
		c.ws.send({ type: 'response.create', model: MODEL.anthropic, input: 'first one' } as any)
		c.ws.send({ type: 'response.create', model: MODEL.gemini, input: 'second one' } as any)
		const one = await c.next(['response.completed'])
		const two = await c.next(['response.completed'], c.events.indexOf(one) + 1)
		expect(one.response.model).toBe(MODEL.anthropic)
		expect(two.response.model).toBe(MODEL.gemini)
		// The second began after the first ended: its response.created comes after the first's response.completed.
		const created = c.events.filter((e) => e.type === 'response.created')
		expect(c.events.indexOf(created[1]!)).toBeGreaterThan(c.events.indexOf(one))
		c.ws.close()
		await expectCharges(m, a, [
			{ model: MODEL.anthropic, input: one.response.usage.input_tokens, output: one.response.usage.output_tokens },
			{ model: MODEL.gemini, input: two.response.usage.input_tokens, output: two.response.usage.output_tokens },
		])
	})

	it(`should refuse messages past ${MAX_WAITING} waiting behind the running response`, async () => {
		const a = await m.account(10)
		const c = connect(a)
		m.mocks.gemini.faultOnce = { kind: 'slow', firstByteMs: 800 }
		c.ws.send({ type: 'response.create', model: MODEL.gemini, input: 'slow one' } as any)
		// The first is running (its upstream answers after 800 ms) when the others come.
		await Bun.sleep(200)
		for (let i = 0; i < MAX_WAITING + 2; i++) c.ws.send({ type: 'response.create', model: MODEL.gemini, input: `queued ${i}` } as any)
		const deadline = Date.now() + 10_000
		while (c.events.filter((e) => e.type === 'response.completed' || e.type === 'error').length < MAX_WAITING + 3 && Date.now() < deadline) await Bun.sleep(20)
		const refused = c.events.filter((e) => e.type === 'error')
		expect(refused.length).toBe(2)
		expect(refused[0]).toMatchObject({ status: 429, error: { code: 'too_many_pending_messages' } })
		expect(c.events.filter((e) => e.type === 'response.completed').length).toBe(MAX_WAITING + 1)
		c.ws.close()
		expect((await usageRows(m, a.accountId)).length).toBe(MAX_WAITING + 1)
	})

	it('should warm up with generate: false without a model call or a charge, and continue from it', async () => {
		const a = await m.account(10)
		const c = connect(a)
		const before = m.mocks.anthropic.requests.length
		const warm = await create(c, { model: MODEL.anthropic, store: false, generate: false, instructions: 'be brief', input: 'the code word is quince' })
		expect(warm.map((e) => e.type)).toEqual(['response.created', 'response.completed'])
		expect(warm[1]!.response).toMatchObject({ status: 'completed', output: [] })
		expect(m.mocks.anthropic.requests.length).toBe(before)
		const next = (await create(c, { model: MODEL.anthropic, store: false, previous_response_id: warm[1]!.response.id, input: 'say it' })).at(-1)!
		expect(next.type).toBe('response.completed')
		expect(next.response.previous_response_id).toBe(warm[1]!.response.id)
		expect(JSON.stringify(lastRequest(m.mocks.anthropic).body.messages)).toContain('quince')
		c.ws.close()
		await expectCharges(m, a, [{ model: MODEL.anthropic, input: next.response.usage.input_tokens, output: next.response.usage.output_tokens }])
	})

	it('should refuse a bad key at the handshake with 401', async () => {
		const c = connect({ key: 'sk-not-a-key' })
		const { code } = await c.closed
		expect(code).not.toBe(1000)
		expect(String(c.errors[0])).toContain('401')
		const expired = await m.app.account(10, { expires_at: new Date(Date.now() - 60_000).toISOString() })
		const e = connect(expired)
		await e.closed
		expect(String(e.errors[0])).toContain('401')
	})

	it('should answer an unknown model, an empty balance, a malformed message and a response.steer naming no response with error events, and stay open', async () => {
		const a = await m.account(10)
		const c = connect(a)
		const unknown = (await create(c, { model: 'no-such-model', input: 'hi' })).at(-1)!
		expect(unknown).toMatchObject({ type: 'error', status: 404, error: { code: 'model_not_found' } })
		let from = c.events.length
		c.ws.sendRaw('{not json')
		expect(await c.next(['error'], from)).toMatchObject({ type: 'error', status: 400, error: { type: 'invalid_request_error', code: 'invalid_json' } })
		from = c.events.length
		c.ws.send({ type: 'response.steer', input: 'faster' } as any)
		expect(await c.next(['response.steer.failed'], from)).toMatchObject({ steer: { previous_response_id: null, input: 'faster' }, error: { type: 'invalid_request_error', code: 'invalid_input' } })
		from = c.events.length
		c.ws.send({ type: 'response.steer', previous_response_id: 'resp_nothing_here', input: 'faster' } as any)
		expect(await c.next(['response.steer.failed'], from)).toMatchObject({ steer: { previous_response_id: 'resp_nothing_here', input: 'faster' }, error: { code: 'response_not_found' } })
		from = c.events.length
		c.ws.send({ type: 'response.cancel' } as any)
		expect(await c.next(['error'], from)).toMatchObject({ status: 400, error: { code: 'unknown_event_type', param: 'type' } })
		const bg = (await create(c, { model: MODEL.openai, background: true, input: 'hi' })).at(-1)!
		expect(bg).toMatchObject({ type: 'error', status: 400, error: { param: 'background' } })
		// A body the route's schema refuses is the 400 the POST answers.
		const bad = (await create(c, { model: MODEL.openai, input: 'hi', temperature: 'hot' })).at(-1)!
		expect(bad).toMatchObject({ type: 'error', status: 400 })
		// Still usable.
		const ok = (await create(c, { model: MODEL.openai, input: 'hi' })).at(-1)!
		expect(ok.type).toBe('response.completed')
		c.ws.close()

		const broke = await m.account(0)
		const b = connect(broke)
		const poor = (await create(b, { model: MODEL.anthropic, input: 'hi' })).at(-1)!
		expect(poor).toMatchObject({ type: 'error', status: 402, error: { code: 'insufficient_quota' } })
		b.ws.close()
		expect(await usageRows(m, broke.accountId)).toEqual([])
		expect(await m.app.balance(broke.accountId)).toBe(0)
	})

	it('should look at the key again for each response: allowed models and spend limit changed mid-connection', async () => {
		const a = await m.account(10)
		const c = connect(a)
		const ok = (await create(c, { model: MODEL.anthropic, input: 'hi' })).at(-1)!
		expect(ok.type).toBe('response.completed')
		expect((await m.app.admin(`/api/tokens/${a.tokenId}`, { method: 'PATCH', body: { allowed_models: [MODEL.gemini] } })).status).toBe(200)
		const denied = (await create(c, { model: MODEL.anthropic, input: 'hi' })).at(-1)!
		expect(denied).toMatchObject({ type: 'error', status: 403 })
		expect((await create(c, { model: MODEL.gemini, input: 'hi' })).at(-1)!.type).toBe('response.completed')
		expect((await m.app.admin(`/api/tokens/${a.tokenId}`, { method: 'PATCH', body: { spend_limit: 0 } })).status).toBe(200)
		const limited = (await create(c, { model: MODEL.gemini, input: 'hi' })).at(-1)!
		expect(limited).toMatchObject({ type: 'error', status: 402 })
		c.ws.close()
		expect((await usageRows(m, a.accountId)).map((r) => r.model)).toEqual([MODEL.anthropic, MODEL.gemini])
	})

	it('should refuse a message over the JSON body limit', async () => {
		const a = await m.account(10)
		const c = connect(a)
		const from = c.events.length
		c.ws.sendRaw(JSON.stringify({ type: 'response.create', model: MODEL.openai, input: 'x'.repeat(LIMIT) }))
		expect(await c.next(['error'], from)).toMatchObject({ status: 413, error: { code: 'request_too_large' } })
		c.ws.close()
	})

	it('should bill a client that closes mid-response as an HTTP client that disconnects', async () => {
		const a = await m.account(10)
		const c = connect(a)
		const aborts = m.mocks.anthropic.aborts.length
		m.mocks.anthropic.faultOnce = { kind: 'stall', afterChunks: 4 }
		c.ws.send({ type: 'response.create', model: MODEL.anthropic, input: 'tell me a long story about ships' } as any)
		await c.next(['response.output_text.delta'])
		c.ws.close()
		const deadline = Date.now() + 5000
		let rows = await usageRows(m, a.accountId)
		while (!rows.length && Date.now() < deadline) {
			await Bun.sleep(20)
			rows = await usageRows(m, a.accountId)
		}
		expect(rows.length).toBe(1)
		expect(rows[0]).toMatchObject({ endpoint: '/v1/responses', stream: true, end_reason: 'client_abort' })
		expect(rows[0]!.output_tokens).toBeGreaterThan(0)
		// The mock sees its connection closed a moment after the gateway settled (it may write the row first).
		for (const until = Date.now() + 2_000; m.mocks.anthropic.aborts.length === aborts && Date.now() < until; ) await Bun.sleep(20)
		expect(m.mocks.anthropic.aborts.length).toBe(aborts + 1)
		expect(Math.round((await m.app.balance(a.accountId)) * 1e6)).toBe(10e6 - Math.round(rows[0]!.cost * 1e6))
	})

	it('should relay an upstream error mid-response as the error event the SSE stream carries, and stay open', async () => {
		const a = await m.account(10)
		const c = connect(a)
		// After the first text delta: an error among the four events before it (lifecycle, the empty message and part)
		// fails over before the response begins.
		m.mocks.openai.faultOnce = { kind: 'midstream', afterChunks: 5 }
		const evs = await create(c, { model: MODEL.openai, input: 'break later please' })
		expect(evs[0]!.type).toBe('response.created')
		expect(evs.at(-1)!.type).toBe('error')
		const again = (await create(c, { model: MODEL.openai, input: 'once more' })).at(-1)!
		expect(again.type).toBe('response.completed')
		c.ws.close()
		const rows = await usageRows(m, a.accountId)
		expect(rows.map((r) => r.end_reason)).toEqual(['error', 'ok'])
	})

	it('should answer a plain GET /v1/responses 426', async () => {
		const a = await m.account(10)
		const r = await fetch(`${m.app.url}/v1/responses`, { headers: { authorization: `Bearer ${a.key}` } })
		expect(r.status).toBe(426)
		expect(((await r.json()) as any).error.code).toBe('websocket_required')
	})
})

describe('Agents SDK OpenAIResponsesWSModel', () => {
	const weather = tool({ name: 'get_weather', description: 'The weather in a city', parameters: z.object({ city: z.string() }), execute: async ({ city }) => `sunny in ${city}` })
	for (const up of UPSTREAMS)
		it(`should run a streamed tool loop over one socket on ${MODEL[up]}, billed as the SDK counted it`, async () => {
			const a = await m.account(10)
			const client = new OpenAI({ apiKey: a.key, baseURL: `${m.app.url}/v1`, maxRetries: 0 })
			const model = new OpenAIResponsesWSModel(client, MODEL[up])
			try {
				const result = await run(new Agent({ name: 'weather', instructions: 'Answer briefly', model, tools: [weather] }), 'weather please #tools', { stream: true })
				for await (const _ of result) {
				}
				await result.completed
				expect(result.finalOutput).toBe('Tool results: sunny in Paris; sunny in Tokyo')
				const rows = await usageRows(m, a.accountId)
				expect(rows.map((r) => [r.endpoint, r.input_tokens, r.output_tokens, r.stream])).toEqual(
					result.state.usage.requestUsageEntries!.map((e) => ['/v1/responses', e.inputTokens, e.outputTokens, true]),
				)
			} finally {
				await model.close()
			}
		})
})
