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
		const limit = limitOf(svc, request)
		if (len > limit) return tooLarge(request, `Request body is ${len} bytes; the limit is ${limit}`, id)
	}
	return id
}

const limitOf = (svc: Services, request: Request) =>
	(request.headers.get('content-type') ?? '').startsWith('multipart/') ? svc.env.maxUploadBytes : svc.env.maxJsonBytes

const tooLarge = (request: Request, message: string, id: string) =>
	errorResponse(new GatewayError('payload_too_large', message, { code: 'request_too_large' }), shapeForPath(new URL(request.url).pathname), id)

/**
 * A body sent without a length (chunked), whose size no header tells. The header first: `request.body` makes the
 * body a stream object, which a request with a length must not pay for (its `text()` reads natively).
 */
export const hasUnsizedBody = (request: Request): boolean => !request.headers.has('content-length') && request.method !== 'GET' && request.method !== 'HEAD' && request.body !== null

/**
 * Measures a body sent without a length as it arrives, from a clone the route reads afterwards, and answers 413 once
 * it passes the limit: the length check above cannot see its size, and a route's parser would read any amount (a
 * chunked chat body over MAX_JSON_BYTES was once served and billed). Clients that send JSON give a length, so this
 * runs for few requests.
 */
export async function guardUnsizedBody(svc: Services, request: Request, id: string): Promise<Response | undefined> {
	const limit = limitOf(svc, request)
	const reader = request.clone().body!.getReader()
	let size = 0
	for (;;) {
		const { done, value } = await reader.read()
		if (done) return undefined
		size += value.byteLength
		if (size > limit) {
			void reader.cancel().catch(() => {})
			return tooLarge(request, `Request body is over ${limit} bytes, the limit`, id)
		}
	}
}

export const requestGuard = (svc: Services) =>
	new Elysia({ name: 'request-guard' }).onRequest(async ({ request, set }) => {
		const id = guardRequest(svc, request)
		if (typeof id !== 'string') return id
		set.headers['x-request-id'] = id
		if (hasUnsizedBody(request)) return guardUnsizedBody(svc, request, id)
	})
