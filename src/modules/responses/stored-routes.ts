/**
 * The routes on a stored response (https://platform.openai.com/docs/api-reference/responses): `GET /v1/responses/{id}`
 * (also `?stream=true&starting_after=N`, a background response's events), `DELETE /v1/responses/{id}`,
 * `POST /v1/responses/{id}/cancel` and `GET /v1/responses/{id}/input_items`.
 *
 * Only ids answered to the caller's account are served: any other is the 404 OpenAI gives an unknown id, never a
 * sign that another account holds it (ownership.ts). An OpenAI response goes to the channel (vendor key) that holds
 * it; what OpenAI answers about a background response settles its bill (background.ts). A converted response
 * (another vendor's model) exists only as the copy this gateway kept (converted-items.ts): it is retrieved and
 * deleted from that copy; it was never a background response, so cancelling it is a 400 as OpenAI answers for a
 * synchronous one; and its `input_items` are listed from the inputs and outputs of the chain of copies it continued (previous.ts).
 * @module
 */
import { Elysia, t } from 'elysia'
import { eq } from 'drizzle-orm'
import { badRequest, GatewayError } from '../../core/errors'
import { storedResponses } from '../../db/schema'
import { modelAuth } from '../../http/model-auth'
import { OpenAIErrorBody } from '../../protocols/openai-chat'
import { openaiResponses, ResponsesResponse } from '../../protocols/openai-responses'
import { chatAdapterFor } from '../../providers/registry'
import { upstreamError } from '../../providers/upstream-error'
import { credentialHooks } from '../../passthrough/upstream'
import { channelTimeouts, fetchUpstream } from '../../relay/upstream-fetch'
import { KEEPALIVE_MS, sseResponse } from '../../relay/sse-response'
import { SHUTTING_DOWN } from '../../relay/stream-relay'
import { formatSse, parseSse } from '../../core/sse'
import type { Channel } from '../../routing/catalog'
import type { Services } from '../../services'
import { fetchResponse, hasOpenBackground, settleBackground } from './background'
import type { ConvertedItems } from './converted-items'
import { responsesUrlOf } from './native'
import { itemIds, outputItemIds, recordItems } from './ownership'
import { wholeInput } from './previous'
import { itemView, type StoredItem } from '../conversations/items'
import { appendPath } from '../../providers/append-path'
import { listPage } from '../../http/list-page'

type Obj = Record<string, unknown>
/**
 * Where a response id of the account lives: on an OpenAI channel (with the conversation of this gateway's it was a
 * turn of, which OpenAI never saw), or as this gateway's copy of a converted answer.
 */
type Held = { channel: Channel; conversation?: string } | { copy: Obj }

const notFound = (id: string) => new GatewayError('not_found', `Response with id '${id}' not found.`, { code: 'response_not_found', param: 'response_id' })

/** Where the account's response `id` is; throws 404 for an id that is not the account's. */
async function locate(svc: Services, items: ConvertedItems, accountId: number, id: string): Promise<Held> {
	const [row] = await svc.db.orm.select().from(storedResponses).where(eq(storedResponses.responseId, id)).limit(1)
	if (row) {
		if (row.accountId !== accountId || row.channelId === null) throw notFound(id)
		const channel = svc.catalog.channel(row.channelId)
		if (!channel) throw new GatewayError('unavailable', `The channel holding response '${id}' is not available right now`, { code: 'channel_unavailable' })
		return { channel, conversation: row.conversationId ?? undefined }
	}
	const copy = await items.response(accountId, id)
	if (!copy) throw notFound(id)
	return { copy }
}

/** The holding channel's URL for the response (`suffix` after its id), with the client's query as sent. */
function upstreamUrl(ch: Channel, id: string, suffix: string, request: Request): { url: string; headers: Record<string, string> } {
	const adapter = chatAdapterFor(ch.type)
	const base = responsesUrlOf(ch, adapter)
	if (!adapter || !base)
		throw new GatewayError('unavailable', `The channel holding response '${id}' no longer serves the Responses API`, { code: 'channel_unavailable' })
	return { url: appendPath(base, `/${encodeURIComponent(id)}${suffix}`, new URL(request.url).search), headers: adapter.headers(ch) }
}

/** What a replayed stream still running when the shutdown's grace period ends closes with: the Responses `error` event. */
const SHUTDOWN_EVENT = formatSse(openaiResponses.encodeStreamError(SHUTTING_DOWN))

/** The events that end a Response's stream, each carrying the finished Response object. */
const TERMINAL_TYPES = ['response.completed', 'response.incomplete', 'response.failed', 'response.cancelled']
const TERMINAL_EVENTS = new Set(TERMINAL_TYPES)

/** The finished Response a stream frame carries (its terminal event's `response`), else undefined. */
function terminalResponse(data: string): Obj | undefined {
	// Most frames are deltas: only one naming a terminal event is parsed.
	if (!TERMINAL_TYPES.some((t) => data.includes(t))) return undefined
	try {
		const e = JSON.parse(data) as Obj
		return TERMINAL_EVENTS.has(String(e.type)) && e.response && typeof e.response === 'object' ? (e.response as Obj) : undefined
	} catch {
		return undefined
	}
}

/**
 * Sends the call to the holding channel. A JSON answer is read whole (and handed to `seen`); an event stream (a
 * retrieve with `stream=true`) is passed through as it comes, its terminal event's Response handed to `seen` before
 * that frame goes out (a client that streams a background response to its end has learned its usage: it is billed
 * then, not at the next poll). An upstream error becomes the gateway's error.
 */
async function forward(
	ch: Channel,
	id: string,
	suffix: string,
	method: string,
	request: Request,
	requestId: string,
	seen?: (answer: Obj) => Promise<unknown>,
): Promise<Response> {
	const { url, headers } = upstreamUrl(ch, id, suffix, request)
	const up = await fetchUpstream(url, { method, headers, ...credentialHooks(ch) }, channelTimeouts(ch.settings), request.signal)
	const type = up.res.headers.get('content-type') ?? 'application/json'
	if (up.res.ok && up.res.body && type.startsWith('text/event-stream')) {
		const body = up.res.body
		// Frame by frame, so a stream the shutdown cuts gets its `error` event after a whole frame.
		async function* frames(): AsyncGenerator<string> {
			let clean = false
			try {
				for await (const f of parseSse(body)) {
					const done = seen && terminalResponse(f.data)
					// A settlement that fails here leaves the response open: the poller settles it then.
					if (done) await seen(done).catch(() => undefined)
					yield formatSse(f)
				}
				clean = true
			} finally {
				if (clean) up.release()
				else up.abort()
			}
		}
		return sseResponse(frames(), () => up.abort(), { 'x-request-id': requestId }, KEEPALIVE_MS, SHUTDOWN_EVENT)
	}
	const text = await up.text()
	up.release()
	if (!up.res.ok) throw upstreamError(up.res.status, text, up.res.headers)
	if (seen) {
		let answer: Obj | undefined
		try {
			answer = JSON.parse(text) as Obj
		} catch {
			throw new GatewayError('upstream', 'upstream sent a malformed response', { code: 'upstream_malformed' })
		}
		await seen(answer)
	}
	return new Response(text, { status: 200, headers: { 'content-type': type, 'x-request-id': requestId } })
}

/**
 * A retrieved Response object showing the conversation (of this gateway's) it was a turn of: upstream it was plain
 * input, so OpenAI answers `conversation: null`. An event stream (a background response's, which a conversation turn
 * never is) passes as it is.
 */
async function inConversation(res: Response, conversation: string): Promise<Response> {
	if (!(res.headers.get('content-type') ?? '').startsWith('application/json')) return res
	const answer = (await res.json()) as Obj
	return new Response(JSON.stringify({ ...answer, conversation: { id: conversation } }), { status: res.status, headers: res.headers })
}

const jsonAnswer = (body: unknown, requestId: string) => Response.json(body, { headers: { 'x-request-id': requestId } })

const IdParams = t.Object({ id: t.String() })
const errors = { 400: OpenAIErrorBody, 401: OpenAIErrorBody, 404: OpenAIErrorBody, 502: OpenAIErrorBody, 503: OpenAIErrorBody }
/** What OpenAI's DELETE answers (https://platform.openai.com/docs/api-reference/responses/delete). */
const Deleted = t.Object({ id: t.String(), object: t.Literal('response'), deleted: t.Boolean() }, { additionalProperties: true })
/** A page of input items (https://platform.openai.com/docs/api-reference/responses/input-items): the items as OpenAI sends them. */
const InputItems = t.Object(
	{
		object: t.Literal('list'),
		data: t.Array(t.Object({ type: t.Optional(t.String()), id: t.Optional(t.String()) }, { additionalProperties: true })),
		first_id: t.Nullable(t.String()),
		last_id: t.Nullable(t.String()),
		has_more: t.Boolean(),
	},
	{ additionalProperties: true },
)

/** The list's query (https://platform.openai.com/docs/api-reference/responses/input-items); the same forwarded to OpenAI. */
const InputItemsQuery = t.Object(
	{
		after: t.Optional(t.String()),
		before: t.Optional(t.String()),
		limit: t.Optional(t.Integer({ minimum: 1, maximum: 100 })),
		order: t.Optional(t.Union([t.Literal('asc'), t.Literal('desc')])),
		include: t.Optional(t.Union([t.String(), t.Array(t.String())])),
	},
	{ additionalProperties: true },
)
type InputItemsQuery = typeof InputItemsQuery.static

/**
 * A page of a converted response's kept input, as OpenAI lists one: newest first unless `order=asc` (OpenAI's default
 * is `desc`), `limit` (20) items after `after` / before `before` in that order. An unknown cursor is a 400.
 */
function inputItemsPage(kept: StoredItem[], q: InputItemsQuery) {
	const include = q.include === undefined ? [] : Array.isArray(q.include) ? q.include : [q.include]
	let list = q.order === 'asc' ? kept : [...kept].reverse()
	const at = (cursor: string, param: string) => {
		const i = list.findIndex((s) => s.itemId === cursor)
		if (i < 0) throw new GatewayError('invalid_request', `No input item with id '${cursor}' in this response.`, { code: 'invalid_value', param })
		return i
	}
	if (q.after !== undefined) list = list.slice(at(q.after, 'after') + 1)
	if (q.before !== undefined) list = list.slice(0, at(q.before, 'before'))
	const limit = q.limit ?? 20
	return listPage(list.slice(0, limit).map((s) => itemView(s, include)), list.length > limit)
}

export const storedResponseRoutes = (svc: Services, items: ConvertedItems) =>
	// Polling is reading: like a task poll, a GET does not count against the key's request rate.
	new Elysia({ detail: { tags: ['OpenAI'] } })
		.use(modelAuth(svc, { counted: 'submits' }))
		.get(
			'/v1/responses/:id',
			async ({ params: { id }, token, requestId, request }) => {
				const held = await locate(svc, items, token.accountId, id)
				if ('copy' in held) {
					// A converted answer is never a background one (it is refused with `background`): OpenAI's answer to
					// streaming a response not created so, rather than its JSON, on which the SDK's stream saw no event.
					if (new URL(request.url).searchParams.get('stream') === 'true')
						throw badRequest('This response cannot be streamed because it was not created with background=true.', 'stream')
					return jsonAnswer(held.copy, requestId)
				}
				const ch = held.channel
				// A background response's items are known once it ends: they are the account's to name (ownership.ts).
				const res = await forward(ch, id, '', 'GET', request, requestId, (answer) =>
					Promise.all([settleBackground(svc, ch.id, answer), recordItems(svc, token.accountId, ch.id, outputItemIds(answer))]),
				)
				return held.conversation ? inConversation(res, held.conversation) : res
			},
			{
				params: IdParams,
				response: { 200: ResponsesResponse, ...errors },
				detail: {
					summary: 'Retrieve a model response',
					description:
						"A response answered to the calling account: from the OpenAI channel that holds it (`stream=true` with `starting_after` streams a background response's events), or this gateway's copy of a converted answer. A background response that has ended is billed then. Any other id is 404.",
				},
			},
		)
		.delete(
			'/v1/responses/:id',
			async ({ params: { id }, token, requestId, request }) => {
				const held = await locate(svc, items, token.accountId, id)
				if ('copy' in held) {
					await items.forgetResponse(token.accountId, id)
					return jsonAnswer({ id, object: 'response', deleted: true }, requestId)
				}
				const ch = held.channel
				// A deleted response can no longer be asked for its usage: a background one is settled first, and while it
				// still runs it must be cancelled (which settles it) before it can go.
				if (await hasOpenBackground(svc, ch.id, id)) {
					await settleBackground(svc, ch.id, await fetchResponse(ch, id, request.signal))
					if (await hasOpenBackground(svc, ch.id, id))
						throw new GatewayError('invalid_request', `Response '${id}' is still running in the background: cancel it before deleting it.`, {
							code: 'response_in_progress',
						})
				}
				const out = await forward(ch, id, '', 'DELETE', request, requestId)
				await svc.db.orm.delete(storedResponses).where(eq(storedResponses.responseId, id))
				return out
			},
			{
				params: IdParams,
				response: { 200: Deleted, ...errors },
				detail: {
					summary: 'Delete a model response',
					description:
						"Deletes a response answered to the calling account (on its channel, or this gateway's copy of a converted answer). A background response still running must be cancelled first (400).",
				},
			},
		)
		.post(
			'/v1/responses/:id/cancel',
			async ({ params: { id }, token, requestId, request }) => {
				const held = await locate(svc, items, token.accountId, id)
				if ('copy' in held)
					throw new GatewayError(
						'invalid_request',
						`Only responses created with \`background: true\` can be cancelled; response '${id}' was answered at once.`,
						{ code: 'response_not_cancellable' },
					)
				const ch = held.channel
				return forward(ch, id, '/cancel', 'POST', request, requestId, (answer) => settleBackground(svc, ch.id, answer))
			},
			{
				params: IdParams,
				response: { 200: ResponsesResponse, ...errors },
				detail: {
					summary: 'Cancel a background response',
					description:
						'Cancels a background response answered to the calling account; a cancelled response is billed for the usage OpenAI reports (nothing when none). 400 for a response that was not created in the background.',
				},
			},
		)
		.get(
			'/v1/responses/:id/input_items',
			async ({ params: { id }, query, token, requestId, request }) => {
				const held = await locate(svc, items, token.accountId, id)
				// The input items listed get ids at OpenAI, which the account may name by `item_reference` (ownership.ts).
				if (!('copy' in held)) return forward(held.channel, id, '/input_items', 'GET', request, requestId, (answer) => recordItems(svc, token.accountId, held.channel.id, itemIds(answer.data)))
				const chain = await items.chain(token.accountId, id)
				const input = chain && wholeInput(chain)
				// A copy kept before inputs were (or deleted meanwhile, or its first turns purged): say so rather than list nothing.
				if (!input)
					throw new GatewayError(
						'invalid_request',
						`The input items of response '${id}' are not available: it was answered by model "${String(held.copy.model)}" of another vendor before this gateway kept inputs.`,
						{ code: 'input_items_unavailable' },
					)
				return jsonAnswer(inputItemsPage(input, query), requestId)
			},
			{
				params: IdParams,
				query: InputItemsQuery,
				response: { 200: InputItems, ...errors },
				detail: {
					summary: 'List the input items of a model response',
					description:
						"A page of the input items of a response answered to the calling account (`after`, `before`, `limit`, `order`, `include` as OpenAI takes them): from the OpenAI channel that holds it, or for a converted answer (another vendor's model) from the input this gateway kept with it, the turns it continued by `previous_response_id` included. 400 for a converted answer kept before inputs were.",
				},
			},
		)
