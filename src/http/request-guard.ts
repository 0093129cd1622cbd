/**
 * Runs first on every request: assigns the request id (the client's `x-request-id` when given, else a new one) and
 * rejects bodies over the configured limit with a 413 in the caller's protocol shape before anything reads them.
 * @module
 */
import { Elysia } from 'elysia'
import { GatewayError } from '../core/errors'
import { requestId } from '../lib/ids'
import type { Services } from '../services'
import { errorResponse, shapeForPath } from './error-shapes'

const VALID_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * The request's id (the client's `x-request-id` when it is a usable one), or the 413 answer for a body over the limit.
 * Called for every request: by the hook below, and by the hot routes (src/http/hot-route.ts), which Elysia's hooks do
 * not run for.
 */
export function guardRequest(svc: Services, request: Request): string | Response {
	svc.idleGc.note()
	const given = request.headers.get('x-request-id')
	const id = given && VALID_ID.test(given) ? given : requestId()
	const len = Number(request.headers.get('content-length') ?? 0)
	if (len > 0) {
		const multipart = (request.headers.get('content-type') ?? '').startsWith('multipart/')
		const limit = multipart ? svc.env.maxUploadBytes : svc.env.maxJsonBytes
		if (len > limit) {
			const path = new URL(request.url).pathname
			return errorResponse(new GatewayError('payload_too_large', `Request body is ${len} bytes; the limit is ${limit}`, { code: 'request_too_large' }), shapeForPath(path), id)
		}
	}
	return id
}

export const requestGuard = (svc: Services) =>
	new Elysia({ name: 'request-guard' }).onRequest(({ request, set }) => {
		const id = guardRequest(svc, request)
		if (typeof id !== 'string') return id
		set.headers['x-request-id'] = id
	})
