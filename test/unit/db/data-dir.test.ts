/**
 * DATA_DIR is its owner's alone (src/db/data-dir.ts): created 0700, PGlite's files 0600 whatever the umask (PGlite
 * writes them 0666), an existing directory open to others restricted at start; and openDb holds the directory's
 * lock (src/db/data-dir-lock.ts) until the database is closed.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDb } from '../../../src/db/client'
import { DataDirInUse } from '../../../src/db/data-dir-lock'
import { prepareDataDir, restrictTree } from '../../../src/db/data-dir'

const roots: string[] = []
const fresh = () => {
	const d = mkdtempSync(join(tmpdir(), 'sb-data-dir-'))
	roots.push(d)
	return d
}
const mode = (p: string) => statSync(p).mode & 0o777

/** Everything under `dir` that its group or others may use, as "mode path". */
function openToOthers(dir: string): string[] {
	return readdirSync(dir, { recursive: true, withFileTypes: true })
		.map((e) => join(e.parentPath, e.name))
		.filter((p) => mode(p) & 0o077)
		.map((p) => `${mode(p).toString(8)} ${p}`)
}

// The usual umask, under which the operator saw 0666 files: the fix must not depend on a stricter one.
let umask: number
beforeEach(() => {
	umask = process.umask(0o022)
})
afterEach(() => {
	process.umask(umask)
})
afterAll(() => {
	for (const d of roots) rmSync(d, { recursive: true, force: true })
})

describe('DATA_DIR permissions', () => {
	it('should create a missing DATA_DIR, and its parents, for its owner only', () => {
		const dir = join(fresh(), 'a', 'data')
		expect(prepareDataDir(dir)).toBeUndefined()
		expect(mode(dir)).toBe(0o700)
	})

	it('should restrict an existing DATA_DIR open to others, saying so, and leave a private one alone', () => {
		const dir = join(fresh(), 'data')
		mkdirSync(dir, { mode: 0o755 })
		chmodSync(dir, 0o755)
		expect(prepareDataDir(dir)).toContain(`DATA_DIR ${dir} was open to other users (mode 0755): restricted it to its owner`)
		expect(mode(dir)).toBe(0o700)
		expect(prepareDataDir(dir)).toBeUndefined()
	})

	it('should take group and other access from every file and directory below, not following links', () => {
		const root = fresh()
		const dir = join(root, 'data')
		mkdirSync(join(dir, 'base', '5'), { recursive: true })
		chmodSync(join(dir, 'base'), 0o755)
		writeFileSync(join(dir, 'base', '5', '1259'), 'x', { mode: 0o666 })
		chmodSync(join(dir, 'base', '5', '1259'), 0o666)
		writeFileSync(join(root, 'outside'), 'x')
		chmodSync(join(root, 'outside'), 0o644)
		symlinkSync(join(root, 'outside'), join(dir, 'link'))
		expect(restrictTree(dir)).toBe(3) // base, base/5 (0755 from the umask) and the file
		expect(mode(join(dir, 'base'))).toBe(0o700)
		expect(mode(join(dir, 'base', '5', '1259'))).toBe(0o600)
		expect(mode(join(root, 'outside'))).toBe(0o644)
		expect(restrictTree(dir)).toBe(0)
	})

	it('should leave no file of a new PGlite database readable or writable by others', async () => {
		const dir = join(fresh(), 'data')
		const db = await openDb(undefined, dir)
		await db.sql.exec('CREATE TABLE t (id int)')
		await db.sql.close()
		expect(mode(dir)).toBe(0o700)
		expect(readdirSync(dir)).toContain('global')
		expect(openToOthers(dir)).toEqual([])
	}, 60_000)
})

describe('openDb on a DATA_DIR', () => {
	it('should hold the directory while open: a second open is refused, and allowed once the first is closed', async () => {
		const dir = join(fresh(), 'data')
		const first = await openDb(undefined, dir)
		const second = await openDb(undefined, dir).catch((e: unknown) => e)
		expect(second).toBeInstanceOf(DataDirInUse)
		expect((second as Error).message).toContain(`DATA_DIR ${dir} is in use by this process (pid ${process.pid})`)
		await first.sql.close()
		const again = await openDb(undefined, dir)
		expect(await again.sql.query('SELECT 1 AS n')).toEqual([{ n: 1 }])
		await again.sql.close()
	}, 60_000)
})
