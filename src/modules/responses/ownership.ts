/**
 * Stored responses belong to the account they were answered to. OpenAI stores a response (unless `store: false`) under
 * the project of the key that made it, and every account shares a channel's key: without this, account B could
 * continue account A's conversation by naming A's response id in `previous_response_id`
 * (https://platform.openai.com/docs/api-reference/responses/create). The ids an account receives from the native
 * Responses route are recorded with the channel that holds them; a continuation naming any other id is refused as
 * OpenAI refuses an unknown one (400 `previous_response_not_found`) before anything is reserved or sent upstream, and goes to the holding channel when the model has several.
 * `conversation` names a conversation: one of this gateway's (modules/conversations) is expanded into plain input
 * before this check and never reaches it; any other id is held to the same rule, so on a shared key it is refused
 * unless recorded to the caller. Items are held to the same rule: OpenAI resolves an `item_reference` in the key's
 * project, so the ids of a stored response's output items (and of the input items an account lists) are recorded to
 * the account, and a reference to any other is refused with OpenAI's 404 for an unknown item.
 * @module
 */
import { eq, inArray, lt } from 'drizzle-orm'
import { GatewayError } from '../../core/errors'
import type { SseFrame } from '../../core/sse'
import { storedItems, storedResponses } from '../../db/schema'
import type { Services } from '../../services'
import { isBareReasoning, purgeConvertedItems } from './converted-items'

/** The ids a request continues from: `previous_response_id` and `conversation` (a string or `{id}`). */
export function continuedIds(body: Record<string, unknown>): Array<{ id: string; param: 'previous_response_id' | 'conversation' }> {
	const out: Array<{ id: string; param: 'previous_response_id' | 'conversation' }> = []
	if (typeof body.previous_response_id === 'string' && body.previous_response_id) out.push({ id: body.previous_response_id, param: 'previous_response_id' })
	const conv = body.conversation
	const convId = typeof conv === 'string' ? conv : conv && typeof conv === 'object' ? (conv as { id?: unknown }).id : undefined
	if (typeof convId === 'string' && convId) out.push({ id: convId, param: 'conversation' })
	return out
}

/**
 * OpenAI's answer to an id it does not hold: an unknown `previous_response_id` is a 400 `invalid_request_error`
 * ("Previous response with id 'resp_…' not found.", code `previous_response_not_found`), an unknown conversation a 404
 * (`conversation_not_found`), as a GET of an unknown response is.
 */
export const unknownContinued = (id: string, param: 'previous_response_id' | 'conversation'): GatewayError =>
	param === 'conversation'
		? new GatewayError('not_found', `Conversation with id '${id}' not found.`, { code: 'conversation_not_found', param })
		: new GatewayError('invalid_request', `Previous response with id '${id}' not found.`, { code: 'previous_response_not_found', param })

/**
 * Throws OpenAI's refusal of an unknown id (`unknownContinued`: 400 for a response, 404 for a conversation) unless
 * every id the request continues from was answered to this account; returns the channel that holds them (undefined
 * when the request continues nothing).
 * @example await checkContinuation(svc, 7, { previous_response_id: 'resp_1' }) // 3: resp_1 is account 7's, on channel 3
 */
export async function checkContinuation(svc: Pick<Services, 'db'>, accountId: number, body: Record<string, unknown>): Promise<number | undefined> {
	let holder: number | undefined
	for (const { id, param } of continuedIds(body)) {
		const [row] = await svc.db.orm.select().from(storedResponses).where(eq(storedResponses.responseId, id)).limit(1)
		if (!row || row.accountId !== accountId) throw unknownContinued(id, param)
		holder ??= row.channelId ?? undefined
	}
	return holder
}

/**
 * Records a response id answered to the account on `channelId` (once: a repeat of the id changes nothing), with the
 * conversation of this gateway's it was a turn of, which `GET /v1/responses/{id}` shows (OpenAI never saw it).
 */
export const recordResponse = (svc: Services, accountId: number, channelId: number, id: unknown, conversationId?: string): Promise<void> =>
	recordResponses(svc, accountId, channelId, typeof id === 'string' && id ? [id] : [], conversationId)

/** Records response ids answered to the account on `channelId` (a batch's), in one statement. */
export async function recordResponses(svc: Services, accountId: number, channelId: number, ids: string[], conversationId?: string): Promise<void> {
	if (ids.length)
		await svc.db.orm
			.insert(storedResponses)
			.values(ids.map((responseId) => ({ responseId, accountId, channelId, conversationId: conversationId ?? null })))
			.onConflictDoNothing()
}

/**
 * The ids of the items OpenAI looks up for `body` in the key's project: each `item_reference`'s, and, when the request
 * is stored, a replayed reasoning item's that has an `id` and no `encrypted_content` (OpenAI fetches that reasoning by
 * its id; unstored, it refuses the item itself). A string input names none.
 */
export function referencedItems(body: Record<string, unknown>): string[] {
	const input = body.input
	if (!Array.isArray(input)) return []
	const out: string[] = []
	for (const x of input) {
		if (!x || typeof x !== 'object') continue
		const item = x as { type?: unknown; id?: unknown; encrypted_content?: unknown }
		if (typeof item.id !== 'string') continue
		if (item.type === 'item_reference' || (item.type === 'reasoning' && body.store !== false && typeof item.encrypted_content !== 'string')) out.push(item.id)
	}
	return out
}

/**
 * Throws 404 (OpenAI's words for an item it cannot find) unless every item `body` names for OpenAI to look up
 * (`referencedItems`) is recorded to this account; returns the channel holding them (undefined when it names none).
 * Items this gateway keeps itself (a converted answer's: converted-items.ts) are put in place before this and never
 * reach it.
 * @example await checkItemReferences(svc, 7, { input: [{ type: 'item_reference', id: 'msg_1' }] }) // 3: msg_1 is account 7's, on channel 3
 */
export async function checkItemReferences(svc: Pick<Services, 'db'>, accountId: number, body: Record<string, unknown>): Promise<number | undefined> {
	const ids = referencedItems(body)
	if (!ids.length) return undefined
	const rows = await svc.db.orm.select().from(storedItems).where(inArray(storedItems.itemId, [...new Set(ids)]))
	const mine = new Map(rows.filter((r) => r.accountId === accountId).map((r) => [r.itemId, r.channelId]))
	const missing = ids.find((id) => !mine.has(id))
	if (missing !== undefined) throw new GatewayError('not_found', `Item with id '${missing}' not found.`, { param: 'input' })
	return mine.get(ids[0]!) ?? undefined
}

/**
 * For a model no OpenAI channel serves: refuses (400, before any upstream call or charge) a stored request's reasoning
 * item replayed by its id alone that the gateway could not put back (converted-items.ts `resolve`: not a converted
 * answer's of the account) and that is no OpenAI item of the account's either: OpenAI answers such an id "Item with id
 * '…' not found.", and converting it would drop the reasoning unseen, and with it the vendor's thinking
 * (Claude's thinking is turned off for a turn whose signed thinking is missing).
 */
export async function refuseUnheldReasoning(svc: Pick<Services, 'db'>, accountId: number, body: Record<string, unknown>): Promise<void> {
	if (body.store === false || !Array.isArray(body.input)) return
	const bare = body.input.flatMap((x, i) => (isBareReasoning(x) ? [{ id: x.id, i }] : []))
	if (!bare.length) return
	const rows = await svc.db.orm.select().from(storedItems).where(inArray(storedItems.itemId, [...new Set(bare.map((b) => b.id))]))
	const mine = new Set(rows.filter((r) => r.accountId === accountId).map((r) => r.itemId))
	const missing = bare.find((b) => !mine.has(b.id))
	if (missing)
		// 404, as OpenAI answers an item id it does not hold (and the gateway does for OpenAI's models).
		throw new GatewayError(
			'not_found',
			`Item with id '${missing.id}' not found. input[${missing.i}] of type 'reasoning' names it without its encrypted_content, and this gateway holds no such item for this account: send the item as it was answered (with its encrypted_content), or leave it out.`,
			{ param: `input[${missing.i}]` },
		)
}

/**
 * The channel holding what the request names upstream (the response it continues, the items it references), once
 * each is found to be the account's (`unknownContinued`, or the 404 of an unknown item, otherwise); undefined when it names none. Items are looked up by OpenAI
 * alone: for a model no OpenAI channel serves (`toOpenAI` false) a replayed item is read as what it carries, and an
 * `item_reference` the gateway does not hold was refused before (native.ts `refuseUnconvertible`).
 */
export async function holderOf(svc: Pick<Services, 'db'>, accountId: number, body: Record<string, unknown>, toOpenAI: boolean): Promise<number | undefined> {
	const continued = continuedIds(body).length ? await checkContinuation(svc, accountId, body) : undefined
	const referenced = toOpenAI ? await checkItemReferences(svc, accountId, body) : undefined
	return continued ?? referenced
}

/** The ids of a Response object's output items (`output[].id`). */
export const outputItemIds = (response: unknown): string[] => itemIds((response as { output?: unknown } | null)?.output)

/** The `id`s of a list of items. */
export function itemIds(items: unknown): string[] {
	if (!Array.isArray(items)) return []
	const out: string[] = []
	for (const x of items) if (x && typeof x === 'object' && typeof (x as { id?: unknown }).id === 'string') out.push((x as { id: string }).id)
	return out
}

/** Records item ids answered (or listed) to the account on `channelId`; a repeat of an id changes nothing. */
export async function recordItems(svc: Pick<Services, 'db'>, accountId: number, channelId: number, ids: string[]): Promise<void> {
	if (ids.length)
		await svc.db.orm
			.insert(storedItems)
			.values(ids.map((itemId) => ({ itemId, accountId, channelId })))
			.onConflictDoNothing()
}

/**
 * How long a recorded id is kept: OpenAI keeps a stored response for 30 days by default, after which a continuation
 * naming it fails upstream anyway; without a bound the table would gain a row per stored call for good.
 */
export const STORED_RESPONSE_DAYS = 30

/**
 * Forgets the ids (of responses and of their items) recorded before `days` ago, and the converted answers' items stored
 * as long (converted-items.ts);
 * returns how many ids. Any instance may run it: a repeat deletes nothing.
 */
export async function purgeStoredResponses(svc: Pick<Services, 'db'>, days = STORED_RESPONSE_DAYS, now = Date.now()): Promise<number> {
	await purgeConvertedItems(svc.db, days, now)
	await svc.db.orm.delete(storedItems).where(lt(storedItems.createdAt, new Date(now - days * 86_400_000)))
	const gone = await svc.db.orm
		.delete(storedResponses)
		.where(lt(storedResponses.createdAt, new Date(now - days * 86_400_000)))
		.returning({ id: storedResponses.responseId })
	return gone.length
}

/** The response id in a `response.created` stream frame, if it is one. */
export function createdResponseId(f: SseFrame): string | undefined {
	if (f.event !== undefined && f.event !== 'response.created') return undefined
	try {
		const e = JSON.parse(f.data) as { type?: unknown; response?: { id?: unknown } }
		if (e.type !== 'response.created') return undefined
		return typeof e.response?.id === 'string' ? e.response.id : undefined
	} catch {
		return undefined
	}
}
