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
import { REALTIME_CANCELLED_USAGE, REALTIME_USAGE, type RealtimeMock, startRealtimeMock } from '../../mocks/openai/realtime'
import { connectRealtime } from '../surface/realtime-client'
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

describe('the Realtime API', () => {
	const url = (q: string) => `${m.app.url.replace('http', 'ws')}/v1/realtime?${q}`

	it("should relay the SDK's text, audio, cancelled and tool-result turns and bill each response.done", async () => {
		const a = await m.account(1)
		const c = await connectRealtime(url(`model=${REALTIME}`), { key: a.key, protocols: [] })
		expect((await c.next('session.created')).session.model).toBe(REALTIME)
		const tool = { type: 'function', name: 'get_weather', description: 'w', parameters: { type: 'object', properties: { city: { type: 'string' } } } }
		c.ws.send(pyJson({ type: 'session.update', session: { type: 'realtime', output_modalities: ['text'], instructions: 'be brief', tools: [tool] } }))
		await c.next('session.updated')
		c.ws.send(pyJson({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] } }))
		c.ws.send(pyJson({ type: 'response.create' }))
		expect((await c.next('response.done')).response.usage).toEqual(REALTIME_USAGE)

		c.ws.send(pyJson({ type: 'input_audio_buffer.append', audio: Buffer.alloc(48_000).toString('base64') }))
		c.ws.send(pyJson({ type: 'input_audio_buffer.commit' }))
		await c.next('input_audio_buffer.committed')
		c.ws.send(pyJson({ type: 'response.create', response: { metadata: { mock: 'hold' } } }))
		await c.next('response.output_audio.delta')
		c.ws.send(pyJson({ type: 'response.cancel' }))
		const cancelled = await c.next('response.done')
		expect(cancelled.response.status).toBe('cancelled')

		c.ws.send(pyJson({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: 'call_1', output: '{"t": 20}' } }))
		c.ws.send(pyJson({ type: 'response.create' }))
		await c.next('response.done')
		c.ws.close()
		await c.closed

		// Frames went upstream as the SDK wrote them.
		expect(rt.received).toContain('{"type": "response.cancel"}')
		expect(rt.handshakes.at(-1)!.url).toEndWith(`/v1/realtime?model=${REALTIME}`)
		const full = 10 * 4 + 70 * 32 + 40 * 0.4 + 50 * 16 + 200 * 64
		const cut = REALTIME_CANCELLED_USAGE.input_tokens * 4 + 2 * 16 + 8 * 64
		let rows = await usageRows(m, a.accountId)
		for (let i = 0; i < 100 && rows.length < 3; i++) rows = (await Bun.sleep(20), await usageRows(m, a.accountId))
		expect(rows.map((r) => [r.endpoint, r.input_tokens, r.output_tokens, micros(r.cost)])).toEqual([
			['/v1/realtime', 120, 250, full],
			['/v1/realtime', 120, 10, cut],
			['/v1/realtime', 120, 250, full],
		])
		expect(micros(await m.app.balance(a.accountId))).toBe(1_000_000 - 2 * full - cut)
	})

	it('should open a session with an ek_ secret as the key and no ?model=, as connect() without a model does', async () => {
		const a = await m.account(1)
		const minted = await fetch(`${m.app.url}/v1/realtime/client_secrets`, {
			method: 'POST',
			headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json', accept: 'application/json' },
			body: '{"session":{"type":"realtime","model":"gpt-realtime"}}',
		})
		const secret = (await minted.json()) as { value: string; session: { model: string } }
		expect(secret.value).toStartWith('ek_')
		expect(secret.session.model).toBe(REALTIME)
		const c = await connectRealtime(`${m.app.url.replace('http', 'ws')}/v1/realtime`, { key: secret.value, protocols: [] })
		expect((await c.next('session.created')).session.model).toBe(REALTIME)
		c.ws.send(pyJson({ type: 'response.create' }))
		expect((await c.next('response.done')).response.usage).toEqual(REALTIME_USAGE)
		c.ws.close()
		// The secret is no key for the HTTP routes.
		const models = await fetch(`${m.app.url}/v1/models`, { headers: { authorization: `Bearer ${secret.value}` } })
		expect(models.status).toBe(401)
	})
})

describe('routes this gateway does not serve', () => {
	it("should answer realtime.calls.create's multipart SDP with the 404 its JSON or application/sdp body gets, not a 415 asking for JSON", async () => {
		const a = await m.account(1)
		const boundary = '69e63973988fe929d72d9a300e5f068f'
		const sdp = 'v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\n'
		const multipart = await fetch(`${m.app.url}/v1/realtime/calls`, {
			method: 'POST',
			headers: { authorization: `Bearer ${a.key}`, accept: 'application/sdp', 'content-type': `multipart/form-data; boundary=${boundary}` },
			body:
				`--${boundary}\r\nContent-Disposition: form-data; name="sdp"\r\nContent-Type: application/sdp\r\n\r\n${sdp}\r\n` +
				`--${boundary}\r\nContent-Disposition: form-data; name="session"\r\nContent-Type: application/json\r\n\r\n{"type":"realtime","model":"gpt-realtime"}\r\n--${boundary}--\r\n`,
		})
		const plain = await fetch(`${m.app.url}/v1/realtime/calls`, {
			method: 'POST',
			headers: { authorization: `Bearer ${a.key}`, accept: 'application/sdp', 'content-type': 'application/sdp' },
			body: sdp,
		})
		expect(plain.status).toBe(404)
		expect(multipart.status).toBe(404)
		expect(await multipart.json()).toEqual(await plain.json())
		// A route that is served still refuses multipart it cannot take.
		const served = await fetch(`${m.app.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${a.key}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, body: `--${boundary}--\r\n` })
		expect(served.status).toBe(415)
	})
})

describe('the Batch API', () => {
	it("should take the SDK's multipart upload, run a Responses batch and keep its ids from other accounts", async () => {
		const a = await m.account(1)
		const other = await m.account(1)
		const line = { custom_id: 'r1', method: 'POST', url: '/v1/responses', body: { model: MINI, input: 'a batched hello', max_output_tokens: 100 } }
		const boundary = '5f5908def1c64e5c763b2aa2b7bb380a'
		const body =
			`--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n` +
			`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="batch.jsonl"\r\nContent-Type: application/octet-stream\r\n\r\n${pyJson(line)}\r\n--${boundary}--\r\n`
		const up = await fetch(`${m.app.url}/v1/files`, {
			method: 'POST',
			headers: { authorization: `Bearer ${a.key}`, accept: 'application/json', 'content-type': `multipart/form-data; boundary=${boundary}` },
			body,
		})
		expect(up.status).toBe(200)
		const file = (await up.json()) as { id: string; purpose: string; filename: string }
		expect(file).toMatchObject({ purpose: 'batch', filename: 'batch.jsonl' })
		const created = await a.openai.batches.create({ input_file_id: file.id, endpoint: '/v1/responses', completion_window: '24h' })
		expect(await statusOf(other.openai.batches.retrieve(created.id))).toBe(404)
		expect(await statusOf(other.openai.files.content(file.id))).toBe(404)
		const done = await a.openai.batches.retrieve(created.id)
		expect(done.status).toBe('completed')
		const out = (await (await a.openai.files.content(done.output_file_id!)).text()).trim()
		const resp = JSON.parse(out).response.body as { id: string; usage: { input_tokens: number; output_tokens: number } }
		expect((await a.openai.responses.retrieve(resp.id)).status).toBe('completed')
		expect(await statusOf(other.openai.responses.retrieve(resp.id))).toBe(404)
		// The charge and its settlement add up to the line's usage at half price.
		const rows = await usageRows(m, a.accountId)
		expect(rows.map((r) => r.endpoint)).toEqual(['/v1/batches', '/v1/batches'])
		const cost = (resp.usage.input_tokens * 0.075 + resp.usage.output_tokens * 0.3) / 1e6
		expect(micros(rows[0]!.cost + rows[1]!.cost)).toBe(micros(cost))
	})
})
