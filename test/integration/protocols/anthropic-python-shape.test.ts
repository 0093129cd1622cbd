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
import { type Fault, thoughtSignatureFor } from '../../mocks'
import { type Account, GEMINI_3, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrixWithGemini3, type Upstream, UPSTREAMS } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrixWithGemini3()
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

describe('anthropic (Python) 1.13.0 tool runner (client.beta.messages.tool_runner with @beta_tool)', () => {
	/** The schema `@beta_tool` makes of `def get_weather(city: str) -> str` with its docstring (pydantic's, keys sorted). */
	const TOOL = {
		name: 'get_weather',
		description: 'Get the weather for a city.',
		input_schema: { additionalProperties: false, properties: { city: { description: 'the city', title: 'City', type: 'string' } }, required: ['city'], type: 'object' },
	}
	const HELPER = { 'x-stainless-helper': 'beta.messages.parse, BetaToolRunner' }

	it("should carry Gemini 3's thought signature through the runner's second turn, which sends the answer's blocks back as the SDK dumps them", async () => {
		const acct = await m.account()
		const first = { max_tokens: 3000, messages: [{ role: 'user', content: '#tools weather' }], model: GEMINI_3, thinking: { type: 'enabled', budget_tokens: 1024 }, tools: [TOOL] }
		const post = (body: unknown) =>
			fetch(`${m.app.url}/v1/messages?beta=true`, { method: 'POST', headers: { ...PY_HEADERS, ...HELPER, 'content-type': 'application/json', 'x-api-key': acct.key }, body: JSON.stringify(body) })
		const r1 = await post(first)
		expect(r1.status).toBe(200)
		const a1 = (await r1.json()) as Obj
		expect(a1.stop_reason).toBe('tool_use')
		const calls = (a1.content as Obj[]).filter((b) => b.type === 'tool_use')
		expect(calls.map((b) => b.input)).toEqual([{ city: 'Paris' }, { city: 'Tokyo' }])
		// The runner's next request: the assistant turn is the answer's blocks as pydantic dumps them (keys sorted, no
		// null fields), then one tool_result per call, in order, with what the tool returned.
		const sorted = (b: Obj) => Object.fromEntries(Object.entries(b).filter(([, v]) => v !== null).sort(([x], [y]) => x.localeCompare(y)))
		const second = {
			...first,
			messages: [
				first.messages[0],
				{ role: 'assistant', content: (a1.content as Obj[]).map(sorted) },
				{ role: 'user', content: calls.map((b) => ({ type: 'tool_result', tool_use_id: b.id, content: `sunny in ${b.input.city}` })) },
			],
		}
		const r2 = await post(second)
		expect(r2.status).toBe(200)
		const a2 = (await r2.json()) as Obj
		expect(a2.stop_reason).toBe('end_turn')
		expect((a2.content as Obj[]).find((b) => b.type === 'text')?.text).toBe('Tool results: sunny in Paris; sunny in Tokyo')
		// Gemini 3 refuses a turn's first function call without its signature: it went back on that part.
		const model = (lastRequest(m.mocks.gemini).body.contents as Obj[])[1]!
		expect(model.role).toBe('model')
		const fc = (model.parts as Obj[]).filter((p) => p.functionCall)
		expect(fc[0]).toMatchObject({ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: thoughtSignatureFor('get_weather', { city: 'Paris' }) })
	})
})
