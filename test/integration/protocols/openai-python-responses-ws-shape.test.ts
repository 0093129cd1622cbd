/**
 * The official OpenAI Python SDK, `openai` 3.22.1 (websockets 17.1), over the Responses API's WebSocket mode:
 * `client.responses.connect()` with `conn.response.create(…)` and `conn.response.steer(…)`. The SDK was run against
 * this matrix; the frames below are what it sent, captured by a WebSocket tap:
 * - the handshake is `GET ws://{root}/v1/responses` with `Authorization: Bearer sk-…`, `Content-Type` and `Accept:
 *   application/json`, `User-Agent: OpenAI/Python 3.22.1`, the `X-Stainless-*` headers and permessage-deflate offered;
 * - each event is Python's `json.dumps` (`", "` and `": "` separators), keys in the order the SDK builds them:
 *   `response.create` with `type` first and the lane (`stream_id`) among the body's fields; `response.steer` as
 *   `{"type": …, "input": …, "previous_response_id": …}`.
 * The SDK parses every event into its types (`ResponseSteerAcceptedEvent`, `ResponseWsCreated`, …), `stream_id`
 * included; it reads a 429 over HTTP by `retry-after-ms` first (700 ms waited 0.71 s against the gateway). At the
 * connection limit it gets the `error` event, then the 1001 close ends its iterator (websockets' ConnectionClosedOK):
 * unlike the JS SDK it does not reconnect on 1001, so the application opens a new connection, as the event says.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, usageRows } from './harness'

let m: Matrix
beforeAll(async () => {
	// Chunks 20 ms apart: the response still runs when the steering arrives.
	m = await startMatrix({ mock: { chunkDelayMs: 20 } })
}, SETUP_MS)
afterAll(() => m.close())

type Event = { type: string; [k: string]: any }

/** The handshake headers the SDK sends (besides the key and the WebSocket ones). */
const HANDSHAKE = {
	accept: 'application/json',
	'content-type': 'application/json',
	'user-agent': 'OpenAI/Python 3.22.1',
	'x-stainless-arch': 'x64',
	'x-stainless-async': 'false',
	'x-stainless-lang': 'python',
	'x-stainless-os': 'Linux',
	'x-stainless-package-version': '3.22.1',
	'x-stainless-runtime': 'CPython',
	'x-stainless-runtime-version': '3.11.7',
}

async function connect(key: string) {
	const ws = new WebSocket(`${m.app.url.replace('http', 'ws')}/v1/responses`, { headers: { ...HANDSHAKE, authorization: `Bearer ${key}` } } as any)
	const events: Event[] = []
	ws.onmessage = (e) => events.push(JSON.parse(String(e.data)))
	await new Promise<void>((resolve, reject) => {
		ws.onopen = () => resolve()
		ws.onerror = () => reject(new Error('handshake refused'))
	})
	/** The `n`th event (from 0) of one of these types. */
	const nth = async (types: string[], n = 0): Promise<Event> => {
		const end = Date.now() + 10_000
		for (;;) {
			const e = events.filter((x) => types.includes(x.type))[n]
			if (e) return e
			if (Date.now() > end) throw new Error(`no ${types.join('/')} #${n} in ${JSON.stringify(events.map((x) => x.type))}`)
			await Bun.sleep(10)
		}
	}
	return { ws, events, nth }
}

describe('openai Python SDK: Responses WebSocket mode (responses.connect)', () => {
	for (const model of [MODEL.openai, MODEL.anthropic])
		it(`should serve a response on a lane steered with conn.response.steer on ${model}, echoing the lane, and bill each response once`, async () => {
			const a = await m.account(10)
			const c = await connect(a.key)
			// conn.response.create(model=…, input=[…], store=False, tools=[…], stream_id='lane-py')
			c.ws.send(
				`{"type": "response.create", "input": [{"role": "user", "content": [{"type": "input_text", "text": "tell me about apples"}]}], "model": "${model}", "store": false, "stream_id": "lane-py", "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}, "strict": false}]}`,
			)
			const created = await c.nth(['response.created', 'error'])
			expect(created).toMatchObject({ type: 'response.created', stream_id: 'lane-py' })
			const id = created.response.id
			// conn.response.steer(input=[…], previous_response_id=…), then conn.response.steer(input='…', previous_response_id=…)
			c.ws.send(`{"type": "response.steer", "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "also pears"}]}], "previous_response_id": "${id}"}`)
			c.ws.send(`{"type": "response.steer", "input": "and plums", "previous_response_id": "${id}"}`)
			const acks = [await c.nth(['response.steer.accepted']), await c.nth(['response.steer.accepted'], 1)]
			for (const ack of acks) expect(ack).toEqual({ type: 'response.steer.accepted', sequence_number: expect.any(Number), steer: { id: expect.stringMatching(/^steer_/), previous_response_id: id }, stream_id: 'lane-py' })
			const successor = await c.nth(['response.created'], 1)
			expect(successor).toMatchObject({ stream_id: 'lane-py', response: { previous_response_id: id } })
			const done = await c.nth(['response.completed', 'response.failed', 'error'], 1)
			expect(done).toMatchObject({ type: 'response.completed', stream_id: 'lane-py' })
			// Both steering inputs, in submission order, and the lane kept to the socket (OpenAI's POST takes no `stream_id`).
			const sent = JSON.stringify(lastRequest(m.mocks[model === MODEL.openai ? 'openai' : 'anthropic']).body)
			expect(sent.indexOf('also pears')).toBeLessThan(sent.indexOf('and plums'))
			expect(sent).not.toContain('lane-py')
			for (const e of c.events) expect(e.stream_id).toBe('lane-py')
			c.ws.close()
			expect((await usageRows(m, a.accountId)).map((r) => r.end_reason)).toEqual(['ok', 'ok'])
		})
})
