/**
 * A real Switchboard process (`bun src/index.ts`) for crash, SIGTERM and log tests, on PostgreSQL when the test run
 * has DATABASE_URL (a fresh database each) or on PGlite in a temp DATA_DIR. Its stdout (the JSON log) is captured.
 * PGlite is single-process, so its data can only be read while the server is down (`withDb`); PostgreSQL any time.
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { type Db, openDb } from '../../../src/db/client'
import { createTestDb, type TestDb } from '../../helpers/db'
import { freePort } from '../../helpers/ports'

const ROOT = new URL('../../../', import.meta.url).pathname
export const ADMIN_KEY = 'proc-admin-key-ABCDEFGH12345678'
export const SECRET_KEY = 'proc-secret-key-0123456789abcdef'

export type Server = {
	url: string
	proc: Subprocess<'ignore', 'pipe', 'pipe'>
	/** What the process wrote to stdout (the JSON log) so far. */
	output(): string
	/** What it wrote to stderr so far. */
	errors(): string
	/** Resolves with the exit code (null when a signal ended it). */
	exited: Promise<number | null>
	running(): boolean
}

export type Deployment = {
	/** Starts a server process with the deployment's database and config, waiting until /health answers. */
	start(env?: Record<string, string>): Promise<Server>
	/** Runs `fn` on the database (PGlite: only while no server is running). */
	withDb<T>(fn: (db: Db) => Promise<T>): Promise<T>
	/** Whether the database is PostgreSQL (readable while the server runs). */
	readonly live: boolean
	admin(server: Server, path: string, body?: unknown, method?: string): Promise<any>
	close(): Promise<void>
}

export async function deploy(config: GatewayConfig, baseEnv: Record<string, string> = {}): Promise<Deployment> {
	const dir = mkdtempSync(join(tmpdir(), 'sb-resilience-'))
	const configPath = join(dir, 'gateway.json')
	await Bun.write(configPath, JSON.stringify(config))
	const pg: TestDb | undefined = process.env.DATABASE_URL ? await createTestDb() : undefined
	const dbEnv: Record<string, string> = pg ? { DATABASE_URL: pg.url! } : { DATA_DIR: join(dir, 'data') }
	const servers: Server[] = []
	return {
		live: !!pg,
		async start(env = {}) {
			const port = freePort()
			const proc = Bun.spawn([process.execPath, 'src/index.ts'], {
				cwd: ROOT,
				env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', PORT: String(port), HOST: '127.0.0.1', SECRET_KEY, ADMIN_KEY, GATEWAY_CONFIG: configPath, ...dbEnv, ...baseEnv, ...env },
				stdin: 'ignore',
				stdout: 'pipe',
				stderr: 'pipe',
			})
			const out = { stdout: '', stderr: '' }
			const drain = async (s: ReadableStream<Uint8Array>, to: keyof typeof out) => {
				const dec = new TextDecoder()
				const reader = s.getReader()
				for (;;) {
					const { value, done } = await reader.read()
					if (done) return
					out[to] += dec.decode(value, { stream: true })
				}
			}
			const drained = Promise.all([drain(proc.stdout, 'stdout'), drain(proc.stderr, 'stderr')])
			let running = true
			const exited = proc.exited.then(async () => {
				running = false
				await drained
				return proc.exitCode
			})
			const server: Server = { url: `http://127.0.0.1:${port}`, proc, output: () => out.stdout, errors: () => out.stderr, exited, running: () => running }
			servers.push(server)
			const deadline = Date.now() + 30_000
			while (Date.now() < deadline) {
				if (!running) throw new Error(`server exited with ${proc.exitCode}: ${out.stderr}${out.stdout}`)
				try {
					if ((await fetch(`${server.url}/health`)).ok) return server
				} catch {
					// not listening yet
				}
				await Bun.sleep(100)
			}
			proc.kill('SIGKILL')
			throw new Error(`server did not start: ${out.stderr}${out.stdout}`)
		},
		async withDb(fn) {
			if (pg) return fn(pg.db)
			if (servers.some((s) => s.running())) throw new Error('PGlite data is readable only while the server is down')
			const db = await openDb(undefined, join(dir, 'data'))
			try {
				return await fn(db)
			} finally {
				await db.sql.close()
			}
		},
		async admin(server, path, body, method) {
			const res = await fetch(server.url + path, {
				method: method ?? (body ? 'POST' : 'GET'),
				headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
				body: body ? JSON.stringify(body) : undefined,
			})
			const json = await res.json()
			if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`)
			return json
		},
		async close() {
			for (const s of servers) if (s.running()) s.proc.kill('SIGKILL')
			await Promise.all(servers.map((s) => s.exited))
			await pg?.drop()
			rmSync(dir, { recursive: true, force: true })
		},
	}
}

/** Reads a stream response until `n` data frames arrived; returns the reader to continue (or abandon) it. */
export async function readFrames(res: Response, n: number): Promise<{ text: string; rest: () => Promise<string> }> {
	const reader = res.body!.getReader()
	const dec = new TextDecoder()
	let text = ''
	while ((text.match(/^data:/gm) ?? []).length < n) {
		const { value, done } = await reader.read()
		if (done) break
		text += dec.decode(value, { stream: true })
	}
	return {
		text,
		async rest() {
			let more = ''
			for (;;) {
				const { value, done } = await reader.read()
				if (done) return more
				more += dec.decode(value, { stream: true })
			}
		},
	}
}
