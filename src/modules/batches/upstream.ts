/**
 * Calls on the channel that holds a file or batch, and the account's records of them: an id is served only to the
 * account it was recorded to (others get OpenAI's 404), on the channel that holds it, since every account shares
 * the channel's key and the vendor alone cannot tell them apart.
 * @module
 */
import { GatewayError } from '../../core/errors'
import { jsonResponse } from '../../passthrough/relay'
import { authHeaders, channelUrl, jsonHeaders } from '../../passthrough/upstream'
import { upstreamError } from '../../providers/upstream-error'
import { channelTimeouts, fetchUpstream } from '../../relay/upstream-fetch'
import type { Channel } from '../../routing/catalog'
import type { Services } from '../../services'
import { type TaskRow, listOwned, ownedByUpstream } from '../../tasks/store'

/** The account's record of a file or batch by the id it was given; 404 in OpenAI's words otherwise. */
export async function owned(svc: Services, kind: 'file' | 'batch', id: string, accountId: number): Promise<TaskRow> {
	const [row] = await ownedByUpstream(svc.db, kind, accountId, [id])
	if (!row) throw new GatewayError('not_found', kind === 'file' ? `No such File object: ${id}` : `No batch found with id '${id}'.`, { code: kind === 'file' ? 'file_not_found' : 'batch_not_found', param: 'id' })
	return row
}

/** The enabled channel that holds a record; 503 when it is gone. */
export function holder(svc: Services, row: TaskRow): Channel {
	const ch = row.channelId === null ? undefined : svc.catalog.channel(row.channelId)
	if (!ch) throw new GatewayError('unavailable', 'The channel that holds this object is not available', { code: 'channel_unavailable' })
	return ch
}

/** Calls the channel; a non-2xx answer becomes the gateway's error for it. */
export async function call(ch: Channel, path: string, init: { method: string; json?: unknown; body?: BodyInit }, signal: AbortSignal): Promise<Response> {
	const headers = init.json === undefined ? authHeaders(ch) : jsonHeaders(ch)
	const body = init.json === undefined ? init.body : JSON.stringify(init.json)
	const { res } = await fetchUpstream(channelUrl(ch, path), { method: init.method, headers, body }, channelTimeouts(ch.settings), signal)
	if (!res.ok) throw upstreamError(res.status, await res.text().catch(() => ''), res.headers)
	return res
}

/** Calls the channel and answers its JSON to the client. */
export async function callJson(ch: Channel, path: string, init: { method: string; json?: unknown; body?: BodyInit }, signal: AbortSignal, requestId: string): Promise<{ body: Record<string, unknown>; response: Response }> {
	const res = await call(ch, path, init, signal)
	const text = await res.text()
	let body: Record<string, unknown>
	try {
		body = JSON.parse(text) as Record<string, unknown>
	} catch {
		throw new GatewayError('upstream', 'upstream sent a malformed response', { code: 'upstream_malformed' })
	}
	return { body, response: jsonResponse(body, requestId) }
}

/** OpenAI's cursor list over the account's records (newest first); `after` is an id the client was given, `purpose` (files) filters as OpenAI's does. */
export async function ownedPage(svc: Services, kind: 'file' | 'batch', accountId: number, q: { after?: string; limit?: number; order?: 'asc' | 'desc'; purpose?: string }, view: (r: TaskRow) => unknown) {
	const limit = Math.max(1, Math.min(q.limit ?? 20, kind === 'file' ? 10_000 : 100))
	const after = q.after ? (await ownedByUpstream(svc.db, kind, accountId, [q.after]))[0]?.id : undefined
	const rows = await listOwned(svc.db, kind, accountId, { after: after ?? (q.after ? '\u0000none' : undefined), limit, order: q.order ?? 'desc', purpose: q.purpose })
	const page = rows.slice(0, limit)
	return { object: 'list' as const, data: page.map(view), first_id: page[0]?.upstreamId ?? null, last_id: page.at(-1)?.upstreamId ?? null, has_more: rows.length > limit }
}
