/**
 * The failover loop shared by every relay: channels in priority/weight order with cooling-down ones last, at most
 * 1 + RETRIES attempts, moving on only for failures another channel might not have (network, timeout, 429, 5xx, a
 * vendor without the model, and the vendor refusing the gateway's own credentials) and never once the client is gone. Each outcome feeds the
 * channel's circuit breaker and the metrics. A 401 disables the channel with the reason, since no request can succeed
 * on a wrong or revoked key; a 403 does not: it often concerns one model the vendor account may not use.
 * @module
 */
import { and, eq } from 'drizzle-orm'
import { GatewayError } from '../core/errors'
import { channels as channelsTable } from '../db/schema'
import { redact } from '../lib/log'
import type { Services } from '../services'
import type { Channel } from './catalog'
import { orderChannels } from './select'

/**
 * `judgedAtEnd`: a stream, whose verdict on the channel comes when it ends (relay/stream-relay.ts `judgeStream`), not
 * when it starts: one the upstream cuts, stalls or breaks after its first content is the channel's failure too.
 */
export type AttemptResult<T> = { ok: T; judgedAtEnd?: true } | { error: GatewayError }

/** An attempt that answers with a Response (the chat and Responses relays). */
export type ResponseAttempt = AttemptResult<Response>

/**
 * Failures that say nothing about the channel's health (the request's own fault, or a deliberate skip). A vendor's 404
 * for the model is tried elsewhere but not held against the channel: a caller naming a model that a glob matches but
 * the vendor lacks would otherwise open the channel's breaker for every model it serves.
 */
const NOT_THE_CHANNELS_FAULT = new Set(['client_closed', 'unsupported_for_model', 'model_not_found'])

export async function tryChannels<T>(
	svc: Services,
	candidates: Channel[],
	signal: AbortSignal,
	attempt: (ch: Channel) => Promise<AttemptResult<T>>,
	model?: string,
): Promise<{ ok: T; channel: Channel } | { error: GatewayError; channel?: Channel }> {
	let last: { error: GatewayError; channel?: Channel } | undefined
	/** The shortest wait a rate-limited channel named: when every channel was tried, the first may take a request again then. */
	let soonest: number | undefined
	const claims: number[] = []
	// Channels this request judged; only asked about when it claimed a probe (rare), so kept only then.
	let judged: Set<number> | undefined
	try {
		const order = svc.health.order(candidates.length > 1 ? orderChannels(candidates) : candidates, claims)
		if (claims.length) judged = new Set()
		for (let i = 0; i < order.length && i <= svc.env.retries; i++) {
			const ch = order[i]!
			const r = await attempt(ch)
			if ('ok' in r) {
				if (!r.judgedAtEnd) svc.health.success(ch.id)
				judged?.add(ch.id)
				return { ok: r.ok, channel: ch }
			}
			const err = withoutSecrets(r.error, ch, model)
			last = { error: err, channel: ch }
			if (err.kind === 'rate_limit' && err.retryAfter !== undefined) soonest = Math.min(soonest ?? Infinity, err.retryAfter)
			if (err.retryable && !NOT_THE_CHANNELS_FAULT.has(err.code ?? '')) {
				svc.health.failure(ch.id, err.detail ?? err.message, err.retryAfter)
				judged?.add(ch.id)
				svc.metrics.upstreamErrors.inc({ channel: ch.name, kind: err.code ?? err.kind })
			}
			// Awaited: a caller (or an operator) who sees this failure finds the channel disabled, and the next request
			// does not try it again meanwhile. A rare path, so the write's few milliseconds do not matter.
			if (err.code === 'upstream_auth') await disableChannel(svc, ch, err.detail ?? err.message)
			svc.log.warn('upstream attempt failed', { channel: ch.name, status: err.status, code: err.code, error: err.message, detail: err.detail, retryable: err.retryable })
			if (!err.retryable || signal.aborted) break
			svc.metrics.retries.inc({ channel: ch.name })
		}
		// A caller told to come back after the last channel's wait would wait longer than the first needs (its breaker
		// lets a request probe it once its own wait is over).
		if (last?.error.kind === 'rate_limit' && soonest !== undefined && soonest < (last.error.retryAfter ?? Infinity))
			return { error: copyError(last.error, { retryAfter: soonest }), channel: last.channel }
		// Built only when needed: an Error captures a stack trace, which the success path should not pay for.
		return last ?? { error: new GatewayError('unavailable', 'no channel is available', { code: 'no_channel' }) }
	} finally {
		// Probes this request claimed but never judged (not reached, or the request's own error) go back.
		for (const id of claims) if (!judged?.has(id)) svc.health.unclaim(id)
	}
}

/**
 * Disables the channel, unless its key was replaced since this instance loaded it: an administrator who swapped a
 * revoked key on another instance must not find the channel disabled by a call this one made with the old key before
 * it heard of the change. This instance then loads the new key at once.
 */
async function disableChannel(svc: Services, ch: Channel, said: string) {
	const reason = `the upstream rejected the channel's credentials (HTTP 401): ${said}`.slice(0, 500)
	try {
		const sameKey = ch.keyEnc === undefined ? eq(channelsTable.id, ch.id) : and(eq(channelsTable.id, ch.id), eq(channelsTable.apiKeyEnc, ch.keyEnc))
		const hit = await svc.db.orm.update(channelsTable).set({ status: 'disabled', disabledReason: reason, updatedAt: new Date() }).where(sameKey).returning({ id: channelsTable.id })
		if (!hit.length) {
			svc.log.warn('upstream rejected a channel key since replaced: channel left enabled, new key loaded', { channel: ch.name })
			await svc.catalog.reload()
			return
		}
		await svc.catalog.changed()
		svc.log.warn('channel disabled: upstream rejected its credentials', { channel: ch.name, reason })
	} catch (e) {
		svc.log.error('could not disable channel', { channel: ch.name, error: String(e) })
	}
}

/**
 * The error with the channel's key cut out of its message and detail: some vendors and proxies repeat the credentials
 * they were given, and both go to the log, the disabled reason and the health view (the message also to the caller).
 * Log redaction catches key-shaped strings only (sk-…, Bearer …); this also catches the actual value whatever its
 * shape, and the masked forms vendors print (`sk-proj-AbCd****wXyZ`), whose ends are the key's own. The message, which
 * the caller reads, also loses the channel's host (a self-hosted vendor's internal name, which its errors may repeat),
 * and names the `model` as the caller asked for it where the vendor named the channel's `model_map` name for it
 * ("The model `upstream-x` does not exist": the caller never sent that name, and the mapping is the operator's).
 */
export function withoutSecrets(err: GatewayError, ch: Pick<Channel, 'apiKey' | 'baseUrl'> & { modelMap?: Channel['modelMap'] }, model?: string): GatewayError {
	const mapped = model !== undefined && ch.modelMap && Object.hasOwn(ch.modelMap, model) ? ch.modelMap[model] : undefined
	const named = mapped && mapped !== model && err.message.includes(mapped) ? asAsked(err.message, mapped, model!) : err.message
	// A refusal of the caller's own URL (safe-fetch.ts, codes `url_…`) names the caller's host: hiding the channel's there
	// would answer a caller guessing internal names which one is the channel's.
	const message = err.code?.startsWith('url_') ? redactKey(named, ch.apiKey) : withoutHost(redactKey(named, ch.apiKey), ch.baseUrl)
	const detail = err.detail === undefined ? undefined : redactKey(err.detail, ch.apiKey)
	if (message === err.message && detail === err.detail) return err
	return copyError(err, { message, detail })
}

/**
 * `text` with the name `upstream` replaced by `asked` where it stands as a name of its own, not inside a longer one
 * (`gpt-4o-mini` in `gpt-4o-mini-search-preview` is another model; Gemini's `models/…` and a sentence's full stop are not).
 * @example asAsked("The model `x-1` (not x-1-pro)", 'x-1', 'fast') === "The model `fast` (not x-1-pro)"
 */
function asAsked(text: string, upstream: string, asked: string): string {
	const name = new RegExp(`(?<![\\w.:-])${upstream.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w:-]|\\.\\w)`, 'g')
	return text.replace(name, () => asked)
}

/**
 * Whether `text` (an upstream's frame, relayed as it came) names the channel's key, a masked key, a key-shaped string
 * or the channel's host: an error a vendor sends mid-stream is its own words, which the relay passes on unread.
 */
export const revealsChannel = (text: string, ch: Pick<Channel, 'apiKey' | 'baseUrl'>): boolean => withoutHost(redactKey(text, ch.apiKey), ch.baseUrl) !== text

/** `err` with some of its members replaced (all others kept, Anthropic's `details` and the overflow counts too). */
function copyError(err: GatewayError, change: { message?: string; detail?: string; retryAfter?: number }): GatewayError {
	return new GatewayError(err.kind, change.message ?? err.message, {
		code: err.code,
		status: err.status,
		retryable: err.retryable,
		retryAfter: change.retryAfter ?? err.retryAfter,
		param: err.param,
		detail: 'detail' in change ? change.detail : err.detail,
		details: err.details,
		overflow: err.overflow,
		cause: err.cause,
	})
}

/** A word with a run of asterisks in it: a vendor's masked key. */
const MASKED = /[\w-]*\*{3,}[\w-]*/g

/** @example redactKey('Incorrect API key provided: sk-proj-AbCd****wXyZ. You can…', 'k') === 'Incorrect API key provided: ***. You can…' */
export function redactKey(text: string, key: string): string {
	let out = key.length >= 8 && text.includes(key) ? text.split(key).join('***') : text
	if (out.includes('***')) out = out.replace(MASKED, '***')
	return redact(out)
}

/**
 * `text` with the channel's base URL, and its host wherever it stands alone, replaced by "the upstream".
 * @example withoutHost('POST http://llm.corp:8000/v1/chat failed', 'http://llm.corp:8000/v1') === 'POST the upstream/v1/chat failed'
 */
export function withoutHost(text: string, baseUrl: string): string {
	let host: string
	try {
		host = new URL(baseUrl).hostname
	} catch {
		return text
	}
	if (!host || !text.toLowerCase().includes(host.toLowerCase())) return text
	const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
	return text.replace(new RegExp(`(?:https?://)?${esc(host)}(?::\\d+)?`, 'gi'), 'the upstream')
}
