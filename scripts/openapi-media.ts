/**
 * Media types of the upload and transcript routes that their schemas cannot say. Elysia documents a request body as
 * multipart when its schema holds a file, else as JSON, and an answer as JSON; these routes take or give both:
 * - `POST /v1/videos` and `/v1/video/generations` take JSON and multipart (the `openai` SDK's `videos.create` sends
 *   multipart, with an `input_reference` image file, as OpenAI's `POST /videos` takes it);
 * - `POST /v1/images/edits` takes multipart and, for GPT image models, JSON (`images` by URL or file id);
 * - the transcripts of `/v1/audio/transcriptions` and `/v1/audio/translations` in `text` and `srt` are
 *   `text/plain`, in `vtt` `text/vtt` (the upstream's type is relayed; OpenAI's are these).
 * @module
 */
type Json = Record<string, unknown>
type Schema = Json & { properties?: Record<string, Schema>; anyOf?: Schema[]; items?: Schema; required?: string[] }

/** OpenAI's `input_reference`: an image the video starts from, uploaded as a file. */
const INPUT_REFERENCE: Schema = { type: 'string', format: 'binary', description: 'An image file the video starts from (multipart only)' }

/** Routes documented as JSON that take multipart too, with the files only multipart carries. */
const MULTIPART_TOO: Record<string, Record<string, Schema>> = {
	'post /v1/videos': { input_reference: INPUT_REFERENCE },
	'post /v1/video/generations': { input_reference: INPUT_REFERENCE },
}

/** Routes documented as multipart that take JSON too (their file fields left out of it). */
const JSON_TOO = ['post /v1/images/edits']

/** Text answers beside the JSON one, by media type: what each is. */
const TEXT_ANSWERS: Record<string, Record<string, string>> = {
	'post /v1/audio/transcriptions': { 'text/plain': '`response_format` text or srt', 'text/vtt': '`response_format` vtt' },
	'post /v1/audio/translations': { 'text/plain': '`response_format` text or srt', 'text/vtt': '`response_format` vtt' },
}

const isBinary = (s: Schema): boolean => s.format === 'binary' || (s.type === 'array' && !!s.items && isBinary(s.items))

/** A multipart schema as JSON: file alternatives dropped, and the fields that were files only. */
function withoutFiles(schema: Schema): Schema {
	const properties: Record<string, Schema> = {}
	for (const [name, p] of Object.entries(schema.properties ?? {})) {
		if (isBinary(p)) continue
		if (!p.anyOf) {
			properties[name] = p
			continue
		}
		const rest = p.anyOf.filter((a) => !isBinary(a))
		if (!rest.length) continue
		const { anyOf: _, ...meta } = p
		properties[name] = rest.length === 1 ? { ...meta, ...rest[0] } : { ...meta, anyOf: rest }
	}
	return { ...schema, properties, ...(schema.required ? { required: schema.required.filter((r) => r in properties) } : {}) }
}

function operation(doc: Json, key: string): Json {
	const [method, path] = key.split(' ') as [string, string]
	const op = (doc.paths as Record<string, Record<string, Json>>)[path]?.[method]
	// A renamed route must be renamed here too, not silently lose a media type.
	if (!op) throw new Error(`openapi-media: no operation ${key}`)
	return op
}

function requestContent(doc: Json, key: string, type: string): { content: Record<string, Json>; schema: Schema } {
	const content = ((operation(doc, key).requestBody as Json | undefined)?.content ?? {}) as Record<string, Json>
	const schema = content[type]?.schema as Schema | undefined
	if (!schema) throw new Error(`openapi-media: ${key} takes no ${type}`)
	return { content, schema }
}

export function describeMedia(doc: Json): Json {
	for (const [key, files] of Object.entries(MULTIPART_TOO)) {
		const { content, schema } = requestContent(doc, key, 'application/json')
		content['multipart/form-data'] = { schema: { ...structuredClone(schema), properties: { ...structuredClone(schema.properties), ...files } } }
	}
	for (const key of JSON_TOO) {
		const { content, schema } = requestContent(doc, key, 'multipart/form-data')
		content['application/json'] = { schema: withoutFiles(structuredClone(schema)) }
	}
	for (const [key, types] of Object.entries(TEXT_ANSWERS)) {
		const ok = (operation(doc, key).responses as Record<string, Json>)['200']!
		const text = Object.entries(types).map(([type, what]) => [type, { schema: { type: 'string', description: `The transcript as ${what} asks` } }])
		ok.content = { ...(ok.content as Json), ...Object.fromEntries(text) }
	}
	return doc
}
