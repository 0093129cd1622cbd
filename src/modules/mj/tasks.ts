/**
 * Reading Midjourney tasks: only the caller's, each asked of the channel that made it, and every answer applied to
 * the task's state (so a failure seen by a client poll is refunded like one seen by the background poller).
 * @module
 */
import { and, desc, eq, inArray } from 'drizzle-orm'
import { GatewayError, notFound } from '../../core/errors'
import { tasks } from '../../db/schema'
import { groupBy, postJson } from '../../passthrough/forward'
import { authHeaders, channelCredentials, channelUrl } from '../../passthrough/upstream'
import { withoutCredentials } from '../../relay/sent-credentials'
import { channelTimeouts, fetchUpstream } from '../../relay/upstream-fetch'
import type { Services } from '../../services'
import { applyUpdate } from '../../tasks/refresh'
import { OPEN_STATUSES, type TaskRow, ownedByUpstream } from '../../tasks/store'
import { mjUpdate } from '../../tasks/upstream'

/** How many recent tasks GET /mj/task/list shows. */
const LIST_LIMIT = 100

const json = (body: unknown, requestId: string) => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json', 'x-request-id': requestId } })

/**
 * Relays `path` for one of the caller's tasks to its channel; 404 for anyone else's. With `apply`, the answer (a task
 * object) updates the task's state.
 */
export async function fetchOwnedTask(svc: Services, accountId: number, upstreamId: string, path: string, request: Request, requestId: string, apply = true): Promise<Response> {
	const [task] = await ownedByUpstream(svc.db, 'mj', accountId, [upstreamId])
	if (!task) throw notFound(`No Midjourney task "${upstreamId}"`, 'task_not_found')
	const ch = task.channelId === null ? undefined : svc.catalog.channel(task.channelId)
	if (!ch) throw new GatewayError('unavailable', 'The channel that ran this task is no longer available', { code: 'channel_unavailable' })
	const method = request.method
	const body = method === 'GET' || method === 'HEAD' ? undefined : await request.arrayBuffer()
	const headers: Record<string, string> = { ...authHeaders(ch) }
	const type = request.headers.get('content-type')
	if (type && body) headers['content-type'] = type
	const { res } = await fetchUpstream(channelUrl(ch, path), { method, headers, body }, channelTimeouts(ch.settings), request.signal)
	const text = await res.text()
	if (apply && res.ok) {
		try {
			const update = mjUpdate(JSON.parse(text))
			if (update) await applyUpdate(svc, task, update)
		} catch (e) {
			if (!(e instanceof SyntaxError)) throw e
		}
	}
	return new Response(withoutCredentials(text, channelCredentials(ch)), { status: res.status, headers: { 'content-type': res.headers.get('content-type') ?? 'application/json', 'x-request-id': requestId } })
}

/** The caller's tasks among `ids`, fetched with list-by-condition from each task's channel; others are left out. */
export async function listOwned(svc: Services, accountId: number, ids: string[], signal: AbortSignal, requestId: string): Promise<Response> {
	return json(await fetchList(svc, await ownedByUpstream(svc.db, 'mj', accountId, ids), signal), requestId)
}

/** GET /mj/task/list (the caller's latest tasks) and /mj/task/queue (its open ones). */
export async function listRecent(svc: Services, accountId: number, openOnly: boolean, signal: AbortSignal, requestId: string): Promise<Response> {
	const where = and(eq(tasks.kind, 'mj'), eq(tasks.accountId, accountId), ...(openOnly ? [inArray(tasks.status, OPEN_STATUSES)] : []))
	const rows = await svc.db.orm.select().from(tasks).where(where).orderBy(desc(tasks.createdAt)).limit(LIST_LIMIT)
	return json(await fetchList(svc, rows, signal), requestId)
}

async function fetchList(svc: Services, rows: TaskRow[], signal: AbortSignal): Promise<unknown[]> {
	const out: unknown[] = []
	for (const [channelId, group] of groupBy(rows, (r) => r.channelId)) {
		const ch = channelId === null ? undefined : svc.catalog.channel(channelId)
		if (!ch) continue
		const byId = new Map(group.map((r) => [r.upstreamId, r]))
		let answer: unknown
		try {
			answer = await postJson(ch, '/mj/task/list-by-condition', { ids: [...byId.keys()] }, signal)
		} catch {
			continue // this channel is unreachable now: its tasks are left out, not failed
		}
		if (!Array.isArray(answer)) continue
		for (const item of answer) {
			const id = (item as { id?: unknown })?.id
			const task = typeof id === 'string' ? byId.get(id) : undefined
			if (!task) continue // never show a task the caller does not own, whatever the proxy returned
			out.push(item)
			const update = mjUpdate(item)
			if (update) await applyUpdate(svc, task, update)
		}
	}
	return out
}
