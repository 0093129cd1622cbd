/**
 * The conversations table and its items (db/schema.ts `conversations`, `conversation_items`). Every read names the
 * account: another account's conversation is the 404 OpenAI gives an unknown id, never a sign that it exists.
 * @module
 */
import { and, asc, desc, eq, gt, inArray, lt } from 'drizzle-orm'
import { GatewayError } from '../../core/errors'
import type { Db } from '../../db/client'
import { conversationItems, conversations } from '../../db/schema'
import { randomString } from '../../lib/ids'
import type { Item, StoredItem } from './items'

export type Conversation = { id: string; object: 'conversation'; created_at: number; metadata: Record<string, string> }
type Row = typeof conversations.$inferSelect

export const conversationNotFound = (id: string, param = 'conversation_id') =>
	new GatewayError('not_found', `Conversation with id '${id}' not found.`, { code: 'conversation_not_found', param })

const itemNotFound = (id: string, param = 'item_id') => new GatewayError('not_found', `Item with id '${id}' not found.`, { code: 'item_not_found', param })

export const conversationView = (r: Row): Conversation => ({
	id: r.id,
	object: 'conversation',
	created_at: Math.floor(r.createdAt.getTime() / 1000),
	metadata: r.metadata as Record<string, string>,
})

/** OpenAI's conversation ids: `conv_` and 48 characters. */
const newConversationId = () => `conv_${randomString(48)}`

export async function createConversation(db: Db, accountId: number, metadata: Record<string, string>, items: StoredItem[]): Promise<Row> {
	duplicates(items)
	return db.orm.transaction(async (tx) => {
		const [row] = await tx.insert(conversations).values({ id: newConversationId(), accountId, metadata }).returning()
		if (items.length) await tx.insert(conversationItems).values(items.map((i) => ({ conversationId: row!.id, ...i })))
		return row!
	})
}

/** The account's conversation `id`, or undefined when there is none the account may see. */
export async function findConversation(db: Db, accountId: number, id: string): Promise<Row | undefined> {
	const [row] = await db.orm.select().from(conversations).where(eq(conversations.id, id)).limit(1)
	return row && row.accountId === accountId ? row : undefined
}

/** The account's conversation `id`; 404 otherwise. */
export async function ownConversation(db: Db, accountId: number, id: string): Promise<Row> {
	const row = await findConversation(db, accountId, id)
	if (!row) throw conversationNotFound(id)
	return row
}

export async function updateMetadata(db: Db, accountId: number, id: string, metadata: Record<string, string>): Promise<Row> {
	const [row] = await db.orm
		.update(conversations)
		.set({ metadata })
		.where(and(eq(conversations.id, id), eq(conversations.accountId, accountId)))
		.returning()
	if (!row) throw conversationNotFound(id)
	return row
}

/** Deletes the conversation and (by cascade) its items; 404 when it is not the account's. */
export async function deleteConversation(db: Db, accountId: number, id: string): Promise<void> {
	const gone = await db.orm
		.delete(conversations)
		.where(and(eq(conversations.id, id), eq(conversations.accountId, accountId)))
		.returning({ id: conversations.id })
	if (!gone.length) throw conversationNotFound(id)
}

/** A 400 for an item id given twice (in `items`, or already in the conversation: `taken`). */
function duplicates(items: StoredItem[], taken: ReadonlySet<string> = new Set()): void {
	const seen = new Set(taken)
	for (const [i, { itemId }] of items.entries()) {
		if (seen.has(itemId)) throw new GatewayError('invalid_request', `Duplicate item found with id '${itemId}'.`, { code: 'duplicate_item', param: `items[${i}].id` })
		seen.add(itemId)
	}
}

/** Adds items the client sent (POST …/items): an id already in the conversation is a 400. */
export async function addItems(db: Db, conversationId: string, items: StoredItem[]): Promise<void> {
	if (!items.length) return
	const ids = items.map((i) => i.itemId)
	const taken = await db.orm
		.select({ id: conversationItems.itemId })
		.from(conversationItems)
		.where(and(eq(conversationItems.conversationId, conversationId), inArray(conversationItems.itemId, ids)))
	duplicates(items, new Set(taken.map((r) => r.id)))
	await db.orm.insert(conversationItems).values(items.map((i) => ({ conversationId, ...i })))
}

/**
 * Appends a turn's items after its response completed; an item whose id the conversation already holds (a client
 * that replays an earlier output item with its id) is not added twice.
 */
export async function appendItems(db: Db, conversationId: string, items: StoredItem[]): Promise<void> {
	if (items.length) await db.orm.insert(conversationItems).values(items.map((i) => ({ conversationId, ...i }))).onConflictDoNothing()
}

/** Every item of the conversation, oldest first: the id it is listed under, and the item as it goes upstream. */
export async function allItems(db: Db, conversationId: string): Promise<StoredItem[]> {
	const rows = await db.orm
		.select({ itemId: conversationItems.itemId, item: conversationItems.item })
		.from(conversationItems)
		.where(eq(conversationItems.conversationId, conversationId))
		.orderBy(asc(conversationItems.seq))
	return rows.map((r) => ({ itemId: r.itemId, item: r.item as Item }))
}

export type ItemPage = { items: StoredItem[]; hasMore: boolean }

/** A page of items after the item `after` (by the order asked, newest first by default, as OpenAI lists them). */
export async function listItems(db: Db, conversationId: string, q: { after?: string; limit: number; order: 'asc' | 'desc' }): Promise<ItemPage> {
	let from: number | undefined
	if (q.after) from = (await itemRow(db, conversationId, q.after, 'after')).seq
	const newest = q.order === 'desc'
	const where = and(
		eq(conversationItems.conversationId, conversationId),
		from === undefined ? undefined : newest ? lt(conversationItems.seq, from) : gt(conversationItems.seq, from),
	)
	const rows = await db.orm
		.select({ itemId: conversationItems.itemId, item: conversationItems.item })
		.from(conversationItems)
		.where(where)
		.orderBy(newest ? desc(conversationItems.seq) : asc(conversationItems.seq))
		.limit(q.limit + 1)
	return { items: rows.slice(0, q.limit).map((r) => ({ itemId: r.itemId, item: r.item as Item })), hasMore: rows.length > q.limit }
}

async function itemRow(db: Db, conversationId: string, itemId: string, param?: string) {
	const [row] = await db.orm
		.select()
		.from(conversationItems)
		.where(and(eq(conversationItems.conversationId, conversationId), eq(conversationItems.itemId, itemId)))
		.limit(1)
	if (!row) throw itemNotFound(itemId, param)
	return row
}

export async function getItem(db: Db, conversationId: string, itemId: string): Promise<StoredItem> {
	const row = await itemRow(db, conversationId, itemId)
	return { itemId: row.itemId, item: row.item as Item }
}

export async function deleteItem(db: Db, conversationId: string, itemId: string): Promise<void> {
	const gone = await db.orm
		.delete(conversationItems)
		.where(and(eq(conversationItems.conversationId, conversationId), eq(conversationItems.itemId, itemId)))
		.returning({ seq: conversationItems.seq })
	if (!gone.length) throw itemNotFound(itemId)
}
