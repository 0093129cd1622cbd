/**
 * Cross-origin calls to the model APIs, from clients that run in a browser: a chat UI calling the gateway from the
 * user's page, the `openai` SDK with `dangerouslyAllowBrowser`, the Anthropic SDK with its direct-browser-access
 * header, `@google/genai` in a web app. The vendors' own APIs answer such calls, so the gateway does too: a preflight
 * (`OPTIONS` with `Access-Control-Request-Method`) gets 204 with what it asked for, and every answer to a request with
 * an `Origin` names the origins allowed (CORS_ORIGINS: any by default, or a list) and the headers SDKs read.
 * Only the key-authenticated API paths: never the management API or the console, whose session cookie is
 * SameSite=Strict and whose calls come from its own origin. No credentials are allowed (a key travels in a header the
 * page sets itself), so any origin may be let in without exposing a cookie's session.
 * @module
 */

/** Who may call: any origin, the listed ones (as browsers send them: `https://chat.example.com`), or none (CORS off). */
export type CorsPolicy = { any: boolean; origins: ReadonlySet<string> }

/** The model APIs' paths (Gemini's resumable uploads and file downloads, and Azure OpenAI's dialect, included). */
const API_PATH = /^\/(?:v1|v1beta|openai|mj|suno|upload|download)(?:\/|$)/

/** Headers the SDKs read from an answer, beyond the CORS-safelisted ones (a browser hides the rest from the page). */
const EXPOSED = [
	'x-request-id',
	'request-id',
	'retry-after',
	'retry-after-ms',
	'x-should-retry',
	'x-goog-upload-url',
	'x-goog-upload-status',
	'x-goog-upload-size-received',
	'x-goog-upload-chunk-granularity',
	'x-gemini-service-tier',
	'content-disposition',
	'x-switchboard-counted-by',
].join(', ')

/** Methods a preflight is told the API paths take. */
const METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS'

/** How long a browser may reuse a preflight's answer (Chromium caps it at 2 hours, Firefox at 24). */
const MAX_AGE = '7200'

/**
 * The policy CORS_ORIGINS asks for: `*` (the default) lets any origin in, `none` none, and a comma-separated list
 * those origins only.
 * @example corsPolicy(['https://chat.example.com']).origins.has('https://chat.example.com') === true
 */
export function corsPolicy(entries: string[]): CorsPolicy {
	const origins = new Set(entries.filter((e) => e !== '*' && e !== 'none').map(normalOrigin))
	return { any: entries.includes('*'), origins }
}

/** An entry CORS_ORIGINS takes: `*`, `none`, or an origin (scheme, host and port; a trailing slash is dropped). */
export const isCorsEntry = (entry: string): boolean => {
	if (entry === '*' || entry === 'none') return true
	try {
		const url = new URL(entry)
		return (url.protocol === 'http:' || url.protocol === 'https:') && !url.host.includes('*') && url.origin === normalOrigin(entry)
	} catch {
		return false
	}
}

const normalOrigin = (origin: string) => origin.toLowerCase().replace(/\/$/, '')

/** The value of `Access-Control-Allow-Origin` for a request from `origin` to `path`, or undefined (not let in). */
function allowedOrigin(policy: CorsPolicy, origin: string, path: string): string | undefined {
	if (!API_PATH.test(path)) return undefined
	if (policy.any) return '*'
	return policy.origins.has(origin.toLowerCase()) ? origin : undefined
}

/**
 * The headers an answer to `request` carries for its page, or undefined (no `Origin`: not a browser's cross-origin
 * call; or an origin or path not let in, whose answer the browser then keeps from the page).
 */
export function corsHeaders(policy: CorsPolicy, request: Request): Record<string, string> | undefined {
	const origin = request.headers.get('origin')
	if (origin === null) return undefined
	// Parsed only for a request with an Origin: a server-side client's stops above.
	const allowed = allowedOrigin(policy, origin, new URL(request.url).pathname)
	if (allowed === undefined) return undefined
	// These headers come only with an Origin (and a listed origin is echoed): a shared cache must keep such answers apart.
	return { 'access-control-allow-origin': allowed, 'access-control-expose-headers': EXPOSED, vary: 'Origin' }
}

/** A browser's preflight: `OPTIONS` asking whether a method may be used (`Access-Control-Request-Method`). */
export const isPreflight = (request: Request): boolean => request.method === 'OPTIONS' && request.headers.has('access-control-request-method')

/**
 * The answer to a preflight let in (`corsHeaders` gave `cors`): 204 allowing the API's methods and the headers asked for
 * (the SDKs' `authorization`, `x-api-key`, `anthropic-version`, `x-stainless-*`… whatever the page sends). One not let
 * in is routed as any `OPTIONS` is (a 404 without these headers, so the browser refuses the call itself).
 */
export function preflightResponse(request: Request, cors: Record<string, string>, requestId: string): Response {
	const headers: Record<string, string> = {
		'access-control-allow-origin': cors['access-control-allow-origin']!,
		'access-control-allow-methods': METHODS,
		'access-control-max-age': MAX_AGE,
		vary: 'Origin, Access-Control-Request-Headers',
		'x-request-id': requestId,
	}
	const asked = request.headers.get('access-control-request-headers')
	if (asked) headers['access-control-allow-headers'] = asked
	return new Response(null, { status: 204, headers })
}

/**
 * `response` with the CORS headers for `request` (from `corsHeaders`) added: in place when its headers can be
 * changed, else in a copy (a response another `fetch` gave keeps its headers immutable).
 */
export function withCors(response: Response, cors: Record<string, string>): Response {
	try {
		for (const k in cors) response.headers.set(k, cors[k]!)
		return response
	} catch {
		const headers = new Headers(response.headers)
		for (const k in cors) headers.set(k, cors[k]!)
		return new Response(response.body, { status: response.status, statusText: response.statusText, headers })
	}
}
