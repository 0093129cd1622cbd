/**
 * The one way PGlite is opened, in process (tests) or in the server's thread (src/db/pglite-worker.ts): the same
 * settings either way.
 * @module
 */
import { readdir, rm } from 'node:fs/promises'
import { PGlite } from '@electric-sql/pglite'
import { loadPgliteAssets, pgliteImage } from './pglite-assets'

/** PostgreSQL's type OID of int8: parsed to JS numbers, as on postgres.js (money fits, see schema.ts). */
const INT8 = 20

/**
 * @param dataDir a directory, or undefined to keep the database in memory
 * @param image what a new directory starts from instead of PGlite's initdb (tests pass a broken one)
 */
export async function createPglite(dataDir?: string, image: Blob | undefined = pgliteImage()): Promise<PGlite> {
	const assets = await loadPgliteAssets()
	const open = (loadDataDir?: Blob) =>
		PGlite.create({
			dataDir,
			parsers: { [INT8]: (v: string) => Number(v) },
			// PGlite's memory never shrinks: PostgreSQL's default 128 MB of buffers would become the gateway's for good.
			// The hot path no longer queries per request (leases), so a small cache costs nothing measurable.
			postgresqlconf: ['shared_buffers=16MB'],
			loadDataDir,
			...assets,
		})
	// A new directory is loaded from the image: PGlite's initdb briefly takes ~900 MB of memory (and 1.5 s), loading
	// the image ~300 MB (0.4 s). An image this PGlite cannot use (made by another version) falls back to initdb.
	if (dataDir === undefined || !image || (await Bun.file(`${dataDir}/PG_VERSION`).exists())) return open()
	// The directory may hold other files already (DATA_DIR keeps the secret key): only what the attempt added goes.
	const before = new Set(await readdir(dataDir).catch(() => []))
	try {
		return await open(image)
	} catch {
		for (const f of await readdir(dataDir).catch(() => [])) if (!before.has(f)) await rm(`${dataDir}/${f}`, { recursive: true, force: true })
		return open()
	}
}
