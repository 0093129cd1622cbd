/**
 * Stored chat completions through the official OpenAI Python SDK (`openai` 3.22.1, and 2.54.0 for the same calls),
 * replayed here because CI has no Python. Captured by running the SDK against this gateway and the mocks (an httpx
 * event hook printing each request's method, URL, headers and body): `client.chat.completions.create(store=True,
 * metadata=…)` streamed and not, `.list(model=…, metadata=…, limit=…, order=…)` and its auto-pagination,
 * `.retrieve`, `.update(metadata=…)`, `.delete` and `.messages.list(…)` with auto-pagination, on the OpenAI model
 * (fast path) and the converted Claude and Gemini ones.
 * Where it differs from openai-node: `delete()` sends `content-type: application/json` with an empty body and no
 * `content-length`; the pages it fetches next repeat the first call's query with `after` appended (`limit=2&order=desc&after=…`);
 * a `metadata` filter is `metadata%5Bkey%5D=value` (qs brackets, percent-encoded, as openai-node's); `update(metadata=None)`
 * sends `{"metadata":null}`. It reads every answer into Pydantic models: `ChatCompletion` (`metadata` as an extra
 * field, `usage` optional but read by callers), `ChatCompletionStoreMessage` (`content_parts` typed by `type`) and
 * `ChatCompletionDeleted`, and stops paging when `has_more` is false or a page is empty.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { parseSse } from '../../../src/core/sse'
import { type Account, MODEL, type Matrix, SETUP_MS, startMatrix, UPSTREAMS } from './harness'
import { openaiPythonHeaders } from './openai-python-headers'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

type Obj = Record<string, any>

/** `json` for a call with a JSON body (and, on `delete()`, without one). */
const pyHeaders = (acct: Account, json: boolean) => openaiPythonHeaders(acct, { json })

/** One call as the SDK made it: `body` serialised as it serialises (no spaces), none for GET and DELETE. */
async function call(acct: Account, method: string, path: string, body?: unknown): Promise<{ status: number; json: Obj }> {
	const res = await fetch(`${m.app.url}/v1${path}`, { method, headers: pyHeaders(acct, body !== undefined || method === 'DELETE'), body: body === undefined ? undefined : JSON.stringify(body) })
	return { status: res.status, json: (await res.json()) as Obj }
}

/** Every item of a cursor list as the SDK's auto-pagination reads it: the first call's query, then `after` the last id while `has_more`. */
async function paged(acct: Account, path: string, query: string): Promise<Obj[]> {
	const out: Obj[] = []
	for (let q = query; ; ) {
		const { status, json } = await call(acct, 'GET', `${path}${q ? `?${q}` : ''}`)
		expect(status).toBe(200)
		expect(Object.keys(json).sort()).toEqual(['data', 'first_id', 'has_more', 'last_id', 'object'])
		out.push(...json.data)
		if (!json.has_more || !json.data.length) return out
		q = `${query ? `${query}&` : ''}after=${json.data.at(-1).id}`
	}
}

describe('openai-python stored chat completions', () => {
	it('should store, list, page, update, list the messages of and delete completions of every vendor as the SDK calls and reads them', async () => {
		const acct = await m.account()
		const other = await m.account()
		const ids: string[] = []
		for (const up of UPSTREAMS) {
			const model = MODEL[up]
			const whole = await call(acct, 'POST', '/chat/completions', {
				messages: [
					{ role: 'developer', content: 'be brief' },
					{ role: 'user', content: [{ type: 'text', text: `py whole ${up}` }], name: 'ana' },
				],
				model,
				metadata: { run: 'py', up, kind: 'whole' },
				store: true,
			})
			expect(whole.status).toBe(200)
			const res = await fetch(`${m.app.url}/v1/chat/completions`, {
				method: 'POST',
				headers: pyHeaders(acct, true),
				body: JSON.stringify({ messages: [{ role: 'user', content: `py stream ${up}` }], model, metadata: { run: 'py', up, kind: 'stream' }, store: true, stream: true }),
			})
			let streamId = ''
			let text = ''
			for await (const f of parseSse(res.body!)) {
				if (f.data === '[DONE]') continue
				const chunk = JSON.parse(f.data)
				streamId ||= chunk.id
				expect(chunk.usage).toBeUndefined()
				text += chunk.choices[0]?.delta?.content ?? ''
			}
			ids.push(whole.json.id, streamId)

			// retrieve: the whole answer as it came, the stream assembled, each with its metadata and the usage billed.
			const gotWhole = await call(acct, 'GET', `/chat/completions/${whole.json.id}`)
			expect(gotWhole.json).toEqual({ ...whole.json, metadata: { run: 'py', up, kind: 'whole' } })
			const gotStream = await call(acct, 'GET', `/chat/completions/${streamId}`)
			expect(gotStream.json).toMatchObject({ id: streamId, object: 'chat.completion', model, metadata: { run: 'py', up, kind: 'stream' } })
			expect(gotStream.json.choices[0].message.content).toBe(text)
			expect(gotStream.json.usage.completion_tokens).toBeGreaterThan(0)
			expect(gotStream.json.usage.total_tokens).toBe(gotStream.json.usage.prompt_tokens + gotStream.json.usage.completion_tokens)
		}

		// list(limit=2) and list(limit=2, order='desc'), auto-paginated; the filters as the SDK encodes them.
		expect((await paged(acct, '/chat/completions', 'limit=2')).map((c) => c.id)).toEqual(ids)
		expect((await paged(acct, '/chat/completions', 'limit=2&order=desc')).map((c) => c.id)).toEqual([...ids].reverse())
		expect((await paged(acct, '/chat/completions', `model=${MODEL.anthropic}`)).map((c) => c.id)).toEqual(ids.slice(2, 4))
		expect((await paged(acct, '/chat/completions', 'limit=1&metadata%5Bkind%5D=stream')).map((c) => c.id)).toEqual([ids[1], ids[3], ids[5]])
		expect((await paged(acct, '/chat/completions', 'metadata%5Bkind%5D=whole&metadata%5Bup%5D=gemini&order=desc')).map((c) => c.id)).toEqual([ids[4]])

		// update(metadata=…), then update(metadata=None).
		const id = ids[2]!
		expect((await call(acct, 'POST', `/chat/completions/${id}`, { metadata: { run: 'py2' } })).json.metadata).toEqual({ run: 'py2' })
		expect((await call(acct, 'POST', `/chat/completions/${id}`, { metadata: null })).json.metadata).toEqual({})

		// messages.list(id, limit=1), auto-paginated, and order='desc'.
		const msgs = await paged(acct, `/chat/completions/${id}/messages`, 'limit=1')
		expect(msgs).toEqual([
			{ id: `${id}-0`, role: 'developer', content: 'be brief', name: null, content_parts: null },
			{ id: `${id}-1`, role: 'user', content: 'py whole anthropic', name: 'ana', content_parts: [{ type: 'text', text: 'py whole anthropic' }] },
		])
		expect((await paged(acct, `/chat/completions/${id}/messages`, 'order=desc')).map((x) => x.id)).toEqual([`${id}-1`, `${id}-0`])

		// delete(): a JSON content type and no body.
		expect(await call(other, 'DELETE', `/chat/completions/${id}`)).toMatchObject({ status: 404 })
		expect(await call(acct, 'DELETE', `/chat/completions/${id}`)).toEqual({ status: 200, json: { object: 'chat.completion.deleted', id, deleted: true } })
		const gone = await call(acct, 'GET', `/chat/completions/${id}`)
		expect(gone.status).toBe(404)
		expect(gone.json.error).toMatchObject({ type: 'invalid_request_error', message: `Chat completion with id '${id}' not found.` })
		expect(await paged(other, '/chat/completions', '')).toEqual([])
	})
})
