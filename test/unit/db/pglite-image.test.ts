/**
 * A new PGlite data directory starts from the committed image (src/db/pglite-image.tar.gz) instead of PGlite's
 * initdb, which briefly takes ~900 MB. When this test fails after a PGlite upgrade, run `bun run db:pglite-image`.
 */
import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { loadPgliteAssets, pgliteImage } from '../../../src/db/pglite-assets'
import { createPglite } from '../../../src/db/pglite-open'
import { wrapPglite } from '../../../src/db/client'
import { migrate } from '../../../src/db/migrate'

const dirs: string[] = []
const fresh = () => {
	const d = mkdtempSync(join(tmpdir(), 'sb-pglite-image-'))
	dirs.push(d)
	return d
}
afterAll(() => {
	for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('PGlite image', () => {
	it('should load with the installed PGlite (regenerate it with `bun run db:pglite-image` when not)', async () => {
		const dir = fresh()
		// Straight from the image, without createPglite's fallback to initdb.
		const db = await PGlite.create({ dataDir: dir, loadDataDir: pgliteImage(), ...(await loadPgliteAssets()) })
		const initdb = await PGlite.create({ ...(await loadPgliteAssets()) })
		const version = async (p: PGlite) => (await p.query<{ v: string }>('SELECT version() AS v')).rows[0]!.v
		expect(await version(db)).toBe(await version(initdb))
		await initdb.close()
		await db.close()
	}, 60_000)

	it('should start a new data directory that takes the migrations and keeps what is written', async () => {
		const dir = fresh()
		const pg = await createPglite(dir)
		const db = await wrapPglite(pg)
		expect((await migrate(db.sql)).length).toBeGreaterThan(0)
		await db.sql.query("INSERT INTO accounts (name, balance) VALUES ('img', 7)")
		await pg.close()
		const again = await wrapPglite(await createPglite(dir))
		expect(await migrate(again.sql)).toEqual([])
		expect(await again.sql.query('SELECT name, balance FROM accounts')).toEqual([{ name: 'img', balance: 7 }])
		await again.sql.close()
	}, 60_000)

	it('should fall back to initdb when the image cannot be used, keeping the files already in the directory', async () => {
		const dir = fresh()
		writeFileSync(join(dir, 'secret.key'), 'keep me')
		const pg = await createPglite(dir, new Blob(['not a tarball']))
		expect((await pg.query<{ n: number }>('SELECT 1 AS n')).rows).toEqual([{ n: 1 }])
		await pg.close()
		expect(readdirSync(dir)).toContain('secret.key')
		expect(readdirSync(dir)).toContain('PG_VERSION')
		expect(await Bun.file(join(dir, 'secret.key')).text()).toBe('keep me')
	}, 60_000)
})
