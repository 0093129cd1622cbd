/**
 * Uploaded files named in a `generateContent` request: a part's `fileData.fileUri` (or `file_data.file_uri`, which
 * Google accepts too) that is a gateway file URI
 * (`{base}/v1beta/files/{id}`, as the upload answered) of the caller's account is rewritten to the vendor's URI, and
 * the request must go to the channel holding the file (only that vendor key can read it). A gateway file URI naming a
 * file not the caller's is 404, as `files.get` answers it. A model another vendor serves cannot read such a file, and
 * Google serves no uploaded file's bytes back to inline it instead: its channels never hold one, so that is a 400
 * (relay/chat.ts, `channelId`).
 * @module
 */
import { badRequest, notFound } from '../../core/errors'
import type { ChatRequest, FilePart, Part } from '../../core/ir'
import type { Services } from '../../services'
import { fileOf, filesByIds } from './records'
import { isObject } from '../../core/json'

/** The path of a gateway file URI; its host is whatever the client was given (PUBLIC_URL or the request's origin). */
const GATEWAY_FILE = /^https?:\/\/[^/]+\/v1(?:beta)?\/files\/([a-z0-9-]{1,40})$/

type Obj = Record<string, unknown>

/** A part's file reference, as Google accepts it: `fileData.fileUri` or `file_data.file_uri` (ai.google.dev/api: either spelling). */
type FileRef = { data: Obj; key: 'fileData' | 'file_data'; uriKey: 'fileUri' | 'file_uri'; uri: string }
function refOf(p: unknown): FileRef | undefined {
	if (!isObject(p)) return undefined
	for (const key of ['fileData', 'file_data'] as const) {
		const data = p[key]
		if (!isObject(data)) continue
		for (const uriKey of ['fileUri', 'file_uri'] as const) if (typeof data[uriKey] === 'string') return { data, key, uriKey, uri: data[uriKey] as string }
	}
	return undefined
}

/** The contents of a body that may hold parts: `contents` and the system instruction, in either spelling. */
const CONTENT_KEYS = ['systemInstruction', 'system_instruction'] as const

/** Every file reference of the request's contents and system instruction. */
function fileRefs(body: Obj): FileRef[] {
	const out: FileRef[] = []
	const scan = (content: unknown) => {
		if (!isObject(content) || !Array.isArray(content.parts)) return
		for (const p of content.parts) {
			const ref = refOf(p)
			if (ref) out.push(ref)
		}
	}
	if (Array.isArray(body.contents)) for (const c of body.contents) scan(c)
	for (const k of CONTENT_KEYS) scan(body[k])
	return out
}

/** Whether any of the bodies names an uploaded file by a gateway file URI (a batch input file's lines cannot be rewritten). */
export const namesGatewayFile = (bodies: Obj[]): boolean => bodies.some((b) => fileRefs(b).some((r) => GATEWAY_FILE.test(r.uri)))

type Held = { uri: string; mimeType?: string }

/**
 * The caller's files among gateway file URIs, by URI, and the one channel holding them all. A URI of that shape that
 * is no gateway file is someone's web URL and is left out (it stays one); another account's file is 404.
 */
async function resolve(svc: Services, accountId: number, uris: string[]): Promise<{ held: Map<string, Held>; channelId?: number }> {
	const ids = new Map<string, string>()
	for (const uri of uris) {
		const m = GATEWAY_FILE.exec(uri)
		if (m) ids.set(uri, m[1]!)
	}
	const held = new Map<string, Held>()
	if (!ids.size) return { held }
	const rows = new Map((await filesByIds(svc, [...new Set(ids.values())])).map((r) => [r.id, r]))
	let channelId: number | undefined
	for (const [uri, id] of ids) {
		const row = rows.get(id)
		if (!row) continue
		const file = fileOf(row)
		if (row.accountId !== accountId || typeof file?.uri !== 'string') throw notFound(`File files/${id} not found`, 'file_not_found')
		if (channelId !== undefined && row.channelId !== channelId) throw badRequest('The files this request names were uploaded through different channels: no one vendor key can read them all; upload them again together')
		channelId = row.channelId ?? undefined
		held.set(uri, { uri: file.uri, ...(typeof file.mimeType === 'string' && { mimeType: file.mimeType }) })
	}
	return { held, channelId }
}

/**
 * A Gemini body with the account's file URIs rewritten to the vendor's, and the channel holding them; the body as
 * given (and no channel) when it names none. The rewritten body is a copy: only the parts changed are new objects.
 * @example await pinFiles(svc, 7, { contents: [{ parts: [{ fileData: { fileUri: 'http://gw/v1beta/files/abc' } }] }] })
 * // { body: { contents: [{ parts: [{ fileData: { fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/x1' } }] }] }, channelId: 3 }
 */
export function pinFiles(svc: Services, accountId: number, body: Obj): Pinned | Promise<Pinned> {
	// Nearly every request names no file: answered as it is, with no look-up and no promise to await.
	if (fileRefs(body).length === 0) return { body }
	return pinBodies(svc, accountId, [body]).then(({ bodies, channelId }) => ({ body: bodies[0]!, channelId }))
}

export type Pinned = { body: Obj; channelId?: number }

/**
 * The same for several bodies that run on one channel (a Batch Mode batch's inline requests): one look-up for all,
 * 404 for a file not the account's, 400 for files of several channels.
 */
export async function pinBodies(svc: Services, accountId: number, bodies: Obj[]): Promise<{ bodies: Obj[]; channelId?: number }> {
	const { held, channelId } = await resolve(svc, accountId, bodies.flatMap((b) => fileRefs(b).map((r) => r.uri)))
	if (!held.size) return { bodies }
	const part = (p: unknown) => {
		const ref = refOf(p)
		const to = ref && held.get(ref.uri)
		return to ? { ...(p as Obj), [ref.key]: { ...ref.data, [ref.uriKey]: to.uri } } : p
	}
	const content = (c: unknown) => (isObject(c) && Array.isArray(c.parts) ? { ...c, parts: c.parts.map(part) } : c)
	const pin = (body: Obj): Obj => {
		const out: Obj = { ...body }
		if (Array.isArray(body.contents)) out.contents = body.contents.map(content)
		for (const k of CONTENT_KEYS) if (body[k] !== undefined) out[k] = content(body[k])
		return out
	}
	return { bodies: bodies.map(pin), channelId }
}

/** A canonical part's URL, when it is an image or file by URL or URI (an Interactions `uri`). */
const urlOf = (p: Part): string | undefined =>
	p.type === 'image' && p.source.kind === 'url' ? p.source.url : p.type === 'file' && (p.source.kind === 'url' || p.source.kind === 'uri') ? (p.source.kind === 'url' ? p.source.url : p.source.uri) : undefined

/**
 * The same for a canonical request (the Interactions API's `uri` contents): its parts naming the account's files become
 * Gemini file references (`uri` sources) to the vendor's URIs, in place; answers the channel holding them, if any.
 */
export async function pinRequestFiles(svc: Services, accountId: number, ir: ChatRequest): Promise<number | undefined> {
	const parts = ir.messages.flatMap((m) => m.content)
	const { held, channelId } = await resolve(svc, accountId, parts.flatMap((p) => urlOf(p) ?? []))
	if (!held.size) return undefined
	for (const m of ir.messages)
		m.content = m.content.map((p) => {
			const url = urlOf(p)
			const to = url === undefined ? undefined : held.get(url)
			if (!to) return p
			const mediaType = (p.type === 'file' && p.source.kind !== 'base64' && 'mediaType' in p.source ? p.source.mediaType : undefined) ?? to.mimeType
			return { type: 'file', source: { kind: 'uri', uri: to.uri, ...(mediaType && { mediaType }) }, ...(p.type === 'file' && p.path && { path: p.path }) } satisfies FilePart
		})
	return channelId
}
