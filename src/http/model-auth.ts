/**
 * Authentication of model endpoints: `Authorization: Bearer sk-…` or `x-api-key` everywhere; on Gemini's
 * `/v1beta` routes also `x-goog-api-key` and `?key=` (what Google's SDKs send). Resolves to the key's cached record.
 * @module
 */
import { Elysia } from 'elysia'
import type { Services } from '../services'

export function presentedKey(request: Request, gemini: boolean): string | undefined {
	const h = request.headers
	const auth = h.get('authorization')
	// `Bearer ` as clients write it is told without copying the prefix; other spellings of the scheme are compared lowercased.
	if (auth && auth.length > 7 && (auth.startsWith('Bearer ') || auth.slice(0, 7).toLowerCase() === 'bearer ')) return auth.slice(7).trim()
	const x = h.get('x-api-key')
	if (x) return x.trim()
	if (gemini) {
		const g = h.get('x-goog-api-key')
		if (g) return g.trim()
		const q = new URL(request.url).searchParams.get('key')
		if (q) return q.trim()
	}
	return undefined
}

export const modelAuth = (svc: Services, opts: { gemini?: boolean } = {}) =>
	new Elysia({ name: `model-auth${opts.gemini ? '-gemini' : ''}` }).derive({ as: 'scoped' }, async ({ request, set }) => {
		// A cached key without limits to count, as most are: answered without an await of its own.
		const key = presentedKey(request, opts.gemini ?? false)
		const token = svc.keys.cached(key) ?? (await svc.keys.authenticate(key))
		const admitted = svc.limits.admit(token)
		if (admitted) await admitted
		return { token, requestId: set.headers['x-request-id'] as string, startedAt: Date.now() }
	})
