/**
 * Model requests naming files OpenAI holds by id: chat's `{type: 'file', file: {file_id}}`, Responses' `input_file` /
 * `input_image` by `file_id`, code interpreter's `container.file_ids`. Every account shares a channel's key, so OpenAI
 * would read any of them for anyone, another account's batch output included: a file must be recorded to the caller's
 * account (an upload through `POST /v1/files`, or a batch's output or error file: files.ts, tasks/batch.ts), and the
 * request then goes to the channel holding it. A file the operator uploaded with the channel's key is 404 for every
 * account: what no account was answered is no account's, as for `previous_response_id` (responses/ownership.ts).
 * Vector stores (`file_search`'s `vector_store_ids`) and container ids go as sent: no account can make a vector store
 * here (the gateway serves no such API), so those are the operator's to share, and a container id is random and
 * unrecorded.
 * Only requests for a model an OpenAI channel serves are checked: a converted request never sends the ids upstream,
 * and its decoder refuses them (400) as before. Batch input files' lines, image edits and video submits naming files
 * are held to the same rule (`checkLineRefs`, `checkFileIds`); a line's `item_reference`s are held to the items answered to
 * the account (lines.ts `checkContinuations`).
 * @module
 */
import type { AuthToken } from '../../auth/api-key'
import { GatewayError } from '../../core/errors'
import type { FileTerms } from '../../relay/chat'
import type { Services } from '../../services'
import { ownedByUpstream } from '../../tasks/store'

/** An id a request names, and where (OpenAI's `param` for it). */
type Named = { id: string; param: string; line?: string }

/** The terms of a request naming the account's files, with the refusal for a model their channel does not serve. */
export type OpenAIFileTerms = FileTerms & Required<Pick<FileTerms, 'unreadable'>>

/** Files OpenAI holds that a request names. */
type Refs = { files: Named[] }

/** The file ids of message content parts: chat's `file` part, Responses' `input_file` and `input_image`, at any depth (tool outputs carry parts too). */
function partFiles(v: unknown, at: string, out: Named[]): void {
	if (Array.isArray(v)) {
		for (let i = 0; i < v.length; i++) partFiles(v[i], `${at}[${i}]`, out)
		return
	}
	if (v === null || typeof v !== 'object') return
	const o = v as Record<string, unknown>
	if (o.type === 'file' && o.file !== null && typeof o.file === 'object') {
		const id = (o.file as { file_id?: unknown }).file_id
		if (typeof id === 'string' && id) out.push({ id, param: `${at}.file.file_id` })
	} else if ((o.type === 'input_file' || o.type === 'input_image') && typeof o.file_id === 'string' && o.file_id) out.push({ id: o.file_id, param: `${at}.file_id` })
	for (const k in o) if (typeof o[k] === 'object') partFiles(o[k], at ? `${at}.${k}` : k, out)
}

/** The files `tools` names: code interpreter's `container.file_ids`. */
function toolRefs(tools: unknown, refs: Refs): void {
	if (!Array.isArray(tools)) return
	tools.forEach((tool: unknown, i) => {
		if (tool === null || typeof tool !== 'object') return
		const t = tool as { type?: unknown; container?: unknown }
		if (t.type !== 'code_interpreter') return
		const ids = t.container !== null && typeof t.container === 'object' ? (t.container as { file_ids?: unknown }).file_ids : undefined
		if (Array.isArray(ids)) ids.forEach((id, j) => typeof id === 'string' && refs.files.push({ id, param: `tools[${i}].container.file_ids[${j}]` }))
	})
}

/**
 * The files a chat or Responses body names. The parsed body is walked, not its text searched: a key spelt with escapes
 * (`"file\u005fid"`) parses to `file_id` all the same, and the walk costs less than a search of a large body's text
 * (a 90 KB agent turn: 3 µs, where searching it for `file_id` and for escapes took 12).
 * @example namedRefs({ messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] }] }).files // [{ id: 'file-1', param: 'messages[0].content[0].file.file_id' }]
 */
export function namedRefs(body: Record<string, unknown>): Refs {
	const refs: Refs = { files: [] }
	toolRefs(body.tools, refs)
	if (body.messages !== undefined) partFiles(body.messages, 'messages', refs.files)
	if (body.input !== undefined) partFiles(body.input, 'input', refs.files)
	return refs
}

/**
 * For a body naming OpenAI-held objects, sent for a model an OpenAI channel serves: the terms pinning it to the
 * channel holding its files (one query for all of them), or a 404 in OpenAI's words for the first id not the caller's.
 * Undefined (no promise) when the body names none, or no OpenAI channel serves the model.
 */
export function openaiFileTerms(svc: Services, body: Record<string, unknown>, token: AuthToken, inbound: Headers): Promise<OpenAIFileTerms> | undefined {
	const refs = namedRefs(body)
	if (!refs.files.length) return undefined
	if (typeof body.model !== 'string' || !svc.catalog.channelsFor(body.model).some((ch) => ch.type === 'openai')) return undefined
	return (async () => {
		const channelId = await holderOf(svc, refs, token.accountId)
		const ids = [...new Set(refs.files.map((n) => n.id))]
		return { channelId: channelId!, ids, inbound, unreadable: (model: string) => unreadableFiles(ids, model, refs.files[0]!.param) }
	})()
}

/**
 * Refuses (404, before the file goes upstream) a batch input file whose lines name a file
 * not recorded to the account, and (400) one naming files `channelId`, the channel the batch would run on, does not hold.
 */
export async function checkLineRefs(svc: Services, accountId: number, channelId: number, lines: Array<{ customId: string; body: Record<string, unknown> }>): Promise<void> {
	const refs: Refs = { files: [] }
	for (const line of lines) refs.files.push(...namedRefs(line.body).files.map((n) => ({ id: n.id, param: n.param, line: line.customId })))
	if (!refs.files.length) return
	const held = await holderOf(svc, refs, accountId)
	if (held !== undefined && held !== channelId) throw unreadableFiles([...new Set(refs.files.map((n) => n.id))], lines[0]!.body.model as string, refs.files[0]!.param)
}

/**
 * Refuses (404) file ids not recorded to the account, named outside a model request (an image edit's `images` and
 * `mask`, a video's `input_reference`); answers the channel holding them.
 */
export const checkFileIds = (svc: Services, accountId: number, named: Array<{ id: string; param: string }>): Promise<number | undefined> =>
	holderOf(svc, { files: named }, accountId)

/** What a message of a batch line's refusal adds: the request naming the id. */
const inLine = (n: Named) => (n.line === undefined ? '' : ` (request '${n.line}')`)

/**
 * The channel holding every file `refs` names, all recorded to the account (one query), or undefined when it names
 * none; a 404 for the first id that is not the account's, a 400 for files of two channels.
 */
async function holderOf(svc: Services, refs: Refs, accountId: number): Promise<number | undefined> {
	if (!refs.files.length) return undefined
	const ids = [...new Set(refs.files.map((n) => n.id))]
	const rows = await ownedByUpstream(svc.db, 'file', accountId, ids)
	const missing = refs.files.find((n) => !rows.some((r) => r.upstreamId === n.id))
	// OpenAI's words for a file id it does not hold (as GET /v1/files/{id} answers it: upstream.ts `owned`).
	if (missing) throw new GatewayError('not_found', `No such File object: ${missing.id}${inLine(missing)}`, { code: 'file_not_found', param: missing.param })
	const channels = new Set(rows.map((r) => r.channelId))
	if (channels.size > 1 || channels.has(null))
		throw new GatewayError('invalid_request', `The files ${ids.join(', ')} are held by different OpenAI keys; one request can name the files of one only`, { code: 'invalid_request', param: refs.files[0]!.param })
	return [...channels][0]!
}

/** A file is readable only with the OpenAI key it was uploaded with (or that ran the batch writing it). */
const unreadableFiles = (ids: string[], model: string, param: string) =>
	new GatewayError(
		'invalid_request',
		`${ids.length > 1 ? `The files ${ids.join(', ')} are` : `The file ${ids[0]} is`} held by an OpenAI channel that does not serve the model "${model}": a file is readable only with the OpenAI key it was uploaded with; use a model that channel serves, or send the file's content (file_data)`,
		{ code: 'unsupported_for_model', param },
	)
