/**
 * Streamed and binary answers in the OpenAPI document. A route declares its JSON answer only (a response schema Elysia
 * would check costs CPU on every request, and these answers are relayed bytes); the other media types of its `200`
 * are added here, after the plugin's document is tidied: `text/event-stream` with a schema of one event's `data`
 * (components/schemas, openapi-events.ts; OpenAPI 3.0 cannot describe the SSE framing, so the answer's description
 * says how events are named and how the stream ends), the query parameters that ask for a stream (Gemini's `alt=sse`,
 * `stream` on a stored response), and the audio, video and image types of file answers.
 *
 * Typed clients (README, "OpenAPI and typed clients"): openapi-fetch's `createClient<paths, `${string}/json`>` keeps
 * `data` the JSON answer; a streamed call passes `parseAs: 'stream'` and reads events typed by these schemas.
 * @module
 */
import { EVENT_SCHEMAS } from './openapi-events'
import { dropClosedObjects } from './openapi-tidy'

type Json = Record<string, unknown>

/** `answer`: what the 200 is without streaming (the JSON answer unless said). */
type Streamed = { schema: keyof typeof EVENT_SCHEMAS; when: string; answer?: string }

const SSE: Record<string, Streamed> = {
	'post /v1/chat/completions': {
		schema: 'ChatCompletionChunk',
		when: 'With `stream: true`: `text/event-stream`, each `data:` a `chat.completion.chunk`, then `data: [DONE]` (a failure after the first byte is a `data:` holding `{"error": …}`).',
	},
	'post /v1/completions': { schema: 'TextCompletionChunk', when: 'With `stream: true`: `text/event-stream`, each `data:` a `text_completion` piece, then `data: [DONE]`.' },
	'post /v1/messages': {
		schema: 'MessageStreamEvent',
		when: 'With `stream: true`: `text/event-stream` of named events: `message_start`; per content block `content_block_start`, `content_block_delta`…, `content_block_stop`; `message_delta` (stop reason, usage) and `message_stop`; `ping` at any time; `error` for a failure after the first byte.',
	},
	'post /v1/responses': {
		schema: 'ResponseStreamEvent',
		when: 'With `stream: true`: `text/event-stream` of named events (`event:` equals the `type`), `response.created` … `response.completed` (or `response.incomplete`, `response.failed`), numbered by `sequence_number`; no `[DONE]`.',
	},
	'get /v1/responses/{id}': { schema: 'ResponseStreamEvent', when: "With `stream=true` (and `starting_after`): a background response's events, as `POST /v1/responses` streams them." },
	'post /v1beta/models/{model}': { schema: 'GenerateContentResponse', when: 'streamGenerateContent with `alt=sse`: `text/event-stream`, each `data:` a GenerateContentResponse chunk; without it, a JSON array of them.' },
	'post /v1/models/{model}': { schema: 'GenerateContentResponse', when: 'streamGenerateContent with `alt=sse`: `text/event-stream`, each `data:` a GenerateContentResponse chunk; without it, a JSON array of them.' },
	'post /v1/images/generations': { schema: 'ImageGenStreamEvent', when: 'With `stream: true`: `text/event-stream` of named events (`event:` equals the `type`).' },
	'post /v1/images/edits': { schema: 'ImageEditStreamEvent', when: 'With `stream: true`: `text/event-stream` of named events (`event:` equals the `type`).' },
	'post /v1/audio/transcriptions': { schema: 'TranscriptionStreamEvent', when: 'With `stream=true` (gpt-4o transcription models): `text/event-stream`, each `data:` one event.' },
	'post /v1/audio/speech': { schema: 'SpeechStreamEvent', answer: 'The audio bytes, in the asked `response_format`.', when: 'With `stream_format: "sse"`: `text/event-stream`, each `data:` one event.' },
}

/** What a file answer's bytes are, besides `application/octet-stream` (sent when the upstream names no type). */
const VIDEO = ['video/mp4', 'image/webp', 'image/jpeg']
const BINARY: Record<string, string[]> = {
	'post /v1/audio/speech': ['audio/mpeg', 'audio/opus', 'audio/aac', 'audio/flac', 'audio/wav', 'audio/pcm'],
	'get /v1/videos/{id}/content': VIDEO,
	'get /v1/video/generations/{id}/content': VIDEO,
	'get /v1beta/files/{file}': ['video/mp4'],
	'get /v1/files/{file}': ['video/mp4'],
}

const GEMINI_METHODS = ['post /v1beta/models/{model}', 'post /v1/models/{model}']

// Query parameters that choose a stream, read from the URL by the handler (no query schema: it would be checked on every request).
const ALT = { name: 'alt', in: 'query', required: false, schema: { type: 'string', enum: ['sse'] }, description: 'streamGenerateContent: `sse` for server-sent events, else a JSON array' }
const QUERY: Record<string, Json[]> = {
	'post /v1beta/models/{model}': [ALT],
	'post /v1/models/{model}': [ALT],
	'get /v1/responses/{id}': [
		{ name: 'stream', in: 'query', required: false, schema: { type: 'boolean' }, description: "A background response's events as server-sent events (OpenAI channels)" },
		{ name: 'starting_after', in: 'query', required: false, schema: { type: 'integer' }, description: 'With `stream`: the events after this `sequence_number`' },
	],
}

function okOf(doc: Json, key: string): Json {
	const [method, path] = key.split(' ') as [string, string]
	const ok = ((doc.paths as Record<string, Record<string, Json>>)[path]?.[method]?.responses as Record<string, Json> | undefined)?.['200']
	// A renamed route must be renamed here too, not silently lose its streamed answer.
	if (!ok || typeof ok.content !== 'object' || ok.content === null) throw new Error(`openapi-streams: no 200 answer with content for ${key}`)
	return ok
}

export function describeStreams(doc: Json): Json {
	const schemas = structuredClone(EVENT_SCHEMAS)
	dropClosedObjects(schemas)
	const components = (doc.components ?? {}) as Json
	doc.components = { ...components, schemas: { ...(components.schemas as Json | undefined), ...schemas } }
	const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
	for (const [key, types] of Object.entries(BINARY)) {
		const ok = okOf(doc, key)
		const content = ok.content as Record<string, Json>
		const bytes = content['application/octet-stream']
		if (!bytes) throw new Error(`openapi-streams: ${key} has no application/octet-stream answer`)
		const { 'application/octet-stream': _, ...rest } = content
		ok.content = { ...rest, ...Object.fromEntries(types.map((t) => [t, structuredClone(bytes)])), 'application/octet-stream': bytes }
	}
	for (const key of GEMINI_METHODS) {
		const json = (okOf(doc, key).content as Record<string, Json>)['application/json']
		const schema = json?.schema as Json | undefined
		if (!schema || !Array.isArray(schema.anyOf)) throw new Error(`openapi-streams: ${key} has no JSON union to extend`)
		schema.anyOf.push({ type: 'array', items: ref('GenerateContentResponse'), description: 'streamGenerateContent without `alt=sse`: the chunks as one JSON array' })
	}
	for (const [key, params] of Object.entries(QUERY)) {
		okOf(doc, key)
		const [method, path] = key.split(' ') as [string, string]
		const op = (doc.paths as Record<string, Record<string, Json>>)[path]![method]!
		const have = new Set(((op.parameters as Json[] | undefined) ?? []).map((p) => `${p.in} ${p.name}`))
		op.parameters = [...((op.parameters as Json[] | undefined) ?? []), ...params.filter((p) => !have.has(`${p.in} ${p.name}`))]
	}
	for (const [key, s] of Object.entries(SSE)) {
		const ok = okOf(doc, key)
		ok.content = { ...(ok.content as Json), 'text/event-stream': { schema: ref(s.schema) } }
		ok.description = `${s.answer ?? 'The JSON answer.'} ${s.when}`
	}
	return doc
}
