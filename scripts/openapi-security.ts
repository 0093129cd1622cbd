/**
 * How each operation takes its credentials, for the OpenAPI document: the schemes the gateway reads (http/model-auth.ts,
 * modules/mj/auth.ts, modules/console/sessions.ts) rather than the one bearer every operation inherited, which left
 * /health looking private and Anthropic's `x-api-key` and Google's `x-goog-api-key` / `?key=` unknown to generators.
 * @module
 */
import { SESSION_COOKIE } from '../src/modules/console/cookies'

type Json = Record<string, unknown>
type Requirement = Record<string, string[]>

export const SECURITY_SCHEMES = {
	bearer: { type: 'http', scheme: 'bearer', description: 'An `sk-…` key on model endpoints; ADMIN_KEY on the management API; METRICS_TOKEN on /metrics' },
	apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'An `sk-…` key, as Anthropic clients send it (any model endpoint)' },
	googApiKey: { type: 'apiKey', in: 'header', name: 'x-goog-api-key', description: 'An `sk-…` key, as Google clients send it (Gemini routes)' },
	googKey: { type: 'apiKey', in: 'query', name: 'key', description: 'An `sk-…` key in the query (Gemini routes)' },
	mjApiSecret: { type: 'apiKey', in: 'header', name: 'mj-api-secret', description: 'An `sk-…` key, as Midjourney clients send it' },
	session: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE, description: 'A console session (POST /api/session)' },
	csrf: { type: 'apiKey', in: 'header', name: 'x-csrf-token', description: 'The CSRF token of GET /api/session, with a session on calls that change state' },
} as const

const one = (...names: Array<keyof typeof SECURITY_SCHEMES>): Requirement[] => names.map((n) => ({ [n]: [] }))

/** The requirements of one operation; an operation that states its own (`security: []` on public routes) keeps them. */
function requirementsOf(path: string, method: string, tags: string[]): Requirement[] {
	if (path === '/health') return []
	if (path === '/metrics') return one('bearer')
	if (tags.includes('Management') || tags.includes('Console'))
		return method === 'get' ? one('bearer', 'session') : [{ bearer: [] }, { session: [], csrf: [] }]
	if (tags.includes('Midjourney')) return one('bearer', 'apiKey', 'mjApiSecret')
	if (tags.includes('Gemini') || path.startsWith('/v1beta/') || path.startsWith('/v1/models')) return one('bearer', 'apiKey', 'googApiKey', 'googKey')
	return one('bearer', 'apiKey')
}

export function applySecurity(doc: Json): Json {
	doc.components = { ...(doc.components as Json | undefined), securitySchemes: SECURITY_SCHEMES }
	const paths = doc.paths as Record<string, Record<string, Json>>
	for (const [path, item] of Object.entries(paths))
		for (const [method, op] of Object.entries(item)) if (op.security === undefined) op.security = requirementsOf(path, method, (op.tags as string[] | undefined) ?? [])
	return doc
}
