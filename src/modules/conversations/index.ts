/**
 * OpenAI's Conversations API (https://platform.openai.com/docs/api-reference/conversations), kept by this gateway so
 * that one conversation works with every model: `POST /v1/responses` with `conversation` puts its items before the
 * request's input and appends the turn when the response completes (turn.ts). Each conversation belongs to the
 * account that created it; any other account gets OpenAI's 404 for an unknown id. Kept until deleted: OpenAI keeps
 * conversations and their items without the 30-day limit of stored responses.
 * @module
 */
import { Elysia, t } from 'elysia'
import { modelAuth } from '../../http/model-auth'
import { OpenAIErrorBody } from '../../protocols/openai-chat'
import type { Services } from '../../services'
import { givenItems, type Item, itemView, type StoredItem, toStore } from './items'
import {
	AddItems,
	Conversation,
	ConversationDeleted,
	ConversationItem,
	CreateConversation,
	includeOf,
	IncludeQuery,
	ItemList,
	ListItemsQuery,
	UpdateConversation,
} from './model'
import {
	addItems,
	conversationView,
	createConversation,
	deleteConversation,
	deleteItem,
	getItem,
	listItems,
	ownConversation,
	updateMetadata,
} from './store'
import { listPage } from '../../http/list-page'

const errors = { 400: OpenAIErrorBody, 401: OpenAIErrorBody, 404: OpenAIErrorBody }
const ConversationParams = t.Object({ conversation_id: t.String() })
const ItemParams = t.Object({ conversation_id: t.String(), item_id: t.String() })

const json = (body: unknown, requestId: string) => Response.json(body, { headers: { 'x-request-id': requestId } })

/** A list page as OpenAI answers it. */
const page = (items: StoredItem[], hasMore: boolean, include: string[]) => {
	return listPage(items.map((i) => itemView(i, include)), hasMore)
}

export const conversationsModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['OpenAI'] } })
		.use(modelAuth(svc, { counted: 'submits' }))
		.post(
			'/v1/conversations',
			async ({ body, token, requestId }) => {
				const items = toStore(givenItems((body.items ?? []) as Item[]))
				return json(conversationView(await createConversation(svc.db, token.accountId, body.metadata ?? {}, items)), requestId)
			},
			{
				body: CreateConversation,
				response: { 200: Conversation, ...errors },
				detail: {
					summary: 'Create a conversation',
					description:
						"A conversation kept by this gateway, with up to 20 initial `items` (Responses input items) and `metadata` (16 pairs). Use it with `POST /v1/responses` `conversation` on any model. Only the calling account sees it; it is kept until deleted.",
				},
			},
		)
		.get(
			'/v1/conversations/:conversation_id',
			async ({ params, token, requestId }) => json(conversationView(await ownConversation(svc.db, token.accountId, params.conversation_id)), requestId),
			{ params: ConversationParams, response: { 200: Conversation, ...errors }, detail: { summary: 'Retrieve a conversation', description: "The calling account's conversation; any other id is 404." } },
		)
		.post(
			'/v1/conversations/:conversation_id',
			async ({ params, body, token, requestId }) =>
				json(conversationView(await updateMetadata(svc.db, token.accountId, params.conversation_id, body.metadata ?? {})), requestId),
			{
				params: ConversationParams,
				body: UpdateConversation,
				response: { 200: Conversation, ...errors },
				detail: { summary: 'Update a conversation', description: "Replaces the conversation's `metadata` (`null` clears it)." },
			},
		)
		.delete(
			'/v1/conversations/:conversation_id',
			async ({ params, token, requestId }) => {
				await deleteConversation(svc.db, token.accountId, params.conversation_id)
				return json({ id: params.conversation_id, object: 'conversation.deleted', deleted: true }, requestId)
			},
			{ params: ConversationParams, response: { 200: ConversationDeleted, ...errors }, detail: { summary: 'Delete a conversation', description: 'Deletes the conversation and its items.' } },
		)
		.post(
			'/v1/conversations/:conversation_id/items',
			async ({ params, body, token, requestId, request }) => {
				const conv = await ownConversation(svc.db, token.accountId, params.conversation_id)
				const items = toStore(givenItems(body.items as Item[]))
				await addItems(svc.db, conv.id, items)
				return json(page(items, false, includeOf(request)), requestId)
			},
			{
				params: ConversationParams,
				body: AddItems,
				query: IncludeQuery,
				response: { 200: ItemList, ...errors },
				detail: {
					summary: 'Create conversation items',
					description: 'Appends up to 20 items (Responses input items); an item without an `id` gets one. An id the conversation already holds is 400.',
				},
			},
		)
		.get(
			'/v1/conversations/:conversation_id/items',
			async ({ params, query, token, requestId, request }) => {
				const conv = await ownConversation(svc.db, token.accountId, params.conversation_id)
				const { items, hasMore } = await listItems(svc.db, conv.id, { after: query.after, limit: query.limit ?? 20, order: query.order ?? 'desc' })
				return json(page(items, hasMore, includeOf(request)), requestId)
			},
			{
				params: ConversationParams,
				query: ListItemsQuery,
				response: { 200: ItemList, ...errors },
				detail: {
					summary: 'List conversation items',
					description:
						'A page of the items (`limit` 1–100, default 20; `order` `desc` by default, `after` an item id). A reasoning item shows its `encrypted_content` when `include` has `reasoning.encrypted_content`.',
				},
			},
		)
		.get(
			'/v1/conversations/:conversation_id/items/:item_id',
			async ({ params, token, requestId, request }) => {
				const conv = await ownConversation(svc.db, token.accountId, params.conversation_id)
				return json(itemView(await getItem(svc.db, conv.id, params.item_id), includeOf(request)), requestId)
			},
			{ params: ItemParams, query: IncludeQuery, response: { 200: ConversationItem, ...errors }, detail: { summary: 'Retrieve a conversation item', description: 'One item of the conversation; 404 for an id it does not hold.' } },
		)
		.delete(
			'/v1/conversations/:conversation_id/items/:item_id',
			async ({ params, token, requestId }) => {
				const conv = await ownConversation(svc.db, token.accountId, params.conversation_id)
				await deleteItem(svc.db, conv.id, params.item_id)
				return json(conversationView(conv), requestId)
			},
			{ params: ItemParams, response: { 200: Conversation, ...errors }, detail: { summary: 'Delete a conversation item', description: 'Removes the item; answers the conversation, as OpenAI does.' } },
		)
