/**
 * Polling Veo's operations and downloading their videos, for the account that submitted them (others get 404):
 * `GET /v1beta/models/{model}/operations/{id}` answers the Operation (veo.ts `operationView`), brought up to date from
 * the upstream first; `GET /v1beta/files/{file}:download?alt=media` streams a finished video from the channel that
 * made it, with the channel's key (Google's video URIs need one), so the caller's own key is all it takes (and any
 * other file recorded to the account, a batch's responses file, from its channel: gemini-files/download.ts); the same
 * path without `:download` is an uploaded file's `files.get` (modules/gemini-files). Both also
 * under `/v1`. Reads are not counted against a key's rpm_limit (clients poll every few seconds).
 * @module
 */
import { Elysia, t } from 'elysia'
import { GatewayError, notFound } from '../../core/errors'
import { modelAuth } from '../../http/model-auth'
import { GeminiErrorBody } from '../../protocols/gemini'
import { authHeaders } from '../../passthrough/upstream'
import { channelTimeouts, fetchUpstream } from '../../relay/upstream-fetch'
import type { Channel } from '../../routing/catalog'
import type { Services } from '../../services'
import { refreshTask } from '../../tasks/refresh'
import { findOwned } from '../../tasks/store'
import { OpenAIErrorBody } from '../../protocols/openai-chat'
import { FileObject, retrieveFile } from '../batches/files'
import { publicBase } from '../video/view'
import { GeminiOperation } from './predict-model'
import { GeminiFile, getFile, isGeminiCaller } from '../gemini-files'
import { downloadFile } from '../gemini-files/download'
import { operationView, parseSampleFile } from './veo'

/** The account's Veo task, up to date; 404 for an unknown id or another account's. */
async function ownOperation(svc: Services, id: string, accountId: number, signal: AbortSignal, model?: string) {
	const task = await findOwned(svc.db, 'veo', id, accountId)
	if (!task || (model !== undefined && task.model !== model)) throw notFound(`Operation ${model ? `models/${model}/operations/` : ''}${id} not found`, 'operation_not_found')
	return refreshTask(svc, task, { signal })
}

/** The channel's key goes only to the channel's own host: a URI elsewhere is fetched without it. */
const sameOrigin = (uri: string, ch: Channel): boolean => {
	try {
		return new URL(uri).origin === new URL(ch.baseUrl).origin
	} catch {
		return false
	}
}

async function download(svc: Services, file: string, accountId: number, request: Request, requestId: string): Promise<Response> {
	const name = file.endsWith(':download') ? file.slice(0, -':download'.length) : file
	const sample = parseSampleFile(name)
	// Not a Veo video: a file recorded to the account (a batch's responses file), from the channel holding it.
	if (!sample) return downloadFile(svc, name, accountId, request, requestId)
	const task = await ownOperation(svc, sample.taskId, accountId, request.signal)
	if (task.status !== 'completed') throw new GatewayError('invalid_request', `The video is not ready (status ${task.status})`, { status: 409, code: 'video_not_ready' })
	const samples = Array.isArray(task.result?.samples) ? (task.result.samples as unknown[]) : []
	const uri = samples[sample.index]
	if (typeof uri !== 'string') throw notFound(`File files/${name} not found`, 'file_not_found')
	const ch = task.channelId === null ? undefined : svc.catalog.channel(task.channelId)
	if (!ch) throw new GatewayError('unavailable', 'The channel that made this video is no longer available', { code: 'channel_unavailable' })
	const headers = sameOrigin(uri, ch) ? authHeaders(ch) : {}
	const { res } = await fetchUpstream(uri, { method: 'GET', headers }, channelTimeouts(ch.settings), request.signal)
	if (!res.ok || !res.body) {
		await res.body?.cancel().catch(() => undefined)
		throw new GatewayError('upstream', `upstream could not serve the video (HTTP ${res.status})`, { code: 'upstream_error' })
	}
	const out: Record<string, string> = { 'content-type': res.headers.get('content-type') ?? 'video/mp4', 'x-request-id': requestId }
	const len = res.headers.get('content-length')
	if (len) out['content-length'] = len
	return new Response(res.body, { status: 200, headers: out })
}

const errors = { 401: GeminiErrorBody, 404: GeminiErrorBody }

export const geminiOperationsModule = (svc: Services) => {
	const poll = async ({ params, token, request }: { params: { model: string; id: string }; token: { accountId: number }; request: Request }) =>
		operationView(await ownOperation(svc, params.id, token.accountId, request.signal, decodeURIComponent(params.model)), publicBase(svc.env.publicUrl, request))
	// A plain id is an uploaded file's `files.get` under /v1beta, and under /v1 for Google's clients (modules/gemini-files);
	// else OpenAI's Files API retrieve (modules/batches/files.ts), which shares the /v1 path.
	const file =
		(version: string) =>
		({ params, token, request, requestId }: { params: { file: string }; token: { accountId: number }; request: Request; requestId: string }) =>
			params.file.includes(':')
				? download(svc, decodeURIComponent(params.file), token.accountId, request, requestId)
				: version === '/v1beta' || isGeminiCaller(request)
					? getFile(svc, params.file, token.accountId, request, requestId)
					: retrieveFile(svc, params.file, token.accountId, request, requestId)
	const pollHook = (version: string) => ({
		params: t.Object({ model: t.String(), id: t.String() }),
		response: { 200: GeminiOperation, ...errors },
		detail: { summary: `Get a video operation (${version})`, description: 'The Veo operation `:predictLongRunning` answered, for the account that submitted it; when done, its video URIs point at this gateway.' },
	})
	const fileHook = {
		params: t.Object({ file: t.String({ description: "An uploaded file's id (`files.get`), or `{id}:download` (with `?alt=media`) as a Veo operation's video URI names it" }) }),
		response: { 200: t.Union([GeminiFile, t.File({ description: 'The video (video/mp4), streamed from the upstream' })]), ...errors, 409: GeminiErrorBody, 502: GeminiErrorBody, 503: GeminiErrorBody },
		detail: { summary: 'Get an uploaded file, or download a generated video (/v1beta)' },
	}
	// Under /v1 the path is also OpenAI's file retrieve (an id without `:download`), and its errors are OpenAI's (the
	// path's shape, http/error-shapes.ts): its document lists both answers (the File object as JSON, the video as bytes).
	const v1FileHook = {
		params: t.Object({ file: t.String({ description: "An OpenAI file id (the Files API's retrieve), a Gemini file id (`files.get`, with the key in `x-goog-api-key` or `?key=`), or `{id}:download` with `?alt=media` as a Veo operation's video URI names it" }) }),
		response: {
			200: t.Union([FileObject, GeminiFile, t.File({ description: 'The video (video/mp4), streamed from the upstream' })]),
			401: OpenAIErrorBody,
			404: OpenAIErrorBody,
			409: OpenAIErrorBody,
			502: OpenAIErrorBody,
		},
		detail: {
			summary: 'Retrieve a file, or download a generated video (/v1)',
			description: "Anthropic's clients (`anthropic-version` / `anthropic-beta` headers) get Anthropic's Files API (beta) metadata on this path instead (modules/anthropic-files).",
			tags: ['OpenAI', 'Gemini'],
		},
	}
	return new Elysia({ detail: { tags: ['Gemini'] } })
		.use(modelAuth(svc, { gemini: true, counted: 'submits' }))
		.get('/v1beta/models/:model/operations/:id', poll, pollHook('/v1beta'))
		.get('/v1/models/:model/operations/:id', poll, pollHook('/v1'))
		.get('/v1beta/files/:file', file('/v1beta'), fileHook)
		.get('/v1/files/:file', file('/v1'), v1FileHook)
}
