/**
 * Reading the bytes of files the vendor made from the Gemini channel holding them (`GET
 * /download/v1beta/files/{id}:download?alt=media`, the batch guide's REST call, ai.google.dev/gemini-api/docs/batch-mode):
 * a batch's responses file, read to settle the batch and streamed to the account it is recorded to (`files.download`
 * of @google/genai asks `GET /{version}/files/{id}:download?alt=media`; the REST path under `/download` is served too).
 * Uploaded files are not downloadable at Google; a batch input file is read from what the gateway kept (parts.ts).
 * @module
 */
import { GatewayError } from '../../core/errors'
import { tasks } from '../../db/schema'
import { authHeaders, channelUrl } from '../../passthrough/upstream'
import { upstreamError } from '../../providers/upstream-error'
import { channelTimeouts, fetchUpstream } from '../../relay/upstream-fetch'
import type { Channel } from '../../routing/catalog'
import type { Services } from '../../services'
import { holder } from '../batches/upstream'
import { idOf, ownedFile, type VendorFile } from './records'

const READ_TIMEOUTS = { firstByteMs: 30_000, idleMs: 30_000 }

/** The vendor's download URL of a file it names `files/{id}`. */
const downloadUrl = (ch: Channel, vendorName: string) => channelUrl(ch, `/download/v1beta/${vendorName.split('/').map(encodeURIComponent).join('/')}:download?alt=media`)

/** The text of a file on the channel; undefined when it cannot be read now. */
export async function vendorFileText(ch: Channel, vendorName: string, signal: AbortSignal): Promise<string | undefined> {
	const { res } = await fetchUpstream(downloadUrl(ch, vendorName), { method: 'GET', headers: authHeaders(ch) }, READ_TIMEOUTS, signal)
	const text = await res.text().catch(() => undefined)
	return res.ok ? text : undefined
}

/** A batch's responses file of a model the channel serves under another name: the client's name for it, the channel's. */
export type ModelRename = { from: string; to: string }

/**
 * The account's file's bytes, streamed from its channel (a batch's responses file: JSONL); 404 for another account's.
 * A responses file recorded with a `rename` (the batch ran a `model_map` alias) has each line's `modelVersion` shown
 * under the client's name, as the inline responses are.
 */
export async function downloadFile(svc: Services, id: string, accountId: number, request: Request, requestId: string): Promise<Response> {
	const row = await ownedFile(svc, idOf(id), accountId)
	const ch = holder(svc, row)
	const { res } = await fetchUpstream(downloadUrl(ch, String(row.file.name)), { method: 'GET', headers: authHeaders(ch) }, channelTimeouts(ch.settings), request.signal)
	if (!res.ok || !res.body) throw upstreamError(res.status, await res.text().catch(() => ''), res.headers)
	const out: Record<string, string> = { 'content-type': res.headers.get('content-type') ?? 'application/octet-stream', 'x-request-id': requestId }
	const rename = (row.result as { rename?: ModelRename } | null)?.rename
	if (rename) return new Response(res.body.pipeThrough(new TextDecoderStream()).pipeThrough(renameLines(rename)).pipeThrough(new TextEncoderStream()), { status: 200, headers: out })
	const len = res.headers.get('content-length')
	if (len) out['content-length'] = len
	return new Response(res.body, { status: 200, headers: out })
}

/** JSON Lines with each line's `response.modelVersion` renamed `from` → `to`; other lines, and the line breaks, as they came. */
function renameLines({ from, to }: ModelRename): TransformStream<string, string> {
	let tail = ''
	const line = (raw: string): string => {
		try {
			const parsed = JSON.parse(raw) as { response?: { modelVersion?: unknown } }
			if (parsed?.response?.modelVersion !== from) return raw
			parsed.response.modelVersion = to
			return JSON.stringify(parsed)
		} catch {
			return raw
		}
	}
	return new TransformStream({
		transform(chunk, out) {
			const lines = (tail + chunk).split('\n')
			tail = lines.pop()!
			if (lines.length) out.enqueue(lines.map(line).join('\n') + '\n')
		},
		flush(out) {
			if (tail) out.enqueue(line(tail))
		},
	})
}

/**
 * Records a file the vendor made for the account (a batch's responses file) under the gateway id `id`, once: a
 * repeat (another instance, a later poll) records nothing.
 */
export async function recordVendorFile(svc: Services, id: string, owner: { accountId: number; tokenId: number | null; channelId: number; requestId: string }, file: VendorFile, rename?: ModelRename): Promise<void> {
	if (!file.name) throw new GatewayError('upstream', 'upstream named a file without a name', { code: 'upstream_malformed' })
	await svc.db.orm
		.insert(tasks)
		.values({ id, kind: 'gemini_file', accountId: owner.accountId, tokenId: owner.tokenId, model: '', channelId: owner.channelId, upstreamId: file.name, status: 'completed', progress: 100, requestId: owner.requestId, cost: 0, result: { file, ...(rename && { rename }) } })
		.onConflictDoNothing()
}
