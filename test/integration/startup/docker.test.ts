/**
 * The container image (Dockerfile) and the compose file, as an operator uses them: the image built from this
 * checkout, run with nothing but a volume (PGlite in /data, as an unprivileged user, healthy by its own HEALTHCHECK),
 * called with the vendors' SDKs, stopped with `docker stop` (exit 0, well inside docker's 10 s) and started again on
 * its volume with the data kept; the same image on PostgreSQL and Redis; and docker-compose.yml, brought up and read.
 *
 * Needs a Docker daemon that can build the image (its base images pulled or present), so it runs only when asked:
 * `bun run test:docker` (DOCKER_TESTS=1). The containers use the host's network, so they reach the mock vendors
 * and the test's PostgreSQL and Redis on 127.0.0.1 as the other startup tests' processes do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import OpenAI from 'openai'
import postgres from 'postgres'
import { randomString } from '../../../src/lib/ids'
import { adminPost, callWithSdks, setUpGateway } from '../../helpers/deployed'
import { freePort } from '../../helpers/ports'
import { startAnthropicMock, startGeminiMock, startOpenAIMock } from '../../mocks'

const root = new URL('../../../', import.meta.url).pathname
const run = process.env.DOCKER_TESTS === '1'
const tag = `switchboard:test-${process.pid}`
const names: string[] = []
const volumes: string[] = []

/** A docker command's exit code and output (never throws: the assertions say what went wrong). */
function docker(...args: string[]): { code: number; out: string; err: string } {
	const p = Bun.spawnSync(['docker', ...args], { cwd: root, stdout: 'pipe', stderr: 'pipe' })
	return { code: p.exitCode ?? 1, out: p.stdout.toString().trim(), err: p.stderr.toString().trim() }
}

/** `docker …` that must succeed: its standard output. */
function dockerOk(...args: string[]): string {
	const r = docker(...args)
	if (r.code !== 0) throw new Error(`docker ${args.join(' ')}: ${r.err || r.out}`)
	return r.out
}

let openaiUp: Awaited<ReturnType<typeof startOpenAIMock>>
let anthropicUp: Awaited<ReturnType<typeof startAnthropicMock>>
let geminiUp: Awaited<ReturnType<typeof startGeminiMock>>
const upstreams = () => ({ openai: openaiUp.url, anthropic: anthropicUp.url, gemini: geminiUp.url })

beforeAll(async () => {
	if (!run) return
	dockerOk('build', '-q', '-t', tag, '.')
	openaiUp = await startOpenAIMock({ apiKey: 'up-openai' })
	anthropicUp = await startAnthropicMock({ apiKey: 'up-anthropic' })
	geminiUp = await startGeminiMock({ apiKey: 'up-gemini' })
}, 600_000)

afterAll(async () => {
	if (!run) return
	for (const n of names) docker('rm', '-f', n)
	for (const v of volumes) docker('volume', 'rm', '-f', v)
	docker('rmi', '-f', tag)
	await Promise.all([openaiUp?.stop(), anthropicUp?.stop(), geminiUp?.stop()])
})

type Container = { name: string; url: string }

/**
 * `docker run -d` of the image on the host's network with `env` and, when given, a volume at /data; waits until
 * its own HEALTHCHECK calls it healthy (probing every second rather than every 15 s, the command unchanged).
 */
async function runImage(env: Record<string, string>, volume?: string): Promise<Container> {
	const name = `sb-test-${process.pid}-${names.length}`
	names.push(name)
	const port = freePort()
	const envArgs = Object.entries({ PORT: String(port), ...env }).flatMap(([k, v]) => ['-e', `${k}=${v}`])
	dockerOk('run', '-d', '--name', name, '--network', 'host', '--health-interval', '1s', '--health-start-period', '60s', ...(volume ? ['-v', `${volume}:/data`] : []), ...envArgs, tag)
	return waitHealthy({ name, url: `http://127.0.0.1:${port}` })
}

async function waitHealthy(c: Container): Promise<Container> {
	for (const deadline = Date.now() + 90_000; Date.now() < deadline; await Bun.sleep(250)) {
		const state = docker('inspect', '--format', '{{.State.Status}} {{.State.Health.Status}}', c.name).out
		if (state === 'running healthy') return c
		if (state.startsWith('exited')) break
	}
	throw new Error(`${c.name} did not become healthy: ${docker('inspect', '--format', '{{json .State}}', c.name).out}\n${logs(c)}`)
}

const logs = (c: Container) => {
	const r = docker('logs', c.name)
	return `${r.out}\n${r.err}`
}

/** `docker stop` with docker's own default timeout (10 s before SIGKILL): how long it took and the exit code. */
async function stop(c: Container): Promise<{ ms: number; exit: number }> {
	const t0 = performance.now()
	// Not spawnSync: a stream this process reads must go on being read while the container drains it.
	const p = Bun.spawn(['docker', 'stop', c.name], { stdout: 'ignore', stderr: 'pipe' })
	if ((await p.exited) !== 0) throw new Error(`docker stop: ${await new Response(p.stderr).text()}`)
	const ms = performance.now() - t0
	return { ms, exit: Number(dockerOk('inspect', '--format', '{{.State.ExitCode}}', c.name)) }
}

describe.skipIf(!run)('the container image (DOCKER_TESTS=1)', () => {
	it('should run on its volume as an unprivileged PID 1: healthy, the SDKs, docker stop exits 0, data kept across a restart', async () => {
		const volume = `sb-test-data-${process.pid}`
		volumes.push(volume)
		const adminKey = 'docker-admin-key-0123'
		const c = await runImage({ ADMIN_KEY: adminKey }, volume)
		expect(await (await fetch(`${c.url}/health`)).json()).toMatchObject({ status: 'ok', database: { kind: 'pglite', ok: true } })
		expect(logs(c)).toMatch(/One-time password: \S+/)
		// The server itself is PID 1 (no shell, no relaunch) and runs as the image's user, not root.
		const pid = dockerOk('inspect', '--format', '{{.State.Pid}}', c.name)
		const status = await Bun.file(`/proc/${pid}/status`).text()
		expect(/^Uid:\s+(\d+)/m.exec(status)?.[1]).toBe('10001')
		expect(dockerOk('exec', c.name, 'switchboard', 'healthcheck')).toBe('')
		const key = await setUpGateway(adminPost(c.url, adminKey), upstreams(), 'container')
		await callWithSdks(c.url, key)
		// `docker stop` while a stream is open (its upstream stalled): the image's SHUTDOWN_GRACE_MS lets it run 8 s, then
		// cuts it with the protocol's error event and exits 0, before docker's SIGKILL at 10 s would lose its usage.
		openaiUp.fault = { kind: 'stall', afterChunks: 2 }
		const openai = new OpenAI({ baseURL: `${c.url}/v1`, apiKey: key, maxRetries: 0 })
		const stream = (await openai.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'open at the stop' }] }))[Symbol.asyncIterator]()
		expect((await stream.next()).done).toBe(false)
		openaiUp.fault = undefined
		const ending = (async () => {
			try {
				while (!(await stream.next()).done);
				return 'ended without an error'
			} catch (e) {
				return `${(e as { code?: string }).code}: ${(e as Error).message}`
			}
		})()
		const stopped = await stop(c)
		expect(stopped.exit).toBe(0)
		expect(stopped.ms).toBeGreaterThan(7_000)
		expect(stopped.ms).toBeLessThan(10_000)
		expect(await ending).toBe('shutting_down: The gateway is restarting: this answer was cut short. Retry the request.')
		expect(logs(c)).toContain('"msg":"shutting down"')
		// A failing probe says so: exit 1 once the server is gone.
		expect(docker('run', '--rm', '--network', 'host', '-e', `PORT=${new URL(c.url).port}`, tag, 'healthcheck').code).toBe(1)

		// Started again on the same volume: the database and its secret key are there, so the key made before works
		// and no new administrator is made.
		dockerOk('start', c.name)
		await waitHealthy(c)
		const chat = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'after the restart' }] })
		expect(chat.choices[0]!.message.content).toBe('Hello! You said: after the restart')
		expect(logs(c).match(/One-time password/g)).toHaveLength(1)
		// The stream cut at the stop was billed then: its usage row is there after the restart.
		const usage = (await (await fetch(`${c.url}/api/usage?limit=50`, { headers: { authorization: `Bearer ${adminKey}` } })).json()) as { data: { model: string; end_reason: string }[] }
		expect(usage.data.filter((r) => r.end_reason === 'shutdown')).toEqual([expect.objectContaining({ model: 'gpt-4o-mini' })])
		expect((await stop(c)).exit).toBe(0)
	}, 300_000)

	it.skipIf(!process.env.DATABASE_URL || !process.env.REDIS_URL)('should run on PostgreSQL and Redis from the environment, as docker-compose.yml runs it', async () => {
		const db = `sbt_docker_${randomString(8).toLowerCase()}`
		const admin = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} })
		await admin.unsafe(`CREATE DATABASE ${db}`)
		const u = new URL(process.env.DATABASE_URL!)
		u.pathname = `/${db}`
		try {
			const adminKey = 'docker-admin-key-0123'
			const c = await runImage({ DATABASE_URL: u.toString(), REDIS_URL: process.env.REDIS_URL!, REDIS_PREFIX: `${db}:`, SECRET_KEY: 'docker-test-secret-0123', ADMIN_KEY: adminKey })
			expect(await (await fetch(`${c.url}/health`)).json()).toMatchObject({ status: 'ok', database: { kind: 'postgres', ok: true }, redis: { configured: true, reachable: true }, bus: { kind: 'redis' } })
			const key = await setUpGateway(adminPost(c.url, adminKey), upstreams(), 'container')
			await callWithSdks(c.url, key)
			expect((await stop(c)).exit).toBe(0)
			// The usage of those calls reached the database before the process ended.
			const sql = postgres(u.toString(), { max: 1, onnotice: () => {} })
			const [{ n }] = await sql`SELECT count(*)::int AS n FROM usage_logs`
			await sql.end()
			expect(n).toBe(7)
		} finally {
			await admin.unsafe(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`)
			await admin.end()
		}
	}, 300_000)

	it.skipIf(!Bun.which('docker-compose'))('should bring docker-compose.yml up: the gateway healthy on its PostgreSQL and Redis, a key made and used, a clean stop', async () => {
		const project = `sbtest${process.pid}`
		const port = freePort()
		const env = { PATH: process.env.PATH ?? '', SECRET_KEY: 'compose-secret-0123', ADMIN_KEY: 'compose-admin-key', SWITCHBOARD_PORT: String(port) }
		const compose = (...args: string[]) => {
			const p = Bun.spawnSync(['docker-compose', '-p', project, '-f', 'docker-compose.yml', ...args], { cwd: root, env, stdout: 'pipe', stderr: 'pipe' })
			return { code: p.exitCode, out: `${p.stdout.toString()}${p.stderr.toString()}` }
		}
		try {
			const up = compose('up', '-d', '--build')
			expect(up.code, up.out).toBe(0)
			const url = `http://127.0.0.1:${port}`
			let health: any
			for (const deadline = Date.now() + 120_000; Date.now() < deadline; await Bun.sleep(500)) {
				health = await fetch(`${url}/health`).then((r) => r.json(), () => undefined)
				if (health?.status === 'ok') break
			}
			expect(health).toMatchObject({ status: 'ok', database: { kind: 'postgres', ok: true }, redis: { configured: true, reachable: true, subscribed: true }, bus: { kind: 'redis' } })
			const post = adminPost(url, env.ADMIN_KEY)
			const account = await post('/api/accounts', { name: 'compose', balance: 1 })
			expect(account.status).toBe(201)
			const token = await post('/api/tokens', { account_id: account.body.id, name: 'compose' })
			expect(token.status).toBe(201)
			const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: token.body.key, maxRetries: 0 })
			expect((await openai.models.list()).data).toEqual([])
			expect(compose('stop', 'switchboard').code).toBe(0)
			const ps = compose('ps', 'switchboard')
			expect(ps.out).toMatch(/Exit 0/)
		} finally {
			compose('down', '-v')
		}
	}, 600_000)

	it.skipIf(!Bun.which('docker-compose'))('should read docker-compose.yml: the gateway wired to its PostgreSQL and Redis, and no start without SECRET_KEY', () => {
		// Run from an empty directory, so no .env of this checkout's fills in what the test leaves unset.
		const empty = mkdtempSync(`${tmpdir()}/sb-compose-`)
		const config = (env: Record<string, string>) =>
			Bun.spawnSync(['docker-compose', '-f', `${root}docker-compose.yml`, '--project-directory', empty, 'config'], { cwd: empty, env: { PATH: process.env.PATH ?? '', ...env }, stdout: 'pipe', stderr: 'pipe' })
		const refused = config({})
		expect(refused.exitCode).not.toBe(0)
		expect(refused.stderr.toString()).toContain('set SECRET_KEY')
		const ok = config({ SECRET_KEY: 'compose-secret-0123', ADMIN_KEY: 'compose-admin', OPENAI_API_KEY: 'sk-up' })
		expect(ok.exitCode).toBe(0)
		const text = ok.stdout.toString()
		expect(text).toContain('DATABASE_URL: postgres://switchboard:switchboard@postgres:5432/switchboard')
		expect(text).toContain('REDIS_URL: redis://redis:6379')
		expect(text).toContain('SECRET_KEY: compose-secret-0123')
		expect(text).toContain('OPENAI_API_KEY: sk-up')
		expect(text).toMatch(/POSTGRES_DB: switchboard/)
	})
})
