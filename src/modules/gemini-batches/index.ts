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
 * @module
 */
import { Elysia, t } from 'elysia'
import { GatewayError, notFound } from '../../core/errors'
import { modelAuth } from '../../http/model-auth'
import { jsonResponse, readJson, relayPassthrough } from '../../passthrough/relay'
import { jsonHeaders } from '../../passthrough/upstream'
import { GeminiErrorBody } from '../../protocols/gemini'
import { geminiMethodUrl } from '../../providers/native-endpoints'
import type { Services } from '../../services'
import { GEMINI_BATCH_ENDPOINT, type GeminiBatchRecord, refreshGeminiBatch } from '../../tasks/gemini-batch'
import { type TaskRow, deleteFinished, findOwned, isTerminal, listOwned, newTaskId } from '../../tasks/store'
import { taskOp } from '../../tasks/submit'
import { call, holder } from '../batches/upstream'
import { batchPrice } from '../batches/price'
import { pinBodies } from '../gemini-files/refs'
import type { ModelCall } from '../gemini/generate'
import { batchBound, geminiRoute, parseBatch, upstreamBody } from './requests'

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v)

/**
 * The Operation as the client sees it: the gateway's batch name and the client's model, in place of the channel's
 * (`name`, `metadata.name`, `metadata.model`, and each response's `modelVersion` when the channel maps the model).
 */
export function batchView(op: Obj, task: Pick<TaskRow, 'id' | 'model' | 'result'>): Obj {
	const name = `batches/${task.id}`
	const upstreamModel = (task.result as GeminiBatchRecord | null)?.upstreamModel
	const out = structuredClone(op)
	out.name = name
	if (isObj(out.metadata)) {
		out.metadata.name = name
		out.metadata.model = `models/${task.model}`
	}
	const rename = (o: unknown) => {
		const list = isObj(o) && isObj(o.inlinedResponses) ? o.inlinedResponses.inlinedResponses : undefined
		if (!Array.isArray(list) || !upstreamModel || upstreamModel === task.model) return
		for (const r of list) if (isObj(r) && isObj(r.response) && r.response.modelVersion === upstreamModel) r.response.modelVersion = task.model
	}
	rename(out.response)
	if (isObj(out.metadata)) rename(out.metadata.output)
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

/** `POST /v1beta/models/{model}:batchGenerateContent` (the model route dispatches it here). */
export async function createGeminiBatch(c: ModelCall, body: unknown): Promise<Response> {
	if (c.version !== '/v1beta')
		throw new GatewayError('invalid_request', 'Batch Mode is served under /v1beta: call /v1beta/models/{model}:batchGenerateContent (with @google/genai, httpOptions.apiVersion "v1beta")', { code: 'invalid_request' })
	const given = parseBatch(body, c.model)
	// Another vendor's model is refused here, in Gemini's words, before anything is held.
	const route = geminiRoute(c.svc, c.token, c.model)
	// Uploaded files named by gateway URIs: the account's (else 404), under the vendor's URIs, and the batch runs on their channel.
	const files = await pinBodies(c.svc, c.token.accountId, given.requests.map((r) => r.request))
	const parsed = files.channelId === undefined ? given : { ...given, requests: given.requests.map((r, i) => ({ ...r, request: files.bodies[i]! })) }
	const filesOn = files.channelId
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
			cost: (price) => batchBound(parsed, batchPrice(price)),
			request: (ch, upstreamModel) => ({ url: geminiMethodUrl(ch, upstreamModel, 'batchGenerateContent'), headers: jsonHeaders(ch), body: JSON.stringify(upstreamBody(parsed, upstreamModel)) }),
			async accept(res, ch, price) {
				const op = await readJson(res)
				const name = typeof op.name === 'string' && op.name.startsWith('batches/') ? op.name : undefined
				if (!name) throw new GatewayError('upstream', 'upstream accepted the batch without a batch name', { code: 'upstream_malformed' })
				const record: GeminiBatchRecord = { batch: op, endpoint: GEMINI_BATCH_ENDPOINT, prices: { [c.model]: batchPrice(price) }, upstreamModel: ch.modelMap[c.model] ?? c.model }
				return { response: new Response(null), upstreamId: name, result: record }
			},
			reply: (task) => jsonResponse(batchView((task.result as GeminiBatchRecord).batch, task), c.requestId),
		}),
	)
}

const Name = t.Object({ name: t.String({ description: 'The batch id (`batches/{id}` names it)' }) })
const Operation = t.Object({ name: t.String(), metadata: t.Optional(t.Unknown()), done: t.Optional(t.Boolean()) }, { additionalProperties: true })
const ListQuery = t.Object({ pageSize: t.Optional(t.Numeric({ minimum: 1, maximum: 1000, multipleOf: 1 })), pageToken: t.Optional(t.String()) })
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
