/**
 * The official Anthropic Python SDK, `anthropic` 1.13.0 (httpx2 under it), as it sends and reads the wire, replayed
 * here since CI has no Python. The requests were captured from the SDK itself, run against this harness's gateway and
 * mocks (an httpx `event_hooks` request hook printing method, URL, headers and body): `Anthropic(base_url=root,
 * api_key=key)` with default settings posts to `{root}/v1/…` with `x-api-key`, `anthropic-version: 2023-06-01` and
 * the `x-stainless-*` headers below; every `client.beta.*` call adds `?beta=true` to the path (also on GETs, beside
 * the list's own `limit` / `after_id` / `before_id`) and an `anthropic-beta` header naming the beta.
 * What the SDK needs back: the status Anthropic documents for each error (its `_make_status_error` picks the exception
 * class by status alone: 400 BadRequestError … 429 RateLimitError, 529 OverloadedError, other 5xx
 * InternalServerError), the `request-id` header (`_request_id`, `APIStatusError.request_id`), and list pages with
 * `data`, `has_more`, `first_id`, `last_id` (its `SyncPage` pages on `after_id = last_id`).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'bun:test'
import type { Fault } from '../../mocks'
import { type Account, type Matrix, MODEL, SETUP_MS, startMatrix, type Upstream, UPSTREAMS } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

type Obj = Record<string, any>

/** The headers `anthropic` 1.13.0 sends on every call (CPython 3.11 on Linux), besides the key. */
const PY_HEADERS: Record<string, string> = {
	accept: 'application/json',
	'accept-encoding': 'gzip, deflate',
	'user-agent': 'Anthropic/Python 1.13.0',
	'x-stainless-lang': 'python',
	'x-stainless-package-version': '1.13.0',
	'x-stainless-os': 'Linux',
	'x-stainless-arch': 'x64',
	'x-stainless-runtime': 'CPython',
	'x-stainless-runtime-version': '3.11.7',
	'x-stainless-async': 'false',
	'x-stainless-retry-count': '0',
	'x-stainless-read-timeout': '600',
	'x-stainless-timeout': 'NOT_GIVEN',
	'anthropic-version': '2023-06-01',
}

/** A call as the SDK makes it: `path` with its query, JSON `body` for a POST, `beta` as its `anthropic-beta` header. */
async function py(acct: Account, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, beta?: string): Promise<{ status: number; headers: Headers; json: Obj }> {
	const headers: Record<string, string> = { ...PY_HEADERS, 'x-api-key': acct.key, ...(beta && { 'anthropic-beta': beta }), ...(body !== undefined && { 'content-type': 'application/json' }) }
	const res = await fetch(m.app.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
	return { status: res.status, headers: res.headers, json: (await res.json()) as Obj }
}

describe('anthropic (Python) 1.13.0 message batches through client.beta', () => {
	const BATCHES_BETA = 'message-batches-2024-09-24'
	const batch = { requests: [{ custom_id: 'x', params: { model: 'claude-m', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] } }] }

	it('should list batches when the SDK adds ?beta=true to the list query (client.beta.messages.batches.list)', async () => {
		const acct = await m.account()
		const created = await py(acct, 'POST', '/v1/messages/batches?beta=true', batch, BATCHES_BETA)
		expect(created.status).toBe(200)
		const list = await py(acct, 'GET', '/v1/messages/batches?beta=true&limit=5', undefined, BATCHES_BETA)
		expect(list.status).toBe(200)
		expect(list.json).toMatchObject({ has_more: false, first_id: created.json.id, last_id: created.json.id })
		expect(list.json.data.map((b: Obj) => b.id)).toEqual([created.json.id])
		// The SDK's next page: `after_id` = last_id, beside `beta=true`.
		const next = await py(acct, 'GET', `/v1/messages/batches?beta=true&limit=5&after_id=${created.json.id}`, undefined, BATCHES_BETA)
		expect(next.status).toBe(200)
		expect(next.json).toMatchObject({ data: [], has_more: false })
	})
})

describe('anthropic (Python) 1.13.0 errors', () => {
	afterEach(() => {
		for (const u of UPSTREAMS) m.mocks[u].reset()
	})

	/** What the SDK posts for `client.messages.create(model=…, max_tokens=50, messages=[…])`, `stream=True` or not. */
	const create = (model: string, stream: boolean) => ({ max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], model, ...(stream && { stream: true }) })

	// Each vendor's overload: Anthropic's 529, OpenAI's and Gemini's 503, and Gemini's as the first event of its stream.
	const OVERLOADS: Array<[Upstream, boolean, Fault]> = [
		['anthropic', false, { kind: 'status', status: 529 }],
		['anthropic', true, { kind: 'midstream', afterChunks: 0 }],
		['openai', false, { kind: 'status', status: 503 }],
		['gemini', true, { kind: 'status', status: 503 }],
		['gemini', true, { kind: 'midstream', afterChunks: 0 }],
	]
	for (const [up, stream, fault] of OVERLOADS)
		it(`should answer an overload as Anthropic does, 529 overloaded_error, which the SDK raises as OverloadedError (${up} ${fault.kind}, ${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			m.mocks[up].fault = fault
			const r = await py(acct, 'POST', '/v1/messages', create(MODEL[up], stream))
			// The SDK's `_make_status_error`: 529 → OverloadedError; a 503 fell to InternalServerError, which
			// `except anthropic.OverloadedError` does not catch (nor does Claude Code's fallbackModel act on it).
			expect(r.status).toBe(529)
			expect(r.json).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } })
			expect(r.headers.get('request-id')).toBe(r.json.request_id)
			expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
		})
})
