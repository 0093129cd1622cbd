/**
 * QA report item 9: an upstream overload reaches every caller as an overload in the caller's own shape, whichever
 * vendor said it — OpenAI 503, Anthropic 529 `overloaded_error`, Gemini 503 `UNAVAILABLE` — also when the overload is
 * the first event of a 200 stream, and when it is the last failure after failover: 503 to OpenAI and Gemini callers,
 * Anthropic's own 529 to Anthropic callers (its Python SDK raises OverloadedError for a 529 only). Gemini's 503 reached
 * a Gemini client (same protocol) as 502 INTERNAL and an Anthropic client as 502 api_error. Other 5xx stay the
 * gateway's 502. Checked through the official SDKs (they retry on 503/529 and read the status), with retries off.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'bun:test'
import type { Fault } from '../../mocks'
import { CLIENT_NAMES, type ClientName, errorClients, type Seen } from './error-clients'
import { FAILOVER, type Matrix, MODEL, SETUP_MS, startMatrix, type Upstream, UPSTREAMS, usageRows } from './harness'

let m: Matrix
let CLIENTS: ReturnType<typeof errorClients>
beforeAll(async () => {
	m = await startMatrix()
	CLIENTS = errorClients(m.app.url)
}, SETUP_MS)
afterAll(() => m.close())
afterEach(() => {
	for (const u of UPSTREAMS) m.mocks[u].reset()
})

/** Each vendor's overload at the HTTP level: the status and the body its mock sends for it. */
const OVERLOAD: Record<Upstream, Fault> = {
	openai: { kind: 'status', status: 503 },
	anthropic: { kind: 'status', status: 529 },
	gemini: { kind: 'status', status: 503 },
}

/** The overload as each caller must see it. */
const EXPECTED: Record<ClientName, Seen> = {
	openai: { status: 503, type: 'service_unavailable_error' },
	anthropic: { status: 529, type: 'overloaded_error' },
	gemini: { status: 503, type: 'UNAVAILABLE' },
}

describe('an upstream overload', () => {
	for (const up of UPSTREAMS)
		for (const client of CLIENT_NAMES)
			for (const stream of [false, true])
				it(`should reach a ${client} client as ${EXPECTED[client].status} in its shape when ${up} is overloaded (${stream ? 'stream' : 'non-stream'})`, async () => {
					const acct = await m.account()
					m.mocks[up].fault = OVERLOAD[up]
					expect(await CLIENTS[client](acct, MODEL[up], stream)).toEqual(EXPECTED[client])
					const rows = await usageRows(m, acct.accountId)
					// The row records the status the client got (the Usage page shows it beside the client's own logs).
					expect(rows.map((r) => [r.status, r.cost])).toEqual([[EXPECTED[client].status, 0]])
				})

	// Anthropic and Gemini stream the overload as the first event of a 200 (the mocks' in-stream error: Anthropic
	// `event: error` overloaded_error, Gemini `{"error":{"code":503,"status":"UNAVAILABLE"}}`); nothing was sent yet,
	// so the caller gets the same status as for the HTTP error.
	for (const up of ['anthropic', 'gemini'] as const)
		for (const client of CLIENT_NAMES)
			it(`should answer ${EXPECTED[client].status} to a ${client} stream when the ${up} stream opens with an overload`, async () => {
				const acct = await m.account()
				m.mocks[up].fault = { kind: 'midstream', afterChunks: 0 }
				expect(await CLIENTS[client](acct, MODEL[up], true)).toEqual(EXPECTED[client])
			})

	it('should answer an overload (503; 529 to Anthropic callers) when every channel of a failover was overloaded', async () => {
		const acct = await m.account()
		m.mocks.openai.fault = OVERLOAD.openai
		m.mocks.gemini.fault = OVERLOAD.gemini
		for (const client of CLIENT_NAMES) expect(await CLIENTS[client](acct, FAILOVER, false)).toEqual(EXPECTED[client])
		expect(m.mocks.gemini.requests.length).toBeGreaterThanOrEqual(3)
	})

	it('should keep 502 for another 5xx', async () => {
		const acct = await m.account()
		m.mocks.gemini.fault = { kind: 'status', status: 500 }
		expect(await CLIENTS.gemini(acct, MODEL.gemini, false)).toEqual({ status: 502, type: 'INTERNAL' })
		expect(await CLIENTS.anthropic(acct, MODEL.gemini, false)).toEqual({ status: 502, type: 'api_error' })
		expect(await CLIENTS.openai(acct, MODEL.gemini, false)).toEqual({ status: 502, type: 'server_error' })
	})
})
