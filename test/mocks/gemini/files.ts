/**
 * The mock's Files API (ai.google.dev/api/files), one store per mock:
 * - `POST /upload/v1beta/files` with `X-Goog-Upload-Protocol: resumable`, `X-Goog-Upload-Command: start`,
 *   `X-Goog-Upload-Header-Content-Length` / `-Content-Type` and `{file: {displayName}}` answers an empty body with
 *   `X-Goog-Upload-URL` (`/upload/v1beta/files?upload_id=…&upload_protocol=resumable` on the mock),
 *   `X-Goog-Upload-Status: active` and `X-Goog-Upload-Chunk-Granularity`.
 * - `POST` to that URL with `X-Goog-Upload-Command: upload` (or `upload, finalize`) and `X-Goog-Upload-Offset` (which
 *   must be the bytes received so far) takes a chunk: `active` with an empty body, or on finalize (all the declared
 *   bytes in) `final` with `{file}`: a File with `name` `files/{id}`, `uri` `{origin}/v1beta/files/{id}`, `sizeBytes`
 *   (a string), `sha256Hash`, `createTime`, `expirationTime` (48 h later), `source: UPLOADED`, and `state`: videos are
 *   PROCESSING until read once with `GET`, as Google processes them, everything else ACTIVE.
 * - `GET /v1beta/files/{id}` (404 NOT_FOUND for an unknown one), `GET /v1beta/files` (`{files, nextPageToken}`,
 *   `pageSize` default 10, at most 100), `DELETE /v1beta/files/{id}` (`{}`), and the file's bytes at
 *   `GET /download/v1beta/files/{id}:download?alt=media` (or without `/download`, as @google/genai asks) for a file
 *   the mock made (a batch's responses file, `addGeneratedFile`); an uploaded one is 400, as Google gives none back.
 * - In `generateContent` and `countTokens`, a `fileData.fileUri` (or `file_data.file_uri`) naming a file of this mock must be one it holds (else 403
 *   PERMISSION_DENIED, Google's words) and ACTIVE (else 400 FAILED_PRECONDITION).
 * @module
 */
import { asArr, asObj, type Obj } from '../shared/json'
import { json, type Reply } from '../shared/reply'
import { geminiError } from './errors'

type Session = { size: number; mimeType: string; displayName?: string; chunks: Uint8Array[]; received: number }
export type StoredFile = { file: Obj; bytes: Uint8Array }
export type GeminiFileStore = { files: Map<string, StoredFile>; sessions: Map<string, Session> }

export const newFileStore = (): GeminiFileStore => ({ files: new Map(), sessions: new Map() })

const empty = (headers: Record<string, string>): Reply => ({ type: 'raw', status: 200, contentType: 'text/plain', body: '', headers })
const FILE = /^\/(v1beta|v1)\/files\/([a-z0-9-]+)$/

function start(store: GeminiFileStore, headers: Headers, body: unknown, origin: string, path: string): Reply {
	if (headers.get('x-goog-upload-protocol') !== 'resumable' || headers.get('x-goog-upload-command') !== 'start') return geminiError(400, 'Upload protocol not supported by the mock')
	const size = Number(headers.get('x-goog-upload-header-content-length'))
	if (!Number.isSafeInteger(size) || size < 0) return geminiError(400, 'Missing X-Goog-Upload-Header-Content-Length')
	const file = asObj(asObj(body)?.file) ?? {}
	const id = crypto.randomUUID().replaceAll('-', '').slice(0, 12)
	store.sessions.set(id, { size, mimeType: headers.get('x-goog-upload-header-content-type') ?? 'application/octet-stream', displayName: typeof file.displayName === 'string' ? file.displayName : undefined, chunks: [], received: 0 })
	return empty({ 'x-goog-upload-url': `${origin}${path}?upload_id=${id}&upload_protocol=resumable`, 'x-goog-upload-status': 'active', 'x-goog-upload-chunk-granularity': '8388608' })
}

function chunk(store: GeminiFileStore, id: string, headers: Headers, bytes: Uint8Array | undefined, origin: string): Reply {
	const s = store.sessions.get(id)
	if (!s) return geminiError(404, 'Upload session not found')
	const command = (headers.get('x-goog-upload-command') ?? '').split(',').map((c) => c.trim())
	if (Number(headers.get('x-goog-upload-offset')) !== s.received) return geminiError(400, `Invalid X-Goog-Upload-Offset: expected ${s.received}`)
	if (command.includes('upload') && bytes) {
		s.chunks.push(bytes)
		s.received += bytes.byteLength
	}
	if (!command.includes('finalize')) return empty({ 'x-goog-upload-status': 'active', 'x-goog-upload-size-received': String(s.received) })
	if (s.received !== s.size) return geminiError(400, `Upload finalized with ${s.received} of ${s.size} bytes`)
	store.sessions.delete(id)
	const all = new Uint8Array(s.received)
	let at = 0
	for (const c of s.chunks) {
		all.set(c, at)
		at += c.byteLength
	}
	const now = new Date()
	const fileId = crypto.randomUUID().replaceAll('-', '').slice(0, 12)
	const file: Obj = {
		name: `files/${fileId}`,
		...(s.displayName && { displayName: s.displayName }),
		mimeType: s.mimeType,
		sizeBytes: String(all.byteLength),
		createTime: now.toISOString(),
		updateTime: now.toISOString(),
		expirationTime: new Date(now.getTime() + 48 * 3600_000).toISOString(),
		sha256Hash: Buffer.from(new Bun.CryptoHasher('sha256').update(all).digest()).toString('base64'),
		uri: `${origin}/v1beta/files/${fileId}`,
		downloadUri: `${origin}/v1beta/files/${fileId}:download?alt=media`,
		state: s.mimeType.startsWith('video/') ? 'PROCESSING' : 'ACTIVE',
		source: 'UPLOADED',
	}
	store.files.set(fileId, { file, bytes: all })
	return json({ file }, 200, { 'x-goog-upload-status': 'final' })
}

/** A file the mock made itself (a batch's responses file), as Google lists it: `source: GENERATED`, ACTIVE. */
export function addGeneratedFile(store: GeminiFileStore, id: string, mimeType: string, bytes: Uint8Array, origin: string): Obj {
	const now = new Date()
	const file: Obj = {
		name: `files/${id}`,
		mimeType,
		sizeBytes: String(bytes.byteLength),
		createTime: now.toISOString(),
		updateTime: now.toISOString(),
		expirationTime: new Date(now.getTime() + 48 * 3600_000).toISOString(),
		uri: `${origin}/v1beta/files/${id}`,
		downloadUri: `${origin}/download/v1beta/files/${id}:download?alt=media`,
		state: 'ACTIVE',
		source: 'GENERATED',
	}
	store.files.set(id, { file, bytes })
	return file
}

const DOWNLOAD = /^(?:\/download)?\/(v1beta|v1)\/files\/([a-z0-9-]+):download$/

/** The Files API routes, or undefined for another path. */
export function geminiFiles(store: GeminiFileStore, method: string, path: string, query: Record<string, string>, headers: Headers, body: unknown, bytes: Uint8Array | undefined, origin: string): Reply | undefined {
	if (method === 'POST' && (path === '/upload/v1beta/files' || path === '/upload/v1/files')) return query.upload_id ? chunk(store, query.upload_id, headers, bytes, origin) : start(store, headers, body, origin, path)
	if (method === 'GET' && (path === '/v1beta/files' || path === '/v1/files')) {
		const size = Math.min(Number(query.pageSize ?? 10) || 10, 100)
		const all = [...store.files.values()].reverse()
		const from = query.pageToken ? Number(query.pageToken) : 0
		const page = all.slice(from, from + size)
		return json(from + size < all.length ? { files: page.map((f) => f.file), nextPageToken: String(from + size) } : { files: page.map((f) => f.file) })
	}
	const dl = method === 'GET' ? DOWNLOAD.exec(path) : null
	const stored = dl ? store.files.get(dl[2]!) : undefined
	// The bytes of a file this key holds; other ids are Veo's videos (predict.ts).
	// As Google: "Files created by `upload` can't be downloaded" (@google/genai `files.download`); generated ones can.
	if (stored && stored.file.source !== 'GENERATED') return geminiError(400, `File ${dl![2]} is not downloadable: only generated files can be downloaded.`)
	if (stored) return query.alt === 'media' ? { type: 'raw', status: 200, contentType: String(stored.file.mimeType), body: new Uint8Array(stored.bytes) } : json(stored.file)
	if (dl && path.startsWith('/download/')) return geminiError(404, `File ${dl[2]} not found.`)
	const m = FILE.exec(path)
	if (!m || (method !== 'GET' && method !== 'DELETE')) return undefined
	const held = store.files.get(m[2]!)
	if (!held) return geminiError(403, `You do not have permission to access the File ${m[2]} or it may not exist.`)
	if (method === 'DELETE') {
		store.files.delete(m[2]!)
		return json({})
	}
	const answer = { ...held.file }
	// Processing ends once the file has been looked at: the next read (and generateContent) finds it ACTIVE.
	if (held.file.state === 'PROCESSING') held.file.state = 'ACTIVE'
	return json(answer)
}

/** The files a `generateContent` (or `countTokens`) body names on this mock: 403 for one it does not hold, 400 for one not yet ACTIVE. */
export function checkFileRefs(store: GeminiFileStore, body: unknown, origin: string): Reply | undefined {
	const prefix = `${origin}/v1beta/files/`
	for (const c of asArr(asObj(body)?.contents)) {
		for (const p of asArr(asObj(c)?.parts)) {
			// Either spelling Google accepts: `fileData.fileUri` or `file_data.file_uri`.
			const ref = asObj(asObj(p)?.fileData) ?? asObj(asObj(p)?.file_data)
			const uri = ref?.fileUri ?? ref?.file_uri
			if (typeof uri !== 'string' || !uri.startsWith(prefix)) continue
			const id = uri.slice(prefix.length)
			const held = store.files.get(id)
			if (!held) return geminiError(403, `You do not have permission to access the File ${id} or it may not exist.`)
			if (held.file.state !== 'ACTIVE') return geminiError(400, `The File ${id} is not in an ACTIVE state and usage is not allowed.`)
		}
	}
	return undefined
}
