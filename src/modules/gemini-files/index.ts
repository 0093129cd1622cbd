/**
 * Gemini's Files API (ai.google.dev/api/files) as @google/genai calls it (`ai.files.upload`, `get`, `list`, `delete`):
 * uploads relayed to one Gemini channel (upload.ts), the files recorded to the uploading account (records.ts) and
 * shown under the gateway's names and URIs. `GET /v1beta/files/{id}` is routed by the Gemini operations module, whose
 * `{id}:download` (Veo's videos) shares the path; it hands plain ids to `getFile` here. Also under `/v1` for uploads;
 * `GET`/`DELETE /v1/files…` are OpenAI's Files API (modules/batches/files.ts). Not counted against a key's rpm limit:
 * no model is called, and a large upload is many requests.
 * @module
 */
import { Elysia, t } from 'elysia'
import { notFound } from '../../core/errors'
import { missingKey, modelAuth, presentedKey } from '../../http/model-auth'
import { authHeaders, channelUrl } from '../../passthrough/upstream'
import { upstreamError } from '../../providers/upstream-error'
import { GeminiErrorBody } from '../../protocols/gemini'
import { channelTimeouts, fetchUpstream } from '../../relay/upstream-fetch'
import { holder } from '../batches/upstream'
import type { AuthToken } from '../../auth/api-key'
import type { Services } from '../../services'
import { publicBase } from '../video/view'
import { downloadFile } from './download'
import { dropFile, fileView, idOf, ownedFile, pageFiles, saveFile, type VendorFile } from './records'
import { startUpload, uploadChunk } from './upload'
import { GoogleKeyQuery } from '../models/model'

const errors = { 400: GeminiErrorBody, 401: GeminiErrorBody, 404: GeminiErrorBody, 413: GeminiErrorBody, 502: GeminiErrorBody, 503: GeminiErrorBody }

/** Google's File resource, as the gateway shows it. */
export const GeminiFile = t.Object(
	{
		name: t.String({ description: '`files/{id}`: the gateway\'s name' }),
		uri: t.String({ description: 'The gateway\'s URI of the file: put it in `fileData.fileUri`' }),
		mimeType: t.Optional(t.String()),
		sizeBytes: t.Optional(t.String()),
		state: t.Optional(t.String({ description: 'PROCESSING, ACTIVE or FAILED' })),
		expirationTime: t.Optional(t.String()),
	},
	{ additionalProperties: true },
)

/** The file from its channel, brought up to date in the record (its `state` moves PROCESSING → ACTIVE). */
export async function getFile(svc: Services, id: string, accountId: number, request: Request, requestId: string): Promise<Response> {
	const row = await ownedFile(svc, idOf(id), accountId)
	const ch = holder(svc, row)
	const { res } = await fetchUpstream(channelUrl(ch, `/v1beta/${row.file.name}`), { method: 'GET', headers: authHeaders(ch) }, channelTimeouts(ch.settings), request.signal)
	if (res.status === 404) {
		// Expired (48 hours) or deleted at the vendor: gone here too.
		await res.body?.cancel().catch(() => undefined)
		await dropFile(svc, row.id)
		return getFile(svc, id, accountId, request, requestId)
	}
	if (!res.ok) throw upstreamError(res.status, await res.text().catch(() => ''), res.headers)
	const file = (await res.json()) as VendorFile
	await saveFile(svc, row.id, file)
	return Response.json(fileView(row.id, file, publicBase(svc.env.publicUrl, request)), { headers: { 'x-request-id': requestId } })
}

/**
 * Whether a call under `/v1/files` is Gemini's (@google/genai calls `/v1` by default) rather than OpenAI's Files API,
 * which shares the paths: Google's clients send their key as `x-goog-api-key` or `?key=`, OpenAI's as a Bearer token.
 */
export const isGeminiCaller = (request: Request): boolean => request.headers.has('x-goog-api-key') || new URL(request.url).searchParams.has('key')

/** `files.list`: the account's files from the gateway's records. */
export async function listFiles(svc: Services, accountId: number, query: { pageSize?: number | string; pageToken?: string }, request: Request) {
	const size = Math.max(1, Math.min(Number(query.pageSize ?? 10) || 10, 100))
	const rows = await pageFiles(svc, accountId, size, query.pageToken || undefined)
	const base = publicBase(svc.env.publicUrl, request)
	const files = rows.slice(0, size).map((r) => fileView(r.id, (r.result as { file: VendorFile }).file, base))
	return (rows.length > size ? { files, nextPageToken: rows[size - 1]!.id } : { files }) as { files: (typeof GeminiFile.static)[]; nextPageToken?: string }
}

/** `files.delete`: at the vendor, then here. */
export async function deleteFile(svc: Services, id: string, accountId: number, request: Request): Promise<Record<string, never>> {
	const row = await ownedFile(svc, idOf(id), accountId)
	const ch = holder(svc, row)
	const { res } = await fetchUpstream(channelUrl(ch, `/v1beta/${row.file.name}`), { method: 'DELETE', headers: authHeaders(ch) }, channelTimeouts(ch.settings), request.signal)
	// Already gone at the vendor (expired): deleted all the same.
	if (!res.ok && res.status !== 404) throw upstreamError(res.status, await res.text().catch(() => ''), res.headers)
	await res.body?.cancel().catch(() => undefined)
	await dropFile(svc, row.id)
	return {}
}

/** Google's list answer, as the gateway gives it. */
export const GeminiFileList = t.Object({ files: t.Array(GeminiFile), nextPageToken: t.Optional(t.String()) })
/** Google's list parameters, and its key (`/v1/files` takes OpenAI's too: batches/files.ts). */
export const GeminiListQuery = { pageSize: t.Optional(t.Numeric({ minimum: 1 })), pageToken: t.Optional(t.String()), key: GoogleKeyQuery }

/**
 * The key check of the upload routes. A start needs the key; the chunks go to the URL the start answered, whose
 * `upload_id` carries the session's secret: that is their credential, as Google's own upload URLs are. google-genai
 * (Python) sends its chunks with no key at all (only `X-Goog-Upload-Command`/`-Offset`); a key sent with them anyway
 * is checked, and must be the uploading account's (upload.ts).
 */
const uploadAuth = (svc: Services) =>
	new Elysia({ name: 'gemini-upload-auth' }).derive({ as: 'scoped' }, async ({ request, set }) => {
		const requestId = set.headers['x-request-id'] as string
		const key = presentedKey(request, true)
		if (!key && new URL(request.url).searchParams.has('upload_id')) return { token: undefined as AuthToken | undefined, requestId }
		if (!key) throw missingKey('gemini')
		const token: AuthToken | undefined = svc.keys.cached(key) ?? (await svc.keys.authenticate(key))
		return { token, requestId }
	})

/** `POST /upload/{version}/files`: the start of a resumable upload, or one of its chunks (`?upload_id=`). */
const uploadModule = (svc: Services) => {
	// `async`: Elysia tells a handler whose answer it must await by the keyword.
	const upload = (version: string) => async ({ token, request, requestId, query }: { token: AuthToken | undefined; request: Request; requestId: string; query: Record<string, string | undefined> }) => {
		const base = publicBase(svc.env.publicUrl, request)
		if (query.upload_id) return uploadChunk(svc, token, request, requestId, base, query.upload_id)
		if (!token) throw missingKey('gemini')
		return startUpload(svc, token, request, requestId, base, version)
	}
	const uploadHook = (version: string) => ({
		parse: 'none' as const,
		query: t.Object({ upload_id: t.Optional(t.String({ description: 'Set on the upload URL the start answered' })) }, { additionalProperties: true }),
		response: { 200: t.Union([t.Object({ file: GeminiFile }), t.Null()]), ...errors },
		detail: {
			summary: `Upload a file (${version})`,
			description:
				"Gemini's resumable upload: `start` (`X-Goog-Upload-Protocol: resumable`, `X-Goog-Upload-Command: start`, the size in `X-Goog-Upload-Header-Content-Length`, `{file: {displayName}}`) answers the upload URL in `X-Goog-Upload-URL` (this gateway's); then the bytes are POSTed there with `X-Goog-Upload-Command: upload` / `upload, finalize` and `X-Goog-Upload-Offset`, each request up to MAX_UPLOAD_BYTES, a file up to MAX_GEMINI_FILE_BYTES (2 GB). Relayed to a Gemini channel as they arrive; the final answer is `{file}` under the gateway's name and URI. Free (Google does not charge for storage); requests using the file are billed by their tokens.",
		},
	})
	return new Elysia({ detail: { tags: ['Gemini'] } })
		.use(uploadAuth(svc))
		.post('/upload/v1beta/files', upload('v1beta'), uploadHook('/v1beta'))
		.post('/upload/v1/files', upload('v1'), uploadHook('/v1'))
}

export const geminiFilesModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['Gemini'] } })
		.use(uploadModule(svc))
		.use(modelAuth(svc, { gemini: true, counted: false }))
		.get('/v1beta/files', ({ query, token, request }) => listFiles(svc, token.accountId, query, request), {
			query: t.Object(GeminiListQuery),
			response: { 200: GeminiFileList, ...errors },
			detail: { summary: 'List files', description: "The account's uploaded files not yet expired (Google keeps them 48 hours), newest first, `pageSize` 1–100 (default 10); `state` as last read (`files.get` reads it anew). Under `/v1/files` for Google's clients (a key in `x-goog-api-key` or `?key=`), where OpenAI's clients get their Files API." },
		})
		.get(
			'/download/v1beta/files/:file',
			({ params, token, request, requestId }) => {
				if (!params.file.endsWith(':download')) throw notFound(`Method not found: files/${params.file} (supported: download)`, 'method_not_found')
				return downloadFile(svc, params.file.slice(0, -':download'.length), token.accountId, request, requestId)
			},
			{
				params: t.Object({ file: t.String({ description: '`{id}:download`, with `?alt=media`' }) }),
				response: { 200: t.File({ description: "The file's bytes (a batch's responses file: JSONL)" }), ...errors },
				detail: { summary: 'Download a file', description: "Google's REST download of a file the vendor made for the account (a batch's `responsesFile`), streamed from the channel holding it. `files.download` of @google/genai asks `/v1beta/files/{id}:download` instead, which is served too." },
			},
		)
		.delete('/v1beta/files/:file', ({ params, token, request }) => deleteFile(svc, params.file, token.accountId, request), {
			params: t.Object({ file: t.String() }),
			response: { 200: t.Object({}), ...errors },
			detail: { summary: 'Delete a file', description: 'At the vendor and here. Under `/v1/files/{id}` for Google\'s clients, as the list.' },
		})

