/**
 * createApp(services): composes the feature modules into one Elysia app. No side effects: tests import it and call
 * `app.handle(request)`; src/index.ts adds `listen`.
 * @module
 */
import { type AnyElysia, Elysia } from 'elysia'
import { GatewayError } from './core/errors'
import { toGatewayError, unknownRoute } from './http/error-map'
import { errorResponse, shapeForRequest, shapeForUnknownPath } from './http/error-shapes'
import { apiDocs } from './http/api-docs'
import { bodyTimedOut, bodyTimeoutOf } from './http/body-deadline'
import { releaseSpool } from './http/body-spool'
import { hotRoute } from './http/hot-route'
import { type DeferredApp, deferredApp } from './http/deferred-app'
import { handOn, jsonRouteMatcher, requestGuard, routeMatcher } from './http/request-guard'
import { accountsModule } from './modules/admin/accounts'
import { channelsModule } from './modules/admin/channels'
import { modelsModule } from './modules/admin/models'
import { tokensModule } from './modules/admin/tokens'
import { usageModule } from './modules/admin/usage'
import { chatModule, chatRoute } from './modules/chat'
import { consoleModule } from './modules/console'
import { messagesModule, messagesRoute } from './modules/messages'
import { healthModule } from './modules/health'
import { metricsModule } from './modules/metrics'
import { dashboardModule } from './modules/dashboard'
import { embeddingsModule } from './modules/embeddings'
import { moderationsModule } from './modules/moderations'
import { rerankModule } from './modules/rerank'
import { countTokensModule } from './modules/count-tokens'
import { geminiModule } from './modules/gemini'
import { geminiOperationsModule } from './modules/gemini/operations'
import { filesModule } from './modules/batches/files'
import { anthropicFilesModule } from './modules/anthropic-files'
import { modelListModule } from './modules/models'
import { responsesModule } from './modules/responses'
import type { Services } from './services'

/**
 * What every route runs through, in the main app and in the deferred routes' app alike: the request guard, errors in
 * the caller's shape, the request id on every answer. A request no route of `app` serves goes to `handOnTo` when given
 * (the deferred routes), else gets its 404.
 */
function pipeline(svc: Services, app: AnyElysia, docs: AnyElysia | undefined, handOnTo: DeferredApp | undefined): AnyElysia {
	const routes = routeMatcher((): ReadonlyArray<{ path: string }> => app.routes)
	// A path this app does not serve may be the deferred routes': their guard decides (undefined) what a multipart body there gets.
	const routed = handOnTo ? (path: string) => routes(path) || undefined : routes
	app.onAfterHandle({ as: 'global' }, ({ response, set }) => {
		// A Response of ours already names the request id. Anything left in `set.headers` makes Elysia copy the
		// Response into a new one to merge them in (a Headers copy, and a stream made of a string body).
		if (response instanceof Response && response.headers.has('x-request-id')) delete set.headers['x-request-id']
	})
	// Upload bodies spooled to a file (body-spool.ts) are removed once the answer has gone, whatever it was.
	app.onAfterResponse({ as: 'global' }, ({ request }) => releaseSpool(request))
	if (docs) app.use(docs)
	const takesJson = jsonRouteMatcher(() => app.routes)
	return app.use(requestGuard(svc, routed, (request) => app.handle(request), takesJson)).onError(({ code, error, request, set, query, params, body }) => {
		// Without a usable Host the URL is the path alone (request-guard.ts answers those, but an error here must not throw).
		const path = request.url.charCodeAt(0) === 47 ? request.url.split('?')[0]! : new URL(request.url).pathname
		const rid = (set.headers['x-request-id'] as string | undefined) ?? undefined
		// A parser or handler whose read of the body ran past the deadline (Elysia wraps a parser's error in its own).
		const late = bodyTimeoutOf(request)
		if (late) return bodyTimedOut(request, late, rid ?? '')
		if (code === 'NOT_FOUND' && handOnTo && rid !== undefined && handOnTo.serves(path)) {
			// Their answer names the id already: left in `set.headers`, Elysia would copy it in.
			delete set.headers['x-request-id']
			return handOnTo.handle(handOn(request, rid)).catch((e: unknown) => {
				// Their modules failed to load (a broken install): a 500 in the caller's shape; the next request tries again.
				svc.log.error('deferred routes failed to load', { error: String(e) })
				return errorResponse(new GatewayError('api_error', 'Internal error'), shapeForRequest(request, path), rid)
			})
		}
		const shape = code === 'NOT_FOUND' ? shapeForUnknownPath(request, path) : shapeForRequest(request, path)
		const err = code === 'NOT_FOUND' ? unknownRoute(request.method, path) : toGatewayError(code, error, svc, { query, params, body, contentType: request.headers.get('content-type') })
		return errorResponse(err, shape, rid)
	})
}

/**
 * Where the deferred routes (src/app-deferred.ts) live: any path of theirs matches (test/integration/surface/
 * deferred-routes.test.ts checks every route), so that another path no route serves is answered 404 without loading them.
 */
export const DEFERRED_PATHS =
	/^\/{1,2}(?:mj|suno|ws|upload|download)\/|^\/v1(?:beta)?\/(?:completions|conversations|batches|images|audio|videos?|chat\/completions|messages\/batches|interactions|files|cachedContents|realtime|responses)(?:\/|$)/

/**
 * `docs` replaces what serves /docs and /docs/json (the committed document, src/http/api-docs.ts): the document
 * generator (scripts/openapi-doc.ts) passes the plugin that builds it from the routes, and `deferred` to mount the
 * rarely used modules (src/app-deferred.ts) with the rest instead of at their first request.
 */
export function createApp(svc: Services, opts: { docs?: AnyElysia; deferred?: (svc: Services, handle: (request: Request) => Promise<Response>) => AnyElysia } = {}) {
	const chat = chatRoute(svc)
	const messages = messagesRoute(svc)
	// The hottest routes skip Elysia's pipeline when the request is plain, and hand it anything else (hot-route.ts).
	const elysia = (request: Request): Promise<Response> => app.handle(request)
	const routes = {
		'/v1/chat/completions': { POST: hotRoute(svc, chat, elysia) },
		'/v1/messages': { POST: hotRoute(svc, messages, elysia) },
	}
	const later = opts.deferred
		? undefined
		: deferredApp(DEFERRED_PATHS, async () => {
				const { deferredModules } = await import('./app-deferred')
				const rest = pipeline(svc, new Elysia({ name: 'switchboard-deferred', normalize: false }), undefined, undefined).use(deferredModules(svc, elysia))
				// Its WebSocket routes upgrade through the server the main app listens on (Elysia's own clones share it too).
				Object.defineProperty(rest, 'server', { get: () => app.server, configurable: true })
				return rest
			})
	// No normalisation: Elysia would otherwise deep-copy every body through its schema (exact-mirror, a compiled
	// check per union variant at every level) to drop the fields a schema does not name. The model APIs' schemas are
	// open (vendors' clients send fields we do not model, and they pass through), so that copy dropped nothing, at
	// ~70 µs per 90 KB agent turn (15% of such a request, bench/README). Without it, a schema that is not open refuses
	// an unnamed field at its top level with a 400 naming it, as the management API and the console now do with
	// their bodies and queries; answers go through explicit views (test/integration/admin/unknown-fields.test.ts).
	const app = pipeline(svc, new Elysia({ name: 'switchboard', normalize: false, serve: { routes } }), opts.docs ?? apiDocs(), later)
		.use(healthModule(svc))
		.use(metricsModule(svc))
		.use(chatModule(svc, chat))
		.use(messagesModule(svc, messages))
		.use(countTokensModule(svc))
		.use(responsesModule(svc))
		.use(modelListModule(svc))
		.use(geminiModule(svc))
		.use(geminiOperationsModule(svc))
		.use(filesModule(svc))
		.use(embeddingsModule(svc))
		.use(rerankModule(svc))
		.use(moderationsModule(svc))
		.use(dashboardModule(svc))
		.use(accountsModule(svc))
		.use(tokensModule(svc))
		.use(usageModule(svc))
		.use(channelsModule(svc))
		.use(modelsModule(svc))
		.use(consoleModule(svc))
		// Before routing (an onRequest hook), after the guard's: Anthropic's Files API shares OpenAI's paths.
		.use(anthropicFilesModule(svc))
	return opts.deferred ? app.use(opts.deferred(svc, elysia)) : app
}

export type App = ReturnType<typeof createApp>
