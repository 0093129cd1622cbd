/**
 * Anthropic's Message Batches API (platform.claude.com/docs/en/api/messages/batches) for models served by Anthropic
 * channels, as `client.messages.batches.*` calls it: create, retrieve, list, cancel, delete and results. A batch
 * runs on one Anthropic channel serving every model it names (requests.ts), each request's model sent under the
 * channel's name for it. Creating one charges an upper bound of every request at batch prices when the upstream
 * accepts it; when it ends, its succeeded requests are billed from their usage and the rest refunded
 * (src/tasks/message-batch.ts). Only the creating account sees a batch; its `results_url` is on the gateway, whose
 * results name each request's model as the client did (results.ts). A batch naming Files API uploads must own them all
 * and runs on the channel holding them (anthropic-files/refs.ts).
 * @module
 */
import { Elysia, t } from 'elysia'
import { GatewayError } from '../../core/errors'
import { modelAuth } from '../../http/model-auth'
import { readJson, relayPassthrough } from '../../passthrough/relay'
import { channelUrl } from '../../passthrough/upstream'
import { AnthropicErrorBody } from '../../protocols/anthropic-messages'
import { withRequestId } from '../../protocols/anthropic-messages/error'
import { anthropicAdapter } from '../../providers/anthropic'
import type { Price } from '../../billing/pricing'
import type { Services } from '../../services'
import type { BatchRecord } from '../../tasks/batch'
import { MESSAGE_BATCHES, refreshMessageBatch } from '../../tasks/message-batch'
import { type TaskRow, advance, deleteFinished, isTerminal, listOwned, ownedByUpstream } from '../../tasks/store'
import { taskOp } from '../../tasks/submit'
import { fileTerms } from '../anthropic-files/refs'
import { call, holder } from '../batches/upstream'
import { publicBase } from '../video/view'
import { batchBound, batchChannel, messageBatchPrice, parseRequests, upstreamBody } from './requests'
import { resultsAsAsked } from './results'

type Obj = Record<string, unknown>

const BatchId = t.Object({ id: t.String() })
const MessageBatch = t.Object({ id: t.String(), type: t.Literal('message_batch') }, { additionalProperties: true })
const CreateBody = t.Object({ requests: t.Array(t.Unknown()) }, { additionalProperties: true })
// Open: Anthropic's SDKs call the beta resource with `?beta=true` in the path (`client.beta.messages.batches.list()`
// sends `GET /v1/messages/batches?beta=true&limit=…`), which Anthropic takes; a closed schema refused it with a 400.
const ListQuery = t.Object(
	{ before_id: t.Optional(t.String()), after_id: t.Optional(t.String()), limit: t.Optional(t.Numeric({ minimum: 1, maximum: 1000, multipleOf: 1 })) },
	{ additionalProperties: true },
)
const BatchList = t.Object({ data: t.Array(t.Unknown()), has_more: t.Boolean(), first_id: t.Union([t.String(), t.Null()]), last_id: t.Union([t.String(), t.Null()]) })
const errors = { 400: AnthropicErrorBody, 401: AnthropicErrorBody, 402: AnthropicErrorBody, 403: AnthropicErrorBody, 404: AnthropicErrorBody, 429: AnthropicErrorBody, 502: AnthropicErrorBody }

/** The batch as the client sees it: its results on the gateway, which serves them to this account only. */
const view = (batch: Obj, base: string): Obj => ({ ...batch, results_url: batch.results_url ? `${base}${MESSAGE_BATCHES}/${encodeURIComponent(String(batch.id))}/results` : null })
const answer = (body: unknown, requestId: string) => withRequestId(Response.json(body, { headers: { 'x-request-id': requestId } }), requestId)
const seen = (r: TaskRow): Obj => (r.result as BatchRecord | null)?.batch ?? { id: r.upstreamId, type: 'message_batch' }

/** The account's batch by the id it was given; Anthropic's 404 otherwise (another account's batch included). */
async function owned(svc: Services, id: string, accountId: number): Promise<TaskRow> {
	const [row] = await ownedByUpstream(svc.db, 'message_batch', accountId, [id])
	if (!row) throw new GatewayError('not_found', `Message Batch ${id} not found`, { code: 'not_found' })
	return row
}

/** Anthropic's list paging over the account's batches, newest first: `after_id` pages to older ones, `before_id` to newer. */
async function page(svc: Services, accountId: number, q: { before_id?: string; after_id?: string; limit?: number }, base: string) {
	const limit = q.limit ?? 20
	const cursorId = q.before_id ?? q.after_id
	const cursor = cursorId ? ((await ownedByUpstream(svc.db, 'message_batch', accountId, [cursorId]))[0]?.id ?? '\u0000none') : undefined
	// Newer than `before_id`: the ones nearest it, read upwards, shown newest first as every page is.
	const rows = await listOwned(svc.db, 'message_batch', accountId, { after: cursor, limit, order: q.before_id ? 'asc' : 'desc' })
	const shown = rows.slice(0, limit)
	if (q.before_id) shown.reverse()
	const data = shown.map((r) => view(seen(r), base))
	return { data, has_more: rows.length > limit, first_id: shown[0]?.upstreamId ?? null, last_id: shown.at(-1)?.upstreamId ?? null }
}

export const messageBatchesModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['Anthropic'] } })
		.use(modelAuth(svc, { counted: 'submits' }))
		.post(
			MESSAGE_BATCHES,
			async ({ body, token, requestId, startedAt, request }) => {
				const reqs = parseRequests(body.requests)
				// Files API uploads named must be the account's (else 404, before anything is held), all on one channel.
				const files = await fileTerms(svc, { messages: reqs.map((r) => r.params.messages) }, token, request.headers, true)
				const { ch, routes } = batchChannel(svc, token, reqs, files?.channelId)
				const bound = batchBound(reqs, routes, ch)
				const prices: Record<string, Price> = {}
				for (const [m, rt] of routes) prices[m] = messageBatchPrice(rt.price)
				const record = { endpoint: MESSAGE_BATCHES, prices, ...(routes.size > 1 ? { models: Object.fromEntries(reqs.map((r) => [r.customId, r.model])) } : {}) }
				const base = publicBase(svc.env.publicUrl, request)
				const res = await relayPassthrough(
					taskOp({
						ctx: { svc, token, requestId, startedAt, signal: request.signal },
						kind: 'message_batch',
						endpoint: MESSAGE_BATCHES,
						model: reqs[0]!.model,
						types: ['anthropic'],
						pin: (c) => c.id === ch.id,
						shape: 'anthropic',
						cost: () => bound,
						request: (c) => ({ url: channelUrl(c, MESSAGE_BATCHES), method: 'POST', headers: anthropicAdapter.headers(c, files?.inbound ?? request.headers), body: JSON.stringify(upstreamBody(reqs, c)) }),
						async accept(res) {
							const batch = await readJson(res)
							const id = typeof batch.id === 'string' ? batch.id : undefined
							return { response: answer(view(batch, base), requestId), upstreamId: id, result: { ...record, batch } }
						},
					}),
				)
				return withRequestId(res, requestId)
			},
			{
				body: CreateBody,
				response: { 200: MessageBatch, ...errors },
				detail: { summary: 'Create a message batch', description: 'Holds the upper bound of every request at batch prices; the real cost is settled when the batch ends.' },
			},
		)
		.get(MESSAGE_BATCHES, ({ query, token, request }) => page(svc, token.accountId, query, publicBase(svc.env.publicUrl, request)), {
			query: ListQuery,
			response: { 200: BatchList, 400: AnthropicErrorBody, 401: AnthropicErrorBody },
			detail: { summary: 'List message batches', description: "The account's batches, newest first, as last seen; paged by `after_id` / `before_id` / `limit`." },
		})
		.get(
			`${MESSAGE_BATCHES}/:id`,
			async ({ params, token, request, requestId }) => {
				const row = await owned(svc, params.id, token.accountId)
				return answer(view((await refreshMessageBatch(svc, row, request.signal)).batch, publicBase(svc.env.publicUrl, request)), requestId)
			},
			{
				params: BatchId,
				response: { 200: MessageBatch, 401: AnthropicErrorBody, 404: AnthropicErrorBody },
				detail: { summary: 'Retrieve a message batch', description: 'Asks the upstream; a batch that ended is settled here.' },
			},
		)
		.post(
			`${MESSAGE_BATCHES}/:id/cancel`,
			async ({ params, token, request, requestId }) => {
				const row = await owned(svc, params.id, token.accountId)
				const batch = (await readJson(await call(holder(svc, row), `${MESSAGE_BATCHES}/${encodeURIComponent(params.id)}/cancel`, { method: 'POST' }, request.signal))) as Obj
				// `canceling` until the upstream stops it; the refund comes when it has ended (retrieve or poller).
				await advance(svc.db, row.id, { status: 'in_progress', result: { ...(row.result as BatchRecord), batch } })
				return answer(view(batch, publicBase(svc.env.publicUrl, request)), requestId)
			},
			{
				params: BatchId,
				response: { 200: MessageBatch, ...errors },
				detail: { summary: 'Cancel a message batch', description: 'Only the requests answered before the cancel took effect are paid for.' },
			},
		)
		.delete(
			`${MESSAGE_BATCHES}/:id`,
			async ({ params, token, request, requestId }) => {
				const row = await owned(svc, params.id, token.accountId)
				// Settled first: once deleted upstream its results could not be read, and work done would be refunded.
				const { task } = await refreshMessageBatch(svc, row, request.signal)
				if (!isTerminal(task.status)) throw new GatewayError('invalid_request', `Message Batch ${params.id} is still processing; cancel it before deleting it`, { code: 'invalid_request' })
				const body = await readJson(await call(holder(svc, row), `${MESSAGE_BATCHES}/${encodeURIComponent(params.id)}`, { method: 'DELETE' }, request.signal))
				await deleteFinished(svc.db, 'message_batch', row.id, token.accountId)
				return answer(body, requestId)
			},
			{
				params: BatchId,
				response: { 200: t.Object({ id: t.String(), type: t.Literal('message_batch_deleted') }), ...errors },
				detail: { summary: 'Delete a message batch', description: 'Once it has ended (cancel a batch still processing first); its usage stays in the account history.' },
			},
		)
		.get(
			`${MESSAGE_BATCHES}/:id/results`,
			async ({ params, token, request, requestId }) => {
				const row = await owned(svc, params.id, token.accountId)
				const { batch } = await refreshMessageBatch(svc, row, request.signal)
				if (batch.processing_status !== 'ended')
					throw new GatewayError('invalid_request', `Message Batch ${params.id} has not finished processing; its results are available once it has ended`, { code: 'invalid_request' })
				const ch = holder(svc, row)
				const res = await call(ch, `${MESSAGE_BATCHES}/${encodeURIComponent(params.id)}/results`, { method: 'GET' }, request.signal)
				const body = res.body && resultsAsAsked(res.body, row.result as BatchRecord, row.model, ch)
				return withRequestId(new Response(body, { headers: { 'content-type': res.headers.get('content-type') ?? 'application/binary', 'x-request-id': requestId } }), requestId)
			},
			{
				params: BatchId,
				response: { 200: t.File({ description: 'JSONL: one `{custom_id, result}` a line (`succeeded` with its message, `errored`, `canceled` or `expired`)' }), ...errors },
				detail: { summary: 'Retrieve message batch results', description: 'Streamed from the channel once the batch has ended.' },
			},
		)
