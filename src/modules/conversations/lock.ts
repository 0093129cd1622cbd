/**
 * One turn at a time per conversation. Two turns sent at once would each read the conversation before either
 * appended, and each miss the other's items; OpenAI refuses the second instead: 400 `conversation_locked`, "Another
 * process is currently operating on this conversation. Please retry in a few seconds." (seen on api.openai.com,
 * e.g. https://github.com/paulgmiller/careme/issues/379; https://community.openai.com/t/1367791), and so does this
 * gateway. The hold is a lease on the conversation's row (`busy_by`, `busy_until`), so every instance sharing the
 * database sees it; it is renewed while the turn runs (a stream may run for minutes) and lapses on its own when the
 * instance holding it is gone, so a crash blocks a conversation for at most one lease.
 * @module
 */
import { and, eq, isNull, lt, or, sql } from 'drizzle-orm'
import { GatewayError } from '../../core/errors'
import type { Db } from '../../db/client'
import { conversations } from '../../db/schema'
import { randomString } from '../../lib/ids'

/** How long a hold lasts unless renewed; renewed every third of it while the turn runs. */
export const HOLD_MS = 60_000

export const conversationLocked = () =>
	new GatewayError('invalid_request', 'Another process is currently operating on this conversation. Please retry in a few seconds.', {
		code: 'conversation_locked',
		param: 'conversation',
	})

export type ConversationHold = {
	/** Lets go of the conversation (once; later calls do nothing); never rejects. */
	release(): Promise<void>
}

const until = (ms: number) => sql`now() + ${ms} * interval '1 millisecond'`

/**
 * Takes the conversation for one turn, or throws `conversationLocked` while another turn holds it. The database's
 * clock decides when a hold lapsed, so instances whose clocks differ agree.
 * @example const hold = await holdConversation(db, 'conv_1'); try { … } finally { await hold.release() }
 */
export async function holdConversation(db: Db, id: string, holdMs = HOLD_MS): Promise<ConversationHold> {
	const token = randomString(24)
	const free = or(isNull(conversations.busyUntil), lt(conversations.busyUntil, sql`now()`))
	const taken = await db.orm
		.update(conversations)
		.set({ busyBy: token, busyUntil: until(holdMs) })
		.where(and(eq(conversations.id, id), free))
		.returning({ id: conversations.id })
	if (!taken.length) throw conversationLocked()
	const mine = and(eq(conversations.id, id), eq(conversations.busyBy, token))
	const renew = setInterval(() => {
		db.orm
			.update(conversations)
			.set({ busyUntil: until(holdMs) })
			.where(mine)
			.catch(() => undefined)
	}, Math.max(1, Math.floor(holdMs / 3)))
	renew.unref?.()
	let released: Promise<void> | undefined
	return {
		release: () =>
			(released ??= (async () => {
				clearInterval(renew)
				// Only this turn's hold: one that lapsed and was taken by another turn stays that turn's. A failure here
				// leaves the hold to lapse.
				await db.orm
					.update(conversations)
					.set({ busyBy: null, busyUntil: null })
					.where(mine)
					.catch(() => undefined)
			})()),
	}
}
