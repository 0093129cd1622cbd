/**
 * The Responses API WebSocket mode's connection limit (src/modules/responses/socket.ts): OpenAI ends a connection
 * after 60 minutes with an `error` event, status 400, code `websocket_connection_limit_reached`, and closes it. Here
 * the limit is shortened (RESPONSES_WS_MAX_AGE_MS) and driven by the openai SDK's `ResponsesWS`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type Account, type Matrix, MODEL, SETUP_MS, startMatrix, usageRows } from '../protocols/harness'
import { connectResponsesWS } from './responses-ws-client'

const LIMIT_MS = 1_500

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({ env: { RESPONSES_WS_MAX_AGE_MS: String(LIMIT_MS) } })
}, SETUP_MS)
afterAll(async () => {
	await m?.close()
})

/** A connection for the account, on this gateway or another. */
const connect = (a: Pick<Account, 'key'>, on: Matrix = m) => connectResponsesWS(on.app.url, a.key)


const LIMIT_EVENT = {
	type: 'error',
	status: 400,
	error: {
		type: 'invalid_request_error',
		code: 'websocket_connection_limit_reached',
		message: 'Responses websocket connection limit reached (1500 ms). Create a new websocket connection to continue.',
		param: null,
	},
}

describe('Responses WebSocket connection limit (openai SDK ResponsesWS)', () => {
	it('should send the documented error event at the limit and close the connection', async () => {
		const a = await m.account(10)
		const c = connect(a)
		c.ws.send({ type: 'response.create', model: MODEL.openai, input: 'hi' } as any)
		expect((await c.next(['response.completed'])).response.status).toBe('completed')
		const closed = await c.closed
		expect(closed.at - c.opened).toBeGreaterThanOrEqual(LIMIT_MS - 100)
		// 1001, going away: the connection is over, open a new one.
		expect(closed.code).toBe(1001)
		expect(c.events.at(-1)).toEqual(LIMIT_EVENT)
		// The SDK surfaces it as an error whose event is the one sent.
		expect(c.errors.some((e) => e.error?.error?.code === 'websocket_connection_limit_reached')).toBe(true)
		expect((await usageRows(m, a.accountId)).length).toBe(1)
	})

	it('should leave no limit timer behind for a connection the client closed', async () => {
		const a = await m.account(10)
		// The timers of LIMIT_MS that connections set, and those cleared.
		const set = new Set<unknown>()
		const cleared = new Set<unknown>()
		const { setTimeout: realSet, clearTimeout: realClear } = globalThis
		globalThis.setTimeout = ((fn: () => void, ms?: number, ...rest: unknown[]) => {
			const t = realSet(fn, ms, ...rest)
			if (ms === LIMIT_MS) set.add(t)
			return t
		}) as typeof setTimeout
		globalThis.clearTimeout = ((t: Parameters<typeof clearTimeout>[0]) => {
			cleared.add(t)
			return realClear(t)
		}) as typeof clearTimeout
		try {
			const conns = [connect(a), connect(a), connect(a)]
			for (const c of conns) c.ws.send({ type: 'response.create', model: MODEL.openai, input: 'hi' } as any)
			for (const c of conns) await c.next(['response.completed'])
			for (const c of conns) c.ws.close()
			await Promise.all(conns.map((c) => c.closed))
			await Bun.sleep(50)
		} finally {
			globalThis.setTimeout = realSet
			globalThis.clearTimeout = realClear
		}
		expect(set.size).toBe(3)
		for (const t of set) expect(cleared.has(t)).toBe(true)
	})

	it('should let a response running at the limit finish, then end the connection without serving what waited', async () => {
		const a = await m.account(10)
		const c = connect(a)
		await Bun.sleep(LIMIT_MS - 700)
		// Its upstream answers after the limit passed.
		m.mocks.gemini.faultOnce = { kind: 'slow', firstByteMs: 1_200 }
		c.ws.send({ type: 'response.create', model: MODEL.gemini, input: 'slow one' } as any)
		await Bun.sleep(900)
		// Sent after the limit, while the first runs: not served.
		c.ws.send({ type: 'response.create', model: MODEL.gemini, input: 'too late' } as any)
		const closed = await c.closed
		expect(closed.code).toBe(1001)
		const types = c.events.map((e) => e.type)
		expect(types.filter((t) => t === 'response.created').length).toBe(1)
		expect(types.at(-2)).toBe('response.completed')
		expect(c.events.at(-1)).toEqual(LIMIT_EVENT)
		const rows = await usageRows(m, a.accountId)
		expect(rows.map((r) => [r.model, r.end_reason])).toEqual([[MODEL.gemini, 'ok']])
	})

	it('should refuse steering of a response waiting for tool results once the connection reached its limit, as no response.create will answer it', async () => {
		// Chunks 20 ms apart, so the tool-calling response is steered while it runs.
		const slow = await startMatrix({ env: { RESPONSES_WS_MAX_AGE_MS: String(LIMIT_MS) }, mock: { chunkDelayMs: 20 } })
		try {
			const a = await slow.account(10)
			const c = connect(a, slow)
			const tool = { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }
			c.ws.send({ type: 'response.create', model: MODEL.openai, tools: [tool], input: '#call get_weather {"city":"Paris"}' } as any)
			const id = (await c.next(['response.created'])).response.id
			c.ws.send({ type: 'response.steer', previous_response_id: id, input: 'in Celsius please' })
			await c.next(['response.steer.pending'])
			// A response that runs across the limit; meanwhile the first is steered again.
			slow.mocks.gemini.faultOnce = { kind: 'slow', firstByteMs: LIMIT_MS + 1_000 }
			c.ws.send({ type: 'response.create', model: MODEL.gemini, input: 'slow one' } as any)
			const from = c.events.length
			await Bun.sleep(LIMIT_MS + 200 - (performance.now() - c.opened))
			c.ws.send({ type: 'response.steer', previous_response_id: id, input: 'and in Kelvin' })
			const answer = await c.next(['response.steer.accepted', 'response.steer.failed'], from)
			expect(answer).toMatchObject({ type: 'response.steer.failed', steer: { previous_response_id: id, input: 'and in Kelvin' }, error: { code: 'response_not_active' } })
			expect((await c.closed).code).toBe(1001)
			// The input held for the first is handed back before the limit's event: no response.create can commit it now.
			const back = c.events.find((e) => e.type === 'response.steer.failed' && e.steer.input === 'in Celsius please')
			expect(back).toMatchObject({ steer: { id: expect.stringMatching(/^steer_/), previous_response_id: id }, error: { code: 'response_not_active' } })
			expect(c.events.indexOf(back!)).toBeLessThan(c.events.length - 1)
			expect(c.events.at(-1)).toMatchObject({ type: 'error', error: { code: 'websocket_connection_limit_reached' } })
		} finally {
			await slow.close()
		}
	})
})
