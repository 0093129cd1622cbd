/**
 * Upstream failures in the caller's protocol (issue 3): an HTTP error becomes the caller's error shape with a
 * mapped status (the vendor's message kept, `retry-after` passed on, nothing charged); an error in the middle of a
 * stream ends it in the caller's protocol — `event: error` for messages (WIRE-NOTES wire §2, mlflow/mlflow#25897),
 * an error object without `[DONE]` for chat (Portkey-AI/gateway#1142) — and only what was produced is charged, never
 * the error text (QuantumNous/new-api#5290); a cut stream is reported and billed as cut.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { PROTOCOLS, type Protocol } from './clients'
import { costMicros, type Matrix, MODEL, SETUP_MS, startMatrix, usageRows, UPSTREAMS } from './harness'
import { errorOf, postRaw, simpleBody } from './raw'
import { sseFrames } from './wire-checks'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

/** Upstream status → [client status, chat error type, messages error type]. */
const MAPPED: Array<[number, number, string, string]> = [
	[429, 429, 'rate_limit_error', 'rate_limit_error'],
	[500, 502, 'server_error', 'api_error'],
	[400, 400, 'invalid_request_error', 'invalid_request_error'],
	// The channel's credentials were refused: the gateway's fault, not the caller's key.
	[401, 502, 'server_error', 'api_error'],
	// The vendor account may not use this model: the gateway's fault too.
	[403, 502, 'server_error', 'api_error'],
	// The vendor's own timeout: not the caller's fault (it went back as a 400-class invalid request).
	[408, 504, 'timeout_error', 'timeout_error'],
]

describe('upstream HTTP errors', () => {
	for (const proto of PROTOCOLS)
		for (const up of UPSTREAMS)
			for (const [upstream, status, chatType, msgType] of MAPPED)
				it(`should turn a ${upstream} from ${up} into ${status} in the ${proto} shape and charge nothing`, async () => {
					const acct = await m.account()
					m.mocks[up].faultOnce = { kind: 'status', status: upstream, ...(upstream === 429 && { retryAfter: 7 }) }
					const res = await postRaw(m, proto, acct, simpleBody(proto, MODEL[up], 'fail please', upstream === 500))
					expect(res.status).toBe(status)
					expect(res.headers.get('content-type')).toStartWith('application/json')
					const err = errorOf(proto, await res.json())
					expect(err.type).toBe(proto === 'chat' ? chatType : msgType)
					if (upstream === 400) expect(err.message).toContain('Mock error 400')
					// The vendor's words about the gateway's own account stay with the operator.
					if (upstream === 401 || upstream === 403) for (const said of ['Mock error', 'Incorrect API key']) expect(err.message).not.toContain(said)
					if (upstream === 429) expect(res.headers.get('retry-after')).toBe('7')
					const rows = await usageRows(m, acct.accountId)
					expect(rows.map((r) => [r.cost, r.status, r.end_reason])).toEqual([[0, status, 'error']])
					expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
					if (upstream === 401) {
						// Issue 4: a channel whose credentials the vendor refuses is disabled with the reason.
						const list = (await m.app.admin('/api/channels')).body.data as Array<{ id: number; status: string; disabled_reason: string | null; models: string[]; model_map: Record<string, string> }>
						const ch = list.find((c) => c.status === 'disabled' && (c.models.includes(MODEL[up]) || MODEL[up] in c.model_map))!
						expect(ch.disabled_reason).toContain('credentials')
						expect((await m.app.admin(`/api/channels/${ch.id}/enable`, { method: 'POST' })).body.status).toBe('enabled')
					}
					if (upstream === 403) {
						const list = (await m.app.admin('/api/channels')).body.data as Array<{ status: string; models: string[] }>
						expect(list.filter((c) => c.models.includes(MODEL[up])).map((c) => c.status)).toEqual(['enabled'])
					}
				})

	it('should surface an Anthropic 529 overloaded as 529 overloaded_error to messages clients and 503 service_unavailable to chat clients', async () => {
		const acct = await m.account()
		m.mocks.anthropic.faultOnce = { kind: 'status', status: 529 }
		const a = await postRaw(m, 'messages', acct, simpleBody('messages', MODEL.anthropic, 'busy', false))
		expect(a.status).toBe(529)
		expect(errorOf('messages', await a.json()).type).toBe('overloaded_error')
		m.mocks.anthropic.faultOnce = { kind: 'status', status: 529 }
		const c = await postRaw(m, 'chat', acct, simpleBody('chat', MODEL.anthropic, 'busy', false))
		expect(c.status).toBe(503)
		expect(errorOf('chat', await c.json()).type).toBe('service_unavailable_error')
	})

	it('should answer 502 when the upstream body is not JSON', async () => {
		const acct = await m.account()
		m.mocks.gemini.faultOnce = { kind: 'malformed' }
		const res = await postRaw(m, 'chat', acct, simpleBody('chat', MODEL.gemini, 'broken', false))
		expect(res.status).toBe(502)
		expect(errorOf('chat', await res.json()).type).toBe('server_error')
	})
})

/** Reads a whole stream's frames. */
async function streamFrames(proto: Protocol, up: (typeof UPSTREAMS)[number], key: string, text: string) {
	const res = await postRaw(m, proto, { key }, simpleBody(proto, MODEL[up], text, true))
	expect(res.status).toBe(200)
	return sseFrames(await res.text())
}

const LONG = 'please tell me a long story about the sea and the stars tonight'

describe('errors in the middle of a stream', () => {
	for (const proto of PROTOCOLS)
		for (const up of UPSTREAMS) {
			it(`should end the ${proto} stream with the protocol's error frame and charge only what was produced (${up} upstream)`, async () => {
				const acct = await m.account()
				m.mocks[up].faultOnce = { kind: 'midstream', afterChunks: 4 }
				const frames = await streamFrames(proto, up, acct.key, LONG)
				const last = frames[frames.length - 1]!
				if (proto === 'messages') {
					expect(last.event).toBe('error')
					expect(JSON.parse(last.data)).toMatchObject({ type: 'error', error: { type: expect.any(String), message: expect.any(String) } })
					expect(frames.some((f) => f.event === 'message_stop')).toBe(false)
					expect(frames.filter((f) => f.event !== 'ping')[0]!.event).toBe('message_start')
				} else {
					expect(JSON.parse(last.data)).toMatchObject({ error: { type: expect.any(String), message: expect.any(String) } })
					expect(frames.some((f) => f.data === '[DONE]')).toBe(false)
				}
				const rows = await usageRows(m, acct.accountId)
				expect(rows).toHaveLength(1)
				const row = rows[0]!
				expect(row.end_reason).toBe('error')
				expect(row.input_tokens).toBeGreaterThan(0)
				// At most the few words sent before the failure; the error message is never counted as output.
				expect(row.output_tokens).toBeGreaterThan(0)
				expect(row.output_tokens).toBeLessThanOrEqual(8)
				expect(Math.round(row.cost * 1e6)).toBe(costMicros({ model: MODEL[up], input: row.input_tokens, output: row.output_tokens, cached: row.cached_tokens }))
				expect(Math.round((await m.app.balance(acct.accountId)) * 1e6)).toBe(acct.balance * 1e6 - Math.round(row.cost * 1e6))
			})

			it(`should report a stream the upstream cut short in the ${proto} protocol and bill it as cut (${up} upstream)`, async () => {
				const acct = await m.account()
				m.mocks[up].faultOnce = { kind: 'cut', afterChunks: 4 }
				const frames = await streamFrames(proto, up, acct.key, LONG)
				const last = frames[frames.length - 1]!
				if (proto === 'messages') expect(last.event).toBe('error')
				else expect(JSON.parse(last.data).error).toBeDefined()
				const [row] = await usageRows(m, acct.accountId)
				expect(row!.end_reason).toBe('upstream_cut')
				// OpenAI reports usage only at the end: what was produced is counted locally and marked so.
				if (up === 'openai') expect(row!.estimated).toBe(true)
				expect(row!.output_tokens).toBeGreaterThan(0)
				expect(row!.output_tokens).toBeLessThanOrEqual(8)
			})
		}

	for (const up of ['anthropic', 'gemini'] as const)
		for (const kind of ['midstream', 'cut'] as const)
			it(`should show in response.failed the usage it bills for a Responses stream failing midway (${up}, ${kind})`, async () => {
				const acct = await m.account()
				m.mocks[up].faultOnce = { kind, afterChunks: 9 }
				const res = await fetch(`${m.app.url}/v1/responses`, {
					method: 'POST',
					headers: { authorization: `Bearer ${acct.key}`, 'content-type': 'application/json' },
					body: JSON.stringify({ model: MODEL[up], input: LONG, stream: true }),
				})
				const events = sseFrames(await res.text()).filter((f) => f.data !== '[DONE]').map((f) => JSON.parse(f.data))
				const failed = events.at(-1)
				expect(failed.type).toBe('response.failed')
				const [row] = await usageRows(m, acct.accountId)
				// Anthropic's message_start says output_tokens 1: the bill counts what was produced, the client is shown as much.
				expect(row!.estimated).toBe(true)
				expect({ input: failed.response.usage.input_tokens, output: failed.response.usage.output_tokens }).toEqual({ input: row!.input_tokens, output: row!.output_tokens })
			})

	it('should make the SDKs throw on the error frame instead of ending quietly', async () => {
		const acct = await m.account()
		m.mocks.gemini.faultOnce = { kind: 'midstream', afterChunks: 3 }
		const s = await acct.openai.chat.completions.create({ model: MODEL.gemini, stream: true, messages: [{ role: 'user', content: LONG }] })
		const chatErr = await (async () => {
			for await (const _ of s);
		})().catch((e: unknown) => e)
		expect(chatErr).toBeInstanceOf(OpenAI.APIError)
		m.mocks.openai.faultOnce = { kind: 'midstream', afterChunks: 3 }
		const ms = acct.anthropic.messages.stream({ model: MODEL.openai, max_tokens: 100, messages: [{ role: 'user', content: LONG }] })
		const msgErr = await ms.finalMessage().catch((e: unknown) => e)
		expect(msgErr).toBeInstanceOf(Anthropic.APIError)
	})
})
