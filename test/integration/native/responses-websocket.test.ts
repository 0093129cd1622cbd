/**
 * The Responses API's WebSocket mode (GET /v1/responses, src/modules/responses/socket.ts) driven by the real openai JS
 * SDK's `ResponsesWS` (openai 7.57.0: it builds `ws://…/v1/responses` from `baseURL` and sends `Authorization: Bearer`
 * on the handshake), against the protocol matrix: OpenAI, Anthropic and Gemini models, billed as streamed POSTs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { ResponsesWS } from 'openai/resources/responses/ws'
import { type Account, expectCharges, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, type Upstream, UPSTREAMS, usageRows } from '../protocols/harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(async () => {
	await m?.close()
})

type Event = { type: string; [k: string]: any }

/** A connection for the account, and what it received. */
function connect(a: Pick<Account, 'key'>) {
	const client = new OpenAI({ apiKey: a.key, baseURL: `${m.app.url}/v1`, maxRetries: 0 })
	const ws = new ResponsesWS(client)
	const events: Event[] = []
	const errors: unknown[] = []
	ws.on('event', (e: Event) => events.push(e))
	ws.on('error', (e: unknown) => errors.push(e))
	const closed = new Promise<number>((resolve) => ws.on('close', (code: number) => resolve(code)))
	/** Waits for the next event of these types after `from` events. */
	const next = async (types: string[], from = 0, ms = 10_000): Promise<Event> => {
		const end = Date.now() + ms
		for (;;) {
			const e = events.slice(from).find((x) => types.includes(x.type))
			if (e) return e
			if (Date.now() > end) throw new Error(`no ${types.join('/')} in ${JSON.stringify(events.map((x) => x.type))}`)
			await Bun.sleep(10)
		}
	}
	return { ws, events, errors, closed, next }
}

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
})
