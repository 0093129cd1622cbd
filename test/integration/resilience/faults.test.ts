/**
 * Fault injection through the mock vendors (issue 4), for OpenAI and Anthropic callers, streaming or not: every
 * failure an upstream can produce before the first byte either fails over to the second channel (answered and billed
 * once) or, with no second channel, reaches the caller as a protocol-shaped 502/504 (429 stays 429 with its
 * retry-after, an overload 503). Never a 500 from Switchboard, never a charge for a failed call, and the ledger invariant holds.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import type { Fault } from '../../mocks'
import { expectLedgerInvariant } from './invariant'
import { answerText, balanceOf, body, errorOf, IDLE_MS, post, type Proto, type Rig, sseData, startRig, usageOf } from './rig'

let rig: Rig
let key: string
let accountId: number
let n = 0
const rid = () => `fault-${++n}-${Date.now()}`

beforeAll(async () => {
	rig = await startRig()
	const a = await rig.app.account(10)
	key = a.key
	accountId = a.accountId
}, 60_000)
afterAll(() => rig.close())

// A fault trips the primary channel's breaker after a few cases; each case starts from healthy channels so the
// primary is really tried first.
beforeEach(() => {
	rig.primary.reset()
	rig.fallback.reset()
	for (const m of ['dual', 'solo']) for (const c of rig.app.svc.catalog.channelsFor(m)) rig.app.svc.health.success(c.id)
})

type Case = { name: string; fault: Fault; status: number; streamOnly?: boolean }

/** What the caller sees when the only channel fails this way. */
const CASES: Case[] = [
	{ name: 'HTTP 500', fault: { kind: 'status', status: 500 }, status: 502 },
	{ name: 'HTTP 429 with retry-after', fault: { kind: 'status', status: 429, retryAfter: 7 }, status: 429 },
	// An overload (OpenAI's 503) stays 503 in the caller's shape (QA report item 9); other 5xx are the gateway's 502.
	{ name: 'HTTP 503', fault: { kind: 'status', status: 503 }, status: 503 },
	{ name: 'connection refused', fault: { kind: 'refuse' }, status: 502 },
	{ name: 'slow first byte', fault: { kind: 'slow', firstByteMs: 1_500 }, status: 504 },
	{ name: 'cut before any content', fault: { kind: 'cut', afterChunks: 0 }, status: 502 },
	{ name: 'connection reset before any content', fault: { kind: 'cut', afterChunks: 0, abrupt: true }, status: 502 },
	{ name: 'malformed JSON', fault: { kind: 'malformed' }, status: 502 },
	{ name: '200 with an empty body', fault: { kind: 'empty' }, status: 502 },
	{ name: 'hanging upstream', fault: { kind: 'hang' }, status: 504 },
	{ name: 'in-stream error before content', fault: { kind: 'midstream', afterChunks: 0 }, status: 502 },
]

const PROTOS: Proto[] = ['chat', 'messages']

for (const proto of PROTOS)
	for (const stream of [false, true])
		describe(`faults (${proto}, ${stream ? 'stream' : 'json'})`, () => {
			for (const c of CASES) {
				it(`should answer from the fallback channel after ${c.name}, billing once`, async () => {
					rig.primary.fault = c.fault
					const id = rid()
					const before = await balanceOf(rig.app, accountId)
					const text = `fallback please ${n}`
					const a = await post(rig.app.url, proto, key, body('dual', text, stream), { 'x-request-id': id })
					expect(a.status).toBe(200)
					expect(a.headers.get('x-request-id')).toBe(id)
					expect(answerText(proto, a)).toBe(`Hello! You said: ${text}`)
					if (c.fault.kind !== 'refuse') expect(rig.primary.requests.length).toBeGreaterThanOrEqual(1)
					expect(rig.fallback.requests).toHaveLength(1)
					const rows = await usageOf(rig.app, id)
					expect(rows.map((r) => [r.channel, r.status, r.end_reason])).toEqual([['fallback', 200, 'ok']])
					expect(rows[0]!.cost).toBeGreaterThan(0)
					expect(await balanceOf(rig.app, accountId)).toBe(before - rows[0]!.cost)
				})

				// An overload (503) reaches a messages caller as Anthropic's own 529; the usage row keeps the gateway's 503.
				const shown = proto === 'messages' && c.status === 503 ? 529 : c.status
				it(`should answer ${shown} in the caller's shape after ${c.name} with no fallback, charging nothing`, async () => {
					rig.primary.fault = c.fault
					const id = rid()
					const before = await balanceOf(rig.app, accountId)
					const a = await post(rig.app.url, proto, key, body('solo', 'no way out', stream), { 'x-request-id': id })
					expect(a.status).toBe(shown)
					expect(a.headers.get('content-type')).toContain('application/json')
					expect(a.headers.get('x-request-id')).toBe(id)
					const e = errorOf(proto, a.json)
					if (c.status === 429) {
						expect(a.headers.get('retry-after')).toBe('7')
						if (proto === 'messages') expect(e.type).toBe('rate_limit_error')
					}
					if (c.status === 503) expect(e.type).toBe(proto === 'messages' ? 'overloaded_error' : 'service_unavailable_error')
					const rows = await usageOf(rig.app, id)
					expect(rows.map((r) => [r.cost, r.status])).toEqual([[0, shown]])
					expect(await balanceOf(rig.app, accountId)).toBe(before)
				})
			}

			it('should return a 4xx about the request itself without trying another channel', async () => {
				rig.primary.fault = { kind: 'status', status: 400, body: { error: { message: 'bad thing', type: 'invalid_request_error', code: null, param: null } } }
				const id = rid()
				const a = await post(rig.app.url, proto, key, body('dual', 'not retried', stream), { 'x-request-id': id })
				expect(a.status).toBe(400)
				expect(errorOf(proto, a.json).message).toContain('bad thing')
				expect(rig.fallback.requests).toHaveLength(0)
				expect((await usageOf(rig.app, id)).map((r) => r.cost)).toEqual([0])
			})
		})

for (const proto of PROTOS)
	describe(`a stream cut after content reached the caller (${proto})`, () => {
		for (const abrupt of [false, true])
			it(`should not retry silently, end with an error event and bill only what was sent${abrupt ? ' (connection reset)' : ''}`, async () => {
				rig.primary.fault = { kind: 'cut', afterChunks: 4, abrupt }
				const id = rid()
				const text = 'one two three four five six seven eight'
				const before = await balanceOf(rig.app, accountId)
				const a = await post(rig.app.url, proto, key, body('dual', text, true), { 'x-request-id': id })
				expect(a.status).toBe(200)
				expect(rig.fallback.requests).toHaveLength(0)
				const got = answerText(proto, { ...a, json: undefined })
				expect(got.length).toBeGreaterThan(0)
				expect(`Hello! You said: ${text}`.startsWith(got)).toBe(true)
				expect(got).not.toBe(`Hello! You said: ${text}`)
				if (proto === 'chat') {
					const data = sseData(a.text)
					expect(JSON.parse(data[data.length - 1]!).error).toBeDefined()
					expect(data).not.toContain('[DONE]')
				} else expect(a.text).toContain('event: error')
				const rows = await usageOf(rig.app, id)
				expect(rows.map((r) => [r.channel, r.end_reason])).toEqual([['pri', 'upstream_cut']])
				// Billed for what was produced, not for the whole answer (WIRE-NOTES #9).
				expect(rows[0]!.output_tokens).toBeLessThan(text.split(' ').length + 3)
				expect(await balanceOf(rig.app, accountId)).toBe(before - rows[0]!.cost)
			})
	})

/** An OpenAI stream: the role chunk, `words` content chunks, then `tail` (raw SSE text). */
function openaiStream(words: string[], tail: string): Response {
	const chunk = (delta: Record<string, unknown>) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'raw', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`
	const text = chunk({ role: 'assistant', content: '' }) + words.map((w) => chunk({ content: w })).join('') + tail
	return new Response(text, { headers: { 'content-type': 'text/event-stream' } })
}

for (const proto of PROTOS)
	describe(`a broken frame after content reached the caller (${proto})`, () => {
		it('should end the stream with a protocol error instead of relaying the broken frame, billing what was sent', async () => {
			rig.raw.reply = () => openaiStream(['Hello', ' there'], 'data: <html>502 Bad Gateway</html>\n\n' + 'data: {"choices":[{"index":0,"delta":{"content":" more"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')
			const id = rid()
			const a = await post(rig.app.url, proto, key, body('raw', 'say hello', true), { 'x-request-id': id })
			expect(a.status).toBe(200)
			expect(a.text).not.toContain('<html>')
			expect(answerText(proto, { ...a, json: undefined })).toBe('Hello there')
			if (proto === 'chat') {
				const data = sseData(a.text)
				expect(JSON.parse(data[data.length - 1]!).error).toBeDefined()
			} else expect(a.text).toContain('event: error')
			const rows = await usageOf(rig.app, id)
			expect(rows).toHaveLength(1)
			expect(rows[0]!.end_reason).not.toBe('ok')
			expect(rows[0]!.cost).toBeGreaterThan(0)
		})

		it('should fail over (here: 502, one channel) when the frame is broken before any content', async () => {
			rig.raw.reply = () => openaiStream([], 'data: {"choices":[{"index":0,"delta":{"content":"Hel\n\n')
			const id = rid()
			const a = await post(rig.app.url, proto, key, body('raw', 'say hello', true), { 'x-request-id': id })
			expect(a.status).toBe(502)
			errorOf(proto, a.json)
			expect((await usageOf(rig.app, id)).map((r) => r.cost)).toEqual([0])
		})
	})

describe('a stream that stalls after content reached the caller', () => {
	// The relay enforces idle_ms itself, to within two ticks of its 50 ms clock (Bun's fetch timeout, which it used to
	// ride on, fired in 4 s steps: test/integration/resilience/channel-timeouts.test.ts). Both protocols run at once.
	it('should end it with a protocol error after the idle timeout and bill what was sent (OpenAI and Anthropic callers)', async () => {
		// Two content chunks, then silence with the connection open.
		rig.raw.reply = (req) => {
			const head = openaiStream(['Hello', ' there'], '')
			const stalled = new ReadableStream<Uint8Array>({
				async start(c) {
					c.enqueue(new Uint8Array(await head.arrayBuffer()))
					req.signal.addEventListener('abort', () => c.close(), { once: true })
				},
			})
			return new Response(stalled, { headers: { 'content-type': 'text/event-stream' } })
		}
		await Promise.all(
			PROTOS.map(async (proto) => {
				const id = rid()
				const started = Date.now()
				const a = await post(rig.app.url, proto, key, body('raw', 'say hello', true), { 'x-request-id': id })
				expect(Date.now() - started).toBeLessThan(IDLE_MS + 1_000)
				expect(a.status).toBe(200)
				expect(answerText(proto, { ...a, json: undefined })).toBe('Hello there')
				if (proto === 'chat') expect(JSON.parse(sseData(a.text).at(-1)!).error).toBeDefined()
				else expect(a.text).toContain('event: error')
				const rows = await usageOf(rig.app, id)
				expect(rows).toHaveLength(1)
				expect(rows[0]!.end_reason).not.toBe('ok')
				expect(rows[0]!.cost).toBeGreaterThan(0)
			}),
		)
	}, 30_000)
})

describe('faults: the ledger', () => {
	it('should hold the invariant after every fault above, with nothing left reserved', async () => {
		const t = await expectLedgerInvariant(rig.app.svc.db.sql, rig.app.svc.ledger)
		expect(t.inUse).toBe(0)
	})
})
