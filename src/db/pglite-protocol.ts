/**
 * The messages between the gateway and its PGlite thread (src/db/pglite-worker.ts, src/db/pglite-remote.ts): calls
 * with an id, replies with the same id. Errors cross as plain objects with PostgreSQL's fields (`code`, `detail`,
 * `constraint`…), which callers test (a unique violation is 23505), and become Errors again on the other side.
 * @module
 */

export type Call = { id: number } & (
	| { op: 'open'; dataDir?: string }
	| { op: 'query'; text: string; params?: unknown[]; rowMode?: 'array' | 'object'; rawTypes?: number[]; tx?: number }
	| { op: 'exec'; text: string; tx?: number }
	| { op: 'begin'; tx: number }
	| { op: 'end'; tx: number; commit: boolean }
	| { op: 'close' }
)

export type Reply = { id: number; ok?: unknown; error?: SerialisedError }

export type SerialisedError = { name: string; message: string; fields: Record<string, unknown> }

/** PostgreSQL's error fields as PGlite's DatabaseError carries them. */
const FIELDS = ['code', 'severity', 'detail', 'hint', 'position', 'schema', 'table', 'column', 'dataType', 'constraint', 'where', 'routine', 'file', 'line'] as const

export function serialiseError(e: unknown): SerialisedError {
	const err = e instanceof Error ? e : new Error(String(e))
	const fields: Record<string, unknown> = {}
	for (const f of FIELDS) {
		const v = (err as unknown as Record<string, unknown>)[f]
		if (v !== undefined) fields[f] = v
	}
	return { name: err.name, message: err.message, fields }
}

export function deserialiseError(s: SerialisedError): Error {
	const err = new Error(s.message)
	err.name = s.name
	Object.assign(err, s.fields)
	return err
}
