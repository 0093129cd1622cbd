/**
 * The one way PGlite is opened, in process (tests) or in the server's thread (src/db/pglite-worker.ts): the same
 * settings either way.
 * @module
 */
import { PGlite } from '@electric-sql/pglite'
import { loadPgliteAssets } from './pglite-assets'

/** PostgreSQL's type OID of int8: parsed to JS numbers, as on postgres.js (money fits, see schema.ts). */
const INT8 = 20

/** @param dataDir a directory, or undefined to keep the database in memory */
export async function createPglite(dataDir?: string): Promise<PGlite> {
	return PGlite.create({
		dataDir,
		parsers: { [INT8]: (v: string) => Number(v) },
		// PGlite's memory never shrinks: PostgreSQL's default 128 MB of buffers would become the gateway's for good.
		// The hot path no longer queries per request (leases), so a small cache costs nothing measurable.
		postgresqlconf: ['shared_buffers=16MB'],
		...(await loadPgliteAssets()),
	})
}
