/**
 * `bun run db:pglite-image`: writes src/db/pglite-image.tar.gz, the data directory of a freshly initialised PGlite
 * (before our migrations), which a new DATA_DIR is loaded from instead of running PGlite's initdb: initdb briefly takes
 * ~900 MB of memory and 1.5 s, loading the image ~300 MB and 0.4 s. Run it after upgrading @electric-sql/pglite
 * (test/unit/db/pglite-image.test.ts fails until then; the server falls back to initdb meanwhile).
 * @module
 */
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { loadPgliteAssets } from '../src/db/pglite-assets'

const out = join(import.meta.dir, '../src/db/pglite-image.tar.gz')
const db = await PGlite.create({ ...(await loadPgliteAssets()) })
const image = await db.dumpDataDir('gzip')
await db.close()
await Bun.write(out, image)
console.log(`wrote ${out} (${image.size} bytes)`)
