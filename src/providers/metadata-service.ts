/**
 * Requests to the cloud a gateway runs on for its own credentials (a channel key `ambient`): AWS's instance metadata
 * service and container credentials endpoint (aws/ambient.ts), Google's metadata server (google/metadata.ts), Azure's
 * managed identity endpoints (azure-managed-identity.ts). Their addresses are link-local or loopback
 * (169.254.169.254, 169.254.170.2, metadata.google.internal), which the SSRF guard refuses for client-given URLs: these
 * are not client-given. Each comes from a constant or the environment the operator started the gateway in, never
 * from a request or a channel setting, so no caller can point them anywhere.
 * Off a cloud these addresses do not answer at all: a short timeout turns that into a failure of the attempt in a second
 * or two, not a hang. It is not taken for a refused key: the call fails over and the channel cools down (its health
 * saying "no ambient credentials: … unreachable"), as for a token endpoint out of reach (token-endpoint.ts), since on
 * the cloud a metadata service that missed one answer gives credentials a moment later, and disabling the channel
 * would wait for an operator. A service that answers that there are none (no role, an unknown identity) is the
 * channel's failure: `upstream_auth`, the channel disabled with why.
 * @module
 */
import { GatewayError } from '../core/errors'

/** A metadata service answers in milliseconds where it exists (the AWS SDKs wait 1 s, google-auth-library 3 s). */
export const METADATA_TIMEOUT_MS = 1_500

/** The channel's key is `ambient`: credentials come from where the gateway runs. */
export const AMBIENT_KEY = 'ambient'

export const isAmbient = (key: string) => key === AMBIENT_KEY

/**
 * The gateway has no credentials of its environment to use: the channel's failure, as a refused key is (routing fails
 * over and disables the channel with `detail`, which starts "no ambient credentials:").
 */
export const noAmbient = (why: string) =>
	new GatewayError('upstream', "the gateway has no credentials for this model's upstream provider", { retryable: true, code: 'upstream_auth', detail: `no ambient credentials: ${why}` })

/**
 * The metadata service's answer, its body read; a service that does not answer (refused, unresolved, timed out) throws
 * `upstream_unreachable` naming `service` and the address. No redirect is followed: a metadata service sends none.
 * @example await metadataRequest('aws instance metadata', 'http://169.254.169.254/latest/api/token', { method: 'PUT', headers: { … } })
 */
export async function metadataRequest(service: string, url: string, init: { method?: string; headers: Record<string, string> }): Promise<{ res: Response; text: string }> {
	try {
		const res = await fetch(url, { method: init.method ?? 'GET', headers: init.headers, signal: AbortSignal.timeout(METADATA_TIMEOUT_MS), redirect: 'manual' })
		return { res, text: await res.text() }
	} catch (e) {
		const why = e instanceof DOMException && e.name === 'TimeoutError' ? `no answer within ${METADATA_TIMEOUT_MS} ms` : ((e as Error).message ?? String(e))
		throw new GatewayError('upstream', 'cannot reach the upstream provider', {
			retryable: true,
			code: 'upstream_unreachable',
			detail: `no ambient credentials: ${service} at ${new URL(url).origin} is unreachable (${why}): is the gateway running on that cloud?`,
		})
	}
}

/** A metadata service that answered but failed (5xx, 429): retryable, the channel left enabled (its credentials may be fine a moment later). */
export const metadataFailed = (service: string, status: number) =>
	new GatewayError('upstream', `the upstream provider failed (HTTP ${status})`, { retryable: true, code: 'upstream_error', detail: `${service} answered HTTP ${status}` })

/** Seconds from now until an absolute time (ISO 8601, or epoch seconds), at least 0; undefined when unreadable. */
export function secondsUntil(at: unknown): number | undefined {
	const ms = typeof at === 'number' || (typeof at === 'string' && /^\d+$/.test(at)) ? Number(at) * 1000 : typeof at === 'string' ? Date.parse(at) : NaN
	return Number.isFinite(ms) ? Math.max(0, (ms - Date.now()) / 1000) : undefined
}
