/**
 * Stored chat completions (`store: true`), through the official `openai` SDK: kept by the gateway for every model (the
 * OpenAI fast path and a converted Claude answer, whole and streamed) and served by `chat.completions.retrieve / list /
 * update / delete` and `chat.completions.messages.list` to the account that made them only; nothing kept without
 * `store: true`, nor for a cut or failed stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { APIError } from 'openai'
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions'
import { storedCompletions } from '../../../src/db/schema'
import { purgeStoredCompletions, STORED_COMPLETION_DAYS } from '../../../src/modules/chat-stored/store'
import { lastRequest, SETUP_MS, startNative, openaiAccount, type Native, refused } from './setup'
import OpenAI from 'openai'
import { startTestApp } from '../../helpers/app'
import { MODEL as MCP_MODEL, type McpEnv, server, startMcpEnv, UPS as MCP_UPS, usageRows as mcpUsageRows } from '../mcp/setup'

let n: Native

beforeAll(async () => {
	n = await startNative()
}, SETUP_MS)

afterAll(async () => {
	await n.close()
})

/** `p` fails with `status`, in OpenAI's error shape. */
async function expectStatus(p: Promise<unknown>, status: number): Promise<APIError> {
	const err = await refused(p)
	expect(err).toBeInstanceOf(APIError)
	expect(err!.status).toBe(status)
	expect(typeof err!.error).toBe('object')
	return err!
}

type Client = Awaited<ReturnType<typeof openaiAccount>>['openai']

/** Every page of the account's stored completions, through the SDK's auto-pagination. */
async function listAll(c: Client, query: Record<string, unknown> = {}): Promise<ChatCompletion[]> {
	const out: ChatCompletion[] = []
	for await (const x of c.chat.completions.list(query as never)) out.push(x)
	return out
}

/** A streamed answer as the caller read it: its chunks, and the text they carry. */
async function streamed(c: Client, body: Record<string, unknown>): Promise<{ chunks: ChatCompletionChunk[]; text: string }> {
	const stream = await c.chat.completions.create({ ...body, stream: true } as never)
	const chunks: ChatCompletionChunk[] = []
	for await (const ch of stream as unknown as AsyncIterable<ChatCompletionChunk>) chunks.push(ch)
	return { chunks, text: chunks.map((ch) => ch.choices[0]?.delta?.content ?? '').join('') }
}

for (const [vendor, model] of [
	['OpenAI (fast path)', 'gpt-4o-mini'],
	['Anthropic (converted)', 'claude-sonnet-5'],
] as const)
	describe(`stored chat completions on ${vendor}`, () => {
		it('should keep a whole and a streamed completion, and serve them to their account only', async () => {
			const a = await openaiAccount(n.app)
			const b = await openaiAccount(n.app)
			const whole = await a.openai.chat.completions.create({
				model,
				messages: [
					{ role: 'system', content: 'be brief' },
					{ role: 'user', content: [{ type: 'text', text: `whole answer on ${model}` }] },
				],
				store: true,
				metadata: { run: 'one', kind: 'whole' },
			})
			// An OpenAI channel is still sent `store` and `metadata`, as before.
			if (model === 'gpt-4o-mini') expect(lastRequest(n.openai).body).toMatchObject({ store: true, metadata: { run: 'one', kind: 'whole' } })
			const s = await streamed(a.openai, { model, messages: [{ role: 'user', content: `streamed answer on ${model}` }], store: true, metadata: { run: 'one', kind: 'stream' } })
			const streamId = s.chunks[0]!.id
			expect(s.text).toContain('streamed answer')

			// Retrieved as answered: the whole one exactly, the streamed one assembled from its chunks.
			const got = await a.openai.chat.completions.retrieve(whole.id)
			expect(got).toEqual({ ...whole, metadata: { run: 'one', kind: 'whole' } } as never)
			const gotStream = await a.openai.chat.completions.retrieve(streamId)
			expect(gotStream).toMatchObject({ id: streamId, object: 'chat.completion', model, metadata: { run: 'one', kind: 'stream' } })
			expect(gotStream.choices).toHaveLength(1)
			expect(gotStream.choices[0]).toMatchObject({ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: s.text } })
			expect(gotStream.created).toBe(s.chunks[0]!.created)

			// The list: oldest first by default, filtered by model and metadata, paged with has_more and after.
			expect((await listAll(a.openai)).map((x) => x.id)).toEqual([whole.id, streamId])
			const first = await a.openai.chat.completions.list({ limit: 1 })
			expect(first.data.map((x) => x.id)).toEqual([whole.id])
			expect(first.has_more).toBe(true)
			const raw = await fetch(`${n.app.url}/v1/chat/completions?limit=1`, { headers: { authorization: `Bearer ${a.key}` } })
			expect(await raw.json()).toMatchObject({ object: 'list', first_id: whole.id, last_id: whole.id, has_more: true })
			const second = await a.openai.chat.completions.list({ limit: 1, after: whole.id })
			expect(second.data.map((x) => x.id)).toEqual([streamId])
			expect(second.has_more).toBe(false)
			expect((await a.openai.chat.completions.list({ order: 'desc' })).data.map((x) => x.id)).toEqual([streamId, whole.id])
			expect((await listAll(a.openai, { metadata: { kind: 'stream' } })).map((x) => x.id)).toEqual([streamId])
			expect((await listAll(a.openai, { metadata: { run: 'one', kind: 'whole' } })).map((x) => x.id)).toEqual([whole.id])
			expect(await listAll(a.openai, { metadata: { run: 'two' } })).toEqual([])
			expect((await listAll(a.openai, { model })).length).toBe(2)
			expect(await listAll(a.openai, { model: 'some-other-model' })).toEqual([])

			// The request's messages, with ids, as OpenAI lists them.
			const msgs = await a.openai.chat.completions.messages.list(whole.id)
			expect(msgs.data).toEqual([
				{ id: `${whole.id}-0`, role: 'system', content: 'be brief', name: null, content_parts: null },
				{ id: `${whole.id}-1`, role: 'user', content: `whole answer on ${model}`, name: null, content_parts: [{ type: 'text', text: `whole answer on ${model}` }] },
			] as never)
			const paged = await a.openai.chat.completions.messages.list(whole.id, { limit: 1, order: 'desc' })
			expect(paged.data.map((m) => m.id)).toEqual([`${whole.id}-1`])
			expect(paged.has_more).toBe(true)
			expect((await a.openai.chat.completions.messages.list(whole.id, { after: `${whole.id}-0` })).data.map((m) => m.id)).toEqual([`${whole.id}-1`])

			// Metadata updated (and only that), then cleared.
			const updated = await a.openai.chat.completions.update(whole.id, { metadata: { run: 'two' } })
			expect(updated).toEqual({ ...whole, metadata: { run: 'two' } } as never)
			expect((await listAll(a.openai, { metadata: { run: 'two' } })).map((x) => x.id)).toEqual([whole.id])
			expect((await a.openai.chat.completions.update(whole.id, { metadata: null })).metadata).toEqual({})

			// Another account: the 404 of an unknown id everywhere, and an empty list.
			for (const id of [whole.id, streamId]) {
				const err = await expectStatus(b.openai.chat.completions.retrieve(id), 404)
				expect((err.error as { message?: string }).message).toBe(`Chat completion with id '${id}' not found.`)
				await expectStatus(b.openai.chat.completions.update(id, { metadata: { x: 'y' } }), 404)
				await expectStatus(b.openai.chat.completions.messages.list(id), 404)
				await expectStatus(b.openai.chat.completions.delete(id), 404)
			}
			expect(await listAll(b.openai)).toEqual([])
			expect(await a.openai.chat.completions.retrieve(whole.id)).toMatchObject({ id: whole.id })

			// Deleted: gone for its own account too.
			expect(await a.openai.chat.completions.delete(whole.id)).toEqual({ object: 'chat.completion.deleted', id: whole.id, deleted: true })
			await expectStatus(a.openai.chat.completions.retrieve(whole.id), 404)
			await expectStatus(a.openai.chat.completions.delete(whole.id), 404)
			await expectStatus(a.openai.chat.completions.messages.list(whole.id), 404)
			expect((await listAll(a.openai)).map((x) => x.id)).toEqual([streamId])
		})

		it('should keep a streamed answer with parallel tool calls and usage as the SDK assembles it', async () => {
			const a = await openaiAccount(n.app)
			const tools = [
				{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
				{ type: 'function' as const, function: { name: 'get_time', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
			]
			const runner = a.openai.chat.completions.stream({
				model,
				messages: [{ role: 'user', content: `weather and time #tools #preface on ${model}` }],
				tools,
				stream_options: { include_usage: true },
				store: true,
			})
			const final = await runner.finalChatCompletion()
			const got = await a.openai.chat.completions.retrieve(final.id)
			const [want] = final.choices
			expect(want!.message.tool_calls).toHaveLength(2)
			expect(got.choices).toHaveLength(1)
			expect(got.choices[0]!.finish_reason).toBe('tool_calls')
			expect(got.choices[0]!.message.content).toBe(want!.message.content)
			expect(got.choices[0]!.message.tool_calls).toEqual(
				want!.message.tool_calls!.map((c) => ({ id: c.id, type: 'function', function: { name: (c as any).function.name, arguments: (c as any).function.arguments } })) as never,
			)
			expect(got.usage).toEqual(final.usage)
			expect(got.usage!.completion_tokens).toBeGreaterThan(0)
		})

		it('should keep the usage billed for a stream whose caller did not ask for it, and still send the caller none', async () => {
			const a = await openaiAccount(n.app)
			const body = { model, messages: [{ role: 'user', content: `usage kept on ${model}` }], store: true }
			const plain = await streamed(a.openai, body)
			// The caller's stream is as it asked: no usage chunk, no `usage` member.
			expect(plain.chunks.every((ch) => ch.choices.length > 0 && !('usage' in ch))).toBe(true)
			// The same answer with the usage asked for (by another account: the mock gives the same prompt the same id), as
			// OpenAI's stored copy always carries it.
			const b = await openaiAccount(n.app)
			const asked = await streamed(b.openai, { ...body, stream_options: { include_usage: true } })
			const usage = asked.chunks.at(-1)!.usage!
			expect(usage.completion_tokens).toBeGreaterThan(0)
			const got = await a.openai.chat.completions.retrieve(plain.chunks[0]!.id)
			expect(got.usage).toEqual(usage)
			expect((await b.openai.chat.completions.retrieve(asked.chunks[0]!.id)).usage).toEqual(usage)
		})

		it('should give each listed message its own id, whatever fields the client put on its messages', async () => {
			const a = await openaiAccount(n.app)
			// Chat UIs send their own message ids along (two turns may even share one): the list's ids and cursor stay ours.
			const messages = [
				{ role: 'user', content: 'first', id: 'ui-1' },
				{ role: 'assistant', content: 'ok', id: 'ui-1' },
				{ role: 'user', content: `second on ${model}`, id: 'ui-2' },
			]
			const c = await a.openai.chat.completions.create({ model, messages: messages as never, store: true })
			const listed = []
			for await (const m of a.openai.chat.completions.messages.list(c.id, { limit: 1 })) listed.push(m)
			expect(listed.map((m) => [m.id, m.content])).toEqual([
				[`${c.id}-0`, 'first'],
				[`${c.id}-1`, 'ok'],
				[`${c.id}-2`, `second on ${model}`],
			])
		})

		it('should keep nothing without store: true', async () => {
			const a = await openaiAccount(n.app)
			await a.openai.chat.completions.create({ model, messages: [{ role: 'user', content: `not stored on ${model}` }] })
			await a.openai.chat.completions.create({ model, messages: [{ role: 'user', content: `store false on ${model}` }], store: false })
			const s = await streamed(a.openai, { model, messages: [{ role: 'user', content: `not stored stream on ${model}` }] })
			expect(await listAll(a.openai)).toEqual([])
			await expectStatus(a.openai.chat.completions.retrieve(s.chunks[0]!.id), 404)
		})

		it('should keep nothing of a cut or failed stream', async () => {
			const a = await openaiAccount(n.app)
			const mock = model === 'gpt-4o-mini' ? n.openai : n.anthropic
			for (const fault of [
				{ kind: 'cut', afterChunks: 4 },
				{ kind: 'midstream', afterChunks: 4 },
			] as const) {
				mock.faultOnce = fault
				const chunks: ChatCompletionChunk[] = []
				const err = await refused(
					(async () => {
						const stream = await a.openai.chat.completions.create({ model, messages: [{ role: 'user', content: `a long answer to cut on ${model} ${fault.kind}` }], store: true, stream: true })
						for await (const ch of stream) chunks.push(ch)
					})(),
				)
				expect(err).toBeDefined()
				expect(chunks.length).toBeGreaterThan(0)
				await expectStatus(a.openai.chat.completions.retrieve(chunks[0]!.id), 404)
			}
			expect(await listAll(a.openai)).toEqual([])
		})

		it('should still cancel the upstream call when the caller leaves a stream to be stored, and keep nothing', async () => {
			const a = await openaiAccount(n.app)
			const mock = model === 'gpt-4o-mini' ? n.openai : n.anthropic
			mock.faultOnce = { kind: 'stall', afterChunks: 4 }
			const before = mock.aborts.length
			const ctl = new AbortController()
			const res = await fetch(`${n.app.url}/v1/chat/completions`, {
				method: 'POST',
				headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
				body: JSON.stringify({ model, messages: [{ role: 'user', content: `a stalled answer on ${model}` }], stream: true, store: true }),
				signal: ctl.signal,
			})
			expect(res.status).toBe(200)
			const reader = res.body!.getReader()
			const first = new TextDecoder().decode((await reader.read()).value)
			const id = /"id":"(chatcmpl-[^"]+)"/.exec(first)![1]!
			ctl.abort()
			for (const until = Date.now() + 2_000; mock.aborts.length === before && Date.now() < until; ) await Bun.sleep(20)
			expect(mock.aborts.length).toBeGreaterThan(before)
			await expectStatus(a.openai.chat.completions.retrieve(id), 404)
		})
	})

describe('stored chat completions: what is refused', () => {
	it('should refuse metadata OpenAI refuses, on create and update, and a bad page', async () => {
		const a = await openaiAccount(n.app)
		const before = n.openai.requests.length
		const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']))
		let err = await expectStatus(a.openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], store: true, metadata: many }), 400)
		expect(err.param).toBe('metadata')
		await expectStatus(a.openai.chat.completions.create({ model: 'claude-sonnet-5', messages: [{ role: 'user', content: 'x' }], store: true, metadata: { ['k'.repeat(65)]: 'v' } }), 400)
		await expectStatus(a.openai.chat.completions.create({ model: 'claude-sonnet-5', messages: [{ role: 'user', content: 'x' }], store: true, metadata: { k: 'v'.repeat(513) } }), 400)
		expect(n.openai.requests.length).toBe(before)

		const c = await a.openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'refusals' }], store: true })
		err = await expectStatus(a.openai.chat.completions.update(c.id, { metadata: many }), 400)
		expect(err.param).toBe('metadata')
		await expectStatus(a.openai.chat.completions.list({ limit: 0 }), 400)
		await expectStatus(a.openai.chat.completions.list({ limit: 101 }), 400)
		err = await expectStatus(a.openai.chat.completions.list({ after: 'chatcmpl-unknown' }), 400)
		expect(err.param).toBe('after')
		await expectStatus(a.openai.chat.completions.retrieve('chatcmpl-unknown'), 404)
	})
})

describe('stored chat completions: the purge', () => {
	it(`should forget completions older than ${STORED_COMPLETION_DAYS} days and keep the rest`, async () => {
		const a = await openaiAccount(n.app)
		const day = 86_400_000
		const row = (id: string, age: number) => ({
			accountId: a.accountId,
			completionId: id,
			model: 'gpt-4o-mini',
			completion: { id, object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [] },
			messages: [{ role: 'user', content: 'hi' }],
			createdAt: new Date(Date.now() - age * day),
		})
		await n.app.svc.db.orm.insert(storedCompletions).values([row('chatcmpl-old', STORED_COMPLETION_DAYS + 1), row('chatcmpl-recent', STORED_COMPLETION_DAYS - 1)])
		expect(await purgeStoredCompletions(n.app.svc.db)).toBe(1)
		// A second run (another instance) deletes nothing more.
		expect(await purgeStoredCompletions(n.app.svc.db)).toBe(0)
		await expectStatus(a.openai.chat.completions.retrieve('chatcmpl-old'), 404)
		expect((await listAll(a.openai)).map((x) => x.id)).toEqual(['chatcmpl-recent'])
	})
})

describe('stored chat completions: the metadata filter', () => {
	it('should be an OpenAPI query parameter as the SDKs send it (metadata[key]=value: a deepObject of strings)', async () => {
		const doc = (await Bun.file(new URL('../../../openapi/openapi.json', import.meta.url)).json()) as { paths: Record<string, Record<string, { parameters: Array<Record<string, any>> }>> }
		const param = doc.paths['/v1/chat/completions']!.get!.parameters.find((p) => p.name === 'metadata')
		expect(param).toMatchObject({ in: 'query', required: false, style: 'deepObject', explode: true, schema: { type: 'object', additionalProperties: { type: 'string' } } })
		expect(param!.description).toContain('metadata[key]=value')
	})

	it('should find an account\'s completions by metadata through an index, not by reading all of them', async () => {
		const a = await openaiAccount(n.app)
		const db = n.app.svc.db
		const rows = Array.from({ length: 3000 }, (_, i) => ({
			accountId: a.accountId,
			completionId: `chatcmpl-bulk-${i}`,
			model: 'gpt-4o-mini',
			completion: { id: `chatcmpl-bulk-${i}`, object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [] },
			messages: [],
			metadata: { batch: String(i % 1000), ...(i === 7 ? { rare: 'yes' } : {}) },
		}))
		for (let i = 0; i < rows.length; i += 500) await db.orm.insert(storedCompletions).values(rows.slice(i, i + 500))
		await db.sql.exec('ANALYZE stored_completions')
		const page = await a.openai.chat.completions.list({ metadata: { rare: 'yes' } })
		expect(page.data.map((c) => c.id)).toEqual(['chatcmpl-bulk-7'])
		// The list's own query, as the store builds it (store.ts `list`), planned by the database.
		const plan = await db.sql.query<Record<string, string>>(
			`EXPLAIN SELECT * FROM stored_completions WHERE account_id = $1 AND metadata @> $2::jsonb ORDER BY seq ASC LIMIT 21`,
			[a.accountId, '{"rare":"yes"}'],
		)
		const text = plan.map((r) => Object.values(r)[0]).join('\n')
		expect(text).toContain('stored_completions_metadata_idx')
	})
})

/** An OpenAI-compatible upstream of the test's own: it answers as OpenAI does with its snapshot name, and holds a stream asked to `hold` until released. */
function snapshotVendor() {
	const snapshot = 'gpt-4o-mini-2024-07-18'
	const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 }
	const held: Array<() => void> = []
	let n = 0
	const server = Bun.serve({
		port: 0,
		async fetch(req) {
			const body = (await req.json()) as { stream?: boolean; messages: Array<{ content: string }> }
			const hold = body.messages[0]!.content.includes('hold')
			const head = { id: `chatcmpl-snap-${++n}`, created: 1_790_000_000, model: snapshot, system_fingerprint: 'fp_snap' }
			if (!body.stream)
				return Response.json({ ...head, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'hi there', refusal: null }, logprobs: null, finish_reason: 'stop' }], usage })
			const chunk = (x: object) => new TextEncoder().encode(`data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', ...x })}\n\n`)
			const released = hold ? new Promise<void>((r) => held.push(r)) : undefined
			return new Response(
				new ReadableStream({
					async start(ctl) {
						ctl.enqueue(chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'hi there' }, logprobs: null, finish_reason: null }], usage: null }))
						await released
						ctl.enqueue(chunk({ choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }], usage: null }))
						ctl.enqueue(chunk({ choices: [], usage }))
						ctl.enqueue(new TextEncoder().encode('data: [DONE]\n\n'))
						ctl.close()
					},
				}),
				{ headers: { 'content-type': 'text/event-stream' } },
			)
		},
	})
	return { snapshot, usage, release: () => held.splice(0).forEach((r) => r()), url: `http://127.0.0.1:${server.port}/v1`, stop: () => server.stop(true) }
}

describe('stored chat completions: an upstream of OpenAI\'s own naming', () => {
	let up: ReturnType<typeof snapshotVendor>
	let app: Awaited<ReturnType<typeof startTestApp>>
	let c: OpenAI
	beforeAll(async () => {
		up = snapshotVendor()
		app = await startTestApp({
			config: {
				channels: [{ name: 'snap', type: 'openai', base_url: up.url, api_key: 'up-snap', models: ['gpt-4o-mini'] }],
				models: [{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 }],
			},
		})
	}, SETUP_MS)
	afterAll(async () => {
		await app.close()
		up.stop()
	})
	const client = async () => {
		const a = await app.account(1)
		return new OpenAI({ apiKey: a.key, baseURL: `${app.url}/v1`, maxRetries: 0 })
	}

	it('should list a completion under the model it was asked for, and show it as answered', async () => {
		c = await client()
		// OpenAI answers `gpt-4o-mini` as `gpt-4o-mini-2024-07-18` (the fast path relays that name as it came).
		const whole = await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], store: true })
		expect(whole.model).toBe(up.snapshot)
		const stream = await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], store: true, stream: true })
		let streamId = ''
		for await (const ch of stream) streamId ||= ch.id
		expect((await listAll(c, { model: 'gpt-4o-mini' })).map((x) => [x.id, x.model])).toEqual([
			[whole.id, up.snapshot],
			[streamId, up.snapshot],
		])
		// The caller asked for no usage chunk; the copy has the usage billed (in OpenAI's whole shape, details included).
		expect((await c.chat.completions.retrieve(streamId)).usage).toMatchObject(up.usage)
	})

	it('should list completions in the order they were created, not the order they finished', async () => {
		c = await client()
		// A stream that starts first and ends last.
		const stream = await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hold: started first' }], store: true, stream: true })
		const it = stream[Symbol.asyncIterator]()
		const streamId = (await it.next()).value!.id
		const whole = await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'started second' }], store: true })
		up.release()
		while (!(await it.next()).done);
		expect((await listAll(c)).map((x) => x.id)).toEqual([streamId, whole.id])
		expect((await listAll(c, { order: 'desc' })).map((x) => x.id)).toEqual([whole.id, streamId])
	})
})

describe('stored chat completions: the gateway\'s own MCP loop', () => {
	let env: McpEnv
	beforeAll(async () => {
		env = await startMcpEnv()
	}, SETUP_MS)
	afterAll(() => env.close())

	for (const up of MCP_UPS)
		it(`should keep a stream's usage summed over its rounds, as billed, when the caller asked for none (${up} upstream)`, async () => {
			const a = await env.account()
			const body = { model: MCP_MODEL[up], messages: [{ role: 'user', content: '#tools What is the weather?' }], mcp_servers: [server(env.mcp.url)], store: true, stream: true } as never
			let id = ''
			for await (const ch of (await a.openai.chat.completions.create(body)) as unknown as AsyncIterable<ChatCompletionChunk>) {
				id ||= ch.id
				expect(ch.usage).toBeUndefined()
			}
			const rows = await mcpUsageRows(env, a.accountId)
			expect(rows.length).toBeGreaterThan(1)
			const got = await a.openai.chat.completions.retrieve(id)
			expect(got.usage).toMatchObject({
				prompt_tokens: rows.reduce((s, r) => s + r.input_tokens, 0),
				completion_tokens: rows.reduce((s, r) => s + r.output_tokens, 0),
			})
		})
})
