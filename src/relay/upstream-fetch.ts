/**
 * One HTTP call to a vendor, with the timeouts a gateway needs: until the response headers (first byte) and idle
 * between body chunks (Bun's fetch `timeout`, https://bun.sh/reference/globals/BunFetchRequestInit/timeout), and
 * cancellation when the client goes away. Failures become GatewayErrors that say whether another channel may help.
 * @module
 */
import { GatewayError } from '../core/errors'

export type Timeouts = { firstByteMs: number; idleMs: number }

export const DEFAULT_TIMEOUTS: Timeouts = { firstByteMs: 120_000, idleMs: 300_000 }

export type UpstreamCall = {
	res: Response
	/** Releases the call (the relay is done with it) and stops watching the client. */
	abort(): void
	/**
	 * The body was read to its end: stops watching the client and aborts nothing, so the connection goes back to the
	 * pool (an abort before the body's end closes it).
	 */
	release(): void
	/**
	 * Runs `fn` when the client goes away before `abort()`, after the upstream call was aborted: the one listener on
	 * the client's signal serves the relay too (a second listener per request costs as much as the rest of the
	 * bookkeeping around it). Runs it at once when the client is already gone.
	 */
	onClientGone(fn: () => void): void
	/** The client went away (its request was aborted). */
	readonly clientGone: boolean
}

/**
 * The reason given when the relay is done with an upstream call (every call ends so, most after the body was read
 * whole): one shared value, because `abort()` without a reason builds a DOMException with a stack trace each time.
 */
const RELEASED = new GatewayError('api_error', 'upstream call released by the relay', { code: 'released' })

/** Per-channel overrides from `settings.timeouts` ({first_byte_ms, idle_ms}). */
export function channelTimeouts(settings: Record<string, unknown>, base = DEFAULT_TIMEOUTS): Timeouts {
	const t = (settings.timeouts ?? {}) as Record<string, unknown>
	const pick = (v: unknown, d: number) => (typeof v === 'number' && v > 0 ? v : d)
	return { firstByteMs: pick(t.first_byte_ms, base.firstByteMs), idleMs: pick(t.idle_ms, base.idleMs) }
}

export async function fetchUpstream(
	url: string,
	init: { method?: string; headers: Record<string, string>; body?: BodyInit },
	timeouts: Timeouts,
	clientSignal: AbortSignal,
): Promise<UpstreamCall> {
	const call = new Call(clientSignal)
	if (clientSignal.aborted) call.onClientAbort()
	else clientSignal.addEventListener('abort', call.onClientAbort, { once: true })
	const timer = setTimeout(firstByteTimeout, timeouts.firstByteMs, call)
	try {
		call.res = await fetch(url, {
			method: init.method ?? 'POST',
			headers: init.headers,
			body: init.body,
			signal: call.ctl.signal,
			timeout: timeouts.idleMs,
			redirect: 'manual',
		})
		return call
	} catch (e) {
		clientSignal.removeEventListener('abort', call.onClientAbort)
		if (call.timedOut) throw new GatewayError('timeout', `upstream did not answer within ${timeouts.firstByteMs} ms`, { retryable: true, code: 'upstream_timeout' })
		if (clientSignal.aborted) throw new GatewayError('api_error', 'client closed the request', { code: 'client_closed' })
		throw new GatewayError('upstream', `cannot reach upstream: ${(e as Error).message ?? e}`, { retryable: true, code: 'upstream_unreachable', cause: e })
	} finally {
		clearTimeout(timer)
	}
}

function firstByteTimeout(call: Call) {
	call.timedOut = true
	call.ctl.abort()
}

/** A class: one is made per upstream call, and its methods cost nothing per instance (only the listener does). */
class Call implements UpstreamCall {
	res!: Response
	readonly ctl = new AbortController()
	timedOut = false
	private released = false
	private gone: (() => void) | undefined = undefined

	constructor(private readonly clientSignal: AbortSignal) {}

	/** The listener on the client's signal. */
	readonly onClientAbort = () => {
		this.ctl.abort(new GatewayError('api_error', 'client closed the request'))
		this.gone?.()
	}

	abort() {
		this.release()
		this.ctl.abort(RELEASED)
	}

	release() {
		this.released = true
		this.clientSignal.removeEventListener('abort', this.onClientAbort)
	}

	onClientGone(fn: () => void) {
		if (this.released) return
		if (this.clientSignal.aborted) return fn()
		this.gone = fn
	}

	get clientGone() {
		return this.clientSignal.aborted
	}
}
