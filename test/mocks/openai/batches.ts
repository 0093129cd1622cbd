/**
 * The mock's Files and Batch API, one store per mock (platform.openai.com/docs/api-reference/files and /batch):
 * - `POST /v1/files` (multipart `file`, `purpose`) stores the bytes and answers a File object; `GET /v1/files/{id}`,
 *   `GET /v1/files/{id}/content`, `DELETE /v1/files/{id}` ({id, object: 'file', deleted: true}).
 * - `POST /v1/batches` answers a `validating` Batch object over a stored input file. Its first retrieve
 *   (`GET /v1/batches/{id}`) runs it, so tests decide when it finishes: each JSONL line is answered as its endpoint
 *   would answer it (the mock's own chat, responses and embeddings handlers), 200 answers go to the output file as
 *   `{id, custom_id, response: {status_code, request_id, body}, error: null}`, others to the error file, and the batch
 *   is `completed` with its `request_counts`.
 * - `POST /v1/batches/{id}/cancel`: a batch not yet run becomes `cancelling`; its next retrieve is `cancelled`, with
 *   its first line answered (the work done before the cancel took effect) and the rest not run.
 * @module
 */
import { asObj, asStr, type Obj } from '../shared/json'
import { json, type Reply } from '../shared/reply'
import { chatCompletions } from './chat'
import { embeddings } from './embeddings'
import { openaiError } from './errors'
import { responses } from './responses'
import { storeOf } from './responses-store'

type StoredFile = { object: Obj; bytes: Uint8Array }
type Store = { files: Map<string, StoredFile>; batches: Map<string, Obj> }

const stores = new WeakMap<object, Store>()
const storeFor = (opts: object): Store => {
	let s = stores.get(opts)
	if (!s) stores.set(opts, (s = { files: new Map(), batches: new Map() }))
	return s
}

const now = () => Math.floor(Date.now() / 1000)
const newId = (prefix: string) => `${prefix}${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`

function saveFile(s: Store, filename: string, purpose: string, bytes: Uint8Array): Obj {
	const object: Obj = { id: newId('file-'), object: 'file', bytes: bytes.byteLength, created_at: now(), filename, purpose, status: 'processed', expires_at: null, status_details: null }
	s.files.set(object.id as string, { object, bytes })
	return object
}

/** One input line answered as its endpoint would answer it. */
function answerLine(line: Obj, opts: { models?: string[] }): { status: number; body: unknown } {
	const body = line.body
	const reply =
		line.url === '/v1/chat/completions'
			? chatCompletions({ ...asObj(body), stream: false }, false, opts.models)
			: line.url === '/v1/responses'
				? responses({ ...asObj(body), stream: false }, false, opts.models, storeOf(opts))
				: line.url === '/v1/embeddings'
					? embeddings(body, false, opts.models)
					: openaiError(400, `Unsupported url ${String(line.url)}`, 'url', null)
	return reply.type === 'json' ? { status: reply.status, body: reply.body } : { status: 500, body: { error: { message: 'not a JSON answer' } } }
}

/** Runs a batch's lines (all, or only the first when it was cancelled) and writes its output and error files. */
function run(s: Store, batch: Obj, opts: { models?: string[] }, cancelled: boolean) {
	const input = s.files.get(batch.input_file_id as string)
	const lines = new TextDecoder()
		.decode(input?.bytes ?? new Uint8Array())
		.split('\n')
		.filter((l) => l.trim())
		.map((l) => JSON.parse(l) as Obj)
	const ran = cancelled ? lines.slice(0, 1) : lines
	const out: string[] = []
	const errors: string[] = []
	for (const line of ran) {
		const a = answerLine(line, opts)
		const row = { id: newId('batch_req_'), custom_id: line.custom_id, response: { status_code: a.status, request_id: newId('req_'), body: a.body }, error: null }
		;(a.status === 200 ? out : errors).push(JSON.stringify(row))
	}
	const enc = new TextEncoder()
	const t = now()
	batch.output_file_id = out.length ? saveFile(s, 'batch_output.jsonl', 'batch_output', enc.encode(out.join('\n') + '\n')).id : null
	batch.error_file_id = errors.length ? saveFile(s, 'batch_errors.jsonl', 'batch_output', enc.encode(errors.join('\n') + '\n')).id : null
	batch.request_counts = { total: lines.length, completed: out.length, failed: errors.length }
	batch.in_progress_at = t
	if (cancelled) Object.assign(batch, { status: 'cancelled', cancelled_at: t })
	else Object.assign(batch, { status: 'completed', finalizing_at: t, completed_at: t })
}

/** The file ids a chat or Responses body's content parts name (chat's `file` part, `input_file`, `input_image`), and code interpreter's `container.file_ids`. */
function namedFileIds(v: unknown, out: string[] = []): string[] {
	if (Array.isArray(v)) for (const x of v) namedFileIds(x, out)
	else if (v !== null && typeof v === 'object') {
		const o = v as Obj
		if (o.type === 'file' && typeof asObj(o.file)?.file_id === 'string') out.push(asObj(o.file)!.file_id as string)
		if ((o.type === 'input_file' || o.type === 'input_image') && typeof o.file_id === 'string') out.push(o.file_id)
		if (Array.isArray(o.file_ids)) for (const id of o.file_ids) if (typeof id === 'string') out.push(id)
		for (const k in o) if (typeof o[k] === 'object') namedFileIds(o[k], out)
	}
	return out
}

/**
 * OpenAI's 404 for a chat or Responses request naming a file the organisation does not hold (one not uploaded to
 * this mock, nor written by one of its batches); undefined when every file it names is held.
 */
export function unknownFile(opts: object, body: unknown): Reply | undefined {
	const s = storeFor(opts)
	const id = namedFileIds(body).find((f) => !s.files.has(f))
	return id === undefined ? undefined : openaiError(404, `No such File object: ${id}`, null, null, 'invalid_request_error')
}

/** The Files and Batch routes; undefined for any other path. */
export function filesAndBatches(opts: { models?: string[] }, method: string, path: string, body: unknown, form: FormData | undefined): Reply | Promise<Reply> | undefined {
	const s = storeFor(opts)
	if (path === '/v1/files' && method === 'POST') return upload(s, form)
	const file = path.match(/^\/v1\/files\/([^/]+)(\/content)?$/)
	if (file) {
		const f = s.files.get(decodeURIComponent(file[1]!))
		if (!f) return openaiError(404, `No such File object: ${file[1]}`, 'id', null, 'invalid_request_error')
		if (file[2] && method === 'GET') return { type: 'raw', status: 200, contentType: 'application/octet-stream', body: new Uint8Array(f.bytes) }
		if (method === 'GET') return json(f.object)
		if (method === 'DELETE') {
			s.files.delete(f.object.id as string)
			return json({ id: f.object.id, object: 'file', deleted: true })
		}
	}
	if (path === '/v1/batches' && method === 'POST') {
		const b = asObj(body) ?? {}
		const input = s.files.get(asStr(b.input_file_id) ?? '')
		if (!input) return openaiError(404, `No such File object: ${String(b.input_file_id)}`, 'input_file_id', null, 'invalid_request_error')
		const t = now()
		const batch: Obj = {
			id: newId('batch_'),
			object: 'batch',
			endpoint: b.endpoint,
			errors: null,
			input_file_id: b.input_file_id,
			completion_window: b.completion_window,
			status: 'validating',
			output_file_id: null,
			error_file_id: null,
			created_at: t,
			expires_at: t + 86_400,
			request_counts: { total: 0, completed: 0, failed: 0 },
			metadata: b.metadata ?? null,
		}
		s.batches.set(batch.id as string, batch)
		return json(batch)
	}
	const batch = path.match(/^\/v1\/batches\/([^/]+)(\/cancel)?$/)
	if (batch) {
		const b = s.batches.get(decodeURIComponent(batch[1]!))
		if (!b) return openaiError(404, `No batch found with id '${batch[1]}'.`, null, null, 'invalid_request_error')
		if (batch[2] && method === 'POST') {
			if (b.status !== 'validating' && b.status !== 'in_progress') return openaiError(409, `Cannot cancel a batch with status '${String(b.status)}'.`, null, null, 'invalid_request_error')
			Object.assign(b, { status: 'cancelling', cancelling_at: now() })
			return json(b)
		}
		if (method === 'GET') {
			if (b.status === 'validating') run(s, b, opts, false)
			else if (b.status === 'cancelling') run(s, b, opts, true)
			return json(b)
		}
	}
	return undefined
}

async function upload(s: Store, form: FormData | undefined): Promise<Reply> {
	const file = form?.get('file')
	const purpose = form?.get('purpose')
	if (!(file instanceof File)) return openaiError(400, "Missing required parameter: 'file'.", 'file', null, 'invalid_request_error')
	if (typeof purpose !== 'string') return openaiError(400, "Missing required parameter: 'purpose'.", 'purpose', null, 'invalid_request_error')
	return json(saveFile(s, file.name, purpose, new Uint8Array(await file.arrayBuffer())))
}

/** The batches and files a mock holds (tests read them). */
export const batchStoreOf = (opts: object): Store => storeFor(opts)
