/**
 * Anthropic message threads (beta `message-threads-2026-08-12`, https://platform.claude.com/docs/en/build-with-claude/message-threads)
 * relayed to Claude. A `thread: {type: 'continue', previous_message_id}` carries only the new messages, but Anthropic
 * rebuilds the whole conversation and bills all of it as the turn's input: reserved for the new messages alone, a key
 * near its limit could spend far past it. So every reply of a thread the gateway relayed is recorded (table
 * `message_threads`) to the account it was answered to, with the channel that keeps the thread and the thread's size
 * as the vendor reported it (the turn's whole input plus its output); a continue is reserved for that size plus its
 * new messages, and settled from the vendor's usage as any request.
 *
 * A continue naming a reply not recorded to the caller's account (another account's: every account shares the
 * channel's key; one older than the gateway's record; or none) is answered as Anthropic answers a thread it no longer
 * keeps, 404 `thread_not_found`, before anything is reserved or sent: the SDK then replays the whole conversation under
 * a new `create`, which is reserved in full.
 * @module
 */
import { eq, lt } from 'drizzle-orm'
import { GatewayError } from '../../core/errors'
import { messageThreads } from '../../db/schema'
import type { ThreadTerms } from '../../relay/chat'
import type { Services } from '../../services'

/**
 * How long a recorded reply is kept. Anthropic lets a thread expire 5 minutes after its last request and deletes it
 * within the hour; a day leaves room for clocks and retries, and keeps the table small.
 */
export const THREAD_RECORD_HOURS = 24

/** A lost thread, as Anthropic words it (its SDK replays the conversation on `error.details.error_code`). */
const notFound = (id: string) =>
	new GatewayError('not_found', `thread: no thread state was found for previous_message_id ${id}`, {
		code: 'thread_not_found',
		param: 'thread.previous_message_id',
		details: { error_code: 'thread_not_found' },
	})

/**
 * The thread terms of a Messages body: undefined without a `thread` (or with a type the vendor refuses); for a
 * continue, throws 404 `thread_not_found` unless the reply it names was answered to `accountId` through the gateway.
 * @example await threadTerms(svc, 7, { thread: { type: 'continue', previous_message_id: 'msg_1' } }) // { held: 1234, channelId: 3, keep }
 */
export async function threadTerms(svc: Services, accountId: number, body: Record<string, unknown>): Promise<ThreadTerms | undefined> {
	const thread = body.thread
	if (!thread || typeof thread !== 'object') return undefined
	const { type, previous_message_id: previous } = thread as { type?: unknown; previous_message_id?: unknown }
	const keep = (messageId: string, channelId: number, tokens: number) => keepThread(svc, accountId, messageId, channelId, tokens)
	if (type === 'create') return { held: 0, keep }
	if (type !== 'continue') return undefined
	if (typeof previous !== 'string' || !previous) throw notFound(String(previous ?? ''))
	const [row] = await svc.db.orm.select().from(messageThreads).where(eq(messageThreads.messageId, previous)).limit(1)
	if (!row || row.accountId !== accountId) throw notFound(previous)
	return { held: row.tokens, channelId: row.channelId ?? undefined, keep }
}

async function keepThread(svc: Services, accountId: number, messageId: string, channelId: number, tokens: number): Promise<void> {
	try {
		await svc.db.orm
			.insert(messageThreads)
			.values({ messageId, accountId, channelId, tokens: Math.min(Math.max(0, Math.round(tokens)), 2_147_483_647) })
			.onConflictDoNothing()
	} catch (e) {
		// Its continue is then answered thread_not_found, and the SDK replays the conversation: nothing is lost.
		svc.log.error('message thread not recorded', { message_id: messageId, error: String(e) })
	}
}

/** Forgets the replies recorded before `hours` ago; returns how many. Any instance may run it. */
export async function purgeMessageThreads(svc: Pick<Services, 'db'>, hours = THREAD_RECORD_HOURS, now = Date.now()): Promise<number> {
	const gone = await svc.db.orm
		.delete(messageThreads)
		.where(lt(messageThreads.createdAt, new Date(now - hours * 3_600_000)))
		.returning({ id: messageThreads.messageId })
	return gone.length
}
