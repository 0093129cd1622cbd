/**
 * Real server processes (`bun src/index.ts`) on PGlite: one process per DATA_DIR and per port, a DATA_DIR only its
 * owner can read, and no key left behind by a start refused for its SECRET_KEY. Regressions of an operator's QA pass,
 * where two processes on one DATA_DIR (even on one port, through SO_REUSEPORT) lost acknowledged writes.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { freePort } from '../../helpers/ports'

const ROOT = new URL('../../../', import.meta.url).pathname
const ADMIN_KEY = 'data-dir-admin-key-ABCDEFGH12345678'
const root = mkdtempSync(join(tmpdir(), 'sb-data-dir-proc-'))
const running: Subprocess[] = []

afterAll(async () => {
	for (const p of running) p.kill('SIGKILL')
	await Promise.all(running.map((p) => p.exited))
	rmSync(root, { recursive: true, force: true })
})

// The umask under which the operator saw 0666 files; the server inherits it.
let umask: number
beforeEach(() => {
	umask = process.umask(0o022)
})
afterEach(() => {
	process.umask(umask)
})

type Server = { proc: Subprocess<'ignore', 'pipe', 'pipe'>; url: string; up: boolean; code: Promise<number | null>; stderr(): string }

/**
 * Starts a server and waits until /health answers (`up`) or it exits; `refused`: only until it exits (another
 * server answers on its port).
 */
async function start(env: Record<string, string>, refused = false): Promise<Server> {
	const port = env.PORT ?? String(freePort())
	const proc = Bun.spawn([process.execPath, 'src/index.ts'], {
		cwd: ROOT,
		env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', HOST: '127.0.0.1', ADMIN_KEY, LOG_LEVEL: 'warn', ...env, PORT: port },
		stdin: 'ignore',
		stdout: 'pipe',
		stderr: 'pipe',
	})
	running.push(proc)
	let stderr = ''
	const drained = Promise.all([
		new Response(proc.stdout).text(),
		proc.stderr.pipeTo(new WritableStream({ write: (chunk) => void (stderr += new TextDecoder().decode(chunk)) })),
	])
	const code = proc.exited.then(async (c) => {
		await drained
		return c
	})
	let exited = false
	void code.then(() => (exited = true))
	const url = `http://127.0.0.1:${port}`
	const deadline = Date.now() + 30_000
	while (!refused && !exited && Date.now() < deadline) {
		try {
			if ((await fetch(`${url}/health`)).ok) return { proc, url, up: true, code, stderr: () => stderr }
		} catch {
			// not listening yet
		}
		await Bun.sleep(100)
	}
	if (refused) await Promise.race([code, Bun.sleep(30_000)])
	if (!exited) throw new Error(`server neither started nor exited: ${stderr}`)
	return { proc, url, up: false, code, stderr: () => stderr }
}

async function stop(s: Server, signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM') {
	s.proc.kill(signal)
	return s.code
}

const admin = async (s: Server, path: string, body?: unknown) => {
	const res = await fetch(s.url + path, {
		method: body ? 'POST' : 'GET',
		headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
		body: body ? JSON.stringify(body) : undefined,
	})
	expect(res.status).toBeLessThan(300)
	return res.json()
}

const mode = (p: string) => statSync(p).mode & 0o777

describe('one server per DATA_DIR', () => {
	it('should refuse a second server on a DATA_DIR in use, naming it and the holder, and lose none of the first one’s writes', async () => {
		const dir = join(root, 'shared')
		const first = await start({ DATA_DIR: dir })
		expect(first.up).toBe(true)
		const second = await start({ DATA_DIR: dir })
		expect(second.up).toBe(false)
		expect(await second.code).toBe(1)
		expect(second.stderr()).toContain(`DATA_DIR ${dir} is in use by another process (pid ${first.proc.pid})`)

		const made: number[] = []
		for (const name of ['a1', 'a2', 'a3']) made.push((await admin(first, '/api/accounts', { name, balance: 1 })).id)
		expect(new Set(made).size).toBe(3)
		expect(await stop(first)).toBe(0)
		const again = await start({ DATA_DIR: dir })
		expect(again.up).toBe(true)
		const { data } = (await admin(again, '/api/accounts')) as { data: { id: number; name: string }[] }
		expect(data.filter((a) => made.includes(a.id)).map((a) => a.name).sort()).toEqual(['a1', 'a2', 'a3'])

		// A holder killed outright leaves its lock file, which must not block the next start.
		await stop(again, 'SIGKILL')
		const afterKill = await start({ DATA_DIR: dir })
		expect(afterKill.up).toBe(true)
		expect(await stop(afterKill)).toBe(0)
	}, 120_000)

	it('should refuse a second server on a port in use, before it creates anything', async () => {
		const first = await start({ DATA_DIR: join(root, 'port-a') })
		expect(first.up).toBe(true)
		const port = new URL(first.url).port
		const second = await start({ DATA_DIR: join(root, 'port-b'), PORT: port }, true)
		expect(second.up).toBe(false)
		expect(await second.code).toBe(1)
		expect(second.stderr()).toContain(`port ${port} on 127.0.0.1 is in use by another process`)
		expect(existsSync(join(root, 'port-b'))).toBe(false)
		expect((await fetch(`${first.url}/health`)).ok).toBe(true)
		expect(await stop(first)).toBe(0)
	}, 60_000)
})

describe('DATA_DIR permissions', () => {
	it('should make a new DATA_DIR, its database files and secret.key its owner’s alone under umask 022', async () => {
		const dir = join(root, 'private')
		const s = await start({ DATA_DIR: dir })
		expect(s.up).toBe(true)
		expect(await stop(s)).toBe(0)
		expect(mode(dir)).toBe(0o700)
		expect(mode(join(dir, 'secret.key'))).toBe(0o600)
		expect(mode(join(dir, 'global', 'pg_control'))).toBe(0o600)
		const open = readdirSync(dir, { recursive: true, withFileTypes: true })
			.map((e) => join(e.parentPath, e.name))
			.filter((p) => mode(p) & 0o077)
		expect(open).toEqual([])
	}, 60_000)
})

describe('SECRET_KEY refused', () => {
	it('should leave no generated key behind, and say that none was given, when the stored keys need another', async () => {
		const dir = join(root, 'keyed')
		const given = 'the-given-secret-key-0123456789'
		const s = await start({ DATA_DIR: dir, SECRET_KEY: given })
		expect(s.up).toBe(true)
		const account = await admin(s, '/api/accounts', { name: 'k', balance: 1 })
		await admin(s, '/api/tokens', { account_id: account.id, name: 'k' })
		expect(await stop(s)).toBe(0)
		expect(existsSync(join(dir, 'secret.key'))).toBe(false)

		const without = await start({ DATA_DIR: dir })
		expect(without.up).toBe(false)
		expect(await without.code).toBe(1)
		expect(without.stderr()).toContain(`SECRET_KEY is not set and ${join(dir, 'secret.key')} does not exist, so this start generated a new key (not saved)`)
		expect(existsSync(join(dir, 'secret.key'))).toBe(false)
		// The right key still starts it.
		const right = await start({ DATA_DIR: dir, SECRET_KEY: given })
		expect(right.up).toBe(true)
		expect(await stop(right)).toBe(0)
	}, 120_000)
})
