/**
 * The gateway's records of Gemini Files API uploads (rows of `tasks`, kind `gemini_file`, never open): one per file,
 * made when its upload starts and holding, while it runs, the vendor's upload URL (`result.upload`) and the session's
 * secret (`upstream_id` `upload:{secret}`); once finalized, the vendor's File resource (`result.file`) and its name
 * (`upstream_id`). Every account shares the channel's key, so a file is served only to the account it is recorded to
 * (others get 404, as for an unknown name), and only the gateway's names and URIs reach the client.
 * @module
 */
import { and, desc, eq, inArray, lt, sql } from 'drizzle-orm'
import { notFound } from '../../core/errors'
import { tasks } from '../../db/schema'
import type { Services } from '../../services'
import type { TaskRow } from '../../tasks/store'

export type VendorFile = Record<string, unknown> & { name?: string; uri?: string }

/** A Gemini file id: up to 40 lowercase letters, digits or dashes (ai.google.dev/api/files#File). */
export const FILE_ID = /^[a-z0-9][a-z0-9-]{0,38}[a-z0-9]$|^[a-z0-9]$/

/** A new gateway file id: 20 lowercase letters and digits, as Google's own are made of. */
export function newFileId(): string {
	const bytes = crypto.getRandomValues(new Uint8Array(20))
	let id = ''
	for (const b of bytes) id += '0123456789abcdefghijklmnopqrstuvwxyz'[b % 36]
	return id
}

export const fileOf = (row: TaskRow): VendorFile | undefined => (row.result as { file?: VendorFile } | null)?.file

/** `files/{id}`, `{id}` or a gateway URI's last segment → the id. */
export const idOf = (name: string): string => name.slice(name.lastIndexOf('/') + 1)

/** The account's uploaded file (finalized) by its gateway id; 404 in Gemini's words otherwise. */
export async function ownedFile(svc: Services, id: string, accountId: number): Promise<TaskRow & { file: VendorFile }> {
	const [row] = FILE_ID.test(id)
		? await svc.db.orm
				.select()
				.from(tasks)
				.where(and(eq(tasks.id, id), eq(tasks.kind, 'gemini_file'), eq(tasks.accountId, accountId)))
				.limit(1)
		: []
	const file = row && fileOf(row)
	if (!row || !file) throw notFound(`File files/${id} not found`, 'file_not_found')
	return Object.assign(row, { file })
}

/** Gemini files among `ids`, of any account (a reference to another account's is refused as unknown). */
export async function filesByIds(svc: Services, ids: string[]): Promise<TaskRow[]> {
	if (!ids.length) return []
	return svc.db.orm.select().from(tasks).where(and(eq(tasks.kind, 'gemini_file'), inArray(tasks.id, ids)))
}

/** A page of the account's finalized, unexpired files, newest first, after the file `after` (the page token). */
export async function pageFiles(svc: Services, accountId: number, limit: number, after?: string): Promise<TaskRow[]> {
	const cursor = after ? sql`(${tasks.createdAt}, ${tasks.id}) < (SELECT c.created_at, c.id FROM tasks c WHERE c.id = ${after} AND c.kind = 'gemini_file' AND c.account_id = ${accountId})` : undefined
	return svc.db.orm
		.select()
		.from(tasks)
		.where(
			and(
				eq(tasks.kind, 'gemini_file'),
				eq(tasks.accountId, accountId),
				sql`${tasks.result} ? 'file'`,
				// Google deletes a file 48 hours after its upload: an expired one is gone there too.
				sql`coalesce((${tasks.result}->'file'->>'expirationTime')::timestamptz > now(), true)`,
				cursor,
			),
		)
		.orderBy(desc(tasks.createdAt), desc(tasks.id))
		.limit(limit + 1)
}

/** The vendor's File, as last read, in the record (the upload session dropped once finalized; other keys kept). */
export async function saveFile(svc: Services, id: string, file: VendorFile): Promise<void> {
	const result = sql`(coalesce(${tasks.result}, '{}'::jsonb) - 'upload') || ${JSON.stringify({ file })}::jsonb`
	await svc.db.orm.update(tasks).set({ upstreamId: file.name ?? null, result, updatedAt: sql`now()` }).where(eq(tasks.id, id))
}

export async function dropFile(svc: Services, id: string): Promise<void> {
	await svc.db.orm.delete(tasks).where(eq(tasks.id, id))
}

/** Abandoned upload sessions older than a week (Google's upload URLs last that long) are forgotten. */
export async function purgeStaleUploads(svc: Services): Promise<void> {
	await svc.db.orm.delete(tasks).where(and(eq(tasks.kind, 'gemini_file'), sql`NOT (${tasks.result} ? 'file')`, lt(tasks.createdAt, sql`now() - interval '7 days'`)))
}

/**
 * The vendor's File as the client sees it: the gateway's name and URI (`{base}/v1beta/files/{id}`, which
 * `generateContent` takes in `fileData.fileUri`); the vendor's download URI left out (Google serves no uploaded file's
 * bytes back anyway).
 */
export function fileView(id: string, file: VendorFile, base: string): Record<string, unknown> {
	const { downloadUri: _, ...rest } = file
	return { ...rest, name: `files/${id}`, uri: `${base}/v1beta/files/${id}` }
}
