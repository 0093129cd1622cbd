/**
 * One process per PGlite DATA_DIR (src/db/data-dir-lock.ts): a second holder is refused with the directory and the
 * holder's pid; a holder that died, however, leaves nothing that blocks the next start.
 */
import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { DataDirInUse, LOCK_FILE, lockDataDir } from '../../../src/db/data-dir-lock'

const MODULE = new URL('../../../src/db/data-dir-lock.ts', import.meta.url).pathname
const dirs: string[] = []
const children: Subprocess[] = []
const fresh = () => {
	const d = mkdtempSync(join(tmpdir(), 'sb-lock-'))
	dirs.push(d)
	return d
}
afterAll(() => {
	for (const c of children) c.kill('SIGKILL')
	for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** Another process that locks `dir` and keeps it; resolves once it holds the lock. */
async function holderProcess(dir: string): Promise<Subprocess<'ignore', 'pipe', 'inherit'>> {
	const code = `const { lockDataDir } = await import(${JSON.stringify(MODULE)}); lockDataDir(${JSON.stringify(dir)}); console.log('locked'); setInterval(() => {}, 1000)`
	const child = Bun.spawn([process.execPath, '-e', code], { stdin: 'ignore', stdout: 'pipe', stderr: 'inherit' })
	children.push(child)
	const reader = child.stdout.getReader()
	const { value } = await reader.read()
	expect(new TextDecoder().decode(value)).toContain('locked')
	reader.releaseLock()
	return child
}

const refusal = (dir: string) => {
	try {
		lockDataDir(dir).release()
	} catch (e) {
		return e as Error
	}
	throw new Error('the lock was granted')
}

describe('DATA_DIR lock', () => {
	it('should refuse a second lock in this process, and grant it again once released', () => {
		const dir = fresh()
		const lock = lockDataDir(dir)
		expect(lock.warning).toBeUndefined()
		expect(readFileSync(join(dir, LOCK_FILE), 'utf8').split('\n')[0]).toBe(String(process.pid))
		const e = refusal(dir)
		expect(e).toBeInstanceOf(DataDirInUse)
		expect(e.message).toContain(`DATA_DIR ${dir} is in use by this process (pid ${process.pid})`)
		lock.release()
		lock.release() // idempotent
		expect(readFileSync(join(dir, LOCK_FILE), 'utf8')).toBe('')
		lockDataDir(dir).release()
	})

	it('should refuse while another process holds it, naming the directory and its pid', async () => {
		const dir = fresh()
		const child = await holderProcess(dir)
		const e = refusal(dir) as DataDirInUse
		expect(e).toBeInstanceOf(DataDirInUse)
		expect(e.pid).toBe(child.pid)
		expect(e.message).toContain(`DATA_DIR ${dir} is in use by another process (pid ${child.pid})`)
		child.kill('SIGKILL')
		await child.exited
	})

	it('should not be blocked by a holder killed with SIGKILL, whose pid stays in the file', async () => {
		const dir = fresh()
		const child = await holderProcess(dir)
		child.kill('SIGKILL')
		await child.exited
		// What the dead process wrote is still there: only the kernel's lock, gone with it, decides.
		expect(readFileSync(join(dir, LOCK_FILE), 'utf8').split('\n')[0]).toBe(String(child.pid))
		const lock = lockDataDir(dir)
		expect(readFileSync(join(dir, LOCK_FILE), 'utf8').split('\n')[0]).toBe(String(process.pid))
		lock.release()
	})

	it('should not be blocked by a lock file naming a live process that does not hold it (a reused pid)', () => {
		const dir = fresh()
		// pid 1 is alive and is not a Switchboard: a pid-liveness check would refuse here.
		writeFileSync(join(dir, LOCK_FILE), '1\nelsewhere\n')
		lockDataDir(dir).release()
	})
})
