/**
 * Anthropic's Files API (beta; platform.claude.com/docs/en/api/files-create) as `client.beta.files.*` of
 * `@anthropic-ai/sdk` calls it: upload, list, retrieve metadata, delete and download, on the paths OpenAI's Files API
 * uses (modules/batches/files.ts). A request from Anthropic's clients (`isAnthropicClient`: `anthropic-version`,
 * `anthropic-beta`, or `x-api-key` without a bearer token) is served here before routing, in Anthropic's shapes; any
 * other goes on to OpenAI's routes. An upload is streamed as it arrives (bounded by MAX_UPLOAD_BYTES, request-guard.ts)
 * to one Anthropic channel, and the file id it answers is recorded to the account with that channel: other accounts
 * get Anthropic's 404 for it, and messages naming it go to that channel (refs.ts). Files Claude's code execution tool
 * writes are recorded the same way, to the account its answer went to (outputs.ts). Calls carry the Files API beta.
 * @module
 */
import { eq } from 'drizzle-orm'
import { Elysia } from 'elysia'
import type { AuthToken } from '../../auth/api-key'
import { GatewayError, badRequest, notFound } from '../../core/errors'
import { BodyReadTimeout, bodyTimedOut, bodyTimeoutOf } from '../../http/body-deadline'
import { unknownRoute } from '../../http/error-map'
import { errorResponse, isAnthropicClient } from '../../http/error-shapes'
import { isRead, missingKey, presentedKey } from '../../http/model-auth'
import { authHeaders, channelUrl } from '../../passthrough/upstream'
import { withRequestId } from '../../protocols/anthropic-messages/error'
import { ANTHROPIC_VERSION } from '../../providers/anthropic'
import { upstreamError } from '../../providers/upstream-error'
import { channelTimeouts, fetchUpstream } from '../../relay/upstream-fetch'
import { type Channel, matchesModel } from '../../routing/catalog'
import { orderChannels } from '../../routing/select'
import type { Services } from '../../services'
import { type TaskRow, listOwned, newTaskId, ownedByUpstream } from '../../tasks/store'
import { tasks } from '../../db/schema'
import { holder } from '../batches/upstream'
import { withFilesBeta } from './refs'

const KIND = 'anthropic_file'
const PATH = /^\/v1\/files(?:\/([^/]+)(\/content)?)?\/?$/

type Ctx = { svc: Services; request: Request; token: AuthToken; requestId: string }

/** Headers of a Files API call to the channel: its key, the client's API version, and the beta. */
const filesHeaders = (ch: Channel, inbound: Headers): Record<string, string> => ({
	...authHeaders(ch),
	'anthropic-version': inbound.get('anthropic-version') ?? ANTHROPIC_VERSION,
	'anthropic-beta': withFilesBeta(inbound.get('anthropic-beta')),
})

/** Calls the channel; a non-2xx answer becomes the gateway's error for it (Anthropic's words kept). */
async function call(c: Ctx, ch: Channel, path: string, method: string): Promise<Response> {
	const { res } = await fetchUpstream(channelUrl(ch, path), { method, headers: filesHeaders(ch, c.request.headers) }, channelTimeouts(ch.settings), c.request.signal)
	if (!res.ok) throw upstreamError(res.status, await res.text().catch(() => ''), res.headers)
	return res
}

const answer = (body: unknown, requestId: string) => Response.json(body, { headers: { 'x-request-id': requestId } })

/** The account's record of a file by its id; Anthropic's 404 otherwise (another account's file included). */
async function owned(c: Ctx, id: string): Promise<TaskRow> {
	const [row] = await ownedByUpstream(c.svc.db, KIND, c.token.accountId, [id])
	if (!row) throw notFound(`File not found: ${id}`, 'file_not_found')
	return row
}

/**
 * Where an upload goes: the first Anthropic channel, in routing order (priority, then weight), among those serving a
 * model the key may use. Only that channel's models can read the file afterwards.
 */
function uploadChannel(svc: Services, token: AuthToken): Channel {
	const found = new Map<number, Channel>()
	for (const model of svc.catalog.modelNames()) {
		if (token.allowedModels && !matchesModel(token.allowedModels, model)) continue
		for (const ch of svc.catalog.channelsFor(model)) if (ch.type === 'anthropic') found.set(ch.id, ch)
	}
	const [ch] = orderChannels([...found.values()])
	if (!ch) throw new GatewayError('not_found', 'No Anthropic model this key may use is served here: files are kept by the vendor serving them', { code: 'model_not_found' })
	return ch
}

/**
 * The request's body as it arrives, with a promise settled once it has all been read: the upstream call is made as
 * the body streams, so the body deadline (BODY_READ_TIMEOUT_MS) is held on that promise rather than on a read.
 */
function forwarded(body: ReadableStream<Uint8Array>) {
	let end!: () => void
	const whole = new Promise<void>((resolve) => (end = resolve))
	const stream = body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({ flush: () => end() }))
	return { stream, whole, end: () => end() }
}

async function upload(c: Ctx): Promise<Response> {
	const type = c.request.headers.get('content-type') ?? ''
	if (!type.toLowerCase().startsWith('multipart/form-data') || !c.request.body) throw badRequest('file: Field required (send the file as multipart/form-data)', 'file')
	const ch = uploadChannel(c.svc, c.token)
	const headers: Record<string, string> = { ...filesHeaders(ch, c.request.headers), 'content-type': type }
	const len = c.request.headers.get('content-length')
	if (len) headers['content-length'] = len
	const body = forwarded(c.request.body)
	const late = new AbortController()
	c.svc.bodyReads.within(body.whole, c.request).catch(() => late.abort())
	let res: Response
	try {
		;({ res } = await fetchUpstream(channelUrl(ch, '/v1/files'), { method: 'POST', headers, body: body.stream }, channelTimeouts(ch.settings), AbortSignal.any([c.request.signal, late.signal])))
	} catch (e) {
		const timedOut = bodyTimeoutOf(c.request)
		if (timedOut) return bodyTimedOut(c.request, timedOut, c.requestId)
		throw e
	} finally {
		// An upstream that answered before the whole body (a refusal) ends the deadline's wait too.
		body.end()
	}
	if (!res.ok) throw upstreamError(res.status, await res.text().catch(() => ''), res.headers)
	const file = (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined
	if (typeof file?.id !== 'string') throw new GatewayError('upstream', 'upstream answered a file without an id', { code: 'upstream_malformed' })
	const t = c.token
	await c.svc.db.orm.insert(tasks).values({ id: newTaskId(KIND), kind: KIND, accountId: t.accountId, tokenId: t.id, model: '', channelId: ch.id, upstreamId: file.id, status: 'completed', progress: 100, requestId: c.requestId, cost: 0, result: { file } })
	return answer(file, c.requestId)
}

/** A whole number in [min, max] from the query, or a 400 naming it. */
function intParam(q: URLSearchParams, name: string, min: number, max: number, fallback: number): number {
	const v = q.get(name)
	if (v === null) return fallback
	const n = Number(v)
	if (!Number.isInteger(n) || n < min || n > max) throw badRequest(`${name}: Input should be an integer from ${min} to ${max}`, name)
	return n
}

/**
 * The account's files, newest first, as uploaded: `{data, first_id, last_id, has_more}` paged by `after_id` (older) /
 * `before_id` (newer) / `limit` (1–1000, default 20), and `next_page` (the cursor `page` the SDK sends back).
 */
async function list(c: Ctx, q: URLSearchParams): Promise<Response> {
	const limit = intParam(q, 'limit', 1, 1000, 20)
	const before = q.get('before_id') ?? undefined
	const cursorId = before ?? q.get('after_id') ?? q.get('page') ?? undefined
	const cursor = cursorId ? ((await ownedByUpstream(c.svc.db, KIND, c.token.accountId, [cursorId]))[0]?.id ?? '\u0000none') : undefined
	const rows = await listOwned(c.svc.db, KIND, c.token.accountId, { after: cursor, limit, order: before ? 'asc' : 'desc' })
	const shown = rows.slice(0, limit)
	if (before) shown.reverse()
	const more = rows.length > limit
	const data = await Promise.all(shown.map((r) => metadataOf(c, r)))
	const last = shown.at(-1)?.upstreamId ?? null
	return answer({ data, first_id: shown[0]?.upstreamId ?? null, last_id: last, has_more: more, next_page: more && !before ? last : null }, c.requestId)
}

const recorded = (row: TaskRow) => (row.result as { file?: unknown } | null)?.file

/**
 * A file's metadata as recorded at upload; for a file the code execution tool wrote (whose answer named only its id),
 * read from the vendor the first time it is asked for and recorded then. One the vendor no longer answers is shown by
 * its id.
 */
async function metadataOf(c: Ctx, row: TaskRow): Promise<unknown> {
	const file = recorded(row)
	if (file) return file
	try {
		const meta = await (await call(c, holder(c.svc, row), `/v1/files/${encodeURIComponent(row.upstreamId!)}`, 'GET')).json()
		await remember(c, row, meta)
		return meta
	} catch {
		return { id: row.upstreamId, type: 'file' }
	}
}

async function remember(c: Ctx, row: TaskRow, meta: unknown) {
	if (meta && typeof meta === 'object') await c.svc.db.orm.update(tasks).set({ result: { ...row.result, file: meta } }).where(eq(tasks.id, row.id))
}

async function byId(c: Ctx, id: string, content: boolean): Promise<Response> {
	const row = await owned(c, id)
	const ch = holder(c.svc, row)
	const path = `/v1/files/${encodeURIComponent(id)}`
	const method = c.request.method
	if (content) {
		if (method !== 'GET') throw unknownRoute(method, new URL(c.request.url).pathname)
		const res = await call(c, ch, `${path}/content`, 'GET')
		const headers: Record<string, string> = { 'content-type': res.headers.get('content-type') ?? 'application/octet-stream', 'x-request-id': c.requestId }
		for (const h of ['content-length', 'content-disposition']) {
			const v = res.headers.get(h)
			if (v) headers[h] = v
		}
		return new Response(res.body, { headers })
	}
	if (method === 'GET') {
		const meta = await (await call(c, ch, path, 'GET')).json()
		if (!recorded(row)) await remember(c, row, meta)
		return answer(meta, c.requestId)
	}
	if (method !== 'DELETE') throw unknownRoute(method, new URL(c.request.url).pathname)
	const gone = await (await call(c, ch, path, 'DELETE')).json()
	await c.svc.db.sql.query('DELETE FROM tasks WHERE id = $1', [row.id])
	return answer(gone, c.requestId)
}

/** The key check of the model routes (http/model-auth.ts), with Anthropic's words for a missing key. */
async function authenticate(svc: Services, request: Request): Promise<AuthToken> {
	const key = presentedKey(request, false)
	if (!key) throw missingKey('anthropic')
	const token = svc.keys.cached(key) ?? (await svc.keys.authenticate(key))
	// An upload or delete is counted against the key's rpm_limit; reads are not, as on the other task routes.
	const admitted = isRead(request) ? undefined : svc.limits.admit(token)
	if (admitted) await admitted
	const settling = svc.catalog.settling
	if (settling) await settling
	return token
}

async function serve(svc: Services, request: Request, requestId: string, m: RegExpExecArray): Promise<Response> {
	const c: Ctx = { svc, request, requestId, token: await authenticate(svc, request) }
	const [, id, content] = m
	if (id !== undefined) return byId(c, decodeURIComponent(id), content !== undefined)
	if (request.method === 'POST') return upload(c)
	if (request.method === 'GET') return list(c, new URL(request.url).searchParams)
	throw unknownRoute(request.method, '/v1/files')
}

/**
 * Before routing, on every request the app's own pipeline serves: one substring test for any other path. Served here,
 * the request never reaches OpenAI's routes (whose schemas would refuse Anthropic's form and `?beta=true`).
 */
export const anthropicFilesModule = (svc: Services) =>
	new Elysia({ name: 'anthropic-files' }).onRequest(async ({ request, set }) => {
		if (!request.url.includes('/v1/files') || !isAnthropicClient(request)) return
		const m = PATH.exec(new URL(request.url).pathname)
		if (!m) return
		const requestId = set.headers['x-request-id'] as string
		try {
			return withRequestId(await serve(svc, request, requestId, m), requestId)
		} catch (e) {
			if (e instanceof BodyReadTimeout) return bodyTimedOut(request, e, requestId)
			return errorResponse(e, 'anthropic', requestId)
		}
	})
