/**
 * Webhook URLs a client puts in a task submit (midjourney-proxy's `notifyHook`, the Suno API's `notify_hook`): the
 * upstream service POSTs the task to it, from its own network, which is often the gateway's (a midjourney-proxy in the
 * same Docker network or VPC). Unchecked, a caller could make it POST to a metadata endpoint or an internal admin
 * port. So such a URL must be http(s) and resolve only to public addresses, as URLs the gateway fetches itself
 * (lib/safe-fetch.ts; FETCH_ALLOW exempts hosts and CIDRs alike). The upstream resolves the name again later, so
 * this cannot pin the address; it refuses every spelling of a private one, and names that point at one now.
 * @module
 */
import { GatewayError } from '../core/errors'
import { checkHost, type FetchGuard } from './safe-fetch'

/** How long resolving a webhook's host may take before the submit is refused. */
const LOOKUP_MS = 5000

/**
 * Throws a 400 naming `field` when `raw` is a webhook URL the upstream must not be sent to; an absent or empty one
 * passes.
 * @example await checkCallbackUrl(body.notifyHook, { allow: [] }, 'notifyHook') // throws for 'http://169.254.169.254/'
 */
export async function checkCallbackUrl(raw: unknown, guard: FetchGuard, field: string): Promise<void> {
	if (raw === undefined || raw === null || raw === '') return
	const invalid = (why: string) => new GatewayError('invalid_request', `${field}: ${why}`, { code: 'invalid_url', param: field })
	if (typeof raw !== 'string') throw invalid('must be a URL string')
	let url: URL
	try {
		url = new URL(raw)
	} catch {
		throw invalid('not a valid URL')
	}
	if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid(`unsupported URL scheme ${url.protocol}`)
	try {
		await checkHost(url, guard, AbortSignal.timeout(LOOKUP_MS))
	} catch (e) {
		if (!(e instanceof GatewayError)) throw e
		throw new GatewayError(e.kind, `${field}: ${e.message}`, { code: e.code, param: field })
	}
}
