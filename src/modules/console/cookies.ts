/**
 * The session cookie. HttpOnly keeps it from scripts; SameSite=Strict keeps other sites' pages from sending it;
 * Secure is added when the request arrived over https (directly or through a proxy that says so).
 * @module
 */

export const SESSION_COOKIE = 'sb_session'

/**
 * Reads one cookie from a Cookie header.
 * @example readCookie('a=1; sb_session=xyz', 'sb_session') === 'xyz'
 */
export function readCookie(header: string | null, name: string): string | undefined {
	if (!header) return undefined
	for (const part of header.split(';')) {
		const eq = part.indexOf('=')
		if (eq < 0) continue
		if (part.slice(0, eq).trim() === name) return decodeValue(part.slice(eq + 1).trim())
	}
	return undefined
}

/** A malformed escape (`%zz`) reads as no cookie: a client's broken or forged cookie must not turn into a 500. */
function decodeValue(v: string): string | undefined {
	try {
		return decodeURIComponent(v)
	} catch {
		return undefined
	}
}

/** Whether the browser reached us over https, so the cookie may (and should) be marked Secure. */
export function isHttps(request: Request): boolean {
	if (new URL(request.url).protocol === 'https:') return true
	return (request.headers.get('x-forwarded-proto') ?? '').split(',')[0]!.trim().toLowerCase() === 'https'
}

/**
 * Set-Cookie value for the session; `maxAgeSeconds` 0 deletes it.
 * @example sessionCookie('abc', 3600, false) // 'sb_session=abc; Path=/; Max-Age=3600; HttpOnly; SameSite=Strict'
 */
export function sessionCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
	const parts = [`${SESSION_COOKIE}=${encodeURIComponent(value)}`, 'Path=/', `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Strict']
	if (secure) parts.push('Secure')
	return parts.join('; ')
}
