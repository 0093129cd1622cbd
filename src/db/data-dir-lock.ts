/**
 * One process per PGlite data directory. PGlite is PostgreSQL in single-user mode with no lock of its own: two
 * processes on one DATA_DIR each keep their own buffers and WAL position, and acknowledged writes are lost (duplicate
 * ids, rows gone after a restart). PostgreSQL guards its directory with `postmaster.pid`; this is the same guard.
 *
 * The lock is flock(2) on `DATA_DIR/switchboard.lock`, taken through the C library (bun:ffi, as
 * src/lib/runtime-settings.ts does for execve): neither Bun nor node:fs has file locks. A pid file alone (created with
 * O_EXCL, removed at exit) has to guess whether its holder is still alive: pids are reused, a container's gateway is
 * pid 1 after every restart, two containers sharing a volume see each other's pids as someone else's, and two
 * processes removing one stale file at once can both win. A kernel lock has none of that: it is taken atomically,
 * belongs to the open file, and goes when the process ends however it ends (exit, SIGTERM, kill -9). The file is
 * never removed (removing a locked file lets a later process lock a new file of the same name); it holds the
 * holder's pid and host, for the message a second process gives.
 * @module
 */
import { closeSync, constants, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { dlopen, FFIType, read } from 'bun:ffi'

export const LOCK_FILE = 'switchboard.lock'

/** flock(2) operations; the same values on Linux and macOS. */
const LOCK_EX = 2
const LOCK_NB = 4

type Flock = { flock(fd: number, op: number): number; errno(): number; wouldBlock: number }

/** The C library, its errno accessor and EWOULDBLOCK's value, by platform (names tried in order). */
const PLATFORMS: Record<string, { libs: string[]; errno: string; wouldBlock: number }> = {
	linux: { libs: ['libc.so.6', 'libc.musl-x86_64.so.1', 'libc.musl-aarch64.so.1', 'libc.so'], errno: '__errno_location', wouldBlock: 11 },
	darwin: { libs: ['libSystem.B.dylib'], errno: '__error', wouldBlock: 35 },
}

let loaded: Flock | null | undefined
function loadFlock(): Flock | undefined {
	if (loaded !== undefined) return loaded ?? undefined
	loaded = null
	const p = PLATFORMS[process.platform]
	for (const name of p?.libs ?? []) {
		try {
			const { symbols } = dlopen(name, {
				flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
				[p!.errno]: { args: [], returns: FFIType.ptr },
			})
			const errnoAt = symbols[p!.errno] as () => Parameters<typeof read.i32>[0] | null
			loaded = { flock: symbols.flock as (fd: number, op: number) => number, errno: () => read.i32(errnoAt()!, 0), wouldBlock: p!.wouldBlock }
			break
		} catch {
			// the next name
		}
	}
	return loaded ?? undefined
}

/** Another process (or this one, through another open) holds the directory. */
export class DataDirInUse extends Error {
	constructor(
		readonly dir: string,
		readonly pid: number | undefined,
		holderHost: string | undefined,
	) {
		const who =
			pid === undefined
				? 'another process'
				: pid === process.pid && holderHost === hostname()
					? `this process (pid ${pid})`
					: `another process (pid ${pid}${holderHost && holderHost !== hostname() ? ` on ${holderHost}` : ''})`
		super(`DATA_DIR ${dir} is in use by ${who}: one embedded database serves one process. Stop that one first, or give this one its own DATA_DIR (several instances share a database through DATABASE_URL)`)
		this.name = 'DataDirInUse'
	}
}

export type DataDirLock = {
	/** Releases the lock (idempotent). Ending the process releases it too. */
	release(): void
	/** Why the directory could not be locked on this platform (then nothing guards it), for the log. */
	warning?: string
}

/**
 * Locks `dir` (which must exist) for this process until `release`.
 * @throws DataDirInUse when another process, or another open in this one, holds it
 * @example
 * const lock = lockDataDir('./data')
 * try { … open PGlite … } finally { lock.release() }
 */
export function lockDataDir(dir: string): DataDirLock {
	const lib = loadFlock()
	if (!lib) return { release() {}, warning: `DATA_DIR ${dir} is not locked: no flock on ${process.platform}. Never start two processes on one DATA_DIR` }
	const path = join(dir, LOCK_FILE)
	let fd: number
	try {
		// Bun opens with O_CLOEXEC: no child process can inherit the lock and keep it past this one.
		fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o600)
	} catch (e) {
		throw new Error(`cannot open the lock file of DATA_DIR ${dir}: ${(e as Error).message}`)
	}
	if (lib.flock(fd, LOCK_EX | LOCK_NB) !== 0) {
		const errno = lib.errno()
		closeSync(fd)
		if (errno === lib.wouldBlock) {
			const [pid, host] = holder(path)
			throw new DataDirInUse(dir, pid, host)
		}
		// ENOLCK and the like: a file system without locks (some network or FUSE mounts). Starting unguarded is what
		// loses data; refuse, saying what to do instead.
		throw new Error(`cannot lock DATA_DIR ${dir} (flock failed, errno ${errno}): put it on a local file system, or use DATABASE_URL`)
	}
	ftruncateSync(fd, 0)
	writeSync(fd, `${process.pid}\n${hostname()}\n`, 0)
	let held = true
	return {
		release() {
			if (!held) return
			held = false
			// Emptied first: once unlocked, the next holder writes its own pid, and nothing may erase that.
			ftruncateSync(fd, 0)
			closeSync(fd)
		},
	}
}

/** The pid and host the holder wrote (undefined in the moment between its lock and its write). */
function holder(path: string): [number | undefined, string | undefined] {
	try {
		const [pid, host] = readFileSync(path, 'utf8').split('\n')
		const n = Number(pid)
		return [Number.isInteger(n) && n > 0 ? n : undefined, host || undefined]
	} catch {
		return [undefined, undefined]
	}
}
