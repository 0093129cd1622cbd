/**
 * The `fetch` the MCP SDK's transport uses: the same outbound guard as image URLs (lib/safe-fetch.ts, WIRE-NOTES
 * #16): the host is resolved and every address must be public unless allow-listed (FETCH_ALLOW: hosts, addresses or
 * IPv4 CIDRs); the request connects to the address that was checked (https with the name as TLS server name); redirects are never followed by fetch itself
 * (the SDK follows same-origin ones by calling this function again, so each hop is checked); every response body is
 * capped. The SDK does its own HTTP, so it gets this function rather than `safeFetch`, which buffers whole bodies.
 * @module
 */
import { GatewayError } from '../core/errors'
import { checkHost, type FetchGuard, pinned } from '../lib/safe-fetch'

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>

/**
 * Resolves the host and checks every address (lib/safe-fetch.ts); returns the one to connect to. The lookup ends with
 * `signal` (the call's own), so a resolver that never answers does not hold the session past it.
 */
export async function checkMcpHost(url: URL, guard: FetchGuard, signal?: AbortSignal | null): Promise<string> {
	if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new GatewayError('invalid_request', `unsupported URL scheme ${url.protocol}`, { code: 'invalid_url' })
	return checkHost(url, guard, signal ?? undefined)
}

/**
 * The body of `res`, failing once more than `max` bytes came through. A body that fails while the SDK reads it
 * (an SSE stream) does not fail the request waiting for it, so `onTooLarge` lets the session do that.
 */
function capped(res: Response, max: number, host: string, onTooLarge: ((e: GatewayError) => void) | undefined): Response {
	const tooLarge = () => new GatewayError('payload_too_large', `the response of MCP server ${host} exceeds ${max} bytes`, { code: 'mcp_response_too_large' })
	if (Number(res.headers.get('content-length') ?? 0) > max) {
		void res.body?.cancel()
		throw tooLarge()
	}
	if (!res.body) return res
	let size = 0
	const body = res.body.pipeThrough(
		new TransformStream<Uint8Array, Uint8Array>({
			transform(chunk, ctl) {
				size += chunk.byteLength
				if (size <= max) return ctl.enqueue(chunk)
				const e = tooLarge()
				onTooLarge?.(e)
				ctl.error(e)
			},
		}),
	)
	return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers })
}

/**
 * A fetch for one MCP server connection, under the guard and the response cap.
 * @param ownerOf asked at each fetch for whom to tell when this response's body goes over `maxBytes` while it is read
 * @example new StreamableHTTPClientTransport(url, { fetch: guardedFetch({ allow: [] }, 1 << 20) })
 */
export function guardedFetch(guard: FetchGuard, maxBytes: number, ownerOf: () => ((e: GatewayError) => void) | undefined = () => undefined): FetchLike {
	return async (input, init) => {
		const onTooLarge = ownerOf()
		const url = new URL(String(input))
		const to = pinned(url, await checkMcpHost(url, guard, init?.signal), init)
		const res = await fetch(to.target, { ...to.init, redirect: 'manual' })
		return capped(res, maxBytes, url.hostname, onTooLarge)
	}
}
