/**
 * Runs first on every request: assigns the request id (the client's `x-request-id` when given, else a new one),
 * refuses a multipart body on a route that takes JSON (415; on a path no route serves, the 404 a JSON body gets), and
 * rejects bodies over the configured limit with a 413,
 * both in the caller's protocol shape before anything reads them. Then, on the Elysia routes, it waits for the whole
 * body under BODY_READ_TIMEOUT_MS (body-deadline.ts; 408 past it), so no route starts on a body still trickling in.
 * @module
 */
import { Elysia } from 'elysia'
import { GatewayError } from '../core/errors'
import { requestId } from '../lib/ids'
import type { Services } from '../services'
import { fromAzure, isAzurePath } from './azure-dialect'
import { releaseSpool } from './body-spool'
import { asEventStream, bedrockCall, fromBedrock } from './bedrock-dialect'
import { fromVertex, vertexCall } from './vertex-dialect'
import { contentCodings, decodeBody, decodedRequest } from './content-encoding'
import { corsHeaders, isPreflight, preflightResponse } from './cors'
import { sameCaller } from './client-address'
import { BodyReadTimeout, bodyTimedOut, bodyTimeoutOf, readsUnderDeadline } from './body-deadline'
import { unknownRoute } from './error-map'
import { errorResponse, shapeForPath, shapeForRequest, shapeForUnknownPath } from './error-shapes'
import { asBeta, betaPath } from './gemini-alpha'
import { refusedBeforeBody } from './model-auth'
import { isJsonType, jsonTooDeep, MAX_JSON_DEPTH, tooDeepError } from './raw-json'

const VALID_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * Whether a route serves a path: true, false, or undefined when the app does not serve it but may hand the request
 * to one that might (the deferred routes, src/http/deferred-app.ts), which then decides.
 */
export type Routed = (path: string) => boolean | undefined

/**
 * Requests the main app handed to the deferred routes' app, with the id it gave them: that app's guard keeps the id
 * and does not read or time the body again (the first guard did).
 */
const handedOn = new WeakMap<Request, string>()
export const handOn = (request: Request, id: string): Request => {
	handedOn.set(request, id)
	return request
}

/**
 * The request's id (the client's `x-request-id` when it is a usable one), or the 413 answer for a body over the limit.
 * Called for every request: by the hook below, and by the hot routes (src/http/hot-route.ts), which Elysia's hooks do
 * not run for. `routed` tells whether a route serves the path (the hot routes' paths are served); `handed`, the id of
 * a request handed on by the main app (kept).
 */
export function guardRequest(svc: Services, request: Request, routed: Routed = () => true, handed?: string): string | Response {
	if (handed === undefined) svc.idleGc.note()
	const given = request.headers.get('x-request-id')
	const id = handed ?? (given && VALID_ID.test(given) ? given : requestId())
	// No usable Host (HTTP/1.0 without one, an empty or malformed one): Bun gives the path alone as the URL, which
	// nothing after this can parse. HTTP/1.1 requires the header (RFC 9112 §3.2: a 400).
	if (request.url.charCodeAt(0) === 47) return errorResponse(new GatewayError('invalid_request', 'a valid Host header is required', { code: 'invalid_host' }), shapeForPath(request.url.split('?')[0]!), id)
	if (isMultipart(request)) {
		const path = pathOf(request)
		const served = routed(path)
		// "Send it as JSON" would mislead on a path nothing serves (openai-python's `realtime.calls.create` posts its SDP
		// as multipart to /v1/realtime/calls): that is the 404 a JSON body gets, answered before the body is read.
		if (served === false) return errorResponse(unknownRoute(request.method, path), shapeForUnknownPath(request, path), id)
		if (served && !UPLOAD_ROUTES.has(path)) return notAnUploadRoute(path, id)
	}
	const len = Number(request.headers.get('content-length') ?? 0)
	if (len > 0) {
		const limit = limitOf(svc, request)
		if (len > limit) return tooLarge(request, `Request body is ${len} bytes; the limit is ${limit}`, id)
	}
	return id
}

/**
 * The routes that take multipart uploads, held to MAX_UPLOAD_BYTES: an audio file to transcribe or translate, a video
 * submit with an `input_reference` image, images to edit or vary. Every other route takes JSON (MAX_JSON_BYTES); Elysia would parse a multipart body into
 * any route's `body` as well, so without this a 2 MB `input` sent as a form field passed a 1 MB JSON limit (QA non-chat
 * item 6).
 */
export const UPLOAD_ROUTES: ReadonlySet<string> = new Set([
	'/v1/audio/transcriptions',
	'/v1/audio/translations',
	'/v1/video/generations',
	'/v1/videos',
	'/v1/images/edits',
	'/v1/images/variations',
	'/v1/files',
])

const isMultipart = (request: Request) => {
	const type = request.headers.get('content-type')
	return type !== null && type.slice(0, 10).toLowerCase() === 'multipart/'
}

/** `request` at its URL with a user part (`http://sb@gw/…`): the same host, origin and path, past Elysia's 11th character. */
function withLongerUrl(request: Request): Request {
	const next = new Request(request.url.replace('://', '://sb@'), request)
	sameCaller(next, request)
	return next
}

/** The path without a trailing slash, as the routes are declared. */
const pathOf = (request: Request) => {
	const path = new URL(request.url).pathname
	return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path
}

/**
 * A chunk of a Gemini Files API upload (`POST /upload/{version}/files?upload_id=…`): raw bytes, held to
 * MAX_UPLOAD_BYTES, which the route streams through to the vendor as they arrive (modules/gemini-files/upload.ts), so
 * they are neither read ahead here nor put under the JSON body's deadline.
 */
const isUploadChunk = (request: Request) => {
	const url = request.url
	return url.includes('/upload/') && url.includes('upload_id=') && /^\/upload\/v1(beta)?\/files\/?$/.test(pathOf(request))
}

/** Only reached for a multipart body on an upload route, or a body of any other type (JSON). */
const limitOf = (svc: Services, request: Request) => (isMultipart(request) || isUploadChunk(request) ? svc.env.maxUploadBytes : svc.env.maxJsonBytes)

const notAnUploadRoute = (path: string, id: string) =>
	errorResponse(
		new GatewayError('invalid_request', `${path} does not take multipart/form-data: send the body as JSON (content-type: application/json)`, {
			code: 'unsupported_media_type',
			status: 415,
		}),
		shapeForPath(path),
		id,
	)

const tooLargeError = (message: string) => new GatewayError('payload_too_large', message, { code: 'request_too_large' })

/**
 * The 413 of a body over the limit, whatever its declared length: Bun's own limit is out of its way (server.ts
 * `listenOptions`), so the client reads why in its protocol, with the request id. The connection stays open: Bun then
 * reads the unread body to its declared end and throws it away (no memory kept), so a client that writes all of its
 * body before reading (Node's fetch: EPIPE on a socket closed under it) gets the answer too.
 */
const tooLarge = (request: Request, message: string, id: string) => errorResponse(tooLargeError(message), shapeForRequest(request, new URL(request.url).pathname), id)

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
	const over = await unsizedOverLimit(svc, request)
	if (!over) return undefined
	const res = errorResponse(over, shapeForRequest(request, pathOf(request)), id)
	// Closed once answered: the rest of a body without a length has no end Bun could read it to, so it would read on as
	// long as the client sends (an endless stream, for ever).
	res.headers.set('connection', 'close')
	return res
}

/**
 * The 413 error once a body without a length passes the limit, read from a clone (what the clone's reads pass on to
 * the request is held until the request reads it: at most the limit and a chunk); undefined when it ends within it.
 */
async function unsizedOverLimit(svc: Services, request: Request): Promise<GatewayError | undefined> {
	const limit = limitOf(svc, request)
	const reader = request.clone().body!.getReader()
	let size = 0
	for (;;) {
		const { done, value } = await reader.read()
		if (done) return undefined
		size += value.byteLength
		if (size > limit) {
			void reader.cancel().catch(() => {})
			return tooLargeError(`Request body is over ${limit} bytes, the limit`)
		}
	}
}

/**
 * A dialect's rewrite (Azure's deployments, Vertex's and Bedrock's calls), which reads the body whole to put the model
 * in it, after a body without a length was measured: nothing else would hold it to the limit.
 */
const measuredFirst =
	(svc: Services, request: Request, rewrite: () => Promise<Request | GatewayError>) =>
	async (): Promise<Request | GatewayError> =>
		(hasUnsizedBody(request) ? await unsizedOverLimit(svc, request) : undefined) ?? rewrite()

/**
 * Requests whose body is already in memory (the hot routes hand Elysia the body they read): nothing to wait for.
 * @example elysia(inMemory(new Request(url, { method: 'POST', headers, body: raw })))
 */
const readAlready = new WeakSet<Request>()
export const inMemory = (request: Request): Request => {
	readAlready.add(request)
	return request
}

/**
 * Refuses a JSON body nested deeper than MAX_JSON_DEPTH before a route's parser sees it (raw-json.ts: such a body
 * holds the event loop for seconds, then fails with a 500). Read from a clone, under the body deadline; a body too
 * short to nest that deep is not read at all. The chat and messages routes check in their own parser (`keepRawJson`),
 * which reads the text anyway.
 */
async function guardJsonDepth(svc: Services, request: Request, id: string): Promise<Response | undefined> {
	const type = request.headers.get('content-type') ?? ''
	const semi = type.indexOf(';')
	if (!isJsonType((semi === -1 ? type : type.slice(0, semi)).trim().toLowerCase())) return undefined
	const len = request.headers.get('content-length')
	if (len !== null && Number(len) <= MAX_JSON_DEPTH * 2) return undefined
	const path = pathOf(request)
	if (path === '/v1/chat/completions' || path === '/v1/messages') return undefined
	const text = await svc.bodyReads.within(request.clone().text(), request).catch((e) => {
		if (e instanceof BodyReadTimeout) throw e
		return ''
	})
	return jsonTooDeep(text) ? errorResponse(tooDeepError(), shapeForPath(path), id) : undefined
}

/**
 * Every read of the body under BODY_READ_TIMEOUT_MS, before any route runs: a body without a length is measured here
 * as it arrives (413 past the limit); one with a length is left to the route's parser, whose reads fail at the
 * deadline (body-deadline.ts). 408 past it, here or from the hooks below.
 */
async function guardBody(svc: Services, request: Request, id: string): Promise<Response | undefined> {
	if (request.method === 'GET' || request.method === 'HEAD' || readAlready.has(request) || isUploadChunk(request)) return undefined
	try {
		if (hasUnsizedBody(request)) {
			const refused = await svc.bodyReads.within(guardUnsizedBody(svc, request, id), request)
			if (refused) return refused
		} else if (!(Number(request.headers.get('content-length')) > 0)) return undefined
		else readsUnderDeadline(request, svc.bodyReads)
		return await guardJsonDepth(svc, request, id)
	} catch (e) {
		if (e instanceof BodyReadTimeout) return bodyTimedOut(request, e, id)
		throw e
	}
}

/**
 * Whether any of `routes` (Elysia's `app.routes`: `/v1/files/:id`, `/v1/x/*`) serves `path`, whatever the method. Its
 * patterns are compiled at the first call, once the app has all its routes.
 */
export function routeMatcher(routes: () => ReadonlyArray<{ path: string }>): (path: string) => boolean {
	let patterns: RegExp[] | undefined
	return (path) => {
		patterns ??= [...new Set(routes().map((r) => r.path))].map(routePattern)
		return patterns.some((re) => re.test(path))
	}
}

/** An Elysia route's path as a pattern: a parameter is one segment, a wildcard the rest, a trailing slash allowed. */
const routePattern = (p: string) => new RegExp(`^${p.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\/:[^/]+/g, '/[^/]+').replace(/\*/g, '.*')}/?$`)

/** Whether the route serving a method and path takes a JSON body (jsonRouteMatcher). */
export type TakesJson = (method: string, path: string) => boolean

type RouteEntry = { method: string; path: string; hooks?: { body?: unknown; parse?: unknown } }

/**
 * Whether the route serving a method and path declares a body and reads it with Elysia's own parser (no `parse` hook):
 * such a route takes JSON, and Elysia would read any other type as well (a form, `application/xml` as a form too,
 * bytes as an ArrayBuffer), into an object a schema without a required field takes. The routes with a hook (uploads,
 * passthroughs, the raw JSON of chat and messages) read what they take themselves. The route that serves a path is the
 * most specific one, as in Elysia's router: a static path, then one with parameters, then a wildcard.
 */
export function jsonRouteMatcher(routes: () => ReadonlyArray<RouteEntry>): TakesJson {
	let byMethod: Map<string, Array<{ re: RegExp; json: boolean }>> | undefined
	const rank = (path: string) => (path.includes('*') ? 2 : path.includes('/:') ? 1 : 0)
	const compile = () => {
		const all = [...routes()].sort((a, b) => rank(a.path) - rank(b.path))
		const map = new Map<string, Array<{ re: RegExp; json: boolean }>>()
		for (const r of all) {
			const parse = r.hooks?.parse
			const json = r.hooks?.body !== undefined && (parse === undefined || (Array.isArray(parse) && parse.length === 0))
			const re = routePattern(r.path)
			// A route for every method (`.all`) competes with each method's own, in its rank's place.
			for (const m of r.method === 'ALL' ? ['POST', 'PUT', 'PATCH', 'DELETE'] : [r.method]) {
				const list = map.get(m) ?? []
				list.push({ re, json })
				map.set(m, list)
			}
		}
		return map
	}
	return (method, path) => {
		byMethod ??= compile()
		return byMethod.get(method)?.find((r) => r.re.test(path))?.json ?? false
	}
}

/**
 * The 415 of a body of another type than JSON on a route that takes JSON (jsonRouteMatcher): refused rather than read
 * as Elysia reads it (`<items/>` sent as application/xml created a conversation, QA). Undefined for a JSON body, one
 * without a type (the route's parser refuses it, if it is not JSON), or no body.
 */
function notJsonBody(request: Request, takesJson: TakesJson | undefined, id: string): Response | undefined {
	if (!takesJson || request.method === 'GET' || request.method === 'HEAD') return undefined
	const type = request.headers.get('content-type')
	if (!type) return undefined
	const media = type.split(';')[0]!.trim().toLowerCase()
	if (isJsonType(media)) return undefined
	const len = request.headers.get('content-length')
	if (len !== null ? !(Number(len) > 0) : !hasUnsizedBody(request)) return undefined
	const path = pathOf(request)
	if (!takesJson(request.method, path)) return undefined
	const refused = new GatewayError('invalid_request', `${path} takes a JSON body, not ${media}: send it as JSON (content-type: application/json)`, {
		code: 'unsupported_media_type',
		status: 415,
	})
	const res = errorResponse(refused, shapeForRequest(request, path), id)
	// As guardUnsizedBody: the unread rest of a body without a length has no end to read to.
	if (len === null) res.headers.set('connection', 'close')
	return res
}

/**
 * The request as `rewrite` makes it (reading its body under the deadline), sent through the app again from the start
 * with its id; the answer refusing it when `rewrite` gives an error; undefined when it gives nothing (the request goes
 * on as it came).
 */
async function rewritten(
	svc: Services,
	request: Request,
	id: string,
	reenter: (request: Request) => Promise<Response>,
	rewrite: () => Promise<Request | GatewayError | undefined>,
	answer?: (res: Response) => Response,
): Promise<Response | undefined> {
	let next: Request | GatewayError | undefined
	try {
		next = await svc.bodyReads.within(rewrite(), request)
	} catch (e) {
		if (e instanceof BodyReadTimeout) return bodyTimedOut(request, e, id)
		throw e
	}
	if (next === undefined) return undefined
	if (next instanceof GatewayError) {
		const res = errorResponse(next, shapeForRequest(request, pathOf(request)), id)
		// As guardUnsizedBody: the unread rest of a body without a length has no end to read to.
		if (next.kind === 'payload_too_large' && !request.headers.has('content-length')) res.headers.set('connection', 'close')
		return res
	}
	next.headers.set('x-request-id', id)
	const res = await reenter(next)
	// The request as it came is done with once the new one is answered (an Azure upload read it into the spool, and
	// the new one read that in turn before its route ran); its own answer's hook is this one's, not Elysia's.
	releaseSpool(request)
	return answer ? answer(res) : res
}

/** A compressed body (content-encoding.ts) decoded, or why it is refused. */
async function decoded(svc: Services, request: Request, codings: string[]): Promise<Request | GatewayError> {
	const body = await decodeBody(request, codings, limitOf(svc, request))
	return body instanceof GatewayError ? body : decodedRequest(request, body)
}

/** What `curl -d` sends without `-H 'content-type: application/json'`, what a page sends to spare a preflight, or nothing. */
const UNTYPED = new Set(['', 'text/plain', 'application/x-www-form-urlencoded'])

/**
 * A POST to the model API with a body (of a known length) sent untyped or mistyped (UNTYPED): the model API takes
 * JSON, and such a body is the caller's JSON more often than not (a curl command without its content-type header,
 * a page's text/plain). Elysia would read it as text or a form, and the route answer "Expected object" or "model is
 * required" for a body that has both.
 */
function untypedJson(request: Request): boolean {
	if (request.method !== 'POST' || !(Number(request.headers.get('content-length')) > 0)) return false
	const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
	if (!UNTYPED.has(type)) return false
	const path = pathOf(request)
	return path.startsWith('/v1/') || path.startsWith('/v1beta/')
}

/** The request typed as JSON when its body is a JSON object; else undefined (it goes on as it came, refused as before). */
async function typedAsJson(request: Request): Promise<Request | undefined> {
	const text = await request.clone().text()
	if (text.trimStart()[0] !== '{' || jsonTooDeep(text)) return undefined
	try {
		JSON.parse(text)
	} catch {
		return undefined
	}
	const headers = new Headers(request.headers)
	headers.set('content-type', 'application/json')
	return new Request(request.url, { method: 'POST', headers, body: text, signal: request.signal })
}

/**
 * The hook; `routed` tells whether a route serves a path (routeMatcher over the app's routes), `reenter` serves a
 * request through the app from the start (a body decoded or retyped, an Azure, Vertex or Bedrock call as the `/v1` one it is).
 */
export const requestGuard = (svc: Services, routed?: Routed, reenter?: (request: Request) => Promise<Response>, takesJson?: TakesJson) =>
	new Elysia({ name: 'request-guard' })
		.onRequest(async ({ request, set }) => {
			const handed = handedOn.get(request)
			// Elysia finds the path at the first '/' from the URL's 12th character, which assumes a host of four characters
			// or more: behind `Host: gw` (a compose or Kubernetes service) it routed `/v1/x/y` as `/x/y` or as nothing. Such a
			// URL is given a user part, which neither its host nor its origin includes, and served again.
			if (reenter && handed === undefined && request.url.indexOf('/', 8) < 11 && request.url.charCodeAt(0) !== 47) return reenter(withLongerUrl(request))
			// Before the guard's checks, whose refusals a browser's page must be able to read too.
			const cors = corsHeaders(svc.env.cors, request)
			if (cors) Object.assign(set.headers, cors)
			const id = guardRequest(svc, request, routed, handed)
			if (typeof id !== 'string') return id
			set.headers['x-request-id'] = id
			// Handed on by the main app, which knows none of these routes: what they take is told here.
			if (handed !== undefined) return notJsonBody(request, takesJson, id)
			if (cors && isPreflight(request)) return preflightResponse(request, cors, id)
			// Before anything reads the body (the rewrites below, Elysia's parser): a caller without a good key waits for nothing.
			// Not for a Gemini upload's chunk (its session is its key), nor on a path an app knows no route of its serves (one
			// built with every route; the main app cannot tell such a path from a deferred route's, so there it needs a key).
			if (request.body !== null && request.method !== 'GET' && request.method !== 'HEAD' && !isUploadChunk(request)) {
				const path = pathOf(request)
				const refused = routed?.(path) === false ? undefined : await refusedBeforeBody(svc, request, path)
				if (refused) {
					// Closed once answered: keeping it open would wait for the body all the same.
					const res = errorResponse(refused, shapeForRequest(request, path), id)
					res.headers.set('connection', 'close')
					return res
				}
			}
			if (reenter) {
				const codings = contentCodings(request)
				if (codings.length) return rewritten(svc, request, id, reenter, () => decoded(svc, request, codings))
				const path = request.url.includes('/openai/') ? pathOf(request) : undefined
				if (path && isAzurePath(path)) return rewritten(svc, request, id, reenter, measuredFirst(svc, request, () => fromAzure(request, path)))
				const beta = request.url.includes('/v1alpha') ? betaPath(pathOf(request)) : undefined
				if (beta) return rewritten(svc, request, id, reenter, async () => asBeta(request, beta))
				const vertex = request.method === 'POST' && request.url.includes('/publishers/anthropic/') ? vertexCall(pathOf(request)) : undefined
				if (vertex) return rewritten(svc, request, id, reenter, measuredFirst(svc, request, () => fromVertex(request, vertex)))
				const bedrock = request.method === 'POST' && request.url.includes('/model/') ? bedrockCall(pathOf(request)) : undefined
				if (bedrock) return rewritten(svc, request, id, reenter, measuredFirst(svc, request, () => fromBedrock(request, bedrock)), bedrock.stream ? asEventStream : undefined)
				if (untypedJson(request)) {
					const retyped = await rewritten(svc, request, id, reenter, () => typedAsJson(request))
					if (retyped) return retyped
				}
			}
			return notJsonBody(request, takesJson, id) ?? guardBody(svc, request, id)
		})
		// A route whose body is optional parses it with its errors caught, and would go on without it: answered here.
		.onBeforeHandle({ as: 'global' }, ({ request, set }) => {
			const late = bodyTimeoutOf(request)
			if (late) return bodyTimedOut(request, late, set.headers['x-request-id'] as string)
		})
