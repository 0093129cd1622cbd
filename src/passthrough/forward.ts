/**
 * Unbilled passthrough for the task services (Midjourney, Suno): the same path and query on the channel's base_url,
 * the client's key replaced by the channel's, the answer relayed with its status and content type.
 * @module
 */
import { GatewayError } from '../core/errors'
import type { ChannelType } from '../providers/channel-types'
import { channelTimeouts, fetchUpstream } from '../relay/upstream-fetch'
import type { Channel } from '../routing/catalog'
import { orderChannels } from '../routing/select'
import type { Services } from '../services'
import { withoutSentCredentials } from '../relay/sent-credentials'
import { noRoute } from './task-routes'
import { authHeaders, channelCredentials, channelUrl } from './upstream'

/**
 * Path segments as the task services name their routes and ids: letters, digits, `_`, `-`, `.` (not `.`/`..` alone),
 * with no trailing `/`.
 */
const PLAIN_PATH = /^(?:\/(?!\.\.?(?:\/|$))[A-Za-z0-9_.-]+)+$/

/**
 * Refuses a task-service path not written plainly: an empty segment (`//`), a trailing `/`, a `;` parameter, an
 * encoded character. The services' own servers normalise such paths (Tomcat collapses `//` and drops `;…`), so
 * `/mj//submit/imagine` would reach the billed route's action unbilled, and `/mj/task;x/{id}/fetch` the ownership
 * check's task unchecked; the allow list (task-routes.ts) names each path one way only.
 * @example checkPlainPath('/mj/task/1712/image-seed') // passes; checkPlainPath('/mj//submit/imagine') throws 404
 */
export function checkPlainPath(path: string): void {
	if (!PLAIN_PATH.test(path)) throw noRoute(path)
}

/** Channels of `type` serving any of `models` (deduplicated), in routing order. */
export function serviceChannels(svc: Services, type: ChannelType, models: readonly string[]): Channel[] {
	const seen = new Map<number, Channel>()
	for (const m of models) for (const c of svc.catalog.channelsFor(m)) if (c.type === type) seen.set(c.id, c)
	return orderChannels([...seen.values()])
}

/** Client headers worth forwarding; credentials never are (the channel's replace them). */
function passHeaders(inbound: Headers): Record<string, string> {
	const out: Record<string, string> = {}
	for (const k of ['content-type', 'accept']) {
		const v = inbound.get(k)
		if (v) out[k] = v
	}
	return out
}


export type Forward = { path: string; method: string; inbound: Headers; body?: BodyInit; signal: AbortSignal; requestId: string }

/** Sends the call to `ch` and relays its answer as it is. */
export async function forwardRaw(ch: Channel, f: Forward): Promise<Response> {
	const { res } = await fetchUpstream(
		channelUrl(ch, f.path),
		{ method: f.method, headers: { ...passHeaders(f.inbound), ...authHeaders(ch) }, body: f.method === 'GET' || f.method === 'HEAD' ? undefined : f.body },
		channelTimeouts(ch.settings),
		f.signal,
	)
	const headers: Record<string, string> = { 'x-request-id': f.requestId }
	const type = res.headers.get('content-type')
	if (type) headers['content-type'] = type
	// An error's body was cleaned by fetchUpstream; a task service says no in a 200 too.
	const body = res.status < 400 ? withoutSentCredentials(res, channelCredentials(ch)).body : res.body
	return new Response(body, { status: res.status, headers })
}

/** Forwards to the first channel that answers (failing over on network errors only: the call may not be idempotent). */
export async function forwardAny(channels: Channel[], f: Forward, what: string): Promise<Response> {
	if (!channels.length) throw new GatewayError('not_found', `No channel serves ${what}`, { code: 'model_not_found' })
	let last: unknown
	for (const ch of channels) {
		try {
			return await forwardRaw(ch, f)
		} catch (e) {
			last = e
			if (f.signal.aborted || !(e instanceof GatewayError) || e.code !== 'upstream_unreachable') break
		}
	}
	throw last instanceof GatewayError ? last : new GatewayError('upstream', 'cannot reach the upstream provider', { retryable: true, detail: `cannot reach upstream: ${String(last)}` })
}

/** POSTs JSON to `ch` and reads JSON back; undefined when the answer is not a readable 2xx. */
export async function postJson(ch: Channel, path: string, body: unknown, signal: AbortSignal): Promise<unknown> {
	const { res } = await fetchUpstream(channelUrl(ch, path), { method: 'POST', headers: { ...authHeaders(ch), 'content-type': 'application/json' }, body: JSON.stringify(body) }, channelTimeouts(ch.settings), signal)
	const text = await res.text().catch(() => '')
	if (!res.ok) return undefined
	try {
		return JSON.parse(text)
	} catch {
		return undefined
	}
}

/** Groups rows by a key (tasks by channel). */
export function groupBy<T, K>(rows: T[], key: (r: T) => K): Map<K, T[]> {
	const out = new Map<K, T[]>()
	for (const r of rows) {
		const k = key(r)
		const list = out.get(k)
		if (list) list.push(r)
		else out.set(k, [r])
	}
	return out
}
