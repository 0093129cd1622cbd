/**
 * Fetching a URL a client gave us (image URLs, MCP servers) without letting the client reach our own network:
 * the host is resolved first and every address must be public (no loopback, private, link-local, CGNAT,
 * multicast, nor an IPv6 form that embeds a private IPv4 address), unless allow-listed (FETCH_ALLOW: hosts or CIDRs).
 * Requests connect to the checked address (https too: the name goes as TLS server name and Host, so the certificate
 * is still verified for it), so a second DNS answer cannot swap in another (DNS rebinding); redirects are followed
 * by hand and each hop is checked again. Size and time capped (the time cap covers the DNS lookup and the whole body).
 * (WIRE-NOTES #16: one-api#2388, new-api#1636.)
 * @module
 */
import { GatewayError } from '../core/errors'

export type FetchGuard = { allow: string[] }

const v4ToInt = (ip: string) => ip.split('.').reduce((n, o) => (n << 8) + Number(o), 0) >>> 0

export function inCidr4(ip: string, cidr: string): boolean {
	const [base, bits] = cidr.split('/')
	const mask = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0
	return (v4ToInt(ip) & mask) === (v4ToInt(base!) & mask)
}

const PRIVATE_V4 = ['0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24', '192.168.0.0/16', '198.18.0.0/15', '224.0.0.0/4', '240.0.0.0/4']

/** The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail allowed), or undefined when it is not one. */
function v6Groups(ip: string): number[] | undefined {
	let s = ip
	const tail = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(s)
	if (tail) {
		const n = v4ToInt(tail[2]!)
		s = `${tail[1]}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`
	}
	const halves = s.split('::')
	if (halves.length > 2) return undefined
	const part = (h: string) => (h === '' ? [] : h.split(':'))
	const head = part(halves[0]!)
	const rest = halves.length === 2 ? part(halves[1]!) : []
	const fill = 8 - head.length - rest.length
	if (halves.length === 2 ? fill < 0 : fill !== 0) return undefined
	const groups = [...head, ...Array<string>(fill).fill('0'), ...rest]
	if (!groups.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return undefined
	return groups.map((g) => parseInt(g, 16))
}

const v4Of = (hi: number, lo: number) => [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.')

/**
 * IPv6 forms that carry an IPv4 address a router or the kernel may turn back into IPv4: mapped (::ffff:0:0/96),
 * translated (::ffff:0:0:0/96), compatible (::/96), NAT64 (64:ff9b::/96, RFC 6052) and 6to4 (2002::/16, RFC 3056).
 * Each is as private as the IPv4 address inside.
 */
function embeddedV4(g: number[]): string | undefined {
	const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0)
	if (zeros(0, 5) && (g[5] === 0xffff || g[5] === 0)) return v4Of(g[6]!, g[7]!)
	if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return v4Of(g[6]!, g[7]!)
	if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return v4Of(g[6]!, g[7]!)
	if (g[0] === 0x2002) return v4Of(g[1]!, g[2]!)
	return undefined
}

/** @example isPrivateAddress('169.254.169.254') === true; isPrivateAddress('::ffff:0:7f00:1') === true */
export function isPrivateAddress(ip: string): boolean {
	if (/^\d+\.\d+\.\d+\.\d+$/.test(ip)) return PRIVATE_V4.some((c) => inCidr4(ip, c))
	const g = v6Groups(ip.toLowerCase().replace(/^\[|\]$/g, '').replace(/%.*$/, ''))
	// Not an address we can read: refuse rather than guess.
	if (!g) return true
	if (g.slice(0, 7).every((x) => x === 0) && g[7]! <= 1) return true // :: and ::1
	const v4 = embeddedV4(g)
	if (v4 !== undefined) return v4 === '0.0.0.0' || isPrivateAddress(v4)
	const top = g[0]!
	// ULA fc00::/7, link-local fe80::/10, site-local fec0::/10 (deprecated, still routed on some networks), multicast
	// ff00::/8, NAT64 local-use 64:ff9b:1::/48 (RFC 8215), Teredo 2001::/32 (tunnels to an IPv4 address it hides).
	return (top & 0xfe00) === 0xfc00 || (top & 0xffc0) === 0xfe80 || (top & 0xffc0) === 0xfec0 || (top & 0xff00) === 0xff00 || (top === 0x64 && g[1] === 0xff9b && g[2] === 1) || (top === 0x2001 && g[1] === 0)
}

function allowed(host: string, addr: string, guard: FetchGuard): boolean {
	return guard.allow.some((a) => a === host || a === addr || (a.includes('/') && /^\d+\.\d+\.\d+\.\d+$/.test(addr) && inCidr4(addr, a)))
}

/** Resolves the host and checks every address against the guard; returns the address to connect to. */
export async function checkHost(url: URL, guard: FetchGuard, signal?: AbortSignal): Promise<string> {
	const host = url.hostname.replace(/^\[|\]$/g, '')
	let addrs: string[]
	if (/^[\d.]+$/.test(host) || host.includes(':')) addrs = [host]
	else {
		try {
			// A resolver that never answers must not outlast the fetch's time cap.
			addrs = (await (signal ? Promise.race([Bun.dns.lookup(host, {}), aborted(signal)]) : Bun.dns.lookup(host, {}))).map((a) => a.address)
		} catch (e) {
			if (signal?.aborted) throw timedOut(url, e)
			throw new GatewayError('invalid_request', `cannot resolve host ${host}`, { code: 'url_unresolvable' })
		}
	}
	for (const a of addrs)
		if (isPrivateAddress(a) && !allowed(host, a, guard))
			throw new GatewayError('invalid_request', `refusing to fetch ${url.hostname}: it resolves to a private or loopback address`, { code: 'url_blocked' })
	// All were checked; an IPv4 one first, since the request is pinned to it and many hosts have no IPv6 route.
	return addrs.find((a) => /^\d+\.\d+\.\d+\.\d+$/.test(a)) ?? addrs[0]!
}

/**
 * The request for `url` sent to `addr`, the address checkHost approved: the URL's host becomes the address, the name
 * stays in Host and, for https, in the TLS server name (SNI and the certificate check; Bun pools connections per
 * server name, so two names on one address never share one).
 */
export function pinned(url: URL, addr: string, init: BunFetchRequestInit = {}): { target: URL; init: BunFetchRequestInit } {
	const target = new URL(url)
	const host = url.hostname.replace(/^\[|\]$/g, '')
	if (host === addr) return { target, init }
	target.hostname = addr.includes(':') ? `[${addr}]` : addr
	const headers = new Headers(init.headers)
	headers.set('host', url.host)
	return { target, init: url.protocol === 'https:' ? { ...init, headers, tls: { ...init.tls, serverName: host } } : { ...init, headers } }
}

const aborted = (signal: AbortSignal) => new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }))

const timedOut = (url: URL, e: unknown) =>
	new GatewayError('invalid_request', `fetching ${url.hostname} took too long`, { code: 'url_fetch_failed', cause: e })

/**
 * Bytes several fetches of one request may take together: each chunk read is taken from `left`, and the fetch that
 * takes it below zero fails with `tooLarge()`.
 */
export type ByteBudget = { left: number; tooLarge: () => GatewayError }

export type SafeFetchOptions = {
	maxBytes: number
	timeoutMs: number
	accept?: (contentType: string) => boolean
	init?: RequestInit
	/** Shared by the fetches of one request (see ByteBudget). */
	budget?: ByteBudget
	/** Ends the fetch early, e.g. when another fetch of the same request failed; it then fails with `signal.reason`. */
	signal?: AbortSignal
}

/**
 * GET (or `init`) a client-supplied URL under the guard; returns the body bytes and content type. Every way it can
 * fail (refused, unreachable, slow, reset mid-body, too big, a bad redirect) is a GatewayError the caller answers
 * 400 with: the URL is the client's, so is the fault; a raw network error would become a 500.
 */
export async function safeFetch(raw: string, guard: FetchGuard, opts: SafeFetchOptions): Promise<{ bytes: Uint8Array; contentType: string }> {
	let url: URL
	try {
		url = new URL(raw)
	} catch {
		throw new GatewayError('invalid_request', 'not a valid URL', { code: 'invalid_url' })
	}
	const signal = opts.signal ? AbortSignal.any([opts.signal, AbortSignal.timeout(opts.timeoutMs)]) : AbortSignal.timeout(opts.timeoutMs)
	const failure = (e: unknown) => (opts.signal?.aborted && opts.signal.reason instanceof GatewayError ? opts.signal.reason : timedOut(url, e))
	if (opts.signal?.aborted) throw failure(undefined)
	for (let hop = 0; hop < 4; hop++) {
		if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new GatewayError('invalid_request', `unsupported URL scheme ${url.protocol}`, { code: 'invalid_url' })
		const { target, init } = pinned(url, await checkHost(url, guard, signal), opts.init)
		let res: Response
		try {
			res = await fetch(target, { ...init, redirect: 'manual', signal })
		} catch (e) {
			if (signal.aborted) throw failure(e)
			throw new GatewayError('invalid_request', `cannot fetch ${url.hostname}: ${(e as Error).message}`, { code: 'url_fetch_failed' })
		}
		const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null
		if (location) {
			void res.body?.cancel().catch(() => {})
			try {
				url = new URL(location, url)
			} catch {
				throw new GatewayError('invalid_request', `${url.hostname} redirected to an invalid URL`, { code: 'url_fetch_failed' })
			}
			continue
		}
		const refuse = (e: GatewayError): never => {
			void res.body?.cancel().catch(() => {})
			throw e
		}
		if (!res.ok) refuse(new GatewayError('invalid_request', `fetching ${url.hostname} returned HTTP ${res.status}`, { code: 'url_fetch_failed' }))
		const contentType = (res.headers.get('content-type') ?? '').split(';')[0]!.trim()
		if (opts.accept && !opts.accept(contentType)) refuse(new GatewayError('invalid_request', `unexpected content type ${contentType || '(none)'} at ${url.hostname}`, { code: 'url_bad_type' }))
		const tooLarge = () => new GatewayError('invalid_request', `content at ${url.hostname} exceeds ${opts.maxBytes} bytes`, { code: 'url_too_large' })
		const length = Number(res.headers.get('content-length') ?? 0)
		if (length > opts.maxBytes) refuse(tooLarge())
		if (opts.budget && length > opts.budget.left) refuse(opts.budget.tooLarge())
		return { bytes: await readCapped(res, opts.maxBytes, tooLarge, url, signal, failure, opts.budget), contentType }
	}
	throw new GatewayError('invalid_request', 'too many redirects', { code: 'url_fetch_failed' })
}

/** The body, failing past `max` bytes; a body cut or stalled past the deadline is the URL's fault too (400). */
async function readCapped(
	res: Response,
	max: number,
	tooLarge: () => GatewayError,
	url: URL,
	signal: AbortSignal,
	failure: (e: unknown) => GatewayError,
	budget?: ByteBudget,
): Promise<Uint8Array> {
	if (!res.body) return new Uint8Array()
	const reader = res.body.getReader()
	const chunks: Uint8Array[] = []
	let size = 0
	try {
		for (;;) {
			const { done, value } = await reader.read()
			if (done) return Buffer.concat(chunks)
			size += value.length
			if (size > max) throw tooLarge()
			if (budget && (budget.left -= value.length) < 0) throw budget.tooLarge()
			chunks.push(value)
		}
	} catch (e) {
		void reader.cancel().catch(() => {})
		if (e instanceof GatewayError) throw e
		if (signal.aborted) throw failure(e)
		throw new GatewayError('invalid_request', `the download from ${url.hostname} failed: ${(e as Error).message}`, { code: 'url_fetch_failed' })
	}
}
