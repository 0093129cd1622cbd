/**
 * Schemas of the Conversations API (https://platform.openai.com/docs/api-reference/conversations), for validation and
 * the OpenAPI document.
 * @module
 */
import { t } from 'elysia'
import { ResponsesInputItem } from '../../protocols/openai-responses/model'

const open = { additionalProperties: true }

/** OpenAI's metadata: at most 16 pairs, keys up to 64 characters, values up to 512. */
export const Metadata = t.Record(t.String({ maxLength: 64 }), t.String({ maxLength: 512 }), { maxProperties: 16 })

/** OpenAI takes at most 20 items in one call, at creation as when adding. */
export const MAX_ITEMS = 20

export const CreateConversation = t.Object(
	{ items: t.Optional(t.Nullable(t.Array(ResponsesInputItem, { maxItems: MAX_ITEMS }))), metadata: t.Optional(t.Nullable(Metadata)) },
	open,
)
export const UpdateConversation = t.Object({ metadata: t.Nullable(Metadata) }, open)
export const AddItems = t.Object({ items: t.Array(ResponsesInputItem, { minItems: 1, maxItems: MAX_ITEMS }) }, open)

export const Conversation = t.Object({ id: t.String(), object: t.Literal('conversation'), created_at: t.Integer(), metadata: t.Record(t.String(), t.String()) })
export const ConversationDeleted = t.Object({ id: t.String(), object: t.Literal('conversation.deleted'), deleted: t.Boolean() })

/** A conversation item: a Responses input or output item with its id. */
export const ConversationItem = t.Object({ id: t.String(), type: t.String() }, open)
export const ItemList = t.Object({
	object: t.Literal('list'),
	data: t.Array(ConversationItem),
	first_id: t.Nullable(t.String()),
	last_id: t.Nullable(t.String()),
	has_more: t.Boolean(),
})

/** `include`: one value or several (the SDK sends `include[]=a&include[]=b`; read from the URL by `includeOf`). */
const Include = t.Optional(t.Union([t.String(), t.Array(t.String())]))
export const IncludeQuery = t.Object({ include: Include }, open)
export const ListItemsQuery = t.Object({
	after: t.Optional(t.String()),
	limit: t.Optional(t.Numeric({ minimum: 1, maximum: 100, multipleOf: 1 })),
	order: t.Optional(t.Union([t.Literal('asc'), t.Literal('desc')])),
	include: Include,
}, open)

/** The `include` values of a request's query, in either spelling (`include=…`, `include[]=…`). */
export function includeOf(request: Request): string[] {
	const q = new URL(request.url).searchParams
	return [...q.getAll('include'), ...q.getAll('include[]')]
}
