/**
 * The routes on stored chat completions (https://platform.openai.com/docs/api-reference/chat): `GET /v1/chat/completions`
 * (list), `GET|POST|DELETE /v1/chat/completions/{completion_id}` (retrieve, update `metadata`, delete) and
 * `GET /v1/chat/completions/{completion_id}/messages`, what the SDKs call `chat.completions.list/retrieve/update/delete`
 * and `chat.completions.messages.list`. Served from this gateway's copy (keep.ts) for every model, OpenAI's included:
 * the copy is the account's, and a completion kept through a vendor key every account shares must not be listed to
 * another. Any id not the caller's own is the 404 OpenAI gives an unknown id, never a sign another account holds it.
 * @module
 */
import { Elysia, t } from 'elysia'
import { GatewayError } from '../../core/errors'
import { modelAuth } from '../../http/model-auth'
import { OpenAIChatCompletion, OpenAIErrorBody } from '../../protocols/openai-chat'
import type { Services } from '../../services'
import { checkMetadata, completionStore, type CompletionStore, type StoredCompletion } from './store'
import { listPage } from '../../http/list-page'

type Obj = Record<string, unknown>

/** The retrieve's view: the completion as the caller got it, with its current metadata (`{}` for none, as OpenAI shows it). */
const completionView = (s: StoredCompletion): Obj => ({ ...s.completion, metadata: s.metadata ?? {} })

/**
 * A stored request message as OpenAI lists one (ChatCompletionStoreMessage): an id (the completion's, then `-` and its
 * position), `content` as text (a parts array's text parts joined; null when it has none), the parts themselves in
 * `content_parts` (null for a string), `name` (null when absent), and the message's other fields as sent.
 */
function messageView(completionId: string, m: unknown, i: number): Obj {
	// An `id` of the client's own (chat UIs send theirs; two turns may share one) is not the list's: its cursor finds ours.
	const { content, name, id: _own, ...rest } = m && typeof m === 'object' ? (m as Obj) : {}
	const parts = Array.isArray(content) ? content : null
	const text = parts
		? parts
				.filter((p): p is { type: 'text'; text: string } => !!p && typeof p === 'object' && (p as Obj).type === 'text' && typeof (p as Obj).text === 'string')
				.map((p) => p.text)
				.join('\n') || null
		: typeof content === 'string'
			? content
			: null
	return { id: `${completionId}-${i}`, ...rest, content: text, name: typeof name === 'string' ? name : null, content_parts: parts }
}

/** The list's `metadata[key]=value` filters (qs brackets, as the SDKs send them: openai-node `stringifyQuery`). */
function metadataFilter(request: Request): Record<string, string> | undefined {
	let out: Record<string, string> | undefined
	for (const [k, v] of new URL(request.url).searchParams)
		if (k.startsWith('metadata[') && k.endsWith(']')) (out ??= {})[k.slice('metadata['.length, -1)] = v
	return out
}

const json = (body: unknown, requestId: string) => Response.json(body, { headers: { 'x-request-id': requestId } })

// The bounds are checked by checkMetadata, which words a refusal as OpenAI does.
const Metadata = t.Record(t.String(), t.String(), { description: 'Up to 16 key-value pairs: keys up to 64 characters, values strings up to 512.' })
const StoredChatCompletion = t.Composite([OpenAIChatCompletion, t.Object({ metadata: Metadata })], { additionalProperties: true })
const Params = t.Object({ completion_id: t.String({ description: 'The id of the chat completion (`chatcmpl-…`), as it was answered.' }) })
const Page = {
	after: t.Optional(t.String({ description: 'The id of the last item of the previous page.' })),
	limit: t.Optional(t.Integer({ minimum: 1, maximum: 100, default: 20 })),
	order: t.Optional(t.Union([t.Literal('asc'), t.Literal('desc')], { default: 'asc' })),
}
const ListQuery = t.Object(
	{
		model: t.Optional(t.String({ description: 'Only the completions of this model (as it was asked for).' })),
		// Documents the filter (a deepObject query parameter: scripts/openapi-tidy.ts). Elysia reads `metadata[key]` as
		// keys of their own, which the object's extra properties let through; `metadataFilter` reads them.
		metadata: t.Optional(
			t.Object(
				{},
				{
					additionalProperties: t.String(),
					description: 'Only completions whose metadata has every pair given, as `metadata[key]=value` (repeatable; the SDKs\' `metadata` object).',
				},
			),
		),
		...Page,
	},
	{ additionalProperties: true },
)
const MessagesQuery = t.Object(Page, { additionalProperties: true })
const listOf = (item: Parameters<typeof t.Array>[0]) =>
	t.Object({ object: t.Literal('list'), data: t.Array(item), first_id: t.Nullable(t.String()), last_id: t.Nullable(t.String()), has_more: t.Boolean() })
const StoreMessage = t.Object(
	{
		id: t.String(),
		role: t.String(),
		content: t.Nullable(t.String()),
		name: t.Nullable(t.String()),
		content_parts: t.Nullable(t.Array(t.Object({ type: t.String() }, { additionalProperties: true }))),
	},
	{ additionalProperties: true },
)
const Deleted = t.Object({ object: t.Literal('chat.completion.deleted'), id: t.String(), deleted: t.Boolean() })
const errors = { 400: OpenAIErrorBody, 401: OpenAIErrorBody, 404: OpenAIErrorBody }

/** The stored-completion routes, keys checked as the chat route checks them (http/model-auth.ts). */
export const storedChatModule = (svc: Services, store: CompletionStore = completionStore(svc.db)) =>
	// Reading is not a model call: like the stored responses' routes, a GET does not count against the key's request rate.
	new Elysia({ detail: { tags: ['OpenAI'] } })
		.use(modelAuth(svc, { counted: 'submits' }))
		.get(
			'/v1/chat/completions',
			async ({ query, token, requestId, request }) => {
				const { rows, hasMore } = await store.list(token.accountId, {
					model: query.model,
					metadata: metadataFilter(request),
					after: query.after,
					limit: query.limit ?? 20,
					order: query.order ?? 'asc',
				})
				return json(listPage(rows.map(completionView), hasMore, (c) => String(c.id)), requestId)
			},
			{
				query: ListQuery,
				response: { 200: listOf(StoredChatCompletion), ...errors },
				detail: {
					summary: 'List stored chat completions',
					description:
						'The calling account\'s chat completions created with `store: true` (any model, streamed or not), in the order they were created, oldest first unless `order=desc`: `model` (as the request asked for it) and `metadata[key]=value` filter, `limit` (1–100, default 20) and `after` (the last id of the previous page) page through them. An `after` that is not one of the account\'s completions is 400.',
				},
			},
		)
		.get('/v1/chat/completions/:completion_id', async ({ params, token, requestId }) => json(completionView(await store.get(token.accountId, params.completion_id)), requestId), {
			params: Params,
			response: { 200: StoredChatCompletion, ...errors },
			detail: {
				summary: 'Retrieve a stored chat completion',
				description:
					'A chat completion the calling account created with `store: true`, as it was answered (a streamed one assembled from its chunks), with its `metadata`. Any other id is 404.',
			},
		})
		.post(
			'/v1/chat/completions/:completion_id',
			async ({ params, body, token, requestId }) => {
				const metadata = checkMetadata((body as Obj).metadata)
				return json(completionView(await store.setMetadata(token.accountId, params.completion_id, metadata)), requestId)
			},
			{
				params: Params,
				body: t.Object({ metadata: t.Nullable(Metadata) }, { additionalProperties: true }),
				response: { 200: StoredChatCompletion, ...errors },
				detail: {
					summary: 'Update a stored chat completion',
					description: 'Replaces the `metadata` of a chat completion the calling account stored (`null` clears it); nothing else can be changed. 400 for metadata OpenAI would refuse.',
				},
			},
		)
		.delete(
			'/v1/chat/completions/:completion_id',
			async ({ params, token, requestId }) => {
				await store.remove(token.accountId, params.completion_id)
				return json({ object: 'chat.completion.deleted', id: params.completion_id, deleted: true }, requestId)
			},
			{
				params: Params,
				response: { 200: Deleted, ...errors },
				detail: { summary: 'Delete a stored chat completion', description: 'Deletes a chat completion the calling account stored; it is 404 from then on.' },
			},
		)
		.get(
			'/v1/chat/completions/:completion_id/messages',
			async ({ params, query, token, requestId }) => {
				const s = await store.get(token.accountId, params.completion_id)
				let list = s.messages.map((m, i) => messageView(s.id, m, i))
				if (query.order === 'desc') list.reverse()
				if (query.after !== undefined) {
					const at = list.findIndex((m) => m.id === query.after)
					if (at < 0) throw new GatewayError('invalid_request', `No message with id '${query.after}' in chat completion '${s.id}'.`, { code: 'invalid_value', param: 'after' })
					list = list.slice(at + 1)
				}
				const limit = query.limit ?? 20
				return json(listPage(list.slice(0, limit), list.length > limit, (m) => String(m.id)), requestId)
			},
			{
				params: Params,
				query: MessagesQuery,
				response: { 200: listOf(StoreMessage), ...errors },
				detail: {
					summary: 'List the messages of a stored chat completion',
					description:
						"The messages the request of a stored chat completion sent, each with an id (the completion's, then `-` and its position), in their order (`order=desc` reverses it), paged by `limit` (default 20) and `after`.",
				},
			},
		)
