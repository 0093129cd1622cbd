/**
 * Tidies the document @elysiajs/swagger generates: a JSON route is listed with JSON content only (the plugin adds
 * multipart/form-data and text/plain copies of every schema unless a route declares its parser, which tripled the
 * document and confused client generators). Routes that really take multipart keep it. `additionalProperties: false`
 * is dropped everywhere: Elysia adds it to a schema object the first time it validates a response with it, so the
 * document would otherwise change after the first request.
 *
 * Answers are rewritten as OpenAPI's Response objects are: the plugin copies the schema's own keys (`anyOf`, `format`,
 * `items`) beside `content` and leaves `description`, which is required, out; and it lists a file answer (`t.File`) as
 * multipart/form-data. A file answer is `application/octet-stream` (bytes), a text one (`t.String`) `text/plain`, and a
 * union of JSON and a file (GET /v1/files/{file}: OpenAI's File object, or a Veo video) lists both.
 *
 * A query parameter whose schema is an object is sent as the SDKs send one, `name[key]=value` (qs brackets): OpenAPI's
 * `style: deepObject, explode: true`, which the plugin cannot say (GET /v1/chat/completions `metadata`).
 * @module
 */

type Json = Record<string, unknown>

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

function tidyContent(content: unknown) {
	if (!isObj(content) || !('application/json' in content)) return
	const multipart = isObj(content['multipart/form-data']) && (content['multipart/form-data'].schema as Json | undefined)
	const json = isObj(content['application/json']) && (content['application/json'].schema as Json | undefined)
	// A body with binary fields is a real upload: keep multipart only.
	if (multipart && JSON.stringify(multipart).includes('"format":"binary"')) {
		delete content['application/json']
		delete content['text/plain']
		return
	}
	if (json) {
		delete content['multipart/form-data']
		delete content['text/plain']
	}
}

/** Also drops the `default: "File"` Elysia gives a `t.File` (a name, not a default value of a binary string). */
export function dropClosedObjects(v: unknown) {
	if (Array.isArray(v)) for (const x of v) dropClosedObjects(x)
	else if (isObj(v)) {
		if (v.additionalProperties === false) delete v.additionalProperties
		if (v.format === 'binary' && v.default === 'File') delete v.default
		for (const x of Object.values(v)) dropClosedObjects(x)
	}
}

const RESPONSE_KEYS = ['description', 'headers', 'content', 'links']
const STATUS: Record<string, string> = {
	'200': 'OK',
	'201': 'Created',
	'400': 'Invalid request',
	'401': 'No key, or an unknown, expired or deleted one',
	'402': 'Balance or spend limit exhausted',
	'403': 'Not allowed',
	'404': 'Not found',
	'409': 'Conflict',
	'413': 'Body too large',
	'415': 'Unsupported content type',
	'426': 'Upgrade required',
	'429': 'Rate limited',
	'500': 'Internal error',
	'502': 'Upstream failed',
	'503': 'Unavailable',
	'504': 'Upstream timed out',
	'529': 'Upstream overloaded',
}

const isBinary = (s: unknown) => isObj(s) && s.type === 'string' && s.format === 'binary'

/** One answer as an OpenAPI Response object, its content typed by what the schema is (see the module's note). */
function tidyResponse(code: string, r: Json) {
	for (const k of Object.keys(r)) if (!RESPONSE_KEYS.includes(k)) delete r[k]
	if (typeof r.description !== 'string' || r.description === '') r.description = STATUS[code] ?? `HTTP ${code}`
	if (!isObj(r.content)) return
	const media = r.content['application/json'] ?? r.content['multipart/form-data'] ?? Object.values(r.content)[0]
	const schema = isObj(media) ? media.schema : undefined
	if (!isObj(schema)) return tidyContent(r.content)
	const members = Array.isArray(schema.anyOf) ? (schema.anyOf as unknown[]) : [schema]
	const files = members.filter(isBinary)
	const rest = members.filter((m) => !isBinary(m))
	if (files.length > 0) {
		r.content = {
			...(rest.length > 0 ? { 'application/json': { schema: rest.length === 1 ? rest[0] : { anyOf: rest } } } : {}),
			'application/octet-stream': { schema: files[0] },
		}
	} else if (schema.type === 'string' && schema.format === undefined && schema.enum === undefined) r.content = { 'text/plain': { schema } }
	else tidyContent(r.content)
}

export function tidyOpenApi(doc: unknown): unknown {
	if (!isObj(doc) || !isObj(doc.paths)) return doc
	doc = structuredClone(doc)
	if (!isObj(doc) || !isObj(doc.paths)) return doc
	dropClosedObjects(doc)
	for (const item of Object.values(doc.paths)) {
		if (!isObj(item)) continue
		for (const op of Object.values(item)) {
			if (!isObj(op)) continue
			if (isObj(op.requestBody)) tidyContent(op.requestBody.content)
			if (Array.isArray(op.parameters))
				for (const p of op.parameters) if (isObj(p) && p.in === 'query' && isObj(p.schema) && p.schema.type === 'object') Object.assign(p, { style: 'deepObject', explode: true })
			if (isObj(op.responses)) for (const [code, r] of Object.entries(op.responses)) if (isObj(r)) tidyResponse(code, r)
		}
	}
	return doc
}
