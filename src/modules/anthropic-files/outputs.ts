/**
 * What Claude's code execution tool leaves with the vendor, recorded to the account it answered: the files the code
 * wrote (as `anthropic_file`, as an upload is, so `client.beta.files.retrieveMetadata` / `download` / `list` / `delete`
 * and later messages naming them work for that account and answer 404 to any other), and the container it ran in
 * (`anthropic_container`, so a request reusing it goes to the channel that ran it, refs.ts). Every account shares the
 * channel's key: the vendor alone would serve anyone's. The file's metadata (name, type, size) is not in the answer;
 * it is read from the vendor when first asked for (index.ts). A container's record goes once the container surely has
 * (`purgeContainers`); the files' records stay until deleted, as uploads' do.
 * @module
 */
import { and, eq, lt, sql } from 'drizzle-orm'
import type { AuthToken } from '../../auth/api-key'
import type { Db } from '../../db/client'
import { tasks } from '../../db/schema'
import { type CodeOutputs, offersCodeExecution } from '../../protocols/anthropic-messages/code-outputs'
import type { OutputTerms } from '../../relay/chat'
import type { Services } from '../../services'
import { newTaskId } from '../../tasks/store'

/** Marks a file the code wrote (its metadata not yet read from the vendor). */
export const CODE_OUTPUT = 'code_execution'

/**
 * The recorder for a Messages request's code execution outputs: undefined (no allocation) for a body offering no code
 * execution tool, told by its `tools`.
 */
export function outputTerms(svc: Services, body: Record<string, unknown>, token: AuthToken, requestId: string): OutputTerms | undefined {
	if (!offersCodeExecution(body)) return undefined
	return { keep: (found, channelId) => keepOutputs(svc, token, requestId, found, channelId) }
}

async function keepOutputs(svc: Services, token: AuthToken, requestId: string, found: CodeOutputs, channelId: number): Promise<void> {
	const row = { accountId: token.accountId, tokenId: token.id, model: '', channelId, status: 'completed', progress: 100, requestId, cost: 0 }
	const rows: (typeof tasks.$inferInsert)[] = found.files.map((id) => ({ ...row, id: newTaskId('anthropic_file'), kind: 'anthropic_file', upstreamId: id, result: { source: CODE_OUTPUT } }))
	const c = found.container
	if (c) rows.push({ ...row, id: newTaskId('anthropic_container'), kind: 'anthropic_container', upstreamId: c.id, result: { source: CODE_OUTPUT, container: c } })
	if (!rows.length) return
	try {
		// A container reused turn after turn is named by each answer: recorded once, to the account that first had it,
		// each answer marking it used (its record lives CONTAINER_DAYS past the last); a file named again is left as it was.
		await svc.db.orm
			.insert(tasks)
			.values(rows)
			.onConflictDoUpdate({
				target: [tasks.kind, tasks.channelId, tasks.upstreamId],
				set: { updatedAt: sql`now()`, result: sql`excluded.result` },
				setWhere: eq(tasks.kind, 'anthropic_container'),
			})
	} catch (e) {
		// The answer still goes out; only the gateway's record of its files is missing (they answer 404 here).
		svc.log.error('code execution outputs not recorded', { request_id: requestId, files: found.files.join(','), container: c?.id, error: String(e) })
	}
}

/**
 * Days a container's record is kept after the last answer naming it: Anthropic's containers expire after 30 days
 * (https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/code-execution-tool, "Containers"), so by then the
 * container is gone and a request naming it fails at the vendor (`container_expired`) wherever it is sent.
 */
export const CONTAINER_DAYS = 30

/** Forgets the containers no answer named for `days`; returns how many. Any instance may run it. */
export async function purgeContainers(db: Db, days = CONTAINER_DAYS, now = Date.now()): Promise<number> {
	const gone = await db.orm
		.delete(tasks)
		.where(and(eq(tasks.kind, 'anthropic_container'), lt(tasks.updatedAt, new Date(now - days * 86_400_000))))
		.returning({ id: tasks.id })
	return gone.length
}
