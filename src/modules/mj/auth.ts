/**
 * Key authentication for the task-service passthroughs. Besides `Authorization: Bearer` and `x-api-key`,
 * Midjourney clients (chatgpt-web-midjourney-proxy and the like) send the key in `mj-api-secret`, the header
 * midjourney-proxy itself reads.
 * @module
 */
import { Elysia } from 'elysia'
import { presentedKey } from '../../http/model-auth'
import type { Services } from '../../services'

export const serviceAuth = (svc: Services) =>
	new Elysia({ name: 'service-auth' }).derive({ as: 'scoped' }, async ({ request, set }) => {
		const token = await svc.keys.authenticate(presentedKey(request, false) ?? request.headers.get('mj-api-secret')?.trim() ?? undefined)
		await svc.limits.admit(token)
		return { token, requestId: set.headers['x-request-id'] as string, startedAt: Date.now() }
	})
