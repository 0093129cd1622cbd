import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import OpenAI from 'openai'
import openapiTS, { astToString } from 'openapi-typescript'
import ts from 'typescript'
import { EVENTS } from '../../../scripts/openapi-events'
import { buildOpenApiDocument } from '../../../scripts/openapi-doc'
import { ADMIN_KEY, startTestApp, type TestApp } from '../../helpers/app'
import { startAnthropicMock, startOpenAIMock } from '../../mocks'

const OUT = new URL('../../../test-output/openapi-client/', import.meta.url).pathname

let doc: string
let app: TestApp
let openaiUp: Awaited<ReturnType<typeof startOpenAIMock>>
let anthropicUp: Awaited<ReturnType<typeof startAnthropicMock>>

type Op = { operationId: string; tags?: string[]; security?: Array<Record<string, string[]>>; responses: Record<string, Record<string, unknown>> }
const operations = () => {
	const d = JSON.parse(doc) as { paths: Record<string, Record<string, Op>> }
	return Object.entries(d.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })))
}

/**
 * The typed clients the tests below compile and run, each in its folder under OUT; the two in folders import the one
 * schema.d.ts generated at OUT's top.
 */
const CLIENTS: Record<string, string> = {
	'client.ts': `import createClient from 'openapi-fetch'
import type { paths } from './schema'

export async function run(baseUrl: string, adminKey: string) {
	const api = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${adminKey}\` } })
	const acct = await api.POST('/api/accounts', { body: { name: 'typed', balance: 3 } })
	if (!acct.data) throw new Error('no account')
	const id: number = acct.data.id
	const tok = await api.POST('/api/tokens', { body: { account_id: id, name: 'typed-key', spend_limit: 1 } })
	if (!tok.data) throw new Error('no token')
	const key: string = tok.data.key
	const revealed = await api.GET('/api/tokens/{id}/key', { params: { path: { id: tok.data.id } } })
	const usage = await api.GET('/api/usage', { params: { query: { account_id: id, limit: 10 } } })
	return { id, key, revealed: revealed.data?.key, rows: usage.data?.data.length }
}
`,
	'models/client.ts': `import createClient from 'openapi-fetch'
import type { paths } from '../schema'

export async function run(baseUrl: string, key: string) {
	// \`\${string}/json\`: \`data\` is the JSON answer of an operation that can also stream (README).
	const api = createClient<paths, \`\${string}/json\`>({ baseUrl, headers: { authorization: \`Bearer \${key}\` } })
	const chat = await api.POST('/v1/chat/completions', { body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'typed chat' }] } })
	if (!chat.data) throw new Error(JSON.stringify(chat.error))
	const text: string | null | undefined = chat.data.choices[0]?.message.content
	const msg = await api.POST('/v1/messages', { body: { model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'typed messages' }] } })
	if (!msg.data) throw new Error(JSON.stringify(msg.error))
	const block = msg.data.content[0]
	const messagesText = block?.type === 'text' ? block.text : undefined
	const inputTokens: number = msg.data.usage.input_tokens
	const created = await api.POST('/v1/responses', { body: { model: 'claude-haiku-4-5', input: 'typed responses' } })
	if (!created.data) throw new Error(JSON.stringify(created.error))
	const got = await api.GET('/v1/responses/{id}', { params: { path: { id: created.data.id } } })
	if (!got.data) throw new Error(JSON.stringify(got.error))
	const status: string = got.data.status
	const removed = await api.DELETE('/v1/responses/{id}', { params: { path: { id: created.data.id } } })
	const deleted: boolean | undefined = removed.data?.deleted
	const health = await createClient<paths>({ baseUrl }).GET('/health')
	const healthy: string | undefined = health.data?.status
	return { text, messagesText, inputTokens, status, deleted, healthy }
}
`,
	'streams/client.ts': `import createClient from 'openapi-fetch'
import type { components, paths } from '../schema'

type S = components['schemas']
type Body<P extends keyof paths> = paths[P] extends { post: { requestBody?: { content: { 'application/json': infer B } } } } ? B : never

/** The \`data:\` payloads of a server-sent event stream, typed as the document's event schema. */
async function events<T>(stream: ReadableStream<Uint8Array> | null | undefined): Promise<T[]> {
	if (!stream) throw new Error('no stream')
	const text = await new Response(stream).text()
	return text.split('\\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)) as T)
}

export async function run(baseUrl: string, key: string) {
	const api = createClient<paths, \`\${string}/json\`>({ baseUrl, headers: { authorization: \`Bearer \${key}\` } })
	const chatBody: Body<'/v1/chat/completions'> = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'typed chat stream' }], stream: true }
	const chunks = await events<S['ChatCompletionChunk']>((await api.POST('/v1/chat/completions', { body: chatBody, parseAs: 'stream' })).data)
	const chat: string = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')
	const msgBody: Body<'/v1/messages'> = { model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'typed message stream' }], stream: true }
	const msgEvents = await events<S['MessageStreamEvent']>((await api.POST('/v1/messages', { body: msgBody, parseAs: 'stream' })).data)
	const message: string = msgEvents.map((e) => (e.type === 'content_block_delta' && e.delta.type === 'text_delta' ? e.delta.text : '')).join('')
	const rsBody: Body<'/v1/responses'> = { model: 'claude-haiku-4-5', input: 'typed responses stream', stream: true }
	const rsEvents = await events<S['ResponseStreamEvent']>((await api.POST('/v1/responses', { body: rsBody, parseAs: 'stream' })).data)
	const response: string = rsEvents.map((e) => (e.type === 'response.output_text.delta' ? e.delta : '')).join('')
	const gemBody: Body<'/v1beta/models/{model}'> = { contents: [{ role: 'user', parts: [{ text: 'typed gemini stream' }] }] }
	const gem = await api.POST('/v1beta/models/{model}', { params: { path: { model: 'gpt-4o-mini:streamGenerateContent' }, query: { alt: 'sse' } }, body: gemBody, parseAs: 'stream' })
	const gemChunks = await events<S['GenerateContentResponse']>(gem.data)
	const gemini: string = gemChunks.map((c) => c.candidates?.[0]?.content?.parts?.map((p) => (typeof p.text === 'string' ? p.text : '')).join('') ?? '').join('')
	const cmplBody: Body<'/v1/completions'> = { model: 'gpt-3.5-turbo-instruct', prompt: 'typed completion stream', stream: true }
	const cmplChunks = await events<S['TextCompletionChunk']>((await api.POST('/v1/completions', { body: cmplBody, parseAs: 'stream' })).data)
	const completion: string = cmplChunks.map((c) => c.choices[0]?.text ?? '').join('')
	return {
		chat,
		message,
		response,
		gemini,
		completion,
		events: { ChatCompletionChunk: chunks, MessageStreamEvent: msgEvents, ResponseStreamEvent: rsEvents, GenerateContentResponse: gemChunks, TextCompletionChunk: cmplChunks },
	}
}
`,
}

type Checked = { said: string; errors: number }
let checked: Promise<(file: string) => Checked> | undefined
/**
 * What `tsc -p OUT` (strict) says of one client ('' when it type-checks) and its errors (what would make tsc exit 1).
 * The schema is generated from the document once and the three clients are checked as one program (in process): the
 * schema's types are resolved once, not once per client in a tsc of its own (seconds each). Each file's diagnostics
 * are its own, with the program's global ones.
 */
const typeCheck = async (file: string) => (await (checked ??= checkClients()))(file)
async function checkClients(): Promise<(file: string) => Checked> {
	await Bun.write(`${OUT}schema.d.ts`, astToString(await openapiTS(JSON.parse(doc))))
	for (const [file, source] of Object.entries(CLIENTS)) await Bun.write(`${OUT}${file}`, source)
	const options = { strict: true, noEmit: true, module: 'Preserve', moduleResolution: 'bundler', target: 'ESNext', skipLibCheck: true, types: [] }
	await Bun.write(`${OUT}tsconfig.json`, JSON.stringify({ compilerOptions: options, files: Object.keys(CLIENTS) }))
	const unreadable = (d: ts.Diagnostic) => {
		throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'))
	}
	const config = ts.getParsedCommandLineOfConfigFile(`${OUT}tsconfig.json`, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: unreadable })!
	const program = ts.createProgram({ rootNames: config.fileNames, options: config.options, configFileParsingDiagnostics: ts.getConfigFileParsingDiagnostics(config) })
	const host = { getCanonicalFileName: (f: string) => f, getCurrentDirectory: () => OUT, getNewLine: () => '\n' }
	return (file) => {
		const diagnostics = ts.getPreEmitDiagnostics(program, program.getSourceFile(`${OUT}${file}`))
		return { said: ts.formatDiagnostics(diagnostics, host), errors: diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error).length }
	}
}

beforeAll(async () => {
	doc = await buildOpenApiDocument()
	openaiUp = await startOpenAIMock({ apiKey: 'up-openai' })
	anthropicUp = await startAnthropicMock({ apiKey: 'up-anthropic' })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'oa', type: 'openai', base_url: openaiUp.url, api_key: 'up-openai', models: ['gpt-4o-mini', 'gpt-3.5-turbo-instruct', 'whisper-1'] },
				{ name: 'an', type: 'anthropic', base_url: anthropicUp.url, api_key: 'up-anthropic', models: ['claude-haiku-4-5'] },
			],
			models: [
				{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 },
				{ name: 'gpt-3.5-turbo-instruct', input_per_mtok: 1, output_per_mtok: 2 },
				{ name: 'claude-haiku-4-5', input_per_mtok: 1, output_per_mtok: 5 },
				{ name: 'whisper-1', input_per_mtok: 1, output_per_mtok: 1 },
			],
		},
	})
}, 120_000)
afterAll(async () => {
	await app.close()
	await openaiUp.stop()
	await anthropicUp.stop()
})

describe('OpenAPI document', () => {
	it('should match the committed openapi/openapi.json (run `bun run openapi` after changing routes)', async () => {
		const committed = await Bun.file(new URL('../../../openapi/openapi.json', import.meta.url)).text()
		expect(committed === doc).toBe(true)
	})

	it('should be served at /docs/json and list every route with schemas', async () => {
		const served = (await (await fetch(`${app.url}/docs/json`)).json()) as { paths: Record<string, Record<string, { responses?: unknown }>> }
		expect(JSON.stringify(served, null, '\t') + '\n').toBe(doc)
		for (const p of ['/api/accounts', '/api/tokens', '/api/tokens/{id}/key', '/api/usage', '/v1/chat/completions', '/v1/messages']) expect(served.paths[p]).toBeDefined()
		expect(served.paths['/api/tokens']!.post!.responses).toHaveProperty('201')
	})

	it('should generate a typed client that type-checks and works against the management API', async () => {
		const tsc = await typeCheck('client.ts')
		expect(tsc.said).toBe('')
		expect(tsc.errors).toBe(0)
		const { run } = await import(`${OUT}client.ts`)
		const out = await run(app.url, ADMIN_KEY)
		expect(out.key).toMatch(/^sk-/)
		expect(out.revealed).toBe(out.key)
		expect(out.rows).toBe(0)
	})

	it('should give every operation a success answer with a schema', () => {
		// QA: GET /v1/responses/{id} (and delete, cancel, input_items) had none, so a typed client's `data` was `never`.
		// GET /v1/realtime, GET /v1/responses (the Responses API's WebSocket mode) and Gemini's Live API (/ws/google.ai.…) are
		// WebSocket upgrades (101), which OpenAPI cannot describe as a body.
		const missing = operations().filter(({ path, method, op }) => {
			if ((path === '/v1/realtime' || path === '/v1/responses' || path.startsWith('/ws/google.ai.')) && method === 'get') return false
			return !Object.entries(op.responses).some(([code, r]) => code.startsWith('2') && r.content !== undefined)
		})
		expect(missing.map((m) => `${m.method.toUpperCase()} ${m.path}`)).toEqual([])
	})

	it('should declare how each operation takes its credentials', () => {
		const d = JSON.parse(doc) as { components: { securitySchemes: Record<string, { type: string; in?: string; name?: string; scheme?: string }> } }
		const schemes = d.components.securitySchemes
		const where = (op: Op) => (op.security ?? [{ bearer: [] }]).flatMap((r) => Object.keys(r).map((k) => (schemes[k]!.type === 'http' ? schemes[k]!.scheme : `${schemes[k]!.in}:${schemes[k]!.name}`)))
		const op = (method: string, path: string) => operations().find((o) => o.method === method && o.path === path)!.op
		// QA: everything inherited the document's bearer: /health looked private, x-api-key and x-goog-api-key unknown.
		expect(where(op('get', '/health'))).toEqual([])
		expect(where(op('post', '/v1/chat/completions')).sort()).toEqual(['bearer', 'header:x-api-key'])
		expect(where(op('post', '/v1/messages')).sort()).toEqual(['bearer', 'header:x-api-key'])
		expect(where(op('post', '/v1beta/models/{model}')).sort()).toEqual(['bearer', 'header:x-api-key', 'header:x-goog-api-key', 'query:key'])
		expect(where(op('post', '/mj/submit/{action}')).sort()).toEqual(['bearer', 'header:mj-api-secret', 'header:x-api-key'])
		expect(where(op('get', '/api/accounts')).sort()).toEqual(['bearer', 'cookie:sb_session'])
		// A session's state-changing call also needs the CSRF token: one requirement naming both.
		expect(op('post', '/api/accounts').security).toEqual([{ bearer: [] }, { session: [], csrf: [] }])
		expect(where(op('post', '/api/session'))).toEqual([])
	})

	it('should declare file answers as bytes of their media type, in well-formed response objects', () => {
		// QA: audio, video and file downloads were declared multipart/form-data, with stray `default` and `format` keys
		// beside `content`; /metrics, Prometheus text, as JSON.
		const allowed = ['description', 'headers', 'content', 'links']
		for (const { path, method, op } of operations())
			for (const [code, r] of Object.entries(op.responses)) {
				expect({ path, method, code, keys: Object.keys(r).filter((k) => !allowed.includes(k)) }).toEqual({ path, method, code, keys: [] })
				expect({ path, method, code, description: typeof r.description }).toEqual({ path, method, code, description: 'string' })
				expect({ path, method, code, multipart: Object.keys((r.content as object | undefined) ?? {}).includes('multipart/form-data') }).toEqual({ path, method, code, multipart: false })
			}
		const speech = operations().find((o) => o.path === '/v1/audio/speech')!.op.responses['200']!.content as Record<string, { schema: unknown }>
		const audio = { schema: { type: 'string', format: 'binary', description: expect.any(String) } }
		expect(speech).toEqual({
			'audio/mpeg': audio,
			'audio/opus': audio,
			'audio/aac': audio,
			'audio/flac': audio,
			'audio/wav': audio,
			'audio/pcm': audio,
			'application/octet-stream': audio,
			'text/event-stream': { schema: { $ref: '#/components/schemas/SpeechStreamEvent' } },
		})
		expect(Object.keys(operations().find((o) => o.path === '/metrics')!.op.responses['200']!.content as object)).toEqual(['text/plain'])
	})

	it('should generate a typed client that compiles under strict and calls the model endpoints', async () => {
		const dir = `${OUT}models/`
		const tsc = await typeCheck('models/client.ts')
		expect(tsc.said).toBe('')
		expect(tsc.errors).toBe(0)
		const { key } = await app.account(1)
		const { run } = await import(`${dir}client.ts`)
		expect(await run(app.url, key)).toMatchObject({
			text: 'Hello! You said: typed chat',
			messagesText: 'Hello! You said: typed messages',
			status: 'completed',
			deleted: true,
			healthy: 'ok',
		})
	}, 60_000)

	it('should describe each streamed answer as text/event-stream of its events, in the committed document', async () => {
		// QA: a `stream: true` answer (and speech, video downloads) was documented as JSON or bare bytes only.
		type Schema = { $ref?: string; anyOf?: Schema[]; properties?: Record<string, Schema>; const?: string; type?: string }
		const committed = JSON.parse(await Bun.file(new URL('../../../openapi/openapi.json', import.meta.url)).text()) as {
			paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string }>; responses: Record<string, { content: Record<string, { schema: Schema }> }> }>>
			components: { schemas: Record<string, Schema> }
		}
		const ok = (method: string, path: string) => committed.paths[path]![method]!.responses['200']!.content
		const streamed = Object.fromEntries(
			[
				['post', '/v1/chat/completions'],
				['post', '/v1/completions'],
				['post', '/v1/messages'],
				['post', '/v1/responses'],
				['get', '/v1/responses/{id}'],
				['post', '/v1beta/models/{model}'],
				['post', '/v1/models/{model}'],
				['post', '/v1/images/generations'],
				['post', '/v1/images/edits'],
				['post', '/v1/audio/transcriptions'],
				['post', '/v1/audio/speech'],
			].map(([m, p]) => [`${m} ${p}`, ok(m!, p!)['text/event-stream']?.schema.$ref?.replace('#/components/schemas/', '')]),
		)
		expect(streamed).toEqual({
			'post /v1/chat/completions': 'ChatCompletionChunk',
			'post /v1/completions': 'TextCompletionChunk',
			'post /v1/messages': 'MessageStreamEvent',
			'post /v1/responses': 'ResponseStreamEvent',
			'get /v1/responses/{id}': 'ResponseStreamEvent',
			'post /v1beta/models/{model}': 'GenerateContentResponse',
			'post /v1/models/{model}': 'GenerateContentResponse',
			'post /v1/images/generations': 'ImageGenStreamEvent',
			'post /v1/images/edits': 'ImageEditStreamEvent',
			'post /v1/audio/transcriptions': 'TranscriptionStreamEvent',
			'post /v1/audio/speech': 'SpeechStreamEvent',
		})
		const schemas = committed.components.schemas
		const types = (name: string) => schemas[name]!.anyOf!.flatMap((m) => m.properties!.type!.const ?? m.properties!.type!.anyOf!.map((x) => x.const))
		expect(schemas.ChatCompletionChunk!.properties!.object!.const).toBe('chat.completion.chunk')
		expect(types('MessageStreamEvent')).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop', 'ping', 'error'])
		expect(types('ResponseStreamEvent')).toEqual(
			expect.arrayContaining(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.done', 'response.function_call_arguments.delta', 'response.reasoning_summary_text.delta', 'response.completed', 'response.incomplete', 'response.failed', 'error']),
		)
		expect(schemas.GenerateContentResponse!.properties!.candidates!.type).toBe('array')
		// The query parameters that ask for a stream, so that a typed client can send them.
		expect(committed.paths['/v1beta/models/{model}']!.post!.parameters!.map((p) => `${p.in} ${p.name}`)).toContain('query alt')
		expect(committed.paths['/v1/responses/{id}']!.get!.parameters!.map((p) => `${p.in} ${p.name}`)).toEqual(['path id', 'query stream', 'query starting_after'])
		expect(Object.keys(ok('get', '/v1/videos/{id}/content'))).toEqual(['video/mp4', 'image/webp', 'image/jpeg', 'application/octet-stream'])
	})

	it('should stream through a typed client, each event as the document describes it', async () => {
		const dir = `${OUT}streams/`
		const tsc = await typeCheck('streams/client.ts')
		expect(tsc.said).toBe('')
		expect(tsc.errors).toBe(0)
		const { key } = await app.account(1)
		const { run } = await import(`${dir}client.ts`)
		const out = (await run(app.url, key)) as { chat: string; message: string; response: string; gemini: string; completion: string; events: Record<keyof typeof EVENTS, unknown[]> }
		expect({ chat: out.chat, message: out.message, response: out.response, gemini: out.gemini, completion: out.completion }).toEqual({
			chat: 'Hello! You said: typed chat stream',
			message: 'Hello! You said: typed message stream',
			response: 'Hello! You said: typed responses stream',
			gemini: 'Hello! You said: typed gemini stream',
			completion: ' Completed: typed completion stream',
		})
		// Every event the gateway sent is one the document describes.
		for (const [name, list] of Object.entries(out.events) as Array<[keyof typeof EVENTS, unknown[]]>) {
			expect({ name, count: list.length > 2 }).toEqual({ name, count: true })
			expect({ name, unlike: list.filter((e) => !Value.Check(EVENTS[name], e)) }).toEqual({ name, unlike: [] })
		}
	}, 60_000)

	it('should declare every media type a media route takes and answers, as the SDKs send and read them', async () => {
		// QA: /v1/videos and /v1/video/generations were documented as JSON only, though `client.videos.create` sends
		// multipart (with an `input_reference` file); /v1/images/edits as multipart only, though GPT image models take JSON;
		// transcripts in text, srt and vtt as JSON only.
		type Schema = { properties?: Record<string, Schema>; type?: string; format?: string; anyOf?: Schema[]; items?: Schema }
		type Body = { content: Record<string, { schema: Schema }> }
		const d = JSON.parse(doc) as { paths: Record<string, Record<string, { requestBody?: Body; responses: Record<string, Body> }>> }
		const taken = (path: string) => d.paths[path]!.post!.requestBody!.content
		const binary = (s: Schema | undefined): boolean => !!s && (s.format === 'binary' || !!s.anyOf?.some(binary) || binary(s.items))
		for (const path of ['/v1/videos', '/v1/video/generations']) {
			expect({ path, types: Object.keys(taken(path)).sort() }).toEqual({ path, types: ['application/json', 'multipart/form-data'] })
			expect(binary(taken(path)['multipart/form-data']!.schema.properties!.input_reference)).toBe(true)
			expect(Object.values(taken(path)['application/json']!.schema.properties!).some(binary)).toBe(false)
		}
		const edits = taken('/v1/images/edits')
		expect(Object.keys(edits).sort()).toEqual(['application/json', 'multipart/form-data'])
		expect(Object.keys(edits['application/json']!.schema.properties!)).toContain('images')
		expect(Object.values(edits['application/json']!.schema.properties!).some(binary)).toBe(false)
		// What the gateway answers for each transcript format is a media type the document lists.
		const { key } = await app.account(1)
		const client = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		for (const path of ['/v1/audio/transcriptions', '/v1/audio/translations'] as const) {
			const listed = Object.keys(d.paths[path]!.post!.responses['200']!.content)
			for (const response_format of ['json', 'text', 'srt', 'vtt', 'verbose_json'] as const) {
				const file = new File([new Uint8Array(4096)], 'a.mp3', { type: 'audio/mpeg' })
				const params = { file, model: 'whisper-1', response_format }
				const { response } = await (path === '/v1/audio/transcriptions' ? client.audio.transcriptions.create(params) : client.audio.translations.create(params)).withResponse()
				const type = response.headers.get('content-type')!.split(';')[0]!
				expect({ path, response_format, type, listed: listed.includes(type) }).toEqual({ path, response_format, type, listed: true })
			}
		}
	})

	it('should relay answers as the upstream sent them, not checked against or cut to the documented schemas', async () => {
		// The document describes the answers; the routes declare no response schema Elysia would check (a `Response` is
		// sent as is): `system_fingerprint` and `service_tier`, in no schema of the document, still reach the client.
		const schemas = (JSON.parse(doc) as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } }).components.schemas
		expect(Object.keys(schemas.ChatCompletionChunk!.properties)).not.toContain('system_fingerprint')
		const { key } = await app.account(1)
		const client = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'passthrough' }], stream: true })
		const chunks: OpenAI.ChatCompletionChunk[] = []
		for await (const c of stream) chunks.push(c)
		expect(chunks.length).toBeGreaterThan(2)
		expect(chunks.map((c) => c.system_fingerprint)).toEqual(chunks.map(() => 'fp_mock'))
		expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hello! You said: passthrough')
	})
})
