/**
 * Validation errors name the field (README, Management API). Elysia reports a numeric value that fails its bounds
 * after coercion with type "property" and no path (QA: `?limit=0` answered `"param":"property"`): the field is found
 * in the request's query, path or body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Elysia, t } from 'elysia'
import { toGatewayError } from '../../../src/http/error-map'
import type { Services } from '../../../src/services'

const svc = { log: { error() {} } } as unknown as Services
let url: string
let stop: () => void

beforeAll(() => {
	const app = new Elysia({ normalize: false })
		.onError(({ code, error, query, params, body }) => {
			const e = toGatewayError(code, error, svc, { query, params, body })
			return Response.json({ param: e.param ?? null, message: e.message }, { status: e.status })
		})
		.get('/q', ({ query }) => query, { query: t.Object({ limit: t.Optional(t.Numeric({ minimum: 1, maximum: 500 })), page: t.Optional(t.Numeric({ minimum: 0 })), q: t.Optional(t.String({ minLength: 2 })) }) })
		.get('/p/:id', ({ params }) => params, { params: t.Object({ id: t.Numeric({ minimum: 1 }) }) })
		.post('/u', ({ body }) => body, { body: t.Object({ name: t.String({ pattern: '^[a-z]+$', description: 'Lower-case letters' }), code: t.Optional(t.String({ pattern: '^[0-9]+$' })) }) })
		.post('/b', ({ body }) => body, { body: t.Object({ n: t.Number({ minimum: 1 }), count: t.Optional(t.Numeric({ minimum: 1 })), o: t.Optional(t.Object({ x: t.Integer(), k: t.Optional(t.Numeric({ maximum: 9 })) })) }) })
		.post('/union', ({ body }) => body, {
			body: t.Object({
				temperature: t.Optional(t.Nullable(t.Number({ minimum: 0, maximum: 2 }))),
				choice: t.Optional(t.Union([t.Literal('auto'), t.Literal('none'), t.Object({ name: t.String() })])),
				messages: t.Optional(
					t.Array(
						t.Union([
							t.Object({ role: t.Union([t.Literal('system'), t.Literal('developer')]), content: t.String() }),
							t.Object({ role: t.Literal('user'), content: t.Union([t.String(), t.Array(t.String())]) }),
							t.Object({ role: t.Literal('tool'), tool_call_id: t.String(), content: t.String() }),
							t.Object({ role: t.Literal('assistant'), content: t.Optional(t.String()) }),
						]),
					),
				),
				blocks: t.Optional(
					t.Array(t.Union([t.Object({ type: t.Literal('text'), text: t.String() }), t.Object({ type: t.String({ pattern: '^(?!(?:text)$)[a-z_]+$' }) }, { additionalProperties: true })])),
				),
			}),
		})
		.listen({ port: 0, hostname: '127.0.0.1' })
	url = `http://127.0.0.1:${app.server!.port}`
	stop = () => void app.stop(true)
})
afterAll(() => stop())

const call = async (path: string, body?: unknown) => {
	const res = await fetch(url + path, body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
	return { status: res.status, ...((await res.json()) as { param: string | null; message: string }) }
}

describe('toGatewayError on validation errors', () => {
	it('should name the query or path field whose coerced value is out of bounds', async () => {
		expect(await call('/q?limit=0')).toMatchObject({ status: 400, param: 'limit', message: 'Invalid query: "limit" Expected number to be greater or equal to 1' })
		expect(await call('/q?limit=501')).toMatchObject({ status: 400, param: 'limit' })
		// Another field holding an acceptable value is not blamed.
		expect(await call('/q?page=1&limit=501')).toMatchObject({ status: 400, param: 'limit' })
		expect(await call('/q?limit=1&page=-1')).toMatchObject({ status: 400, param: 'page' })
		expect(await call('/p/0')).toMatchObject({ status: 400, param: 'id', message: 'Invalid params: "id" Expected number to be greater or equal to 1' })
	})

	it('should name the field Elysia names itself: uncoercible, too short, unknown', async () => {
		expect(await call('/q?limit=abc')).toMatchObject({ status: 400, param: 'limit' })
		expect(await call('/q?q=a')).toMatchObject({ status: 400, param: 'q' })
		expect(await call('/q?lmit=5')).toMatchObject({ status: 400, param: 'lmit' })
	})

	it('should name body fields, nested ones by their dotted path, numeric strings included', async () => {
		expect(await call('/b', { n: 0 })).toMatchObject({ status: 400, param: 'n' })
		expect(await call('/b', {})).toMatchObject({ status: 400, param: 'n' })
		expect(await call('/b', { n: 2, o: { x: 1.5 } })).toMatchObject({ status: 400, param: 'o.x' })
		expect(await call('/b', { n: 2, z: 1 })).toMatchObject({ status: 400, param: 'z' })
		expect(await call('/b', { n: 2, count: '0' })).toMatchObject({ status: 400, param: 'count', message: 'Invalid body: "count" Expected number to be greater or equal to 1' })
		expect(await call('/b', { n: 2, o: { x: 1, k: '10' } })).toMatchObject({ status: 400, param: 'o.k' })
	})

	it('should tell a value that does not fit its pattern what the field takes, not the regular expression', async () => {
		expect(await call('/u', { name: 'Bob 1' })).toMatchObject({ status: 400, param: 'name', message: 'Invalid body: "name" does not fit: Lower-case letters' })
		// A pattern with no description keeps TypeBox's words.
		expect((await call('/u', { name: 'bob', code: 'x' })).message).toContain("Expected string to match '^[0-9]+$'")
	})

	it('should say "request" and name no field when the value cannot be found, never "property"', () => {
		const e = toGatewayError('VALIDATION', { type: 'property', value: 7, validator: { type: 'number', maximum: 5 }, all: [{ path: '', message: 'Expected number to be less or equal to 5' }] }, svc, { query: { a: '1' } })
		expect(e.param).toBeUndefined()
		expect(e.message).toBe('Invalid request: Expected number to be less or equal to 5')
	})
})

describe('toGatewayError on a body that cannot be parsed', () => {
	it('should name the content type it was sent as (not JSON for a multipart body)', () => {
		const parse = (contentType?: string | null) => toGatewayError('PARSE', new Error('Bad Request'), svc, { contentType })
		expect(parse('application/json')).toMatchObject({ message: 'Malformed request body: not valid JSON', code: 'invalid_json', status: 400 })
		expect(parse(null).code).toBe('invalid_json')
		expect(parse('multipart/form-data; boundary=XYZ')).toMatchObject({ message: 'Malformed request body: not valid multipart/form-data', code: 'invalid_body', status: 400 })
		expect(parse('multipart/form-data').message).toBe('Malformed request body: multipart/form-data without a boundary parameter in its content-type')
		expect(parse('application/x-www-form-urlencoded; charset=utf-8').message).toBe('Malformed request body: not valid application/x-www-form-urlencoded')
	})
})

describe('toGatewayError on a union that refuses a value', () => {
	it("should say what the member the value came closest to refused, not 'Expected union value'", async () => {
		expect(await call('/union', { temperature: 3 })).toMatchObject({ status: 400, param: 'temperature', message: 'Invalid body: "temperature" Expected number to be less or equal to 2' })
		// The user message's content is what is wrong, not its role.
		expect(await call('/union', { messages: [{ role: 'user', content: 5 }] })).toMatchObject({ param: 'messages.0.content', message: 'Invalid body: "messages.0.content" Expected one of string or array' })
	})
	it('should blame the missing field of the member whose role or type the value names, not the role of another', async () => {
		// The assistant message may omit its content: it fails on its role alone, one error, while the user message
		// missing its content fails twice (required, and the content union) — fewest errors picked the wrong member.
		expect(await call('/union', { messages: [{ role: 'user' }] })).toMatchObject({ param: 'messages.0.content', message: 'Invalid body: "messages.0.content" Expected required property' })
		expect(await call('/union', { messages: [{ role: 'tool', content: 'ok' }] })).toMatchObject({ param: 'messages.0.tool_call_id', message: 'Invalid body: "messages.0.tool_call_id" Expected required property' })
		// A catch-all member for other types fails on its type's pattern: the text block's missing text is what is wrong.
		expect(await call('/union', { blocks: [{ type: 'text' }] })).toMatchObject({ param: 'blocks.0.text', message: 'Invalid body: "blocks.0.text" Expected required property' })
		// A role no member takes is still blamed on the role, listing every role (not only the first member's).
		expect(await call('/union', { messages: [{ role: 'usr', content: 'hi' }] })).toMatchObject({
			param: 'messages.0.role',
			message: 'Invalid body: "messages.0.role" Expected one of "system", "developer", "user", "tool" or "assistant"',
		})
	})
	it('should list what a union takes when the value is of none of its kinds', async () => {
		expect(await call('/union', { choice: 'any' })).toMatchObject({ param: 'choice', message: 'Invalid body: "choice" Expected one of "auto", "none" or object' })
	})
})
