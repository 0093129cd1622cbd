/**
 * The console's only way to the server: the documented management API, authenticated by the session cookie
 * (sent by the browser, invisible to scripts) plus the CSRF token on every state-changing call.
 * @module
 */

export class ApiError extends Error {
	constructor(
		message: string,
		readonly status: number,
		readonly code?: string,
		/** The request field the server refused (its 400's `param`), for a form to name in its own words. */
		readonly param?: string,
	) {
		super(message)
	}
}

let csrfToken: string | null = null
let onSignedOut: () => void = () => {}

export const setCsrfToken = (t: string | null) => {
	csrfToken = t
}

/** Called when a request finds the session gone (expired, or signed out elsewhere). */
export const setSignedOutHandler = (fn: () => void) => {
	onSignedOut = fn
}

const FALLBACK: Record<number, string> = {
	401: 'Your session has ended. Sign in again.',
	403: 'You are not allowed to do that.',
	404: 'Not found. It may have been deleted.',
	409: 'That conflicts with something that already exists.',
	413: 'The request is too large.',
	429: 'Too many requests. Wait a moment and try again.',
}

/** A readable sentence for a failed call: the server's own message when it sent one. */
export function errorMessage(status: number, body: unknown): string {
	const err = (body as { error?: { message?: unknown } } | null)?.error
	if (err && typeof err.message === 'string' && err.message.trim()) {
		const m = err.message.trim()
		return m.charAt(0).toUpperCase() + m.slice(1)
	}
	if (FALLBACK[status]) return FALLBACK[status]
	if (status >= 500) return `The server had a problem (HTTP ${status}). Try again in a moment.`
	return `The request failed (HTTP ${status}).`
}

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'

export async function api<T>(method: Method, path: string, body?: unknown): Promise<T> {
	const headers: Record<string, string> = { accept: 'application/json' }
	if (body !== undefined) headers['content-type'] = 'application/json'
	if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken
	let res: Response
	try {
		// Never from the HTTP cache: /api/pricing is cacheable for public readers (max-age=60), but an administrator who
		// just saved a price must see it on the Models page at once.
		res = await fetch(path, { method, headers, credentials: 'same-origin', cache: 'no-store', body: body === undefined ? undefined : JSON.stringify(body) })
	} catch {
		throw new ApiError('Cannot reach the server. Check the connection and try again.', 0)
	}
	const text = await res.text()
	let data: unknown = null
	try {
		data = text ? JSON.parse(text) : null
	} catch {}
	if (!res.ok) {
		const err = (data as { error?: { code?: string | null; param?: string | null } } | null)?.error
		if (res.status === 401 && !path.startsWith('/api/session')) onSignedOut()
		throw new ApiError(errorMessage(res.status, data), res.status, err?.code ?? undefined, err?.param ?? undefined)
	}
	return data as T
}

/** `?a=1&b=x` from the defined entries. */
export function query(params: Record<string, string | number | undefined | null>): string {
	const q = new URLSearchParams()
	for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v))
	const s = q.toString()
	return s ? `?${s}` : ''
}

export const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e))
