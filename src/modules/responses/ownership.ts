/**
 * Stored responses belong to the account they were answered to. OpenAI stores a response (unless `store: false`) under
 * the project of the key that made it, and every account shares a channel's key: without this, account B could
 * continue account A's conversation by naming A's response id in `previous_response_id`
 * (https://platform.openai.com/docs/api-reference/responses/create). The ids an account receives from the native
 * Responses route are recorded with the channel that holds them; a continuation naming any other id is refused with
 * 404 before anything is reserved or sent upstream, and goes to the holding channel when the model has several.
 * `conversation` names a conversation: one of this gateway's (modules/conversations) is expanded into plain input
 * before this check and never reaches it; any other id is held to the same rule, so on a shared key it is refused
 * unless recorded to the caller.
 * @module
 */
import { eq, lt } from 'drizzle-orm'
import { GatewayError } from '../../core/errors'
import type { SseFrame } from '../../core/sse'
import { storedResponses } from '../../db/schema'
import type { Services } from '../../services'
import { purgeConvertedItems } from './converted-items'

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
 * Throws 404 (OpenAI's shape, as OpenAI words an unknown id) unless every id the request continues from was answered
 * to this account; returns the channel that holds them (undefined when the request continues nothing).
 * @example await checkContinuation(svc, 7, { previous_response_id: 'resp_1' }) // 3: resp_1 is account 7's, on channel 3
 */
export async function checkContinuation(svc: Pick<Services, 'db'>, accountId: number, body: Record<string, unknown>): Promise<number | undefined> {
	let holder: number | undefined
	for (const { id, param } of continuedIds(body)) {
		const [row] = await svc.db.orm.select().from(storedResponses).where(eq(storedResponses.responseId, id)).limit(1)
		if (!row || row.accountId !== accountId) {
			const what = param === 'conversation' ? 'Conversation' : 'Previous response'
			throw new GatewayError('not_found', `${what} with id '${id}' not found.`, { code: param === 'conversation' ? 'conversation_not_found' : 'previous_response_not_found', param })
		}
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
 * How long a recorded id is kept: OpenAI keeps a stored response for 30 days by default, after which a continuation
 * naming it fails upstream anyway; without a bound the table would gain a row per stored call for good.
 */
export const STORED_RESPONSE_DAYS = 30

/**
 * Forgets the ids recorded before `days` ago, and the converted answers' items stored as long (converted-items.ts);
 * returns how many ids. Any instance may run it: a repeat deletes nothing.
 */
export async function purgeStoredResponses(svc: Pick<Services, 'db'>, days = STORED_RESPONSE_DAYS, now = Date.now()): Promise<number> {
	await purgeConvertedItems(svc.db, days, now)
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
