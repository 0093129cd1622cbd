/**
 * The mock's Batch Mode (ai.google.dev/api/batch-mode), one store per mock:
 * - `POST /v1beta/models/{model}:batchGenerateContent` `{batch: {displayName, inputConfig: {requests: {requests:
 *   [{request, metadata}]}}}}` answers an Operation `{name: 'batches/{id}', metadata: GenerateContentBatch, done: false}`
 *   in BATCH_STATE_PENDING. Or `{batch: {inputConfig: {fileName: 'files/{id}'}}}`: a JSONL file uploaded to this mock
 *   (files.ts), each line `{key, request}` (403 for a file it does not hold, 400 for a line that is not such an object);
 *   its metadata then carries the `inputConfig`.
 * - `GET /v1beta/batches/{id}`: the first read runs it, so tests decide when it ends: each request is answered as
 *   `:generateContent` would answer it (the mock's own handler), as `{response, metadata}`, or `{error, metadata}`
 *   (a google.rpc.Status) when refused. The batch is then BATCH_STATE_SUCCEEDED, `done`, its responses both in
 *   `metadata.output.inlinedResponses` and `response.inlinedResponses`; for a file batch, in a responses file the mock
 *   adds to its files (`files/batch-{id}`, JSONL lines `{key, response}` or `{key, error}` in input order) named by
 *   `metadata.output.responsesFile` and `response.responsesFile`. A batch with a request mentioning `#expire`
 *   ends BATCH_STATE_EXPIRED with no output (its 48 hours ran out); one mentioning `#hold` stays RUNNING until canceled.
 * - `POST /v1beta/batches/{id}:cancel` answers `{}`; the next read finds it BATCH_STATE_CANCELLED, with its first
 *   request answered (the work done before the cancel took effect) and no other.
 * - `DELETE /v1beta/batches/{id}` answers `{}` (Google's operations may be deleted at any state); `GET /v1beta/batches`
 *   lists the Operations newest first, paged by `pageSize` / `pageToken`.
 * @module
 */
import { asArr, asObj, asStr, type Obj } from '../shared/json'
import { json, type Reply } from '../shared/reply'
import { geminiError } from './errors'
import { addGeneratedFile, type GeminiFileStore } from './files'

/** `file`: the batch came from an input file, and answers in a responses file. */
type Batch = { op: Obj; model: string; requests: Obj[]; file?: boolean }
export type GeminiBatchStore = Map<string, Batch>
/** Answers one request as `models/{model}:generateContent` would. */
type Run = (model: string, request: Obj) => Reply

const TYPE = 'type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch'
const OUTPUT_TYPE = 'type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput'
const now = () => new Date().toISOString()

/** The requests of an input file this mock holds, as inline ones (`{request, metadata: key}`), or the error answering it. */
function fileRequests(files: GeminiFileStore, name: string): Obj[] | Reply {
	const held = files.files.get(name.replace(/^files\//, ''))
	if (!held) return geminiError(403, `You do not have permission to access the File ${name} or it may not exist.`)
	const out: Obj[] = []
	for (const [i, raw] of new TextDecoder().decode(held.bytes).split('\n').entries()) {
		if (!raw.trim()) continue
		let line: Obj | undefined
		try {
			line = asObj(JSON.parse(raw))
		} catch {
			line = undefined
		}
		if (!line || !asObj(line.request)) return geminiError(400, `Invalid request at line ${i + 1} of ${name}: each line must be {"key", "request"}`)
		out.push({ request: line.request, metadata: line.key })
	}
	return out
}

function create(store: GeminiBatchStore, files: GeminiFileStore, model: string, body: unknown): Reply {
	const batch = asObj(asObj(body)?.batch)
	if (!batch) return geminiError(400, "Invalid JSON payload received. Missing required field 'batch'.")
	const input = asObj(batch.inputConfig)
	const fileName = asStr(input?.fileName)
	const fromFile = fileName ? fileRequests(files, fileName) : undefined
	if (fromFile && !Array.isArray(fromFile)) return fromFile
	const requests = fromFile ?? asArr(asObj(input?.requests)?.requests).map((r) => asObj(r) ?? {})
	if (!requests.length) return geminiError(400, '* BatchGenerateContentRequest.batch.input_config.requests: at least one request is required')
	for (const [i, r] of requests.entries()) if (!asObj(r.request)) return geminiError(400, `* BatchGenerateContentRequest.batch.input_config.requests.requests[${i}].request: required`)
	const id = crypto.randomUUID().replaceAll('-', '').slice(0, 20)
	const t = now()
	const n = String(requests.length)
	const metadata: Obj = {
		'@type': TYPE,
		model: `models/${model}`,
		displayName: asStr(batch.displayName) ?? '',
		createTime: t,
		updateTime: t,
		batchStats: { requestCount: n, pendingRequestCount: n },
		state: 'BATCH_STATE_PENDING',
		name: `batches/${id}`,
		...(fileName && { inputConfig: { fileName } }),
	}
	const op = { name: `batches/${id}`, metadata, done: false }
	store.set(id, { op, model, requests, file: !!fileName })
	return json(op)
}

/** Ends the batch: `state`, and the responses of the requests run (all, or the first when canceled). */
function end(b: Batch, run: Run, state: string, files: GeminiFileStore, origin: string) {
	const meta = b.op.metadata as Obj
	const ran = state === 'BATCH_STATE_EXPIRED' ? [] : state === 'BATCH_STATE_CANCELLED' ? b.requests.slice(0, 1) : b.requests
	let ok = 0
	const responses = ran.map((r) => {
		const reply = run(b.model, r.request as Obj)
		const body = reply.type === 'json' ? asObj(reply.body) : undefined
		const out: Obj = reply.status === 200 && body ? { response: body } : { error: asObj(body?.error) ?? { code: 13, message: 'not a JSON answer', status: 'INTERNAL' } }
		if (out.response) ok++
		if (r.metadata !== undefined) out.metadata = r.metadata
		return out
	})
	const n = b.requests.length
	Object.assign(meta, {
		state,
		endTime: now(),
		updateTime: now(),
		batchStats: { requestCount: String(n), successfulRequestCount: String(ok), failedRequestCount: String(responses.length - ok), pendingRequestCount: '0' },
	})
	b.op.done = true
	if (b.file && responses.length) {
		// Each line the request's key and its answer, as the inline responses carry them.
		const jsonl = responses.map(({ metadata, ...r }) => JSON.stringify({ key: metadata, ...r })).join('\n') + '\n'
		const file = addGeneratedFile(files, `batch-${String(b.op.name).slice('batches/'.length)}`, 'application/jsonl', new TextEncoder().encode(jsonl), origin)
		meta.output = { responsesFile: file.name }
		b.op.response = { '@type': OUTPUT_TYPE, responsesFile: file.name }
	} else if (responses.length) {
		meta.output = { inlinedResponses: { inlinedResponses: responses } }
		b.op.response = { '@type': OUTPUT_TYPE, inlinedResponses: { inlinedResponses: responses } }
	}
}

function list(store: GeminiBatchStore, query: Record<string, string>): Reply {
	const all = [...store.values()].map((b) => b.op).reverse()
	const size = Math.max(1, Math.min(Number(query.pageSize ?? 50) || 50, 1000))
	const from = Number(query.pageToken ?? 0) || 0
	const page = all.slice(from, from + size)
	return json({ operations: page, ...(from + size < all.length ? { nextPageToken: String(from + size) } : {}) })
}

/** The Batch Mode routes; undefined for any other path. */
export function geminiBatches(store: GeminiBatchStore, files: GeminiFileStore, method: string, path: string, query: Record<string, string>, body: unknown, run: Run, origin: string): Reply | undefined {
	const create_ = method === 'POST' ? /^\/(?:v1beta|v1)\/models\/([^/:]+):batchGenerateContent$/.exec(path) : null
	if (create_) return create(store, files, decodeURIComponent(create_[1]!), body)
	if (method === 'GET' && /^\/(?:v1beta|v1)\/batches$/.test(path)) return list(store, query)
	const m = /^\/(?:v1beta|v1)\/batches\/([^/:]+)(:cancel)?$/.exec(path)
	if (!m) return undefined
	const id = decodeURIComponent(m[1]!)
	const b = store.get(id)
	if (!b) return geminiError(404, `Requested entity was not found.`)
	const meta = b.op.metadata as Obj
	const open = b.op.done !== true
	if (m[2] && method === 'POST') {
		if (open) meta.cancelRequested = true
		return json({})
	}
	if (m[2]) return undefined
	if (method === 'GET') {
		const text = JSON.stringify(b.requests)
		if (open && meta.cancelRequested) end(b, run, 'BATCH_STATE_CANCELLED', files, origin)
		else if (open && text.includes('#expire')) end(b, run, 'BATCH_STATE_EXPIRED', files, origin)
		else if (open && text.includes('#hold')) Object.assign(meta, { state: 'BATCH_STATE_RUNNING', updateTime: now() })
		else if (open) end(b, run, 'BATCH_STATE_SUCCEEDED', files, origin)
		const { cancelRequested: _, ...shown } = meta
		return json({ ...b.op, metadata: shown })
	}
	if (method === 'DELETE') {
		store.delete(id)
		return json({})
	}
	return undefined
}
