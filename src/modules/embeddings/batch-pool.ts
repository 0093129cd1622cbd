/**
 * The calls of an embeddings request past its first batch (Gemini's 100 a call, Vertex's 250 or one): sent once the
 * first succeeded, at most {@link BATCH_CONCURRENCY} at a time, so a channel that refuses (bad key, 429, 5xx) costs one
 * call, not twenty, before the relay fails over, and one request does not burst a channel's rate limit. Answers come
 * back in batch order; the first failure cancels the calls in flight and is thrown.
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
 * `send` for each of `batches`, at most {@link BATCH_CONCURRENCY} at a time, its answers in order. The first failure
 * aborts the signal the others were given and is thrown (a GatewayError, retryable as the upstream's status says).
 */
export async function sendInOrder<B, T>(batches: B[], signal: AbortSignal, send: (batch: B, signal: AbortSignal) => Promise<T>): Promise<T[]> {
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
	const up = await fetchUpstream(url, { headers, body: JSON.stringify(body), ...via }, channelTimeouts(ch.settings), signal)
	const text = await up.res.text().catch((e) => {
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
