/**
 * The calls of an embeddings request past its first batch (Gemini's 100 a call, Vertex's 250 or one): sent once the
 * first succeeded, at most {@link BATCH_CONCURRENCY} at a time, so a channel that refuses (bad key, 429, 5xx) costs one
 * call, not twenty, before the relay fails over, and one request does not burst a channel's rate limit. Answers come
 * back in batch order; the first failure cancels the calls in flight and is thrown. The batches answered before it
 * were done (and billed) upstream all the same: {@link Spent} keeps their tokens, so a request that fails or is
 * abandoned midway is charged for them (WIRE-NOTES #10), rather than making hundreds of calls for free.
 * @module
 */
import { GatewayError } from '../../core/errors'
import type { Via } from '../../providers/adapter'
import { upstreamError } from '../../providers/upstream-error'
import { bodyTimeout, channelTimeouts, fetchUpstream } from '../../relay/upstream-fetch'
import type { Channel } from '../../routing/catalog'

/** Batches in flight at once for one client request (after the first). */
export const BATCH_CONCURRENCY = 4

const malformed = () => new GatewayError('upstream', 'upstream sent a malformed embeddings response', { retryable: true, code: 'upstream_malformed' })

/**
 * The input tokens of one request's batches that an upstream answered, over all the channels it tried: what the
 * upstreams bill however the request ends. Charged when it fails (modules/embeddings, passthrough/relay.ts `spent`);
 * an answered request is charged from its answer alone.
 * @example const spent = new Spent(); spent.add(undefined, () => countText('hi')); spent.tokens === 1
 */
export class Spent {
	tokens = 0
	/** Some batch's tokens were counted here, its answer giving none. */
	estimated = false

	/** Adds one answered batch: the upstream's count, else `local()`. */
	add(counted: number | undefined, local: () => number): void {
		if (counted !== undefined) this.tokens += counted
		else {
			this.tokens += local()
			this.estimated = true
		}
	}
}

/**
 * `send` for each of `batches`, at most {@link BATCH_CONCURRENCY} at a time, its answers in order. The first failure
 * aborts the signal the others were given and is thrown (a GatewayError, retryable as the upstream's status says);
 * `answered` hears of each batch that succeeded, so the caller knows what was done before it.
 */
export async function sendInOrder<B, T>(batches: B[], signal: AbortSignal, send: (batch: B, signal: AbortSignal) => Promise<T>, answered?: (batch: B, answer: T) => void): Promise<T[]> {
	const out: T[] = new Array(batches.length)
	const stop = new AbortController()
	const both = AbortSignal.any([signal, stop.signal])
	let next = 0
	let failure: GatewayError | undefined
	async function worker() {
		while (!failure && next < batches.length) {
			const i = next++
			try {
				out[i] = await send(batches[i]!, both)
				answered?.(batches[i]!, out[i]!)
			} catch (e) {
				// The first failure is the one reported; the cancelled calls' errors are its echo.
				if (!failure) failure = e instanceof GatewayError ? e : new GatewayError('upstream', String(e), { retryable: true, code: 'upstream_error' })
				stop.abort()
			}
		}
	}
	await Promise.all(Array.from({ length: Math.min(BATCH_CONCURRENCY, batches.length) }, worker))
	if (failure) throw failure
	return out
}

/** One JSON call to the channel: its parsed answer, or the upstream's error (a malformed answer is retryable). */
export async function postJson(ch: Channel, url: string, headers: Record<string, string>, body: unknown, signal: AbortSignal, via?: Via): Promise<unknown> {
	const up = await fetchUpstream(url, { headers, body: JSON.stringify(body), ...via }, channelTimeouts(ch.settings, 'answer'), signal)
	const text = await up.text().catch((e) => {
		throw bodyTimeout(e) ?? malformed()
	})
	up.release()
	if (!up.res.ok) throw upstreamError(up.res.status, text, up.res.headers)
	try {
		return JSON.parse(text)
	} catch {
		throw malformed()
	}
}
