/**
 * Gemini's resumable upload (ai.google.dev/api/files#method:-media.upload; the protocol: developers.google.com
 * resumable uploads), as `ai.files.upload` of @google/genai runs it, relayed to one Gemini channel:
 * - `POST /upload/v1beta/files` with `X-Goog-Upload-Protocol: resumable`, `X-Goog-Upload-Command: start`, the size
 *   (`X-Goog-Upload-Header-Content-Length`) and type, and `{file: {displayName}}`: the session is started on the
 *   channel, recorded to the account, and the client is handed the gateway's upload URL (`?upload_id=…`), never the
 *   vendor's (which stays in the record) nor its key.
 * - `POST` to that URL with `X-Goog-Upload-Command: upload` (or `upload, finalize`) and `X-Goog-Upload-Offset`: each
 *   chunk is streamed through to the vendor's upload URL as it arrives (not held in memory), `X-Goog-Upload-Status`
 *   passed back; the final answer's File is recorded and answered under the gateway's name and URI.
 * A request's body is bounded by MAX_UPLOAD_BYTES (the SDK sends 8 MiB chunks), a file by MAX_GEMINI_FILE_BYTES. A
 * JSONL upload (a batch input file) is also kept as its chunks pass (parts.ts), up to MAX_GEMINI_BATCH_FILE_BYTES.
 * @module
 */
import { badRequest, GatewayError, notFound } from '../../core/errors'
import type { AuthToken } from '../../auth/api-key'
import { authHeaders, channelUrl } from '../../passthrough/upstream'
import { upstreamError } from '../../providers/upstream-error'
import { channelTimeouts, fetchUpstream } from '../../relay/upstream-fetch'
import type { Channel } from '../../routing/catalog'
import { orderChannels } from '../../routing/select'
import type { Services } from '../../services'
import { tasks } from '../../db/schema'
import { randomString } from '../../lib/ids'
import { safeEqual } from '../../lib/secrets'
import { getTask } from '../../tasks/store'
import { keepPart, keepsBytes } from './parts'
import { fileView, newFileId, purgeStaleUploads, saveFile, type VendorFile } from './records'

/** The vendor's upload URL, the file's size, and whether its bytes are kept as they pass (a batch input: parts.ts). */
type Upload = { url: string; size: number; keep?: boolean }

const header = (req: Request, name: string) => req.headers.get(name)?.trim().toLowerCase() ?? ''

/** The channel an upload goes to: the first enabled Gemini channel in routing order (priority, then weight). */
function uploadChannel(svc: Services): Channel {
	const gemini = svc.catalog.channels().filter((c) => c.type === 'gemini')
	const ch = orderChannels(gemini)[0]
	if (!ch) throw new GatewayError('invalid_request', 'No Gemini channel is configured here: the Files API needs one', { code: 'model_not_found', status: 404 })
	return ch
}

/** `POST /upload/{version}/files`, the `start` command. */
export async function startUpload(svc: Services, token: AuthToken, request: Request, requestId: string, base: string, version: string): Promise<Response> {
	if (header(request, 'x-goog-upload-protocol') !== 'resumable' || header(request, 'x-goog-upload-command') !== 'start')
		throw badRequest('Only resumable uploads are served here: X-Goog-Upload-Protocol: resumable, X-Goog-Upload-Command: start (as @google/genai sends them)')
	const sizeText = request.headers.get('x-goog-upload-header-content-length') ?? ''
	const size = Number(sizeText)
	if (!/^\d+$/.test(sizeText) || !Number.isSafeInteger(size)) throw badRequest('X-Goog-Upload-Header-Content-Length must give the file size in bytes')
	if (size > svc.env.maxGeminiFileBytes)
		throw new GatewayError('payload_too_large', `The file is ${size} bytes; the limit is ${svc.env.maxGeminiFileBytes} (MAX_GEMINI_FILE_BYTES)`, { code: 'request_too_large' })
	const text = await request.text()
	let body: { file?: Record<string, unknown> } = {}
	try {
		body = text ? (JSON.parse(text) as typeof body) : {}
	} catch {
		throw badRequest('Invalid JSON payload received.')
	}
	if (body?.file?.name !== undefined)
		throw badRequest('file.name: the gateway names uploaded files itself (a name is shared by every account on its channel); leave it out and use the name the upload answers', 'file.name')
	const ch = uploadChannel(svc)
	const headers: Record<string, string> = { ...authHeaders(ch), 'content-type': 'application/json', 'x-goog-upload-protocol': 'resumable', 'x-goog-upload-command': 'start', 'x-goog-upload-header-content-length': String(size) }
	const type = request.headers.get('x-goog-upload-header-content-type')
	if (type) headers['x-goog-upload-header-content-type'] = type
	const { res } = await fetchUpstream(channelUrl(ch, '/upload/v1beta/files'), { method: 'POST', headers, body: JSON.stringify(body ?? {}) }, channelTimeouts(ch.settings), request.signal)
	if (!res.ok) throw upstreamError(res.status, await res.text().catch(() => ''), res.headers)
	await res.body?.cancel().catch(() => undefined)
	const url = res.headers.get('x-goog-upload-url')
	if (!url) throw new GatewayError('upstream', 'upstream started no upload (no X-Goog-Upload-URL)', { code: 'upstream_malformed' })
	const id = newFileId()
	const secret = randomString(32)
	const upload: Upload = { url, size, ...(keepsBytes(svc, type, size) && { keep: true }) }
	await svc.db.orm.insert(tasks).values({ id, kind: 'gemini_file', accountId: token.accountId, tokenId: token.id, model: '', channelId: ch.id, upstreamId: `upload:${secret}`, status: 'completed', progress: 100, requestId, cost: 0, result: { upload } })
	void purgeStaleUploads(svc).catch(() => undefined)
	return new Response(null, {
		status: 200,
		headers: {
			'x-goog-upload-url': `${base}/upload/${version}/files?upload_id=${id}.${secret}&upload_protocol=resumable`,
			'x-goog-upload-status': 'active',
			'x-goog-upload-chunk-granularity': res.headers.get('x-goog-upload-chunk-granularity') ?? String(8 * 1024 * 1024),
			'x-request-id': requestId,
		},
	})
}

/** Counts the bytes passing; errors the stream past `max`, so no more than the session allows reaches the vendor. */
function bounded(body: ReadableStream<Uint8Array>, max: number): ReadableStream<Uint8Array> {
	let seen = 0
	return body.pipeThrough(
		new TransformStream<Uint8Array, Uint8Array>({
			transform(chunk, out) {
				seen += chunk.byteLength
				if (seen > max) throw new GatewayError('payload_too_large', `The chunk is past the declared size of the file, or MAX_UPLOAD_BYTES`, { code: 'request_too_large' })
				out.enqueue(chunk)
			},
		}),
	)
}

/**
 * `POST {upload URL}`: `upload` / `upload, finalize` (and `query`, which asks how much arrived). The session's secret in
 * the URL is the credential (`token` is undefined when no key came, as from google-genai for Python); a key that did
 * come must be the uploading account's.
 */
export async function uploadChunk(svc: Services, token: AuthToken | undefined, request: Request, requestId: string, base: string, uploadId: string): Promise<Response> {
	const dot = uploadId.indexOf('.')
	const id = uploadId.slice(0, dot)
	const row = dot > 0 ? await getTask(svc.db, id) : undefined
	const upload = (row?.result as { upload?: Upload } | null)?.upload
	if (!row || row.kind !== 'gemini_file' || (token && row.accountId !== token.accountId) || !safeEqual(row.upstreamId ?? '', `upload:${uploadId.slice(dot + 1)}`) || !upload) throw notFound('No such upload session (finished, or never started)', 'upload_not_found')
	const ch = row.channelId === null ? undefined : svc.catalog.channel(row.channelId)
	if (!ch) throw new GatewayError('unavailable', 'The channel this upload went to is not available', { code: 'channel_unavailable' })
	const command = header(request, 'x-goog-upload-command')
	const offset = Number(request.headers.get('x-goog-upload-offset') ?? 0)
	const headers: Record<string, string> = { 'x-goog-upload-command': command, 'x-goog-upload-offset': String(offset) }
	// The vendor's upload URL is the capability; its key goes with it only to the channel's own host.
	if (sameOrigin(upload.url, ch)) Object.assign(headers, authHeaders(ch))
	let body: ReadableStream<Uint8Array> | undefined
	const kept: Uint8Array[] = []
	if (command.includes('upload')) {
		const room = upload.size - offset
		const len = request.headers.get('content-length')
		if (!Number.isSafeInteger(offset) || offset < 0 || room < 0) throw badRequest('X-Goog-Upload-Offset is past the declared size of the file')
		if (len !== null) {
			if (Number(len) > room) throw badRequest(`The chunk (${len} bytes at offset ${offset}) runs past the declared size of the file (${upload.size} bytes)`)
			headers['content-length'] = len
		}
		// A chunk sent without a length (which the request guard cannot measure up front) is bounded as it passes.
		body = request.body ? bounded(request.body, Math.min(room, svc.env.maxUploadBytes)) : undefined
		if (body && upload.keep) body = body.pipeThrough(collect(kept))
	}
	const { res } = await fetchUpstream(upload.url, { method: 'POST', headers, body }, channelTimeouts(ch.settings), request.signal)
	if (!res.ok) throw upstreamError(res.status, await res.text().catch(() => ''), res.headers)
	// Kept once the vendor has taken the chunk, before the client can send the next one (or name the file in a batch).
	if (upload.keep && command.includes('upload')) await keepPart(svc, id, offset, Buffer.concat(kept))
	const status = res.headers.get('x-goog-upload-status') ?? ''
	const out: Record<string, string> = { 'x-request-id': requestId }
	if (status) out['x-goog-upload-status'] = status
	const received = res.headers.get('x-goog-upload-size-received')
	if (received) out['x-goog-upload-size-received'] = received
	if (status !== 'final') {
		await res.body?.cancel().catch(() => undefined)
		return new Response(null, { status: 200, headers: out })
	}
	const answer = (await res.json().catch(() => undefined)) as { file?: VendorFile } | undefined
	if (!answer?.file?.name) throw new GatewayError('upstream', 'upstream finalized the upload without a File', { code: 'upstream_malformed' })
	await saveFile(svc, id, answer.file)
	return Response.json({ file: fileView(id, answer.file, base) }, { headers: out })
}

/** Passes the bytes on, keeping a copy of each chunk in `into`. */
function collect(into: Uint8Array[]): TransformStream<Uint8Array, Uint8Array> {
	return new TransformStream({
		transform(chunk, out) {
			into.push(chunk.slice())
			out.enqueue(chunk)
		},
	})
}

const sameOrigin = (uri: string, ch: Channel): boolean => {
	try {
		return new URL(uri).origin === new URL(ch.baseUrl).origin
	} catch {
		return false
	}
}
