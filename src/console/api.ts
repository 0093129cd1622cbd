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
		/** What is wrong with that field, without its name (`at least 3 characters`), for a form that names it itself. */
		readonly detail?: string,
	) {
		super(message)
	}
}

let csrfToken: string | null = null
let onSignedOut: () => void = () => {}
let onSessionChanged: () => void = () => {}

export const setCsrfToken = (t: string | null) => {
	csrfToken = t
}

/** Called when a request finds the session gone (expired, or signed out elsewhere). */
export const setSignedOutHandler = (fn: () => void) => {
	onSignedOut = fn
}

/**
 * Called when a change is refused for its CSRF token: the cookie is another session's (another tab signed out and in
 * again, maybe as someone else), so the page must catch up with it rather than go on as the user it shows.
 */
export const setSessionChangedHandler = (fn: () => void) => {
	onSessionChanged = fn
}

/** What a change refused for a stale CSRF token says (the page has caught up with the session meanwhile). */
export const SESSION_CHANGED = 'The sign-in changed in another tab, and this page has caught up with it. Try again.'

const FALLBACK: Record<number, string> = {
	401: 'Your session has ended. Sign in again.',
	403: 'You are not allowed to do that.',
	404: 'Not found. It may have been deleted.',
	409: 'That conflicts with something that already exists.',
	413: 'The request is too large.',
	429: 'Too many requests. Wait a moment and try again.',
}

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)

/**
 * A refused field's problem in words, from the server's message about it: the schema's own phrases (TypeBox's
 * `Expected string length greater or equal to 3`, …) said as a form would, anything else kept. Undefined when the
 * message does not start with the field (`Invalid body: "username" …`, `spend_limit: …`).
 * @example fieldDetail('Invalid body: "username" Expected string length greater or equal to 3', 'username') === 'at least 3 characters'
 */
export function fieldDetail(message: string, param: string): string | undefined {
	const quoted = param.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
	const m = new RegExp(`^(?:invalid (?:body|query|params): )?"?${quoted}"?:? +(.+)$`, 'is').exec(message)
	if (!m) return undefined
	const detail = m[1]!.trim()
	const length = /^Expected string length (greater|less) or equal to (\d+)$/.exec(detail)
	if (length) return length[1] === 'less' ? `at most ${length[2]} characters` : length[2] === '1' ? 'required' : `at least ${length[2]} characters`
	const bound = /^Expected (?:integer|number) to be (greater|less) or equal to (-?\d+(?:\.\d+)?)$/.exec(detail)
	if (bound) return `${bound[1] === 'less' ? 'at most' : 'at least'} ${Number(bound[2]).toLocaleString('en-US')}`
	if (/^Expected integer$/.test(detail)) return 'a whole number'
	if (/^Expected (?:number|union value)$/.test(detail)) return 'a number'
	const unknown = /^Unexpected property(?:: (did you mean .*))?$/.exec(detail)
	if (unknown) return unknown[1] ? `not a known name (${unknown[1]})` : 'not a known name'
	return detail.replace(/^does not fit: /, '')
}

/** `spend_limit` → `Spend limit`, `settings.timeoutz` → `Settings: timeoutz`: the API's field name as a label. */
function fieldLabel(param: string): string {
	const [top, ...inner] = param.split('.')
	const label = capital(top!.replace(/_+/g, ' ').trim())
	return inner.length ? `${label}: ${inner.join('.')}` : label
}

/**
 * A readable sentence for a failed call: the server's own message when it sent one, led by the refused field's name
 * in words (`Username: at least 3 characters`, not `Invalid body: "username" Expected string length …`).
 */
export function errorMessage(status: number, body: unknown): string {
	const err = (body as { error?: { message?: unknown; param?: unknown } } | null)?.error
	if (err && typeof err.message === 'string' && err.message.trim()) {
		const m = err.message.trim()
		const detail = typeof err.param === 'string' && err.param ? fieldDetail(m, err.param) : undefined
		return detail ? `${fieldLabel(err.param as string)}: ${detail}` : capital(m)
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
		const err = (data as { error?: { code?: string | null; param?: string | null; message?: unknown } } | null)?.error
		if (res.status === 401 && !path.startsWith('/api/session')) onSignedOut()
		if (res.status === 403 && err?.code === 'csrf_failed') {
			onSessionChanged()
			throw new ApiError(SESSION_CHANGED, res.status, err.code)
		}
		const detail = err?.param && typeof err.message === 'string' ? fieldDetail(err.message.trim(), err.param) : undefined
		throw new ApiError(errorMessage(res.status, data), res.status, err?.code ?? undefined, err?.param ?? undefined, detail)
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
