/** HTML helpers for the console shell and the server-rendered pages: escaping, headers, the document frame. */
import { consoleCssHash, consoleJsHash } from '../../console/assets.gen'

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** @example esc('<a href="x">') === '&lt;a href=&quot;x&quot;&gt;' */
export const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ENTITIES[c]!)

export const cssUrl = () => `/console/assets/app-${consoleCssHash}.css`
export const jsUrl = () => `/console/assets/app-${consoleJsHash}.js`

/**
 * No inline script or style anywhere, so the policy can forbid both: an injected `<script>` in a model or key
 * name would not run even if escaping ever failed.
 */
export const SECURITY_HEADERS: Record<string, string> = {
	'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
	'x-content-type-options': 'nosniff',
	'referrer-policy': 'same-origin',
	'x-frame-options': 'DENY',
}

// Also in src/http/api-docs.html, a static page: change both.
const ICON =
	"data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'%3E%3Crect width='32' height='32' rx='8' fill='%234f46e5'/%3E%3Cpath d='M9 11h14M9 16h9M9 21h14' stroke='white' stroke-width='2.5' stroke-linecap='round'/%3E%3C/svg%3E"

/** A complete HTML document around `body`, using the bundled stylesheet. */
export function documentHtml(opts: { title: string; body: string; script?: boolean; description?: string }): string {
	return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
${opts.description ? `<meta name="description" content="${esc(opts.description)}">\n` : ''}<title>${esc(opts.title)}</title>
<link rel="icon" href="${ICON}">
<link rel="stylesheet" href="${cssUrl()}">
</head>
<body>
${opts.body}
${opts.script ? `<script type="module" src="${jsUrl()}"></script>\n` : ''}</body>
</html>
`
}

export function htmlResponse(html: string, status = 200): Response {
	return new Response(html, { status, headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', ...SECURITY_HEADERS } })
}
