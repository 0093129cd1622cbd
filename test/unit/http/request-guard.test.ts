/**
 * guardRequest (QA non-chat endpoints, item 6): MAX_UPLOAD_BYTES is for the upload routes' multipart bodies only; a
 * multipart body anywhere else is refused with 415 in the caller's shape, whatever its size.
 */
import { describe, expect, it } from 'bun:test'
import { guardRequest, jsonRouteMatcher, routeMatcher, UPLOAD_ROUTES } from '../../../src/http/request-guard'
import type { Services } from '../../../src/services'

const svc = { idleGc: { note() {} }, env: { maxJsonBytes: 1000, maxUploadBytes: 100_000 } } as unknown as Services

const req = (path: string, contentType: string, length: number) =>
	new Request(`http://gw${path}`, { method: 'POST', headers: { 'content-type': contentType, 'content-length': String(length) } })

const statusOf = (r: string | Response) => (typeof r === 'string' ? 'passed' : r.status)

describe('guardRequest', () => {
	it('should hold a multipart upload route to the upload limit', () => {
		expect(UPLOAD_ROUTES.has('/v1/audio/transcriptions')).toBe(true)
		expect(statusOf(guardRequest(svc, req('/v1/audio/transcriptions', 'multipart/form-data; boundary=x', 50_000)))).toBe('passed')
		expect(statusOf(guardRequest(svc, req('/v1/audio/transcriptions', 'multipart/form-data; boundary=x', 100_001)))).toBe(413)
		expect(statusOf(guardRequest(svc, req('/v1/video/generations', 'Multipart/Form-Data; boundary=x', 50_000)))).toBe('passed')
	})

	it('should refuse multipart on a JSON route with 415, small or large, in its shape', async () => {
		for (const len of [10, 50_000]) {
			const r = guardRequest(svc, req('/v1/embeddings', 'multipart/form-data; boundary=x', len)) as Response
			expect(r.status).toBe(415)
			expect(((await r.json()) as { error: { code: string } }).error.code).toBe('unsupported_media_type')
		}
		const anthropic = guardRequest(svc, req('/v1/messages', 'multipart/form-data; boundary=x', 10)) as Response
		expect(((await anthropic.json()) as { type: string }).type).toBe('error')
	})

	it('should hold JSON to the JSON limit on every route', () => {
		expect(statusOf(guardRequest(svc, req('/v1/embeddings', 'application/json', 1000)))).toBe('passed')
		expect(statusOf(guardRequest(svc, req('/v1/embeddings', 'application/json', 1001)))).toBe(413)
		expect(statusOf(guardRequest(svc, req('/v1/audio/transcriptions', 'application/json', 1001)))).toBe(413)
	})
})

describe("a Bedrock InvokeModel path's body over the limit", () => {
	it("should be refused in Anthropic's shape, as the call it is rewritten to; Converse (not served) in OpenAI's", async () => {
		for (const path of ['/model/claude-m/invoke', '/model/us.anthropic.claude-x%3A0/invoke-with-response-stream', '/model/claude-m/invoke/']) {
			const r = guardRequest(svc, req(path, 'application/json', 1001)) as Response
			expect(r.status).toBe(413)
			expect(await r.json()).toMatchObject({ type: 'error', error: { type: 'request_too_large' } })
		}
		const converse = guardRequest(svc, req('/model/claude-m/converse', 'application/json', 1001)) as Response
		expect(((await converse.json()) as { error: { code: string } }).error.code).toBe('request_too_large')
	})
})

describe('jsonRouteMatcher', () => {
	const none = [{ fn: 'none' }]
	const takesJson = jsonRouteMatcher(() => [
		{ method: 'ALL', path: '/mj/*', hooks: { parse: none } },
		{ method: 'POST', path: '/mj/task/:id/cancel', hooks: { parse: none } },
		{ method: 'POST', path: '/mj/task/list-by-ids', hooks: { body: {} } },
		{ method: 'POST', path: '/mj/submit/:action', hooks: { body: {}, parse: [] } },
		{ method: 'POST', path: '/v1/files', hooks: { body: {}, parse: [{ fn: () => undefined }] } },
		{ method: 'POST', path: '/v1/batches/:id/cancel', hooks: {} },
	])

	it("should tell the routes that read their body with Elysia's parser, the most specific route deciding", () => {
		expect(['/mj/task/list-by-ids', '/mj/task/list-by-ids/', '/mj/submit/imagine'].map((p) => takesJson('POST', p))).toEqual([true, true, true])
		expect(['/mj/task/1/cancel', '/mj/other/list', '/v1/files', '/v1/batches/b1/cancel', '/v1/nowhere'].map((p) => takesJson('POST', p))).toEqual([false, false, false, false, false])
		expect(takesJson('PUT', '/mj/task/list-by-ids')).toBe(false)
	})
})

describe('routeMatcher', () => {
	const routed = routeMatcher(() => [{ path: '/v1/files/:id/content' }, { path: '/v1beta/models/*' }, { path: '/v1/realtime/client_secrets' }, { path: '/v1/files/:id/content' }])

	it("should match Elysia's patterns: a parameter is one segment, a wildcard the rest", () => {
		expect(['/v1/files/file-1/content', '/v1/files/file-1/content/', '/v1beta/models/gemini-m:generateContent', '/v1/realtime/client_secrets'].map(routed)).toEqual([true, true, true, true])
		expect(['/v1/files/a/b/content', '/v1/realtime/calls', '/v1/realtime/client.secrets', '/v1beta/models'].map(routed)).toEqual([false, false, false, false])
	})

	it('should answer a multipart body on a path no route serves with its 404, in the caller\'s shape', async () => {
		const r = guardRequest(svc, req('/v1/realtime/calls', 'multipart/form-data; boundary=x', 10), routed) as Response
		expect(r.status).toBe(404)
		expect(((await r.json()) as { error: { code: string } }).error.code).toBe('not_found')
		expect(statusOf(guardRequest(svc, req('/v1/realtime/client_secrets', 'multipart/form-data; boundary=x', 10), routed))).toBe(415)
	})
})

describe('a request handed on to the deferred routes', () => {
	it('should keep the id the first guard gave it', () => {
		const r = req('/v1/batches', 'application/json', 10)
		const first = guardRequest(svc, r) as string
		expect(guardRequest(svc, r, undefined, first)).toBe(first)
		const given = new Request('http://gw/v1/batches', { method: 'POST', headers: { 'x-request-id': 'client-id-1' } })
		expect(guardRequest(svc, given, undefined, 'client-id-1')).toBe('client-id-1')
	})

	it('should leave a multipart body on a path the app does not serve to the app it is handed to', async () => {
		const maybe = (path: string) => (path === '/v1/embeddings' ? true : undefined)
		// Not this app's: the other app's guard answers (404 or 415, or serves an upload route).
		expect(statusOf(guardRequest(svc, req('/v1/realtime/calls', 'multipart/form-data; boundary=x', 10), maybe))).toBe('passed')
		expect(statusOf(guardRequest(svc, req('/v1/messages/batches', 'multipart/form-data; boundary=x', 10), maybe))).toBe('passed')
		// Its own JSON route still refuses it.
		expect(statusOf(guardRequest(svc, req('/v1/embeddings', 'multipart/form-data; boundary=x', 10), maybe))).toBe(415)
	})
})
