/**
 * The mock's Message Batches API (platform.claude.com/docs/en/api/messages/batches), one store per mock:
 * - `POST /v1/messages/batches` `{requests: [{custom_id, params}]}` answers an `in_progress` MessageBatch. Its first
 *   retrieve (`GET /v1/messages/batches/{id}`) runs it, so tests decide when it ends: each request is answered as
 *   `POST /v1/messages` would answer it (the mock's own handler), as a `succeeded` result with its message, or an
 *   `errored` one with the error body; a request whose params mention `#expire` is `expired` (its 24 hours ran out).
 *   A batch with a request mentioning `#hold` keeps processing until it is canceled.
 *   The batch is then `ended`, with its `request_counts` and a `results_url`.
 * - `POST …/{id}/cancel`: a batch not yet run is `canceling` (`cancel_initiated_at` set); its next retrieve has ended,
 *   with its first request answered (the work done before the cancel took effect) and the rest `canceled`.
 * - `GET …/{id}/results`: the results as JSONL (`{custom_id, result}` a line), once ended; `DELETE …/{id}`:
 *   `{id, type: 'message_batch_deleted'}`, refused while the batch is processing; `GET /v1/messages/batches`: the
 *   batches newest first, paged by `limit` / `after_id` / `before_id`.
 * @module
 */
import { asObj, asStr, type Obj } from '../shared/json'
import { json, type Reply } from '../shared/reply'
import { anthropicError, invalid } from './errors'

type Batch = { object: Obj; requests: Array<{ custom_id: string; params: Obj }>; results?: string; run: (params: Obj) => Reply }
export type BatchStore = Map<string, Batch>

const iso = (ms: number) => new Date(ms).toISOString()
const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/

function newBatch(requests: Batch['requests']): Obj {
	const t = Date.now()
	return {
		id: `msgbatch_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`,
		type: 'message_batch',
		processing_status: 'in_progress',
		request_counts: { processing: requests.length, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
		ended_at: null,
		created_at: iso(t),
		expires_at: iso(t + 86_400_000),
		archived_at: null,
		cancel_initiated_at: null,
		results_url: null,
	}
}

/** Runs the batch (all requests, or only the first when it was canceled) and ends it. */
function end(b: Batch, origin: string, canceled: boolean) {
	const counts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 }
	const lines = b.requests.map((r, i) => {
		let result: Obj
		if (canceled && i > 0) result = { type: 'canceled' }
		else if (JSON.stringify(r.params).includes('#expire')) result = { type: 'expired' }
		else {
			const reply = b.run({ ...r.params, stream: false })
			const body = reply.type === 'json' ? asObj(reply.body) : undefined
			result = reply.status === 200 && body ? { type: 'succeeded', message: body } : { type: 'errored', error: body ?? { type: 'error', error: { type: 'api_error', message: 'not a JSON answer' } } }
		}
		counts[result.type as keyof typeof counts]++
		return JSON.stringify({ custom_id: r.custom_id, result })
	})
	b.results = lines.join('\n') + '\n'
	Object.assign(b.object, { processing_status: 'ended', ended_at: iso(Date.now()), request_counts: counts, results_url: `${origin}/v1/messages/batches/${b.object.id}/results` })
}

function create(store: BatchStore, body: unknown, run: Batch['run']): Reply {
	const requests = asObj(body)?.requests
	if (!Array.isArray(requests) || requests.length === 0) return invalid('requests: Field required (at least 1 item)')
	const seen = new Set<string>()
	const list: Batch['requests'] = []
	for (const [i, raw] of requests.entries()) {
		const r = asObj(raw)
		const id = asStr(r?.custom_id)
		if (!id || !CUSTOM_ID.test(id)) return invalid(`requests.${i}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`)
		if (seen.has(id)) return invalid(`requests.${i}.custom_id: Duplicate custom_id '${id}'; custom_id must be unique within a batch`)
		seen.add(id)
		const params = asObj(r?.params)
		if (!params) return invalid(`requests.${i}.params: Field required`)
		list.push({ custom_id: id, params })
	}
	const object = newBatch(list)
	store.set(object.id as string, { object, requests: list, run })
	return json(object)
}

function list(store: BatchStore, query: Record<string, string>): Reply {
	const all = [...store.values()].map((b) => b.object).reverse()
	const limit = Math.max(1, Math.min(Number(query.limit ?? 20) || 20, 1000))
	const at = (id: string | undefined) => (id ? all.findIndex((b) => b.id === id) : -1)
	const page = query.before_id ? all.slice(Math.max(0, at(query.before_id) - limit), Math.max(0, at(query.before_id))) : all.slice(at(query.after_id) + 1, at(query.after_id) + 1 + limit)
	const more = query.before_id ? at(page[0]?.id as string) > 0 : at(page.at(-1)?.id as string) < all.length - 1
	return json({ data: page, has_more: page.length > 0 && more, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null })
}

const notFound = (id: string) => anthropicError(404, `Message Batch ${id} not found`)

/** The Message Batches routes; undefined for any other path. `run` answers one request as POST /v1/messages would. */
export function messageBatches(store: BatchStore, method: string, path: string, query: Record<string, string>, body: unknown, origin: string, run: Batch['run']): Reply | undefined {
	if (path === '/v1/messages/batches') {
		if (method === 'POST') return create(store, body, run)
		if (method === 'GET') return list(store, query)
		return undefined
	}
	const m = path.match(/^\/v1\/messages\/batches\/([^/]+)(\/cancel|\/results)?$/)
	if (!m) return undefined
	const id = decodeURIComponent(m[1]!)
	const b = store.get(id)
	if (!b) return notFound(id)
	const status = b.object.processing_status
	if (m[2] === '/cancel' && method === 'POST') {
		if (status === 'in_progress') Object.assign(b.object, { processing_status: 'canceling', cancel_initiated_at: iso(Date.now()) })
		return json(b.object)
	}
	if (m[2] === '/results' && method === 'GET') {
		if (status !== 'ended' || b.results === undefined) return invalid(`Message Batch ${id} has not finished processing; its results are not available yet`)
		return { type: 'raw', status: 200, contentType: 'application/binary', body: b.results }
	}
	if (m[2]) return undefined
	if (method === 'GET') {
		// A batch whose requests mention `#hold` keeps processing until it is canceled (a long batch).
		if (status === 'canceling' || (status === 'in_progress' && !JSON.stringify(b.requests).includes('#hold'))) end(b, origin, status === 'canceling')
		return json(b.object)
	}
	if (method === 'DELETE') {
		if (b.object.processing_status !== 'ended') return invalid(`Message Batch ${id} is still processing; cancel it before deleting it`)
		store.delete(id)
		return json({ id, type: 'message_batch_deleted' })
	}
	return undefined
}

