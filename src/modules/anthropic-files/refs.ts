/**
 * Messages naming files uploaded with Anthropic's Files API (`{type: 'document' | 'image', source: {type: 'file',
 * file_id}}`, `{type: 'container_upload', file_id}`; platform.claude.com/docs/en/build-with-claude/files): each must
 * be the account's (every account shares the channel's key, so the vendor alone would serve anyone's), and the request
 * goes to the channel holding them (relay/chat.ts `FileTerms`), with the Files API beta named upstream.
 * @module
 */
import { and, eq } from 'drizzle-orm'
import type { AuthToken } from '../../auth/api-key'
import { GatewayError } from '../../core/errors'
import { tasks } from '../../db/schema'
import { namedContainer } from '../../protocols/anthropic-messages/code-outputs'
import type { FileTerms } from '../../relay/chat'
import type { Services } from '../../services'
import { ownedByUpstream } from '../../tasks/store'

/** The beta the Files API and file sources are behind (https://platform.claude.com/docs/en/api/files-create). */
export const FILES_BETA = 'files-api-2025-04-14'

/**
 * The client's `anthropic-beta` with the Files API beta in it (added when it names none: the SDK sends it only when
 * asked to, and the upstream call must carry it).
 * @example withFilesBeta('prompt-caching-2024-07-31') === 'prompt-caching-2024-07-31,files-api-2025-04-14'
 */
export const withFilesBeta = (beta: string | null): string => (!beta ? FILES_BETA : beta.includes('files-api-') ? beta : `${beta},${FILES_BETA}`)

/** The file ids named in file sources and container uploads, at any depth of the messages; a tool call's `input` is the model's own, not a reference. */
function namedFiles(v: unknown, out: Set<string>): Set<string> {
	if (Array.isArray(v)) for (const x of v) namedFiles(x, out)
	else if (v !== null && typeof v === 'object') {
		const o = v as Record<string, unknown>
		if ((o.type === 'file' || o.type === 'container_upload') && typeof o.file_id === 'string') out.add(o.file_id)
		for (const k in o) if (k !== 'input' && typeof o[k] === 'object') namedFiles(o[k], out)
	}
	return out
}

/**
 * The files a messages body names, and the code execution container it reuses, for the relay: undefined (no promise)
 * for a body naming neither, told by a walk of its parsed messages and one read of `container`; else the
 * account's records of them, or a 404 for one that is not the account's. A message batch asks for all its requests'
 * files at once (`{messages: [each one's messages]}`, `batch`): it runs on one channel.
 */
export function fileTerms(
	svc: Services,
	body: Record<string, unknown>,
	token: AuthToken,
	inbound: Headers,
	batch = false,
): Promise<FileTerms | undefined> | undefined {
	const container = body.container === undefined ? undefined : namedContainer(body.container)
	// The parsed messages are walked, not the body's text searched: a key spelt with escapes (`"file\u005fid"`) parses
	// to `file_id` all the same, and the walk costs less (a 90 KB agent turn: 2 µs, where searching its text for the key
	// and for escapes took 12).
	const ids = [...namedFiles(body.messages, new Set())]
	return ids.length || container !== undefined ? terms(svc, ids, container, token.accountId, inbound, batch) : undefined
}

async function terms(svc: Services, ids: string[], container: string | undefined, accountId: number, inbound: Headers, batch: boolean): Promise<FileTerms | undefined> {
	const [rows, ran] = await Promise.all([ownedByUpstream(svc.db, 'anthropic_file', accountId, ids), container === undefined ? undefined : containerChannel(svc, container, accountId)])
	const missing = ids.find((id) => !rows.some((r) => r.upstreamId === id))
	const param = batch ? 'requests' : 'messages'
	if (missing !== undefined) throw new GatewayError('not_found', `File not found: ${missing}`, { code: 'file_not_found', param })
	const channels = new Set(rows.map((r) => r.channelId!))
	if (ran !== undefined) channels.add(ran)
	if (channels.size > 1)
		throw new GatewayError(
			'invalid_request',
			ran === undefined
				? `${param}: the files ${ids.join(', ')} were uploaded through different vendor keys; one ${batch ? 'batch' : 'request'} can name the files of one only`
				: `${param}: the files ${ids.join(', ')} and the container ${container} are held by different vendor keys; one request can name what one holds only`,
			{ code: 'invalid_request', param },
		)
	const [channelId] = channels
	// Only a container the gateway never saw: routed as any request.
	if (channelId === undefined) return undefined
	if (!ids.length) return { channelId, ids, container, inbound }
	const beta = inbound.get('anthropic-beta')
	const headers = beta?.includes('files-api-') ? inbound : new Headers(inbound)
	if (headers !== inbound) headers.set('anthropic-beta', withFilesBeta(beta))
	return { channelId, ids, ...(ran === undefined ? {} : { container }), inbound: headers }
}

/**
 * The channel that ran a container the account's answers named, which alone can reuse it (another vendor key answers
 * it not found); a 404 for a container another account's answers named. A container the gateway never saw (made by a
 * request not offering the code execution tool, or before it kept them) goes where the model's route sends it.
 */
async function containerChannel(svc: Services, id: string, accountId: number): Promise<number | undefined> {
	const [mine] = await ownedByUpstream(svc.db, 'anthropic_container', accountId, [id])
	if (mine) return mine.channelId ?? undefined
	const theirs = await svc.db.orm
		.select({ id: tasks.id })
		.from(tasks)
		.where(and(eq(tasks.kind, 'anthropic_container'), eq(tasks.upstreamId, id)))
		.limit(1)
	if (theirs.length) throw new GatewayError('not_found', `container: Container not found: ${id}`, { code: 'not_found', param: 'container' })
	return undefined
}
