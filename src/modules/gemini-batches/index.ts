/**
 * Gemini's Batch Mode (ai.google.dev/api/batch-mode) for models served by Gemini channels, as `ai.batches.*` of
 * @google/genai calls it (with `apiVersion: 'v1beta'`): `POST /v1beta/models/{model}:batchGenerateContent` with
 * inline requests (reached through the model route, modules/gemini; `createGeminiBatch` here), and
 * `GET /v1beta/batches`, `GET /v1beta/batches/{id}`, `POST /v1beta/batches/{id}:cancel`, `DELETE /v1beta/batches/{id}`.
 * The batch runs on one Gemini channel under the channel's name for the model. Creating one charges the upper bound
 * of every request at batch prices when the upstream accepts it; when it ends, its answered requests are billed from
 * their `usageMetadata` and the rest refunded (src/tasks/gemini-batch.ts). The client sees the gateway's names
 * (`batches/{task id}`, `models/{its model}`), never the vendor's; only the creating account sees a batch. Requests
 * naming the account's uploads by gateway URI run on the channel holding them, under the vendor's URIs (gemini-files/refs.ts).
 * A batch may instead name a JSONL input file uploaded through the gateway (`inputConfig.fileName`, the account's own):
 * it is read from the bytes the gateway kept as the upload passed (gemini-files/parts.ts: Google gives no upload
 * back) to bound the charge, and runs on the channel holding it; its `responsesFile` is shown under a gateway name
 * the account downloads with `files.download` (gemini-files/download.ts).
 * @module
 */
import { Elysia, t } from 'elysia'
import { GatewayError, notFound } from '../../core/errors'
import { modelAuth } from '../../http/model-auth'
import { jsonResponse, readJson, relayPassthrough } from '../../passthrough/relay'
import { jsonHeaders } from '../../passthrough/upstream'
import { GeminiErrorBody } from '../../protocols/gemini'
import { geminiMethodUrl } from '../../providers/native-endpoints'
import { targetsOf } from '../../relay/image-tokens'
import type { Services } from '../../services'
import { GEMINI_BATCH_ENDPOINT, type GeminiBatchRecord, refreshGeminiBatch } from '../../tasks/gemini-batch'
import { type TaskRow, deleteFinished, findOwned, isTerminal, listOwned, newTaskId } from '../../tasks/store'
import { taskOp } from '../../tasks/submit'
import { call, holder } from '../batches/upstream'
import { batchPrice } from '../batches/price'
import { GoogleKeyQuery } from '../models/model'
import { keptText } from '../gemini-files/parts'
import { idOf as fileIdOf, newFileId, ownedFile } from '../gemini-files/records'
import { namesGatewayFile, pinBodies } from '../gemini-files/refs'
import type { ModelCall } from '../gemini/generate'
import { batchBound, fileRequests, type GeminiBatch, geminiRoute, parseBatch, upstreamBody } from './requests'
import { isObject } from '../../core/json'

type Obj = Record<string, unknown>

/**
 * The Operation as the client sees it: the gateway's batch name and the client's model, in place of the channel's
 * (`name`, `metadata.name`, `metadata.model`, and each response's `modelVersion` when the channel maps the model).
 */
export function batchView(op: Obj, task: Pick<TaskRow, 'id' | 'model' | 'result'>): Obj {
	const name = `batches/${task.id}`
	const upstreamModel = (task.result as GeminiBatchRecord | null)?.upstreamModel
	const out = structuredClone(op)
	out.name = name
	if (isObject(out.metadata)) {
		out.metadata.name = name
		out.metadata.model = `models/${task.model}`
	}
	const rename = (o: unknown) => {
		const list = isObject(o) && isObject(o.inlinedResponses) ? o.inlinedResponses.inlinedResponses : undefined
		if (!Array.isArray(list) || !upstreamModel || upstreamModel === task.model) return
		for (const r of list) if (isObject(r) && isObject(r.response) && r.response.modelVersion === upstreamModel) r.response.modelVersion = task.model
	}
	rename(out.response)
	if (isObject(out.metadata)) rename(out.metadata.output)
	// A file batch's files under the gateway's names: the input the client named, the responses it may download.
	const record = task.result as GeminiBatchRecord | null
	const input = isObject(out.metadata) && isObject(out.metadata.inputConfig) ? out.metadata.inputConfig : undefined
	if (input && record?.inputFile && input.fileName !== undefined) input.fileName = `files/${record.inputFile}`
	for (const o of [out.response, isObject(out.metadata) ? out.metadata.output : undefined])
		if (isObject(o) && o.responsesFile !== undefined) o.responsesFile = record?.responsesFile ? `files/${record.responsesFile}` : undefined
	return out
}

const seen = (r: TaskRow): Obj => batchView((r.result as GeminiBatchRecord | null)?.batch ?? { metadata: {} }, r)

/** `batches/{id}` or the bare id, as the client names it. */
const idOf = (name: string): string => decodeURIComponent(name).replace(/^batches\//, '')

/** The account's batch; Gemini's 404 otherwise (another account's batch included). */
async function owned(svc: Services, name: string, accountId: number): Promise<TaskRow> {
	const id = idOf(name)
	const row = await findOwned(svc.db, 'gemini_batch', id, accountId)
	if (!row) throw notFound(`Batch batches/${id} not found`, 'batch_not_found')
	return row
}

/** A batch ready to submit: its requests (to bound), the channel it must run on, and its body for that channel. */
type Prepared = { parsed: GeminiBatch; channelId?: number; body: (upstreamModel: string) => Obj; record?: Partial<GeminiBatchRecord> }

/** Inline requests: uploaded files named by gateway URIs are the account's (else 404), under the vendor's URIs, and pin the batch to their channel. */
async function prepareInline(c: ModelCall, given: GeminiBatch): Promise<Prepared> {
	const files = await pinBodies(c.svc, c.token.accountId, given.requests.map((r) => r.request))
	const parsed = files.channelId === undefined ? given : { ...given, requests: given.requests.map((r, i) => ({ ...r, request: files.bodies[i]! })) }
	return { parsed, channelId: files.channelId, body: (upstreamModel) => upstreamBody(parsed, upstreamModel) }
}

/**
 * A batch input file: the account's upload (else 404, as `files.get` answers), read from the bytes the gateway kept as
 * it passed (gemini-files/parts.ts: Google gives no upload back) and bounded line by line; the batch runs on the
 * channel holding the file. The vendor reads the file as it is: a line naming an uploaded file by a gateway URI, or a
 * model the channel renames, cannot be rewritten in it, and is refused.
 */
async function prepareFile(c: ModelCall, given: GeminiBatch, fileName: string): Promise<Prepared> {
	const file = await ownedFile(c.svc, fileIdOf(fileName), c.token.accountId)
	const ch = holder(c.svc, file)
	const text = await keptText(c.svc, file.id, Number(file.file.sizeBytes))
	if (text === undefined)
		throw new GatewayError('invalid_request', `${fileName} was not kept as a batch input file: upload the JSON Lines through this gateway with mimeType "jsonl" (at most MAX_GEMINI_BATCH_FILE_BYTES), so their cost can be bounded`, {
			code: 'invalid_request',
			param: 'batch.inputConfig.fileName',
		})
	const requests = fileRequests(text, c.model)
	if (namesGatewayFile(requests.map((r) => r.request)))
		throw new GatewayError('invalid_request', "The batch input file names uploaded files by this gateway's URIs, which the vendor cannot read and the gateway cannot rewrite in a file: send those requests inline (batch.inputConfig.requests), where they are", {
			code: 'invalid_request',
			param: 'batch.inputConfig.fileName',
		})
	const upstreamModel = ch.modelMap[c.model] ?? c.model
	if (upstreamModel !== c.model && requests.some((r) => r.request.model !== undefined))
		throw new GatewayError('invalid_request', `The batch input file names the model "${c.model}", which its channel serves as "${upstreamModel}": leave request.model out of its lines (the batch's model applies)`, { code: 'model_mapped', param: 'batch.inputConfig.fileName' })
	const parsed = { ...given, requests }
	return { parsed, channelId: ch.id, body: (m) => upstreamBody(parsed, m, String(file.file.name)), record: { inputFile: file.id, responsesFile: newFileId() } }
}

/** `POST /v1beta/models/{model}:batchGenerateContent` (the model route dispatches it here). */
export async function createGeminiBatch(c: ModelCall, body: unknown): Promise<Response> {
	if (c.version !== '/v1beta')
		throw new GatewayError('invalid_request', 'Batch Mode is served under /v1beta: call /v1beta/models/{model}:batchGenerateContent (with @google/genai, httpOptions.apiVersion "v1beta")', { code: 'invalid_request' })
	const given = parseBatch(body, c.model)
	// Another vendor's model is refused here, in Gemini's words, before anything is held.
	const route = geminiRoute(c.svc, c.token, c.model)
	const { parsed, channelId: filesOn, body: upstream, record: extra } = given.fileName === undefined ? await prepareInline(c, given) : await prepareFile(c, given, given.fileName)
	if (filesOn !== undefined && !route.channels.some((ch) => ch.id === filesOn))
		throw new GatewayError('invalid_request', `The files this batch names are held by a Gemini channel that does not serve the model "${c.model}": only the key they were uploaded with can read them`, {
			code: 'unsupported_for_model',
		})
	const id = newTaskId('gemini_batch')
	return relayPassthrough(
		taskOp({
			ctx: { svc: c.svc, token: c.token, requestId: c.requestId, startedAt: c.startedAt, signal: c.request.signal },
			kind: 'gemini_batch',
			id,
			endpoint: GEMINI_BATCH_ENDPOINT,
			model: c.model,
			types: ['gemini'],
			shape: 'gemini',
			...(filesOn !== undefined && { pin: (ch) => ch.id === filesOn }),
			cost: (price) => batchBound(parsed, batchPrice(price), targetsOf(route.channels.filter((ch) => ch.type === 'gemini'), c.model)),
			request: (ch, upstreamModel) => ({ url: geminiMethodUrl(ch, upstreamModel, 'batchGenerateContent'), headers: jsonHeaders(ch), body: JSON.stringify(upstream(upstreamModel)) }),
			async accept(res, ch, price) {
				const op = await readJson(res)
				const name = typeof op.name === 'string' && op.name.startsWith('batches/') ? op.name : undefined
				if (!name) throw new GatewayError('upstream', 'upstream accepted the batch without a batch name', { code: 'upstream_malformed' })
				const record: GeminiBatchRecord = { batch: op, endpoint: GEMINI_BATCH_ENDPOINT, prices: { [c.model]: batchPrice(price) }, upstreamModel: ch.modelMap[c.model] ?? c.model, ...extra }
				return { response: new Response(null), upstreamId: name, result: record }
			},
			reply: (task) => jsonResponse(batchView((task.result as GeminiBatchRecord).batch, task), c.requestId),
		}),
	)
}

const Name = t.Object({ name: t.String({ description: 'The batch id (`batches/{id}` names it)' }) })
const Operation = t.Object({ name: t.String(), metadata: t.Optional(t.Unknown()), done: t.Optional(t.Boolean()) }, { additionalProperties: true })
const ListQuery = t.Object({ pageSize: t.Optional(t.Numeric({ minimum: 1, maximum: 1000, multipleOf: 1 })), pageToken: t.Optional(t.String()), key: GoogleKeyQuery })
const errors = { 400: GeminiErrorBody, 401: GeminiErrorBody, 404: GeminiErrorBody, 502: GeminiErrorBody }

export const geminiBatchesModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['Gemini'] } })
		.use(modelAuth(svc, { gemini: true, counted: 'submits' }))
		.get(
			'/v1beta/batches',
			async ({ query, token }) => {
				const size = query.pageSize ?? 50
				const rows = await listOwned(svc.db, 'gemini_batch', token.accountId, { after: query.pageToken, limit: size, order: 'desc' })
				const page = rows.slice(0, size)
				return { operations: page.map(seen), ...(rows.length > size ? { nextPageToken: page.at(-1)!.id } : {}) }
			},
			{
				query: ListQuery,
				response: { 200: t.Object({ operations: t.Array(t.Unknown()), nextPageToken: t.Optional(t.String()) }), 400: GeminiErrorBody, 401: GeminiErrorBody },
				detail: { summary: 'List batches', description: "The account's Gemini batches, newest first, as last seen; paged by `pageSize` / `pageToken`." },
			},
		)
		.get(
			'/v1beta/batches/:name',
			async ({ params, token, request, requestId }) => {
				const row = await owned(svc, params.name, token.accountId)
				const { task, batch } = await refreshGeminiBatch(svc, row, request.signal)
				return jsonResponse(batchView(batch, task), requestId)
			},
			{
				params: Name,
				response: { 200: Operation, 401: GeminiErrorBody, 404: GeminiErrorBody },
				detail: { summary: 'Get a batch', description: 'Asks the upstream; a batch that ended is settled here. Its responses are inline, in `response.inlinedResponses`.' },
			},
		)
		.post(
			'/v1beta/batches/:name',
			async ({ params, token, request, requestId }) => {
				if (!params.name.endsWith(':cancel')) throw notFound(`Method not found: batches/${params.name} (supported: cancel)`, 'method_not_found')
				const row = await owned(svc, params.name.slice(0, -':cancel'.length), token.accountId)
				// The refund comes when the batch has ended (get, or the poller), with the responses answered before the cancel.
				if (!isTerminal(row.status)) await call(holder(svc, row), `/v1beta/${row.upstreamId}:cancel`, { method: 'POST', json: {} }, request.signal)
				return jsonResponse({}, requestId)
			},
			{
				params: t.Object({ name: t.String({ description: '`{id}:cancel`' }) }),
				response: { 200: t.Object({}), ...errors },
				detail: { summary: 'Cancel a batch', description: '`POST /v1beta/batches/{id}:cancel`. Only the requests answered before the cancel took effect are paid for.' },
			},
		)
		.delete(
			'/v1beta/batches/:name',
			async ({ params, token, request, requestId }) => {
				const row = await owned(svc, params.name, token.accountId)
				// Settled first: once deleted upstream its responses could not be read, and work done would be refunded.
				const { task } = await refreshGeminiBatch(svc, row, request.signal)
				if (!isTerminal(task.status)) throw new GatewayError('invalid_request', `Batch batches/${task.id} is still running; cancel it before deleting it`, { code: 'invalid_request' })
				await call(holder(svc, row), `/v1beta/${row.upstreamId}`, { method: 'DELETE' }, request.signal)
				await deleteFinished(svc.db, 'gemini_batch', row.id, token.accountId)
				return jsonResponse({}, requestId)
			},
			{
				params: Name,
				response: { 200: t.Object({}), ...errors },
				detail: { summary: 'Delete a batch', description: 'Once it has ended (cancel a running batch first); its usage stays in the account history.' },
			},
		)
