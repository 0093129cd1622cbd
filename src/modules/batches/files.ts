/**
 * OpenAI's Files API (platform.openai.com/docs/api-reference/files) as the official SDKs call it: upload
 * (multipart `file` + `purpose`), list, retrieve, delete and content, forwarded to the OpenAI channel that holds the
 * file. Files are for the Batch API here: an upload must have `purpose: "batch"`, and goes to a channel that serves
 * every model its lines name (checked as a batch over it would be, lines.ts). The file id the upstream gives is
 * recorded to the uploading account with its channel; other accounts get OpenAI's 404 for it. Google's clients share
 * the paths (@google/genai calls `/v1` by default): a list or delete with their key header is Gemini's (modules/gemini-files).
 * @module
 */
import { Elysia, t } from 'elysia'
import { GatewayError } from '../../core/errors'
import { formOf, readPlainForm } from '../../http/form-view'
import { modelAuth } from '../../http/model-auth'
import { openaiErrors } from '../../passthrough/schemas'
import { OpenAIErrorBody } from '../../protocols/openai-chat'
import { resolveModel } from '../../relay/budget'
import { orderChannels } from '../../routing/select'
import type { Channel } from '../../routing/catalog'
import type { Services } from '../../services'
import { tasks } from '../../db/schema'
import { newTaskId } from '../../tasks/store'
import { checkContinuations, checkModels, parseLines } from './lines'
import { checkLineRefs } from './refs'
import { call, callJson, holder, owned, ownedPage } from './upstream'
import { deleteFile, GeminiFileList, GeminiListQuery, isGeminiCaller, listFiles } from '../gemini-files'

const FileId = t.Object({ file: t.String() })

/**
 * `GET /v1/files/{id}`: the file's object from its channel. The path is routed by the Gemini operations module,
 * whose `/v1/files/{name}:download` shares it (Elysia allows one route there); it hands OpenAI file ids here.
 */
export async function retrieveFile(svc: Services, id: string, accountId: number, request: Request, requestId: string): Promise<Response> {
	const row = await owned(svc, 'file', id, accountId)
	return (await callJson(holder(svc, row), `/files/${encodeURIComponent(id)}`, { method: 'GET' }, request.signal, requestId)).response
}
/** OpenAI's File object (https://platform.openai.com/docs/api-reference/files/object), as the channel sends it. */
export const FileObject = t.Object({ id: t.String(), object: t.Literal('file') }, { additionalProperties: true })
const FileList = t.Object({ object: t.Literal('list'), data: t.Array(t.Unknown()), first_id: t.Union([t.String(), t.Null()]), last_id: t.Union([t.String(), t.Null()]), has_more: t.Boolean() })
const ListQuery = t.Object({
	after: t.Optional(t.String()),
	limit: t.Optional(t.Numeric({ minimum: 1, maximum: 10000, multipleOf: 1 })),
	order: t.Optional(t.Union([t.Literal('asc'), t.Literal('desc')])),
	purpose: t.Optional(t.String()),
	...GeminiListQuery,
})
const Upload = t.Object({ file: t.File(), purpose: t.String() }, { additionalProperties: true })

/** The first OpenAI channel, in routing order, that serves every model the batch file names under its own name. */
function uploadChannel(svc: Services, token: Parameters<typeof checkModels>[1], lines: ReturnType<typeof parseLines>): Channel {
	// The key's permission and the model's price are checked first, whatever serves it.
	resolveModel(svc, token, lines[0]!.model)
	let refusal: unknown
	for (const ch of orderChannels(svc.catalog.channelsFor(lines[0]!.model).filter((c) => c.type === 'openai'))) {
		try {
			checkModels(svc, token, ch, lines)
			return ch
		} catch (e) {
			refusal ??= e
		}
	}
	throw refusal ?? new GatewayError('invalid_request', `No OpenAI channel serves the model "${lines[0]!.model}" for the Batch API`, { code: 'model_not_found', param: 'model' })
}

export const filesModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['OpenAI'] } })
		// Google's key headers too: `GET`/`DELETE /v1/files…` from @google/genai (its default /v1) are Gemini's Files API.
		.use(modelAuth(svc, { gemini: true, counted: 'submits' }))
		.post(
			'/v1/files',
			async ({ body, token, request, requestId }) => {
				if (body.purpose !== 'batch')
					throw new GatewayError('invalid_request', `Files of purpose '${body.purpose}' are not served here; only purpose 'batch' (the Batch API)`, { code: 'unsupported_purpose', param: 'purpose' })
				const lines = parseLines(await body.file.text())
				const ch = uploadChannel(svc, token, lines)
				await checkContinuations(svc, token.accountId, lines)
				// Files, vector stores and containers its lines name must be the account's, on this channel (refs.ts).
				await checkLineRefs(svc, token.accountId, ch.id, lines)
				const form = new FormData()
				for (const [k, v] of formOf(request) ?? []) form.append(k, v)
				const { body: file, response } = await callJson(ch, '/files', { method: 'POST', body: form }, request.signal, requestId)
				if (typeof file.id !== 'string') throw new GatewayError('upstream', 'upstream answered a file without an id', { code: 'upstream_malformed' })
				await svc.db.orm.insert(tasks).values({ id: newTaskId('file'), kind: 'file', accountId: token.accountId, tokenId: token.id, model: lines[0]!.model, channelId: ch.id, upstreamId: file.id, status: 'completed', progress: 100, requestId, cost: 0, result: { file } })
				return response
			},
			{ parse: readPlainForm, body: Upload, response: { 200: FileObject, ...openaiErrors }, detail: { summary: 'Upload a file', description: "A batch input file (`purpose: 'batch'`), stored on an OpenAI channel serving its models. Anthropic's clients (`anthropic-version` / `anthropic-beta` headers) get Anthropic's Files API (beta) on this path instead, in its shapes (modules/anthropic-files)." } },
		)
		.get(
			'/v1/files',
			({ query, token, request }) =>
				isGeminiCaller(request) ? listFiles(svc, token.accountId, query, request) : ownedPage(svc, 'file', token.accountId, query, (r) => (r.result as { file?: unknown } | null)?.file ?? { id: r.upstreamId, object: 'file' }),
			{
				query: ListQuery,
				response: { 200: t.Union([FileList, GeminiFileList]), 400: OpenAIErrorBody, 401: OpenAIErrorBody },
				detail: { summary: 'List files', description: "The account's files (uploads and batch outputs), newest first. Google's clients (a key in `x-goog-api-key` or `?key=`) get Gemini's `files.list` (`pageSize`, `pageToken`); Anthropic's clients (`anthropic-version` / `anthropic-beta` headers) get Anthropic's Files API (beta) on this path instead, in its shapes (modules/anthropic-files)." },
			},
		)
		.delete(
			'/v1/files/:file',
			async ({ params, token, request, requestId }) => {
				if (isGeminiCaller(request)) return Response.json(await deleteFile(svc, params.file, token.accountId, request), { headers: { 'x-request-id': requestId } })
				const row = await owned(svc, 'file', params.file, token.accountId)
				const { response } = await callJson(holder(svc, row), `/files/${encodeURIComponent(params.file)}`, { method: 'DELETE' }, request.signal, requestId)
				await svc.db.sql.query('DELETE FROM tasks WHERE id = $1', [row.id])
				return response
			},
			{ params: FileId, response: { 200: t.Object({ id: t.String(), object: t.String(), deleted: t.Boolean() }), 401: OpenAIErrorBody, 404: OpenAIErrorBody, 502: OpenAIErrorBody }, detail: { summary: 'Delete a file', description: "An OpenAI file of the account's. Anthropic's clients (`anthropic-version` / `anthropic-beta` headers) get Anthropic's Files API (beta) on this path instead, in its shapes (modules/anthropic-files)." } },
		)
		.get(
			'/v1/files/:file/content',
			async ({ params, token, request, requestId }) => {
				const row = await owned(svc, 'file', params.file, token.accountId)
				const res = await call(holder(svc, row), `/files/${encodeURIComponent(params.file)}/content`, { method: 'GET' }, request.signal)
				return new Response(res.body, { headers: { 'content-type': res.headers.get('content-type') ?? 'application/octet-stream', 'x-request-id': requestId } })
			},
			{ params: FileId, response: { 200: t.File({ description: "The file's bytes (a batch's output: JSONL)" }), 401: OpenAIErrorBody, 404: OpenAIErrorBody, 502: OpenAIErrorBody }, detail: { summary: 'Retrieve file content', description: "An OpenAI file's bytes. Anthropic's clients (`anthropic-version` / `anthropic-beta` headers) get Anthropic's Files API (beta) on this path instead, in its shapes (modules/anthropic-files)." } },
		)
