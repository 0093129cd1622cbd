/**
 * Tidies the document @elysiajs/swagger generates: a JSON route is listed with JSON content only (the plugin adds
 * multipart/form-data and text/plain copies of every schema unless a route declares its parser, which tripled the
 * document and confused client generators). Routes that really take multipart keep it. `additionalProperties: false`
 * is dropped everywhere: Elysia adds it to a schema object the first time it validates a response with it, so the
 * document would otherwise change after the first request.
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

function dropClosedObjects(v: unknown) {
	if (Array.isArray(v)) for (const x of v) dropClosedObjects(x)
	else if (isObj(v)) {
		if (v.additionalProperties === false) delete v.additionalProperties
		for (const x of Object.values(v)) dropClosedObjects(x)
	}
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
			if (isObj(op.responses)) for (const r of Object.values(op.responses)) if (isObj(r)) tidyContent(r.content)
		}
	}
	return doc
}
