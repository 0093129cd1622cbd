/**
 * Upstream faults for every protocol pair, as a user whose vendor misbehaves sees them: each inbound protocol (OpenAI
 * chat, Responses, Anthropic messages, Gemini native) through its official SDK × each vendor (the fast path where they
 * match, converted otherwise), streamed and not. faults.test.ts covers chat and messages over an OpenAI channel and
 * failover in depth; this file runs the whole matrix.
 * - Before any byte (an HTTP 429/500/503/529, a reset after the headers, a 200 whose body is empty, truncated, not
 *   JSON or stalls, an error or broken frame first in a stream): the SDK raises the caller's honest status (429 with
 *   `retry-after`, 5xx → 502/503, a stall → 504, never a 500 of ours, no vendor account detail), one usage row charges nothing, or,
 *   with a second channel, the answer comes from it, billed once.
 * - After content reached the caller (a stream cut, reset, stalled past `idle_ms`, ended by the vendor's error event,
 *   or broken by a frame that is not JSON): the SDK raises rather than ending as if complete, the one usage row bills
 *   what was produced (estimated: no vendor reported a final usage) with the cost its tokens make, and the end reason
 *   says which fault it was.
 * Either way the channel's circuit breaker counts the fault, and nothing stays reserved.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import type { Fault } from '../../mocks'
import { MOCK_ORG as ANTHROPIC_ORG } from '../../mocks/anthropic/errors'
import { MOCK_PROJECT } from '../../mocks/gemini/errors'
import { MOCK_ORG as OPENAI_ORG } from '../../mocks/openai/errors'
import { type Account, type Matrix, startMatrix, UPSTREAMS, type Upstream, usageRows } from '../protocols/harness'
import { ANSWER, call, INBOUND, type Inbound } from './fault-clients'
import { expectLedgerInvariant } from './invariant'

const UP_MODEL: Record<Upstream, string> = { openai: 'gpt-4o-mini', anthropic: 'claude-sonnet-5', gemini: 'gemini-2.5-flash' }
const UP_KEY: Record<Upstream, string> = { openai: 'up-openai', anthropic: 'up-anthropic', gemini: 'up-gemini' }
/** The next vendor, serving `fo-<vendor>` second. */
const NEXT: Record<Upstream, Upstream> = { openai: 'anthropic', anthropic: 'gemini', gemini: 'openai' }
/** µUSD per token: 1 in, 2 out, so a cost is exactly `input + 2 × output`. */
const PRICE = { input_per_mtok: 1, output_per_mtok: 2 }
const IDLE_MS = 600
/**
 * Gemini's stream that stalls before its first chunk sends no byte, not even its headers, so it is found at first_byte_ms:
 * as short as idle_ms (rig.ts uses 400 ms), the eight tests that wait for it take 0.6 s each, not 1.5.
 */
const FIRST_BYTE_MS = 600
const timeouts = { timeouts: { first_byte_ms: FIRST_BYTE_MS, idle_ms: IDLE_MS } }

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		// `f-<vendor>`: that vendor alone; `fo-<vendor>`: that vendor, then the next one.
		channels: (mocks) =>
			UPSTREAMS.flatMap((u) => [
				{ name: `f-${u}`, type: u, base_url: mocks[u].url, api_key: UP_KEY[u], models: [`f-${u}`, `fo-${u}`], model_map: { [`f-${u}`]: UP_MODEL[u], [`fo-${u}`]: UP_MODEL[u] }, priority: 0, settings: timeouts },
				{ name: `fo2-${u}`, type: NEXT[u], base_url: mocks[NEXT[u]].url, api_key: UP_KEY[NEXT[u]], models: [`fo-${u}`], model_map: { [`fo-${u}`]: UP_MODEL[NEXT[u]] }, priority: 1, settings: timeouts },
			]),
		models: UPSTREAMS.flatMap((u) => [`f-${u}`, `fo-${u}`].map((name) => ({ name, ...PRICE }))),
	})
}, 60_000)
afterAll(() => m.close())

/** The vendor's own channel (`f-<vendor>`), which also serves `fo-<vendor>` first. */
const channelOf = (up: Upstream) => m.app.svc.catalog.channelsFor(`fo-${up}`).find((c) => c.name === `f-${up}`)!
beforeEach(() => {
	for (const u of UPSTREAMS) {
		m.mocks[u].reset()
		for (const c of m.app.svc.catalog.channelsFor(`fo-${u}`)) m.app.svc.health.reset(c.id)
	}
})

/** The caller's error type for a status, in each protocol's words. */
const TYPE: Record<Inbound, Record<number, string>> = {
	chat: { 429: 'rate_limit_error', 502: 'server_error', 503: 'service_unavailable_error', 504: 'timeout_error' },
	responses: { 429: 'rate_limit_error', 502: 'server_error', 503: 'service_unavailable_error', 504: 'timeout_error' },
	messages: { 429: 'rate_limit_error', 502: 'api_error', 529: 'overloaded_error', 504: 'timeout_error' },
	gemini: { 429: 'RESOURCE_EXHAUSTED', 502: 'INTERNAL', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED' },
}

/** The status a caller reads (and its usage row records) for the gateway's `status`: an overload reaches Anthropic's callers as its 529. */
const shown = (inbound: Inbound, status: number) => (inbound === 'messages' && status === 503 ? 529 : status)

/** What no caller may read: the channels' keys and the vendor accounts the mocks' errors name. */
const SECRETS = [...Object.values(UP_KEY), OPENAI_ORG, ANTHROPIC_ORG, MOCK_PROJECT]

/** The vendor's own in-stream error (`midstream`) stands for its overload (Anthropic 529, Gemini 503) or a 500 (OpenAI). */
const MIDSTREAM_STATUS: Record<Upstream, number> = { openai: 502, anthropic: 503, gemini: 503 }

/** The code a Responses `error` event carries for each vendor's own in-stream error: the vendor's error type or status. */
const VENDOR_CODE: Record<Upstream, string> = { openai: 'server_error', anthropic: 'overloaded_error', gemini: 'UNAVAILABLE' }

/** A stream that stalls, past `idle_ms`, after its preamble and before any content (inside the prefetch window). */
const STALL_BEFORE_CONTENT = (up: Upstream): Fault => ({ kind: 'stall', afterChunks: up === 'gemini' ? 0 : 1 })

type Before = { name: string; fault: (up: Upstream) => Fault; status: (up: Upstream) => number; only?: 'json' | 'stream'; vendors?: Upstream[] }

/** Faults before any byte reached the caller, and the status the caller gets. */
const BEFORE: Before[] = [
	{ name: 'HTTP 429 with retry-after', fault: () => ({ kind: 'status', status: 429, retryAfter: 3 }), status: () => 429 },
	{ name: 'HTTP 429', fault: () => ({ kind: 'status', status: 429 }), status: () => 429 },
	{ name: 'HTTP 500', fault: () => ({ kind: 'status', status: 500 }), status: () => 502 },
	{ name: 'HTTP 503', fault: () => ({ kind: 'status', status: 503 }), status: () => 503 },
	{ name: 'HTTP 529 overloaded', fault: () => ({ kind: 'status', status: 529 }), status: () => 503, vendors: ['anthropic'] },
	{ name: 'a reset after the headers', fault: () => ({ kind: 'cut', afterChunks: 0, abrupt: true }), status: () => 502 },
	{ name: 'a 200 with an empty body', fault: () => ({ kind: 'empty' }), status: () => 502 },
	{ name: 'a 200 whose body is not JSON', fault: () => ({ kind: 'malformed' }), status: () => 502, only: 'json' },
	{ name: 'a 200 whose JSON is truncated', fault: () => ({ kind: 'cut', afterChunks: 0 }), status: () => 502, only: 'json' },
	// An upstream that did not answer in time: 504 (RFC 9110 §15.6.5), not the 502 of a broken answer.
	{ name: 'a 200 whose body stalls halfway', fault: () => ({ kind: 'stall', afterChunks: 0 }), status: () => 504, only: 'json' },
	// Past its preamble (OpenAI's role chunk, Anthropic's message_start; Gemini has none, so before its first byte).
	{ name: 'a stream that stalls before any content', fault: (up) => STALL_BEFORE_CONTENT(up), status: () => 504, only: 'stream' },
	{ name: "the vendor's error (HTTP, or first in the stream)", fault: () => ({ kind: 'midstream', afterChunks: 0 }), status: (up) => MIDSTREAM_STATUS[up] },
	// Gemini's first chunk already carries text: its broken frame comes first.
	{ name: 'a broken frame before any content', fault: (up) => ({ kind: 'malformed', atChunk: up === 'gemini' ? 0 : 1 }), status: () => 502, only: 'stream' },
]

/** Retry-after as the vendor gave it (Gemini's 429 always carries its RetryInfo); opens the breaker at once. */
const waitGiven = (c: Before, up: Upstream) => {
	const f = c.fault(up)
	return f.kind === 'status' && f.status === 429 && (f.retryAfter !== undefined || up === 'gemini')
}

/**
 * The stalls (each waits idle_ms or first_byte_ms) run for the three vendors at once: each vendor has its own mock and
 * channel, so the counts and rows stay each one's. Each call starts once the previous vendor's mock took its request
 * (and with it its one fault), so a failover to the next vendor (idle_ms later) finds that vendor's fault taken.
 */
const STALLS = new Set(['a 200 whose body stalls halfway', 'a stream that stalls before any content'])
async function everyVendorAtOnce(run: (up: Upstream, acct: Account) => Promise<void>): Promise<void> {
	// The accounts first, so one call follows another by no more than a request's way to its mock.
	const accts = await Promise.all(UPSTREAMS.map(() => m.account()))
	const running: Promise<unknown>[] = []
	for (const [i, up] of UPSTREAMS.entries()) {
		let settled = false
		running.push(run(up, accts[i]!).finally(() => (settled = true)))
		while (m.mocks[up].requests.length === 0 && !settled) await Bun.sleep(5)
	}
	for (const r of await Promise.allSettled(running)) if (r.status === 'rejected') throw r.reason
}

/** `c` before any byte, from `up` to an `inbound` caller: the caller's status and error shape, nothing charged, the channel told. */
async function expectFaultBefore(inbound: Inbound, up: Upstream, stream: boolean, c: Before, acct?: Account) {
	acct ??= await m.account()
	const ch = channelOf(up)
	m.mocks[up].faultOnce = c.fault(up)
	const seen = await call(m.app.url, acct.key, inbound, `f-${up}`, stream)
	expect(seen.text).toBe('')
	const status = c.status(up)
	expect(seen.error).toMatchObject({ status: shown(inbound, status), type: TYPE[inbound][shown(inbound, status)]! })
	for (const s of SECRETS) expect(seen.error!.message).not.toContain(s)
	const f = c.fault(up)
	if (inbound !== 'gemini' && f.kind === 'status' && f.retryAfter !== undefined) expect(seen.error!.retryAfter).toBe(String(f.retryAfter))
	const rows = await usageRows(m, acct.accountId)
	expect(rows.map((r) => [r.status, r.cost, r.end_reason])).toEqual([[shown(inbound, status), 0, 'error']])
	expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
	const h = m.app.svc.health.snapshot(ch.id)
	if (waitGiven(c, up)) expect(h.state).toBe('open')
	else expect([h.state, h.consecutive_failures]).toEqual(['closed', 1])
}

/** Found at `idle_ms`: a stream inside the prefetch window, a whole body as it is read; `fo-<up>` answers from the next vendor. */
async function expectStallFailover(inbound: Inbound, up: Upstream, stream: boolean, acct?: Account) {
	acct ??= await m.account()
	m.mocks[up].faultOnce = stream ? STALL_BEFORE_CONTENT(up) : { kind: 'stall', afterChunks: 0 }
	const seen = await call(m.app.url, acct.key, inbound, `fo-${up}`, stream)
	expect([seen.text, seen.ended, seen.error]).toEqual([ANSWER, true, undefined])
	const rows = await usageRows(m, acct.accountId)
	expect(rows.map((r) => [r.channel, r.status, r.end_reason])).toEqual([[`fo2-${up}`, 200, 'ok']])
	expect(Math.round((acct.balance - (await m.app.balance(acct.accountId))) * 1e6)).toBe(Math.round(rows[0]!.cost * 1e6))
	expect(m.app.svc.health.snapshot(channelOf(up).id).consecutive_failures).toBe(1)
}

/**
 * Faults once five chunks went out (content among them), the end reason each is recorded with, and the error the
 * caller's SDK raises: its type, and on Responses (whose `error` event has no type) its code.
 */
type After = { name: string; fault: Fault; endReason: string; type: (up: Upstream) => string; code: (up: Upstream) => string }
const AFTER = (inbound: Inbound): After[] => [
	{ name: 'the connection closed without the terminator', fault: { kind: 'cut', afterChunks: 5 }, endReason: 'upstream_cut', type: () => TYPE[inbound][502]!, code: () => 'upstream_cut' },
	{ name: 'the connection reset', fault: { kind: 'cut', afterChunks: 5, abrupt: true }, endReason: 'upstream_cut', type: () => TYPE[inbound][502]!, code: () => 'upstream_stream_error' },
	{ name: 'a stall past idle_ms', fault: { kind: 'stall', afterChunks: 5 }, endReason: 'upstream_cut', type: () => TYPE[inbound][502]!, code: () => 'upstream_stream_error' },
	{ name: "the vendor's error event", fault: { kind: 'midstream', afterChunks: 5 }, endReason: 'error', type: (u) => TYPE[inbound][shown(inbound, MIDSTREAM_STATUS[u])]!, code: (u) => VENDOR_CODE[u] },
	{ name: 'a frame that is not JSON', fault: { kind: 'malformed', atChunk: 5 }, endReason: 'upstream_malformed', type: () => TYPE[inbound][502]!, code: () => 'upstream_malformed' },
]

/** `c` mid-stream, from `up` to an `inbound` caller: the SDK raises, what was produced is billed, the channel told. */
async function expectFaultAfter(inbound: Inbound, up: Upstream, c: After, acct?: Account) {
	acct ??= await m.account()
	const ch = channelOf(up)
	m.mocks[up].faultOnce = c.fault
	const started = Date.now()
	const seen = await call(m.app.url, acct.key, inbound, `f-${up}`, true)
	if (c.fault.kind === 'stall') expect(Date.now() - started).toBeLessThan(IDLE_MS + 2_000)
	// Some content arrived, not the whole answer, and the stream did not end as a complete one.
	expect(seen.text.length).toBeGreaterThan(0)
	expect(ANSWER.startsWith(seen.text) && seen.text !== ANSWER).toBe(true)
	expect(seen.ended).toBe(false)
	expect(seen.error).toBeDefined()
	expect(inbound === 'responses' ? [seen.error!.type, seen.error!.code] : seen.error!.type).toEqual(inbound === 'responses' ? ['error', c.code(up)] : c.type(up))
	expect(seen.error!.message).not.toContain('{"broken"')
	for (const s of SECRETS) expect(seen.error!.message).not.toContain(s)
	const rows = await usageRows(m, acct.accountId)
	expect(rows.map((r) => [r.status, r.end_reason, r.estimated])).toEqual([[200, c.endReason, true]])
	const row = rows[0]!
	expect(row.input_tokens).toBeGreaterThan(0)
	// What was produced: some output, less than the whole answer's 13 words (the vendor never said more).
	expect(row.output_tokens).toBeGreaterThan(0)
	expect(row.output_tokens).toBeLessThan(13)
	const cost = row.input_tokens + 2 * row.output_tokens
	expect(Math.round(row.cost * 1e6)).toBe(cost)
	expect(Math.round((await m.app.balance(acct.accountId)) * 1e6)).toBe(Math.round(acct.balance * 1e6) - cost)
	expect(m.app.svc.health.snapshot(ch.id).consecutive_failures).toBe(1)
}

const pairs = INBOUND.flatMap((inbound) => UPSTREAMS.flatMap((up) => [false, true].map((stream) => [inbound, up, stream] as const)))

for (const [inbound, up, stream] of pairs)
	describe(`${inbound} caller, ${up} upstream, ${stream ? 'stream' : 'json'}`, () => {
		for (const c of BEFORE) {
			if (c.only && c.only !== (stream ? 'stream' : 'json')) continue
			if (c.vendors && !c.vendors.includes(up)) continue
			if (STALLS.has(c.name)) continue // below, the three vendors at once
			it(`should answer ${shown(inbound, c.status(up))} in the caller's shape after ${c.name}, charging nothing and counting it against the channel`, () =>
				expectFaultBefore(inbound, up, stream, c),
			)
		}

		it('should answer from the second channel after a fault before any byte, billing once', async () => {
			const acct = await m.account()
			m.mocks[up].faultOnce = { kind: 'cut', afterChunks: 0, abrupt: true }
			const seen = await call(m.app.url, acct.key, inbound, `fo-${up}`, stream)
			expect(seen.error).toBeUndefined()
			expect(seen.text).toBe(ANSWER)
			expect(seen.ended).toBe(true)
			const rows = await usageRows(m, acct.accountId)
			expect(rows.map((r) => [r.channel, r.status, r.end_reason])).toEqual([[`fo2-${up}`, 200, 'ok']])
			expect(Math.round((acct.balance - (await m.app.balance(acct.accountId))) * 1e6)).toBe(Math.round(rows[0]!.cost * 1e6))
			expect(m.app.svc.health.snapshot(channelOf(up).id).consecutive_failures).toBe(1)
		})

		if (!stream) return

		for (const c of AFTER(inbound)) {
			if (c.fault.kind === 'stall') continue // below, the three vendors at once
			it(`should make the SDK raise after ${c.name} mid-answer, bill what was produced and count it against the channel`, () => expectFaultAfter(inbound, up, c))
		}

		it("should open the channel's breaker after three streams cut midway, so the next request goes to the second channel", async () => {
			const acct = await m.account()
			const ch = channelOf(up)
			for (let i = 0; i < 3; i++) {
				m.mocks[up].faultOnce = { kind: 'cut', afterChunks: 5 }
				expect((await call(m.app.url, acct.key, inbound, `fo-${up}`, true)).error).toBeDefined()
			}
			expect(m.app.svc.health.snapshot(ch.id).state).toBe('open')
			const seen = await call(m.app.url, acct.key, inbound, `fo-${up}`, true)
			expect([seen.text, seen.ended, seen.error]).toEqual([ANSWER, true, undefined])
			expect((await usageRows(m, acct.accountId)).map((r) => [r.channel, r.end_reason])).toEqual([
				[`f-${up}`, 'upstream_cut'],
				[`f-${up}`, 'upstream_cut'],
				[`f-${up}`, 'upstream_cut'],
				[`fo2-${up}`, 'ok'],
			])
		})
	})

// The stalls of every describe above, for the three vendors at once (everyVendorAtOnce): the same tests, one wait each.
for (const inbound of INBOUND)
	for (const stream of [false, true])
		describe(`${inbound} caller, every upstream at once, ${stream ? 'stream' : 'json'}`, () => {
			for (const c of BEFORE) {
				if (!STALLS.has(c.name) || (c.only && c.only !== (stream ? 'stream' : 'json'))) continue
				it(`should answer ${shown(inbound, c.status('openai'))} in the caller's shape after ${c.name}, charging nothing and counting it against each channel`, () =>
					everyVendorAtOnce((up, acct) => expectFaultBefore(inbound, up, stream, c, acct)),
				)
			}
			it(`should answer from the second channel after ${stream ? 'a stream stalled before any content' : 'a body stalled halfway'}, billing once and counting the stall`, () =>
				everyVendorAtOnce((up, acct) => expectStallFailover(inbound, up, stream, acct)),
			)
			if (!stream) return
			const stall = AFTER(inbound).find((c) => c.fault.kind === 'stall')!
			it(`should make the SDK raise after ${stall.name} mid-answer, bill what was produced and count it against each channel`, () =>
				everyVendorAtOnce((up, acct) => expectFaultAfter(inbound, up, stall, acct)),
			)
		})

describe('fault matrix: the ledger', () => {
	it('should hold the invariant after every fault above, with nothing left reserved', async () => {
		const t = await expectLedgerInvariant(m.app.svc.db.sql, m.app.svc.ledger)
		expect(t.inUse).toBe(0)
	})
})
