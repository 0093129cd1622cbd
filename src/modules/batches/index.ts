/**
 * OpenAI's Batch API (platform.openai.com/docs/api-reference/batch) for OpenAI channels: create, retrieve, list and
 * cancel, as `client.batches.*` calls them. A batch runs on the channel holding its input file (files.ts). Creating
 * one reads the file, checks every line (its `url` is the batch's endpoint; its `body.model` one the key may use and
 * that channel serves under that name) and charges an upper bound of the whole file at batch prices (price.ts) when
 * the upstream accepts it; when the batch ends, the real cost of its completed lines is settled and the rest
 * refunded (src/tasks/batch.ts). Only the creating account sees a batch.
 * @module
 */
import { Elysia, t } from 'elysia'
import { GatewayError } from '../../core/errors'
import { modelAuth } from '../../http/model-auth'
import { jsonResponse, readJson, relayPassthrough } from '../../passthrough/relay'
import { openaiErrors } from '../../passthrough/schemas'
import { jsonHeaders, channelUrl } from '../../passthrough/upstream'
import { OpenAIErrorBody } from '../../protocols/openai-chat'
import type { Services } from '../../services'
import type { BatchRecord } from '../../tasks/batch'
import { fileText, refreshBatch } from '../../tasks/batch'
import { advance } from '../../tasks/store'
import { taskOp } from '../../tasks/submit'
import type { Price } from '../../billing/pricing'
import { BATCH_ENDPOINTS, batchBound, checkContinuations, checkModels, parseLines } from './lines'
import { batchPrice } from './price'
import { callJson, holder, owned, ownedPage } from './upstream'

const BatchId = t.Object({ id: t.String() })
const BatchObject = t.Object({ id: t.String(), object: t.Literal('batch') }, { additionalProperties: true })
const CreateBody = t.Object(
	{
		input_file_id: t.String(),
		endpoint: t.String(),
		completion_window: t.String(),
		metadata: t.Optional(t.Union([t.Record(t.String(), t.String()), t.Null()])),
		output_expires_after: t.Optional(t.Object({ anchor: t.String(), seconds: t.Number() })),
	},
	{ additionalProperties: true },
)
const ListQuery = t.Object({ after: t.Optional(t.String()), limit: t.Optional(t.Numeric({ minimum: 1, maximum: 100, multipleOf: 1 })) })
const BatchList = t.Object({ object: t.Literal('list'), data: t.Array(t.Unknown()), first_id: t.Union([t.String(), t.Null()]), last_id: t.Union([t.String(), t.Null()]), has_more: t.Boolean() })

const seenBatch = (r: { result: unknown }) => (r.result as BatchRecord | null)?.batch

export const batchesModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['OpenAI'] } })
		.use(modelAuth(svc, { counted: 'submits' }))
		.post(
			'/v1/batches',
			async ({ body, token, requestId, startedAt, request }) => {
				if (!(BATCH_ENDPOINTS as readonly string[]).includes(body.endpoint))
					throw new GatewayError('invalid_request', `Batches of ${body.endpoint} are not served here; use one of ${BATCH_ENDPOINTS.join(', ')}`, { code: 'unsupported_endpoint', param: 'endpoint' })
				const file = await owned(svc, 'file', body.input_file_id, token.accountId)
				const ch = holder(svc, file)
				const text = await fileText(ch, body.input_file_id, request.signal)
				if (text === undefined) throw new GatewayError('upstream', 'The input file could not be read from its channel', { code: 'upstream_error' })
				const lines = parseLines(text)
				const wrong = lines.find((l) => l.url !== body.endpoint)
				if (wrong) throw new GatewayError('invalid_request', `Request '${wrong.customId}' is for ${wrong.url}, not the batch's endpoint ${body.endpoint}`, { code: 'invalid_batch_file', param: 'input_file_id' })
				const prices = checkModels(svc, token, ch, lines)
				await checkContinuations(svc, token.accountId, lines)
				const bound = batchBound(lines, prices)
				const models = new Set(lines.map((l) => l.model))
				const model = lines[0]!.model
				const batchPrices: Record<string, Price> = {}
				for (const [m, p] of prices) batchPrices[m] = batchPrice(p)
				const record = { endpoint: body.endpoint, prices: batchPrices, ...(models.size > 1 ? { models: Object.fromEntries(lines.map((l) => [l.customId, l.model])) } : {}) }
				return relayPassthrough(
					taskOp({
						ctx: { svc, token, requestId, startedAt, signal: request.signal },
						kind: 'batch',
						endpoint: '/v1/batches',
						model,
						types: ['openai'],
						pin: (c) => c.id === ch.id,
						cost: () => bound,
						request: (c) => ({ url: channelUrl(c, '/batches'), method: 'POST', headers: jsonHeaders(c), body: JSON.stringify(body) }),
						async accept(res) {
							const batch = await readJson(res)
							const id = typeof batch.id === 'string' ? batch.id : undefined
							return { response: jsonResponse(batch, requestId), upstreamId: id, result: { ...record, batch } }
						},
					}),
				)
			},
			{
				body: CreateBody,
				response: { 200: BatchObject, ...openaiErrors },
				detail: { summary: 'Create a batch', description: 'Holds the upper bound of the whole input file at batch prices; the real cost is settled when the batch ends.' },
			},
		)
		.get('/v1/batches', ({ query, token }) => ownedPage(svc, 'batch', token.accountId, query, (r) => seenBatch(r) ?? { id: r.upstreamId, object: 'batch' }), {
			query: ListQuery,
			response: { 200: BatchList, 400: OpenAIErrorBody, 401: OpenAIErrorBody },
			detail: { summary: 'List batches', description: "The account's batches, newest first, as last seen." },
		})
		.get(
			'/v1/batches/:id',
			async ({ params, token, request, requestId }) => {
				const row = await owned(svc, 'batch', params.id, token.accountId)
				return jsonResponse((await refreshBatch(svc, row, request.signal)).batch, requestId)
			},
			{ params: BatchId, response: { 200: BatchObject, 401: OpenAIErrorBody, 404: OpenAIErrorBody }, detail: { summary: 'Retrieve a batch', description: 'Asks the upstream; a batch that ended is settled here.' } },
		)
		.post(
			'/v1/batches/:id/cancel',
			async ({ params, token, request, requestId }) => {
				const row = await owned(svc, 'batch', params.id, token.accountId)
				const { body, response } = await callJson(holder(svc, row), `/batches/${encodeURIComponent(params.id)}/cancel`, { method: 'POST' }, request.signal, requestId)
				// `cancelling` until the upstream stops it; the refund comes when it is `cancelled` (retrieve or poller).
				await advance(svc.db, row.id, { status: 'in_progress', result: { ...(row.result as BatchRecord), batch: body } })
				return response
			},
			{ params: BatchId, response: { 200: BatchObject, ...openaiErrors }, detail: { summary: 'Cancel a batch', description: 'Only the lines that completed before the cancel are paid for.' } },
		)
