/**
 * The two routes nearly every model request takes, POST /v1/chat/completions and POST /v1/messages, served by Bun's
 * router straight to their handler rather than through Elysia's request pipeline (its context, hooks, parse and derive
 * steps and response mapping): 5–15 µs less CPU per request, 3–8% of the gateway's (bench/README, sixteenth VM).
 * Only the plain case is served here: a JSON body that parses and passes the route's schema (checked by a validator
 * built as Elysia builds its own), a key found in the key cache. Anything else (another content type, a body that does not
 * parse or validate, a key to look up or to refuse) goes to the Elysia route itself, which answers as it always does,
 * so what the routes do when something is wrong has one implementation. The Elysia routes stay the routes' definition:
 * their schemas make the OpenAPI document, and `app.handle` serves them.
 * @module
 */
import { getSchemaValidator, type TSchema } from 'elysia'
import type { AuthToken } from '../auth/api-key'
import type { Services } from '../services'
import { corsHeaders, withCors } from './cors'
import { toGatewayError } from './error-map'
import { type ErrorShape, errorResponse } from './error-shapes'
import { presentedKey } from './model-auth'
import { isJsonType, jsonTooDeep, tooDeepError } from './raw-json'
import { BodyReadTimeout, bodyTimedOut } from './body-deadline'
import { guardRequest, hasUnsizedBody, inMemory } from './request-guard'

/** What a model route's handler gets, from either pipeline. */
export type RouteContext = { body: unknown; raw: string | undefined; token: AuthToken; requestId: string; startedAt: number; request: Request }

export type HotRoute = { schema: TSchema; shape: ErrorShape; serve(c: RouteContext): Promise<Response> }

/** Bun's route handler for `route`; `elysia` is the app's own handler, for everything but the plain case. */
export function hotRoute(svc: Services, route: HotRoute, elysia: (request: Request) => Response | Promise<Response>) {
	const validator = getSchemaValidator(route.schema, { normalize: false })!
	const answer = (e: unknown, id: string) => errorResponse(toGatewayError((e as { code?: string } | null)?.code ?? 'UNKNOWN', e, svc), route.shape, id)
	const serve = async (request: Request): Promise<Response> => {
		const id = guardRequest(svc, request)
		if (typeof id !== 'string') return id
		// A body without a length is measured by Elysia's guard as it arrives, a compressed one decoded (request-guard.ts).
		if (hasUnsizedBody(request) || request.headers.has('content-encoding')) return elysia(request)
		const type = request.headers.get('content-type') ?? ''
		const semi = type.indexOf(';')
		if (!isJsonType(semi === -1 ? type : type.slice(0, semi))) return elysia(request)
		// The key before the body: one to look up or refuse goes to Elysia's guard unread (model-auth.ts refusedBeforeBody).
		const token = svc.keys.cached(presentedKey(request, false))
		if (!token) return elysia(request)
		let raw: string
		try {
			raw = await svc.bodyReads.within(request.text(), request)
		} catch (e) {
			if (e instanceof BodyReadTimeout) return bodyTimedOut(request, e, id)
			return elysia(request)
		}
		// The body read here is the one Elysia's route reads again when it answers instead (already in memory: the
		// guard need not wait for it).
		const again = () => elysia(inMemory(new Request(request.url, { method: request.method, headers: request.headers, body: raw, signal: request.signal })))
		// Before parsing: a pathologically nested body is slow to parse at all (raw-json.ts).
		if (jsonTooDeep(raw)) return errorResponse(tooDeepError(), route.shape, id)
		let body: unknown
		try {
			body = JSON.parse(raw)
		} catch {
			return again()
		}
		if (!validator.Check(body)) return again()
		try {
			const admitted = svc.limits.admit(token)
			if (admitted) await admitted
			const settling = svc.catalog.settling // a change being loaded (routing/catalog.ts)
			if (settling) await settling
			const res = await route.serve({ body, raw, token, requestId: id, startedAt: Date.now(), request })
			if (res.headers.has('x-request-id')) return res
			// What Elysia adds from the guard's `set.headers` (the relays' answers all name it already).
			const headers = new Headers(res.headers)
			headers.set('x-request-id', id)
			return new Response(res.body, { status: res.status, statusText: res.statusText, headers })
		} catch (e) {
			return answer(e, id)
		}
	}
	// A browser's call (cross-origin: it sends an Origin) gets the CORS headers on whatever answers it; no other call pays for it.
	return (request: Request): Promise<Response> => {
		const cors = request.headers.get('origin') === null ? undefined : corsHeaders(svc.env.cors, request)
		return cors ? serve(request).then((res) => withCors(res, cors)) : serve(request)
	}
}
