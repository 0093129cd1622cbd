/**
 * Authentication of model endpoints: `Authorization: Bearer sk-…` or `x-api-key` everywhere; on Gemini's
 * `/v1beta` routes also `x-goog-api-key` and `?key=` (what Google's SDKs send). Resolves to the key's cached record.
 * @module
 */
import { Elysia } from 'elysia'
import { GatewayError } from '../core/errors'
import type { Services } from '../services'
import { type ErrorShape, shapeForRequest } from './error-shapes'

export function presentedKey(request: Request, gemini: boolean): string | undefined {
	const h = request.headers
	const auth = h.get('authorization')
	// `Bearer ` as clients write it is told without copying the prefix; other spellings of the scheme are compared lowercased.
	if (auth && auth.length > 7 && (auth.startsWith('Bearer ') || auth.slice(0, 7).toLowerCase() === 'bearer ')) return auth.slice(7).trim()
	const x = h.get('x-api-key')
	if (x) return x.trim()
	// Azure OpenAI's clients (azure-dialect.ts).
	const azure = h.get('api-key')
	if (azure) return azure.trim()
	if (gemini) {
		const g = h.get('x-goog-api-key')
		if (g) return g.trim()
		const q = new URL(request.url).searchParams.get('key')
		if (q) return q.trim()
	}
	return undefined
}

/** Where a request without a key should have put it: the header its protocol's clients send. */
const KEY_WHERE: Record<ErrorShape, string> = {
	openai: 'Authorization: Bearer sk-…',
	anthropic: 'x-api-key: sk-…',
	gemini: 'x-goog-api-key: sk-… (or ?key=sk-…)',
	midjourney: 'mj-api-secret: sk-… (or Authorization: Bearer sk-…)',
	suno: 'Authorization: Bearer sk-…',
}

export const missingKey = (shape: ErrorShape) => new GatewayError('authentication', `Missing API key: send ${KEY_WHERE[shape]}`, { code: 'missing_api_key' })

/** The paths whose routes take a gateway key: the model APIs, their uploads, Azure's dialect, the task passthroughs. */
const KEYED = /^\/(?:v1|v1beta|v1alpha|upload|mj|suno|openai)\//

/**
 * A request with a body to a keyed route, refused before its body is read when it has no key, or a key the gateway
 * refuses. Elysia reads and parses a body before the routes' key check (`derive`), and a large body may take minutes
 * (body-deadline.ts): a caller with no key held a connection that long per request, and one address filled the
 * process's file descriptors (QA, security pass). Credentials in a form read elsewhere (AWS's signed `Authorization`)
 * go on to their route. A key not yet cached is looked up here, as the route would (the route then finds it cached).
 */
export async function refusedBeforeBody(svc: Services, request: Request, path: string): Promise<GatewayError | undefined> {
	if (!KEYED.test(path)) return undefined
	const key = presentedKey(request, true) ?? request.headers.get('mj-api-secret')?.trim()
	if (!key) return request.headers.has('authorization') ? undefined : missingKey(shapeForRequest(request, path))
	// A body sent without a length is measured as it arrives (request-guard.ts): its key is looked up by its route.
	if (svc.keys.cached(key) || !request.headers.has('content-length')) return undefined
	try {
		await svc.keys.authenticate(key)
		return undefined
	} catch (e) {
		if (e instanceof GatewayError && e.kind === 'authentication') return e
		throw e
	}
}

/** Whether a request only reads (a task poll or download): GET and HEAD. */
export const isRead = (request: Request): boolean => request.method === 'GET' || request.method === 'HEAD'

/**
 * The key check of the model routes. `counted: false` for routes that call no model (the model list, the billing
 * dashboard): a key's requests-per-minute limit is for model calls, and clients list the models at every start.
 * `counted: 'submits'` for task routes: a submit is counted, a poll (GET) is not, since clients poll every few seconds
 * and would otherwise lock themselves out of the submits the limit is for.
 */
export const modelAuth = (svc: Services, opts: { gemini?: boolean; counted?: boolean | 'submits' } = {}) =>
	new Elysia({ name: `model-auth${opts.gemini ? '-gemini' : ''}${opts.counted === false ? '-uncounted' : opts.counted === 'submits' ? '-submits' : ''}` }).derive({ as: 'scoped' }, async ({ request, set }) => {
		// A cached key without limits to count, as most are: answered without an await of its own.
		const key = presentedKey(request, opts.gemini ?? false)
		if (!key) throw missingKey(shapeForRequest(request, new URL(request.url).pathname))
		const token = svc.keys.cached(key) ?? (await svc.keys.authenticate(key))
		const counted = opts.counted === 'submits' ? !isRead(request) : opts.counted !== false
		const admitted = counted ? svc.limits.admit(token) : undefined
		if (admitted) await admitted
		// A channel or price change heard from another instance is being loaded: route on it, not on what it replaces.
		const settling = svc.catalog.settling
		if (settling) await settling
		return { token, requestId: set.headers['x-request-id'] as string, startedAt: Date.now() }
	})
