/**
 * Key authentication for the task-service passthroughs. Besides `Authorization: Bearer` and `x-api-key`,
 * Midjourney clients (chatgpt-web-midjourney-proxy and the like) send the key in `mj-api-secret`, the header
 * midjourney-proxy itself reads. A path not written plainly is refused first, on every route of the services
 * (passthrough/forward.ts `checkPlainPath`): no handler sees one.
 * @module
 */
import { Elysia } from 'elysia'
import { GatewayError } from '../../core/errors'
import { missingKey, presentedKey } from '../../http/model-auth'
import { checkPlainPath } from '../../passthrough/forward'
import { matchesModel } from '../../routing/catalog'
import type { Services } from '../../services'

export type ServiceAuth = {
	/** `midjourney` or `suno`: the plugin's name and the shape of a missing-key error. */
	service: 'midjourney' | 'suno'
	/**
	 * The service's models. A key with `allowed_models` must allow at least one of them to use any route of the
	 * service: the routes that call no priced model (uploads, task reads, the catch-all) count as the whole family,
	 * and a submit is checked again against its own model when it is priced (relay/budget.ts `resolveModel`).
	 */
	models: readonly string[]
	/** Task reads (polls, lists): not counted against the key's `rpm_limit`, which is for model calls. */
	isPoll(method: string, path: string): boolean
}

export const serviceAuth = (svc: Services, o: ServiceAuth) =>
	new Elysia({ name: `service-auth-${o.service}` }).derive({ as: 'scoped' }, async ({ request, set }) => {
		const path = new URL(request.url).pathname
		checkPlainPath(path)
		const key = presentedKey(request, false) ?? request.headers.get('mj-api-secret')?.trim()
		if (!key) throw missingKey(o.service)
		const token = await svc.keys.authenticate(key)
		const allowed = token.allowedModels
		if (allowed && !o.models.some((m) => matchesModel(allowed, m)))
			throw new GatewayError('permission', `This API key may not use ${o.service === 'midjourney' ? 'Midjourney' : 'Suno'} (allowed models: none of ${o.models.join(', ')})`, { code: 'model_not_allowed' })
		if (!o.isPoll(request.method, path)) await svc.limits.admit(token)
		return { token, requestId: set.headers['x-request-id'] as string, startedAt: Date.now() }
	})
