/**
 * DATA_DIR holds the embedded database and the generated SECRET_KEY (which decrypts every stored API and vendor key):
 * only its owner may read or write it, as PostgreSQL's initdb makes its directory (0700, files 0600). PGlite does not
 * do this itself: its file system writes every file with the WebAssembly side's default mode, 0666 whatever the
 * umask (the image load and initdb alike), and directories 0777 less the umask.
 *
 * An existing directory open to others is restricted at start, with a warning, rather than only warned about: the
 * gateway is its only user, a warning in a log is easily missed while the secret key stays readable, and PostgreSQL
 * itself refuses to start on a data directory with more than group read access.
 * @module
 */
import { chmodSync, type Dirent, lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** Bits nobody but the owner may have. */
const OTHERS = 0o077

const octal = (mode: number) => (mode & 0o777).toString(8).padStart(4, '0')

/**
 * Creates DATA_DIR owner-only, or restricts an existing one that others can enter.
 * @returns a warning for the log when an existing directory was (or could not be) restricted
 */
export function prepareDataDir(dir: string): string | undefined {
	if (process.platform === 'win32') {
		mkdirSync(dir, { recursive: true })
		return undefined
	}
	let mode: number
	try {
		mode = statSync(dir).mode
	} catch {
		// mkdir's mode is reduced by the umask, never widened: 0700 at most, parents made on the way included.
		mkdirSync(dir, { recursive: true, mode: 0o700 })
		return undefined
	}
	if ((mode & OTHERS) === 0) return undefined
	try {
		chmodSync(dir, 0o700)
	} catch (e) {
		return `DATA_DIR ${dir} is open to other users (mode ${octal(mode)}) and could not be restricted (${(e as NodeJS.ErrnoException).code}): they may read its secret key and database. Make it 0700`
	}
	return `DATA_DIR ${dir} was open to other users (mode ${octal(mode)}): restricted it to its owner (0700, its files 0600). Other local users could read its secret key until now`
}

/**
 * Takes group and other access from everything under `dir` (directories 0700, files 0600), without following
 * symbolic links. Once after the image load, and at each start for files PGlite wrote since (it rewrites a few,
 * such as `pg_internal.init`, with its own modes). ~2 ms for a new database's ~1,000 files.
 * @returns how many entries were changed
 */
export function restrictTree(dir: string): number {
	if (process.platform === 'win32') return 0
	let changed = 0
	const stack = [dir]
	while (stack.length) {
		const at = stack.pop()!
		let entries: Dirent[]
		try {
			entries = readdirSync(at, { withFileTypes: true })
		} catch {
			continue // removed meanwhile (PostgreSQL recycles WAL segments and temporary files)
		}
		for (const e of entries) {
			if (e.isSymbolicLink()) continue
			const path = join(at, e.name)
			if (e.isDirectory()) stack.push(path)
			try {
				const mode = lstatSync(path).mode
				if (mode & OTHERS) {
					chmodSync(path, mode & 0o700)
					changed++
				}
			} catch {
				// removed meanwhile, or not ours to change: the directory's own mode (0700) still keeps others out
			}
		}
	}
	return changed
}
