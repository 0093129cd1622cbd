/**
 * The official OpenAI Python SDK, `openai` 3.22.1 with its `realtime` extra (websockets 15.0.1), `OpenAI(base_url=
 * '{root}/v1', api_key='sk-…')` and `AsyncOpenAI`, on the parts beyond chat/Responses/embeddings/images/audio: the
 * Realtime API (`client.realtime.connect(model=…)`, `client.realtime.client_secrets.create`), the Batch API
 * (`files.create(purpose="batch")`, `batches.*`), the Conversations API and background responses. The SDK was run
 * against this matrix plus the Realtime mock; the requests below are what it sent, captured from the mocks' records
 * and, for the HTTP calls' exact layout, from an `httpx2.MockTransport` given to the client:
 * - `client.realtime.connect(model='gpt-realtime')` opens `ws://{root}/v1/realtime?model=gpt-realtime` (the SDK turns
 *   `http` into `ws`, so no TLS here, unlike the JS SDK) with `Authorization: Bearer sk-…`, no subprotocol and no
 *   `OpenAI-Beta`; it sends each event as Python's `json.dumps` writes it (`", "` and `": "` separators, no `event_id`),
 *   `response.cancel` without a `response_id`. An `ek_` secret as the key connects with no `?model=` when `connect()`
 *   is called without one.
 * - `client.responses.stream(response_id=…, starting_after=0)` resumes a background response with
 *   `GET /v1/responses/{id}?stream=true` (a `starting_after` of 0 is left out) and `Accept: application/json`.
 * - `client.files.create(file=('batch.jsonl', b'…'), purpose='batch')` posts multipart with `purpose` first, then
 *   `file` as `application/octet-stream`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { parseSse } from '../../../src/core/sse'
import { type RealtimeMock, startRealtimeMock } from '../../mocks/openai/realtime'
import { costMicros, type Matrix, SETUP_MS, startMatrix, usageRows } from './harness'

/** A model served under its own name (what a batch file must name), at gpt-4o-mini's price. */
const MINI = 'gpt-4o-mini'
const REALTIME = 'gpt-realtime'

let m: Matrix
let rt: RealtimeMock
beforeAll(async () => {
	rt = await startRealtimeMock({ apiKey: 'up-rt' })
	m = await startMatrix({
		models: [
			{ name: MINI, input_per_mtok: 0.15, output_per_mtok: 0.6 },
			{ name: REALTIME, input_per_mtok: 4, output_per_mtok: 16, cache_read_per_mtok: 0.4, audio_input_per_mtok: 32, audio_output_per_mtok: 64 } as never,
		],
		channels: (mocks) => [
			{ name: 'ch-mini', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: [MINI] },
			{ name: 'ch-rt', type: 'openai', base_url: rt.url, api_key: 'up-rt', models: [REALTIME] },
		],
	})
}, SETUP_MS)
afterAll(async () => {
	await m.close()
	await rt.stop()
})

const micros = (usd: number) => Math.round(usd * 1e6)
/** The HTTP status an SDK call failed with (200 when it did not fail). */
const statusOf = (call: PromiseLike<unknown>) => Promise.resolve(call).then(
	() => 200,
	(e: { status?: number }) => e.status,
)
/** What Python's `json.dumps` writes (the SDK's frames): `", "` between members, `": "` after keys. */
const pyJson = (v: unknown): string =>
	Array.isArray(v)
		? `[${v.map(pyJson).join(', ')}]`
		: v !== null && typeof v === 'object'
			? `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${pyJson(x)}`).join(', ')}}`
			: JSON.stringify(v)

describe('background responses', () => {
	it('should settle a background response as soon as responses.stream(response_id=…) passes its terminal event', async () => {
		const a = await m.account(1)
		const headers = { authorization: `Bearer ${a.key}`, accept: 'application/json' }
		const post = await fetch(`${m.app.url}/v1/responses`, {
			method: 'POST',
			headers: { ...headers, 'content-type': 'application/json' },
			body: '{"background":true,"input":"resume this one later","model":"gpt-m"}',
		})
		const queued = (await post.json()) as { id: string; status: string }
		expect(queued.status).toBe('queued')
		expect((await usageRows(m, a.accountId)).map((r) => r.end_reason)).toEqual(['background'])

		const res = await fetch(`${m.app.url}/v1/responses/${queued.id}?stream=true`, { headers })
		expect(res.headers.get('content-type')).toStartWith('text/event-stream')
		const events: Array<{ type: string; response?: { status: string; usage: { input_tokens: number; output_tokens: number } } }> = []
		for await (const f of parseSse(res.body!)) events.push(JSON.parse(f.data))
		const done = events.at(-1)!
		expect(done.type).toBe('response.completed')
		const usage = done.response!.usage

		// Billed then, not at the next poll: the rows add up to the usage the client just read.
		const rows = await usageRows(m, a.accountId)
		expect(rows.map((r) => r.end_reason)).toEqual(['background', 'ok'])
		expect(rows[1]).toMatchObject({ input_tokens: usage.input_tokens, output_tokens: usage.output_tokens, estimated: false })
		const cost = costMicros({ model: 'gpt-m', input: usage.input_tokens, output: usage.output_tokens })
		expect(micros(rows[0]!.cost + rows[1]!.cost)).toBe(cost)
		expect(micros(await m.app.balance(a.accountId))).toBe(1_000_000 - cost)

		// A plain retrieve afterwards settles nothing more.
		const again = await fetch(`${m.app.url}/v1/responses/${queued.id}`, { headers })
		expect(((await again.json()) as { status: string }).status).toBe('completed')
		expect(await usageRows(m, a.accountId)).toHaveLength(2)
	})
})
