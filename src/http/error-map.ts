/**
 * What anything thrown while serving a request means to the client: the GatewayError it becomes, whichever pipeline
 * caught it (Elysia's `onError`, src/app.ts; the hot routes, src/http/hot-route.ts).
 * @module
 */
import type { Services } from '../services'
import { GatewayError } from '../core/errors'

/** Maps anything thrown into a GatewayError; unknown errors are logged (redacted) and become a generic 500. */
export function toGatewayError(code: string | number, error: unknown, svc: Services): GatewayError {
	if (error instanceof GatewayError) return error
	switch (code) {
		case 'VALIDATION': {
			const v = error as { all?: Array<{ path?: string; message?: string; summary?: string }>; type?: string }
			const first = v.all?.[0]
			const field = first?.path ? first.path.replace(/^\//, '').replace(/\//g, '.') : (v.type ?? 'body')
			return new GatewayError('invalid_request', `Invalid ${v.type ?? 'request'}: ${field ? `"${field}" ` : ''}${first?.message ?? first?.summary ?? 'is invalid'}`, {
				param: field,
				code: 'invalid_request_error',
			})
		}
		case 'PARSE':
			return new GatewayError('invalid_request', 'Malformed request body: not valid JSON', { code: 'invalid_json' })
		case 'NOT_FOUND':
			return new GatewayError('not_found', 'Not found', { code: 'not_found' })
		case 'INVALID_COOKIE_SIGNATURE':
			return new GatewayError('authentication', 'Invalid session', { code: 'invalid_session' })
		default:
			if (isDatabaseDown(error)) return new GatewayError('unavailable', 'Service temporarily unavailable: the database cannot be reached', { code: 'database_unavailable' })
			svc.log.error('unhandled error', { code: String(code), error: error instanceof Error ? `${error.name}: ${error.message}` : String(error), stack: error instanceof Error ? error.stack : undefined })
			return new GatewayError('api_error', 'Internal error')
	}
}

/** Connection-level database failures (PostgreSQL down or restarting): 503, never a silent unbilled answer. */
function isDatabaseDown(e: unknown): boolean {
	const code = (e as { code?: unknown } | null)?.code
	if (typeof code !== 'string') return false
	return ['ECONNREFUSED', 'ECONNRESET', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', '57P01', '57P02', '57P03'].includes(code) || code.startsWith('08')
}
