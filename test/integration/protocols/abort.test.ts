/**
 * Client disconnects (issue 3; WIRE-NOTES #10, #11): the upstream call is aborted at once (the mock sees it within a
 * second), and the usage row says `client_abort` with the input plus the output produced so far charged — never the
 * whole prompt-and-cap, never zero once the vendor produced tokens (QuantumNous/new-api#4168, #5235; BerriAI/litellm
 * #14457). A disconnect once the vendor had the request but before it answered costs the input, counted here (the
 * vendor bills it: hanging up before the first byte made a long prompt free for the caller, not for the operator).
 * The mocks here pause between stream chunks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { countWords } from '../../mocks'
import { PROTOCOLS } from './clients'
import { costMicros, type Matrix, MODEL, SETUP_MS, startMatrix, THINKER, type UsageRow, usageRows, UPSTREAMS } from './harness'
import { postRaw, simpleBody } from './raw'
import { watchLateness } from '../../helpers/lateness'

const CHUNK_MS = 60

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({ mock: { chunkDelayMs: CHUNK_MS } })
}, SETUP_MS)
afterAll(() => m.close())

/** Polls `probe` until it returns a value or `ms` pass (side effects of a disconnect happen asynchronously). */
async function waitFor<T>(probe: () => T | undefined | Promise<T | undefined>, ms: number): Promise<T> {
	const deadline = Date.now() + ms
	while (true) {
		const v = await probe()
		if (v !== undefined) return v
		if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`)
		await Bun.sleep(10)
	}
}

const LONG = 'tell me everything you know about the long history of the northern seas and their many ships and sailors'
const ANSWER_WORDS = countWords(`Hello! You said: ${LONG}`)

describe('client abort mid-stream', () => {
	for (const proto of PROTOCOLS)
		for (const up of UPSTREAMS) {
			it(`should abort the ${up} call within a second and charge input plus output so far (${proto})`, async () => {
				const acct = await m.account()
				const ctl = new AbortController()
				const before = m.mocks[up].aborts.length
				const res = await postRaw(m, proto, acct, simpleBody(proto, MODEL[up], LONG, true), { signal: ctl.signal })
				expect(res.status).toBe(200)
				const reader = res.body!.getReader()
				const dec = new TextDecoder()
				let seen = ''
				// Read until three words of the answer went by.
				const piece = proto === 'chat' ? /"content":"[^"]/g : /"text_delta"/g
				while ((seen.match(piece) ?? []).length < 3) {
					const r = await reader.read()
					if (r.done) throw new Error('the stream ended before the abort')
					seen += dec.decode(r.value)
				}
				const t0 = Date.now()
				const lateness = watchLateness()
				ctl.abort()
				const abort = await waitFor(() => m.mocks[up].aborts[before], 5_000)
				expect(abort.at - t0).toBeLessThan(1000 + lateness.stop())
				const row = await waitFor<UsageRow>(async () => (await usageRows(m, acct.accountId))[0], 5_000)
				expect(row.end_reason).toBe('client_abort')
				if (up !== 'openai') expect(row.input_tokens).toBe(countWords(LONG))
				else {
					// OpenAI reports usage only at the end: the prompt is counted locally.
					expect(row.input_tokens).toBeGreaterThan(0)
					expect(row.estimated).toBe(true)
				}
				expect(row.output_tokens).toBeGreaterThan(0)
				expect(row.output_tokens).toBeLessThan(ANSWER_WORDS)
				const cost = costMicros({ model: MODEL[up], input: row.input_tokens, output: row.output_tokens, cached: row.cached_tokens })
				expect(Math.round(row.cost * 1e6)).toBe(cost)
				expect(cost).toBeGreaterThan(0)
				expect(Math.round((await m.app.balance(acct.accountId)) * 1e6)).toBe(acct.balance * 1e6 - cost)
			})
		}
})

describe('client abort before the first byte', () => {
	for (const stream of [true, false])
		it(`should abort the upstream call and charge the input the vendor was sent (${stream ? 'stream' : 'json'})`, async () => {
			const acct = await m.account()
			const before = m.mocks.anthropic.aborts.length
			m.mocks.anthropic.faultOnce = { kind: 'slow', firstByteMs: 3000 }
			const ctl = new AbortController()
			const pending = postRaw(m, 'chat', acct, simpleBody('chat', MODEL.anthropic, `slow one ${stream}`, stream), { signal: ctl.signal }).catch((e: unknown) => e)
			await waitFor(() => (m.mocks.anthropic.requests.some((r) => JSON.stringify(r.body).includes(`slow one ${stream}`)) ? true : undefined), 1000)
			const t0 = Date.now()
			const lateness = watchLateness()
			ctl.abort()
			expect(await pending).toBeInstanceOf(Error)
			const abort = await waitFor(() => m.mocks.anthropic.aborts[before], 5_000)
			expect(abort.at - t0).toBeLessThan(1000 + lateness.stop())
			const row = await waitFor<UsageRow>(async () => (await usageRows(m, acct.accountId))[0], 5_000)
			// 499, not the 500 of the aborted call: the usage statistics must not show a server fault.
			expect(row).toMatchObject({ end_reason: 'client_abort', status: 499, output_tokens: 0, estimated: true })
			expect(row.input_tokens).toBeGreaterThan(0)
			const cost = costMicros({ model: MODEL.anthropic, input: row.input_tokens, output: 0 })
			expect(cost).toBeGreaterThan(0)
			expect(Math.round(row.cost * 1e6)).toBe(cost)
			expect(Math.round((await m.app.balance(acct.accountId)) * 1e6)).toBe(acct.balance * 1e6 - cost)
		})
})

describe('client abort while the model thinks', () => {
	// Output counted here (the upstream reported none before the abort) says how much of it was thinking, as the
	// vendor's own usage would: the row's reasoning_tokens were 0 for Anthropic- and OpenAI-served models.
	for (const up of ['anthropic', 'openai'] as const)
		it(`should record the thinking among the output counted (${up})`, async () => {
			const acct = await m.account()
			const ctl = new AbortController()
			const body = { ...simpleBody('messages', THINKER[up], LONG, true), max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 } }
			const res = await postRaw(m, 'messages', acct, body, { signal: ctl.signal })
			expect(res.status).toBe(200)
			const reader = res.body!.getReader()
			const dec = new TextDecoder()
			let seen = ''
			while ((seen.match(/"thinking_delta"/g) ?? []).length < 3) {
				const r = await reader.read()
				if (r.done) throw new Error('the stream ended before the abort')
				seen += dec.decode(r.value)
			}
			expect(seen).not.toContain('"text_delta"')
			ctl.abort()
			const row = await waitFor<UsageRow>(async () => (await usageRows(m, acct.accountId))[0], 5_000)
			expect(row).toMatchObject({ end_reason: 'client_abort', estimated: true })
			expect(row.output_tokens).toBeGreaterThan(0)
			expect(row.reasoning_tokens).toBeGreaterThan(0)
			expect(row.reasoning_tokens).toBeLessThanOrEqual(row.output_tokens)
		})
})
