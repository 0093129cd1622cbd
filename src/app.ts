/**
 * createApp(services): composes the feature modules into one Elysia app. No side effects: tests import it and call
 * `app.handle(request)`; src/index.ts adds `listen`.
 * @module
 */
import { type AnyElysia, Elysia } from 'elysia'
import { GatewayError } from './core/errors'
import { errorResponse, shapeForPath } from './http/error-shapes'
import { apiDocs } from './http/api-docs'
import { requestGuard } from './http/request-guard'
import { accountsModule } from './modules/admin/accounts'
import { channelsModule } from './modules/admin/channels'
import { modelsModule } from './modules/admin/models'
import { tokensModule } from './modules/admin/tokens'
import { usageModule } from './modules/admin/usage'
import { chatModule } from './modules/chat'
import { consoleModule } from './modules/console'
import { messagesModule } from './modules/messages'
import { healthModule } from './modules/health'
import { metricsModule } from './modules/metrics'
import { audioModule } from './modules/audio'
import { dashboardModule } from './modules/dashboard'
import { embeddingsModule } from './modules/embeddings'
import { imagesModule } from './modules/images'
import { mjModule } from './modules/mj'
import { moderationsModule } from './modules/moderations'
import { rerankModule } from './modules/rerank'
import { sunoModule } from './modules/suno'
import { videoModule } from './modules/video'
import { countTokensModule } from './modules/count-tokens'
import { geminiModule } from './modules/gemini'
import { modelListModule } from './modules/models'
import { responsesModule } from './modules/responses'
import type { Services } from './services'

/**
 * `docs` replaces what serves /docs and /docs/json (the committed document, src/http/api-docs.ts): the document
 * generator (scripts/openapi-doc.ts) passes the plugin that builds it from the routes.
 */
export function createApp(svc: Services, opts: { docs?: AnyElysia } = {}) {
	// No normalisation: Elysia would otherwise deep-copy every body through its schema (exact-mirror, a compiled
	// check per union variant at every level) to drop the fields a schema does not name. The model APIs' schemas are
	// open (vendors' clients send fields we do not model, and they pass through), so that copy dropped nothing, at
	// ~70 µs per 90 KB agent turn (15% of such a request, bench/README). Without it, a schema that is not open refuses
	// an unnamed field at its top level with a 400 naming it, as the management API and the console now do with
	// their bodies and queries; answers go through explicit views (test/integration/admin/unknown-fields.test.ts).
	return new Elysia({ name: 'switchboard', normalize: false })
		.onAfterHandle({ as: 'global' }, ({ response, set }) => {
			// A Response of ours already names the request id. Anything left in `set.headers` makes Elysia copy the
			// Response into a new one to merge them in (a Headers copy, and a stream made of a string body).
			if (response instanceof Response && response.headers.has('x-request-id')) delete set.headers['x-request-id']
		})
		.use(opts.docs ?? apiDocs())
		.use(requestGuard(svc))
		.onError(({ code, error, request, set }) => {
			const path = new URL(request.url).pathname
			const rid = (set.headers['x-request-id'] as string | undefined) ?? undefined
			return errorResponse(toGatewayError(code, error, svc), shapeForPath(path), rid)
		})
		.use(healthModule(svc))
		.use(metricsModule(svc))
		.use(chatModule(svc))
		.use(messagesModule(svc))
		.use(countTokensModule(svc))
		.use(responsesModule(svc))
		.use(modelListModule(svc))
		.use(geminiModule(svc))
		.use(embeddingsModule(svc))
		.use(imagesModule(svc))
		.use(audioModule(svc))
		.use(rerankModule(svc))
		.use(moderationsModule(svc))
		.use(videoModule(svc))
		.use(mjModule(svc))
		.use(sunoModule(svc))
		.use(dashboardModule(svc))
		.use(accountsModule(svc))
		.use(tokensModule(svc))
		.use(usageModule(svc))
		.use(channelsModule(svc))
		.use(modelsModule(svc))
		.use(consoleModule(svc))
}

export type App = ReturnType<typeof createApp>

/** Maps anything thrown into a GatewayError; unknown errors are logged (redacted) and become a generic 500. */
function toGatewayError(code: string | number, error: unknown, svc: Services): GatewayError {
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
