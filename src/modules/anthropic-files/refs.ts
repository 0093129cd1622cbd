/**
 * Messages naming files uploaded with Anthropic's Files API (`{type: 'document' | 'image', source: {type: 'file',
 * file_id}}`, `{type: 'container_upload', file_id}`; platform.claude.com/docs/en/build-with-claude/files): each must
 * be the account's (every account shares the channel's key, so the vendor alone would serve anyone's), and the request
 * goes to the channel holding them (relay/chat.ts `FileTerms`), with the Files API beta named upstream.
 * @module
 */
import type { AuthToken } from '../../auth/api-key'
import { GatewayError } from '../../core/errors'
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
 * The files a messages body names, for the relay: undefined (no promise, no parse) for the body naming none, told by
 * one search of its text; else the account's records of them, or a 404 for one that is not the account's. A message
 * batch asks for all its requests' at once (`{messages: [each one's messages]}`, `batch`): it runs on one channel.
 */
export function fileTerms(
	svc: Services,
	body: Record<string, unknown>,
	raw: string | undefined,
	token: AuthToken,
	inbound: Headers,
	batch = false,
): Promise<FileTerms> | undefined {
	// `file_id"`, not `"file_id"`: JavaScriptCore's search tries a match at each occurrence of the pattern's first
	// character, and a JSON body is full of quotes (a 99 KB agent turn: 75 µs with the quote, 6 µs without).
	if (!(raw ?? JSON.stringify(body.messages ?? null)).includes('file_id"')) return undefined
	const ids = [...namedFiles(body.messages, new Set())]
	return ids.length ? terms(svc, ids, token.accountId, inbound, batch) : undefined
}

async function terms(svc: Services, ids: string[], accountId: number, inbound: Headers, batch: boolean): Promise<FileTerms> {
	const rows = await ownedByUpstream(svc.db, 'anthropic_file', accountId, ids)
	const missing = ids.find((id) => !rows.some((r) => r.upstreamId === id))
	const param = batch ? 'requests' : 'messages'
	if (missing !== undefined) throw new GatewayError('not_found', `File not found: ${missing}`, { code: 'file_not_found', param })
	const channels = new Set(rows.map((r) => r.channelId))
	if (channels.size > 1)
		throw new GatewayError('invalid_request', `${param}: the files ${ids.join(', ')} were uploaded through different vendor keys; one ${batch ? 'batch' : 'request'} can name the files of one only`, {
			code: 'invalid_request',
			param,
		})
	const beta = inbound.get('anthropic-beta')
	const headers = beta?.includes('files-api-') ? inbound : new Headers(inbound)
	if (headers !== inbound) headers.set('anthropic-beta', withFilesBeta(beta))
	return { channelId: rows[0]!.channelId!, ids, inbound: headers }
}
