/**
 * The bytes of JSONL uploads kept as they pass to the vendor (table `gemini_file_parts`), so a Gemini batch naming the
 * file (`inputConfig.fileName`) can be read and bounded: Google serves no uploaded file's bytes back ("Files created by
 * `upload` can't be downloaded", @google/genai `files.download`). Only uploads declared as JSON Lines (the batch
 * guide's `mimeType: 'jsonl'`) up to MAX_GEMINI_BATCH_FILE_BYTES are kept.
 * @module
 */
import { asc, eq, sql } from 'drizzle-orm'
import { geminiFileParts } from '../../db/schema'
import type { Services } from '../../services'

const JSONL_TYPES = new Set(['jsonl', 'application/jsonl', 'application/x-jsonl', 'application/x-ndjson', 'application/jsonlines', 'application/json-lines'])

/** Whether an upload of this declared type and size is kept to run as a batch's input. */
export const keepsBytes = (svc: Services, type: string | null, size: number): boolean => JSONL_TYPES.has((type ?? '').split(';')[0]!.trim().toLowerCase()) && size <= svc.env.maxGeminiBatchFileBytes

/** Keeps a chunk the vendor took at `offset`; a chunk sent again at the same offset replaces it. */
export async function keepPart(svc: Services, fileId: string, offset: number, bytes: Uint8Array): Promise<void> {
	await svc.db.orm.insert(geminiFileParts).values({ fileId, offset, data: bytes }).onConflictDoUpdate({ target: [geminiFileParts.fileId, geminiFileParts.offset], set: { data: sql`excluded.data` } })
}

/** The kept text of a file of `size` bytes; undefined unless its chunks cover it from the first byte to the last. */
export async function keptText(svc: Services, fileId: string, size: number): Promise<string | undefined> {
	const parts = await svc.db.orm.select().from(geminiFileParts).where(eq(geminiFileParts.fileId, fileId)).orderBy(asc(geminiFileParts.offset))
	const chunks: Uint8Array[] = []
	let at = 0
	for (const p of parts) {
		if (p.offset !== at) return undefined
		chunks.push(p.data)
		at += p.data.byteLength
	}
	return at === size ? Buffer.concat(chunks).toString('utf8') : undefined
}
