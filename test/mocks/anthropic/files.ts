/**
 * The mock's Files API (beta; platform.claude.com/docs/en/api/files-create), one store per mock. Every call needs
 * `anthropic-beta` naming `files-api-2025-04-14`, as the beta documents:
 * - `POST /v1/files` (multipart `file`) answers the file's metadata `{id, type: 'file', filename, mime_type,
 *   size_bytes, created_at, downloadable: false}` (an upload is never downloadable; a file name containing
 *   `#downloadable` is; files the code execution tool writes, code-execution.ts, are).
 * - `GET /v1/files` (`limit`, `after_id`, `before_id`): `{data, first_id, last_id, has_more}`, newest first.
 * - `GET /v1/files/{id}`: the metadata; `DELETE /v1/files/{id}`: `{id, type: 'file_deleted'}`;
 *   `GET /v1/files/{id}/content`: the bytes when downloadable, else 400.
 * Messages naming a `{type: 'file', file_id}` source (`fileRefsError`) need the beta header and a stored file
 * (404 otherwise), as the API checks them.
 * @module
 */
import { asObj, type Obj } from '../shared/json'
import { json, type Reply } from '../shared/reply'
import { anthropicError, invalid } from './errors'

type StoredFile = { meta: Obj; bytes: Uint8Array<ArrayBuffer> }
export type FileStore = Map<string, StoredFile>

export const FILES_BETA = 'files-api-2025-04-14'

const hasBeta = (headers: Headers) => (headers.get('anthropic-beta') ?? '').split(',').some((b) => b.trim() === FILES_BETA)
const noBeta = () => invalid(`The Files API is in beta: send the header anthropic-beta: ${FILES_BETA}`)
const notFound = (id: string) => anthropicError(404, `File not found: ${id}`)

async function upload(store: FileStore, form: FormData | undefined): Promise<Reply> {
	const file = form?.get('file')
	if (!file || typeof file === 'string') return invalid('file: Field required')
	const id = `file_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`
	const meta = {
		id,
		type: 'file',
		filename: file.name,
		mime_type: file.type || 'application/octet-stream',
		size_bytes: file.size,
		created_at: new Date().toISOString(),
		downloadable: file.name.includes('#downloadable'),
	}
	store.set(id, { meta, bytes: new Uint8Array(await file.arrayBuffer()) })
	return json(meta)
}

function list(store: FileStore, query: Record<string, string>): Reply {
	const all = [...store.values()].map((f) => f.meta).reverse()
	const limit = Math.max(1, Math.min(Number(query.limit ?? 20) || 20, 1000))
	const at = (id: string | undefined) => (id ? all.findIndex((f) => f.id === id) : -1)
	const page = query.before_id ? all.slice(Math.max(0, at(query.before_id) - limit), Math.max(0, at(query.before_id))) : all.slice(at(query.after_id) + 1, at(query.after_id) + 1 + limit)
	const more = query.before_id ? at(page[0]?.id as string) > 0 : at(page.at(-1)?.id as string) < all.length - 1
	return json({ data: page, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: page.length > 0 && more })
}

/** The Files API routes; undefined for any other path. */
export async function files(store: FileStore, method: string, path: string, query: Record<string, string>, headers: Headers, form: FormData | undefined): Promise<Reply | undefined> {
	if (path !== '/v1/files' && !path.startsWith('/v1/files/')) return undefined
	if (!hasBeta(headers)) return noBeta()
	if (path === '/v1/files') return method === 'POST' ? upload(store, form) : method === 'GET' ? list(store, query) : undefined
	const m = path.match(/^\/v1\/files\/([^/]+)(\/content)?$/)
	if (!m) return undefined
	const id = decodeURIComponent(m[1]!)
	const f = store.get(id)
	if (!f) return notFound(id)
	if (m[2]) {
		if (method !== 'GET') return undefined
		if (!f.meta.downloadable) return invalid(`File ${id} is not downloadable: only files created by skills or the code execution tool can be downloaded`)
		return { type: 'raw', status: 200, contentType: String(f.meta.mime_type), body: f.bytes }
	}
	if (method === 'GET') return json(f.meta)
	if (method === 'DELETE') {
		store.delete(id)
		return json({ id, type: 'file_deleted' })
	}
	return undefined
}

/** The file ids a messages body names in `{type: 'file', file_id}` sources, at any depth of its messages. */
function fileIds(v: unknown, out: string[]): string[] {
	if (Array.isArray(v)) for (const x of v) fileIds(x, out)
	else {
		const o = asObj(v)
		if (!o) return out
		if (o.type === 'file' && typeof o.file_id === 'string') out.push(o.file_id)
		for (const x of Object.values(o)) fileIds(x, out)
	}
	return out
}

/** A messages request naming files: refused without the beta header, or when a file is not in this store. */
export function fileRefsError(store: FileStore, body: unknown, headers: Headers): Reply | undefined {
	const ids = fileIds(asObj(body)?.messages, [])
	if (!ids.length) return undefined
	if (!hasBeta(headers)) return noBeta()
	const missing = ids.find((id) => !store.has(id))
	return missing ? notFound(missing) : undefined
}
