/**
 * The gateway's own errors (401, 402, 403, 404, 413, 429, 5xx) on the task-service routes, in the shape those
 * services' clients read, with the HTTP status unchanged:
 * - `/mj/*`: midjourney-proxy's `{code, description, result, properties}` (its SubmitResultVO), `code` one of its
 *   ReturnCode values (github.com/novicezk/midjourney-proxy `ReturnCode`: 3 not found, 4 validation error, 9 failure,
 *   23 queue full). new-api answers its own MJ errors the same way (`{description, type, code}`, controller/relay.go).
 * - `/suno/*`: new-api's task error `{code, message, data}` (dto/task.go `TaskError`), `code` a string.
 * The gateway's code (`insufficient_quota`, `model_not_allowed`, `task_not_found` …) rides in `properties.error_code`
 * and in Suno's `code`, as OpenAI's `error.code` carries it elsewhere.
 * @module
 */
import { t } from 'elysia'
import type { GatewayError } from '../core/errors'
import type { EncodedError } from '../protocols/codec'
import { errorBody } from '../protocols/openai-chat/error'
import { Integer } from '../protocols/json-types'

/** midjourney-proxy ReturnCode for a gateway error of this HTTP status. */
export function mjReturnCode(status: number): number {
	if (status === 404) return 3 // NOT_FOUND
	if (status === 429) return 23 // QUEUE_REJECTED: "try again later"
	if (status >= 500) return 9 // FAILURE
	return 4 // VALIDATION_ERROR: the request cannot be taken as it is (key, balance, permission, size)
}

/** The machine-readable code OpenAI's shape would carry (the error's own, else its kind's default, else its type). */
const codeOf = (err: GatewayError): string => {
	const e = errorBody(err).error
	return e.code ?? e.type
}

const withRetry = (err: GatewayError, out: EncodedError): EncodedError => {
	if (err.retryAfter !== undefined) out.headers = { 'retry-after': String(Math.ceil(err.retryAfter)) }
	return out
}

/** @example encodeMjError(new GatewayError('insufficient_quota', 'Insufficient balance')).body // {code: 4, description: 'Insufficient balance', result: null, properties: {error_code: 'insufficient_quota'}} */
export const encodeMjError = (err: GatewayError): EncodedError =>
	withRetry(err, { status: err.status, body: { code: mjReturnCode(err.status), description: err.message, result: null, properties: { error_code: codeOf(err) } } })

/** @example encodeSunoError(notFound('No Suno task "x"', 'task_not_found')).body // {code: 'task_not_found', message: 'No Suno task "x"', data: null} */
export const encodeSunoError = (err: GatewayError): EncodedError => withRetry(err, { status: err.status, body: { code: codeOf(err), message: err.message, data: null } })

export const MjErrorBody = t.Object(
	{
		code: Integer({ description: 'midjourney-proxy return code: 3 not found, 4 refused as sent (key, balance, permission, size), 9 failure, 23 try again later' }),
		description: t.String(),
		result: t.Null(),
		properties: t.Object({ error_code: t.String({ description: 'The gateway\'s error code, e.g. insufficient_quota, model_not_allowed, task_not_found' }) }),
	},
	{ description: 'A gateway error on /mj/*, in midjourney-proxy\'s shape; the HTTP status is the error\'s' },
)

export const SunoErrorBody = t.Object(
	{ code: t.String({ description: 'The gateway\'s error code, e.g. insufficient_quota, model_not_allowed, task_not_found' }), message: t.String(), data: t.Null() },
	{ description: 'A gateway error on /suno/*, in new-api\'s task error shape; the HTTP status is the error\'s' },
)

/** The error statuses a task-service route can answer, each with `schema`. */
export const taskErrors = <S extends typeof MjErrorBody | typeof SunoErrorBody>(schema: S) => ({
	400: schema,
	401: schema,
	402: schema,
	403: schema,
	404: schema,
	413: schema,
	429: schema,
	500: schema,
	502: schema,
	503: schema,
	504: schema,
})
