/**
 * The address a request came from, for the limits that count by address (console sign-in, ADMIN_KEY guesses). Behind
 * a reverse proxy every request arrives from the proxy, so those limits would lump all callers together and one
 * guesser could hold a username closed for everyone. When the connection's peer is a proxy the operator trusts
 * (TRUSTED_PROXIES: addresses or IPv4 CIDRs), the caller is read from X-Forwarded-For, right to left, skipping the
 * trusted hops: the entries left of the first untrusted one are whatever the client wrote, so they are never taken.
 * From any other peer the header is ignored (anyone can send it).
 * @module
 */
import { inCidr4 } from '../lib/safe-fetch'

type Ip = { requestIP(r: Request): { address: string } | null } | null | undefined

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/

/** `::ffff:10.0.0.1` (a dual-stack socket's IPv4 peer) as `10.0.0.1`; brackets and a zone dropped. */
const plain = (a: string): string => {
	const s = a.trim().replace(/^\[|\]$/g, '').replace(/%.*$/, '').toLowerCase()
	return s.startsWith('::ffff:') && IPV4.test(s.slice(7)) ? s.slice(7) : s
}

/** @example isTrusted('10.1.2.3', ['10.0.0.0/8']) === true; isTrusted('10.1.2.3', []) === false */
export function isTrusted(address: string, trusted: readonly string[]): boolean {
	const a = plain(address)
	return trusted.some((t) => (t.includes('/') ? IPV4.test(a) && inCidr4(a, t) : plain(t) === a))
}

/**
 * The caller's address: the peer's, or, from a trusted proxy, the nearest untrusted X-Forwarded-For entry ('local'
 * when the server cannot tell, as in `app.handle` tests).
 * @example callerAddress('10.0.0.5', 'a, 198.51.100.7, 10.0.0.9', ['10.0.0.0/8']) === '198.51.100.7'
 */
export function callerAddress(peer: string | undefined, forwardedFor: string | null, trusted: readonly string[]): string {
	if (!peer) return 'local'
	if (!forwardedFor || !isTrusted(peer, trusted)) return plain(peer)
	const hops = forwardedFor.split(',').map(plain).filter(Boolean)
	for (let i = hops.length - 1; i >= 0; i--) if (!isTrusted(hops[i]!, trusted)) return hops[i]!
	// Every hop trusted: the first one is the client's own side of the chain.
	return hops[0] ?? plain(peer)
}

/** Requests the gateway made anew from one the server received (request-guard.ts), which the server knows no peer of. */
const received = new WeakMap<Request, Request>()

/** Says that `made` comes from the same caller as `from`. */
export const sameCaller = (made: Request, from: Request): void => void received.set(made, received.get(from) ?? from)

/** `callerAddress` for an Elysia handler's `server` and `request`. */
export const callerOf = (server: unknown, request: Request, trusted: readonly string[]): string =>
	callerAddress((server as Ip)?.requestIP(received.get(request) ?? request)?.address, request.headers.get('x-forwarded-for'), trusted)
