/**
 * Fetching a URL a client gave us (image URLs, MCP servers) without letting the client reach our own network:
 * the host is resolved first and every address must be public (no loopback, private, link-local, CGNAT,
 * multicast or IPv4-mapped private IPv6), unless allow-listed (FETCH_ALLOW: hosts or CIDRs). Plain-http requests are
 * pinned to the checked address; redirects are followed by hand and each hop is checked again. Size and time capped.
 * (WIRE-NOTES #16: one-api#2388, new-api#1636.)
 * @module
 */
import { GatewayError } from '../core/errors'

export type FetchGuard = { allow: string[] }

const v4ToInt = (ip: string) => ip.split('.').reduce((n, o) => (n << 8) + Number(o), 0) >>> 0

function inCidr4(ip: string, cidr: string): boolean {
	const [base, bits] = cidr.split('/')
	const mask = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0
	return (v4ToInt(ip) & mask) === (v4ToInt(base!) & mask)
}

const PRIVATE_V4 = ['0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24', '192.168.0.0/16', '198.18.0.0/15', '224.0.0.0/4', '240.0.0.0/4']

/** @example isPrivateAddress('169.254.169.254') === true */
export function isPrivateAddress(ip: string): boolean {
	if (/^\d+\.\d+\.\d+\.\d+$/.test(ip)) return PRIVATE_V4.some((c) => inCidr4(ip, c))
	const v6 = ip.toLowerCase().replace(/^\[|\]$/g, '')
	const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(v6)
	if (mapped) return isPrivateAddress(mapped[1]!)
	// `URL` writes IPv4-mapped addresses in hex: [::ffff:c0a8:101] is 192.168.1.1.
	const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(v6)
	if (hex) {
		const [hi, lo] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)]
		return isPrivateAddress([hi >> 8, hi & 255, lo >> 8, lo & 255].join('.'))
	}
	return v6 === '::' || v6 === '::1' || /^f[cd]/.test(v6) || /^fe[89ab]/.test(v6) || /^ff/.test(v6)
}

function allowed(host: string, addr: string, guard: FetchGuard): boolean {
	return guard.allow.some((a) => a === host || a === addr || (a.includes('/') && /^\d+\.\d+\.\d+\.\d+$/.test(addr) && inCidr4(addr, a)))
}

/** Resolves the host and checks every address against the guard; returns the address to connect to. */
export async function checkHost(url: URL, guard: FetchGuard): Promise<string> {
	const host = url.hostname.replace(/^\[|\]$/g, '')
	let addrs: string[]
	if (/^[\d.]+$/.test(host) || host.includes(':')) addrs = [host]
	else {
		try {
			addrs = (await Bun.dns.lookup(host, {})).map((a) => a.address)
		} catch {
			throw new GatewayError('invalid_request', `cannot resolve host ${host}`, { code: 'url_unresolvable' })
		}
	}
	for (const a of addrs)
		if (isPrivateAddress(a) && !allowed(host, a, guard))
			throw new GatewayError('invalid_request', `refusing to fetch ${url.hostname}: it resolves to a private or loopback address`, { code: 'url_blocked' })
	return addrs[0]!
}

export type SafeFetchOptions = { maxBytes: number; timeoutMs: number; accept?: (contentType: string) => boolean; init?: RequestInit }

/** GET (or `init`) a client-supplied URL under the guard; returns the body bytes and content type. */
export async function safeFetch(raw: string, guard: FetchGuard, opts: SafeFetchOptions): Promise<{ bytes: Uint8Array; contentType: string }> {
	let url: URL
	try {
		url = new URL(raw)
	} catch {
		throw new GatewayError('invalid_request', 'not a valid URL', { code: 'invalid_url' })
	}
	const signal = AbortSignal.timeout(opts.timeoutMs)
	for (let hop = 0; hop < 4; hop++) {
		if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new GatewayError('invalid_request', `unsupported URL scheme ${url.protocol}`, { code: 'invalid_url' })
		const addr = await checkHost(url, guard)
		// Plain http: connect to the address we checked (no second DNS answer can swap it). https keeps the name for TLS.
		const target = url.protocol === 'http:' ? new URL(url) : url
		const headers = new Headers(opts.init?.headers)
		if (url.protocol === 'http:') {
			target.hostname = addr.includes(':') ? `[${addr}]` : addr
			headers.set('host', url.host)
		}
		let res: Response
		try {
			res = await fetch(target, { ...opts.init, headers, redirect: 'manual', signal })
		} catch (e) {
			throw new GatewayError('invalid_request', `cannot fetch ${url.hostname}: ${(e as Error).message}`, { code: 'url_fetch_failed' })
		}
		if (res.status >= 300 && res.status < 400 && res.headers.get('location')) {
			url = new URL(res.headers.get('location')!, url)
			continue
		}
		if (!res.ok) throw new GatewayError('invalid_request', `fetching ${url.hostname} returned HTTP ${res.status}`, { code: 'url_fetch_failed' })
		const contentType = (res.headers.get('content-type') ?? '').split(';')[0]!.trim()
		if (opts.accept && !opts.accept(contentType)) throw new GatewayError('invalid_request', `unexpected content type ${contentType || '(none)'} at ${url.hostname}`, { code: 'url_bad_type' })
		const declared = Number(res.headers.get('content-length') ?? 0)
		if (declared > opts.maxBytes) throw new GatewayError('invalid_request', `content at ${url.hostname} exceeds ${opts.maxBytes} bytes`, { code: 'url_too_large' })
		const chunks: Uint8Array[] = []
		let size = 0
		for await (const c of res.body as unknown as AsyncIterable<Uint8Array>) {
			size += c.length
			if (size > opts.maxBytes) throw new GatewayError('invalid_request', `content at ${url.hostname} exceeds ${opts.maxBytes} bytes`, { code: 'url_too_large' })
			chunks.push(c)
		}
		return { bytes: Buffer.concat(chunks), contentType }
	}
	throw new GatewayError('invalid_request', 'too many redirects', { code: 'url_fetch_failed' })
}
