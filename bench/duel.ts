/**
 * `bun bench/duel.ts A B`: two builds of the gateway in one process, their requests alternated in batches, CPU per
 * request compared batch by batch. Where `ab.ts` runs each build as a server and alternates loads of seconds, this
 * pairs measurements a second or two apart inside one process, so whatever the machine does meanwhile (neighbours,
 * frequency, the other processes) falls on both alike: on a VM whose figures move by 20% between quarter hours it
 * tells 2% apart when the paired differences agree in sign. What it leaves out is the HTTP server: requests go
 * through each build's `app.handle`, so it measures the gateway's own work (and its upstream `fetch`), not Bun's
 * request parsing and socket writes.
 *
 * Each build gets its own services and database (a fresh PostgreSQL database each, dropped at the end, or PGlite
 * with `--db pglite`), the bench's mock upstream in another process, and a key. `--stub` answers the upstream from
 * memory (the mock's reply, read once) so that only the gateway's CPU is measured; the paced scenario needs the mock.
 * A body from memory holds its end with its last bytes, where a fetched one's end comes in a later read: a change to
 * what happens after a stream's terminator is measured against the mock, not `--stub` (bench/README, fifteenth VM).
 *
 *   bun bench/duel.ts [-s chat-sse-c64] [--batch 2000] [--rounds 20] [--concurrency 16] [--stub] DIR_A DIR_B
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import postgres from 'postgres'
import { type MockPorts, gatewayConfig } from './gateway'
import { parseOptions } from './options'
import { spawnChild } from './procs'
import { allScenarios, requestFor } from './scenarios'
import { median } from './stats'

const USAGE = 'usage: bun bench/duel.ts [-s SCENARIO] [--batch N] [--rounds N] [--concurrency N] [--stub] [--db postgres|pglite] DIR_A DIR_B'

const { values, positionals } = parseArgs({
	args: Bun.argv.slice(2),
	options: {
		scenario: { type: 'string', short: 's' },
		batch: { type: 'string' },
		rounds: { type: 'string' },
		concurrency: { type: 'string' },
		stub: { type: 'boolean' },
		db: { type: 'string' },
	},
	allowPositionals: true,
})
const scenario = allScenarios(parseOptions([]) as Exclude<ReturnType<typeof parseOptions>, 'help'>).find((s) => s.name === (values.scenario ?? 'chat-sse-c64'))
if (positionals.length !== 2 || !scenario || scenario.memory || scenario.mode !== 'closed') {
	console.error(USAGE)
	process.exit(2)
}
// One checkout twice would be one set of module instances (the same URLs), sharing module state and compiled code:
// such a pair differed by 6–9 µs per request by itself (bench/README, thirteenth VM). Two worktrees of one commit
// differ by ~1 µs.
if (resolve(positionals[0]!) === resolve(positionals[1]!)) {
	console.error('A and B are the same checkout; compare against a worktree of it (git worktree add -f /tmp/a HEAD --detach)')
	process.exit(2)
}
const batch = Number(values.batch ?? 2000)
const rounds = Number(values.rounds ?? 20)
const concurrency = Number(values.concurrency ?? 16)
const onPostgres = (values.db ?? 'postgres') === 'postgres'
const serverUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const UPSTREAM_KEY = 'bench-upstream-key'

const mock = spawnChild('mock', ['bun', 'bench/mock-server.ts'], { UPSTREAM_KEY, MOCK_DELAY_MS: '0', SLOW_CHUNK_MS: '500' }, join(import.meta.dir, '..'))
const admin = onPostgres ? postgres(serverUrl, { max: 1, onnotice: () => {} }) : undefined
const cleanups: (() => Promise<void>)[] = []
try {
	const ports = await mock.firstJson<MockPorts>(30_000)
	if (values.stub) stubUpstream(ports)
	const builds = []
	for (const dir of positionals.map((d) => resolve(d))) builds.push({ dir, one: await startBuild(dir, ports) })
	const run = async (one: () => Promise<void>, n: number) => {
		let left = n
		await Promise.all(Array.from({ length: concurrency }, async () => {
			while (left-- > 0) await one()
		}))
	}
	// Warm both up (the JIT, the ledger's leases) before anything counts.
	for (const b of builds) await run(b.one, batch * 2)
	const cpu: number[][] = [[], []]
	for (let r = 0; r < rounds; r++) {
		// Alternate which goes first: a batch that follows the other's may pay for its garbage.
		for (const i of r % 2 ? [1, 0] : [0, 1]) {
			const before = process.cpuUsage()
			await run(builds[i]!.one, batch)
			const used = process.cpuUsage(before)
			cpu[i]!.push((used.user + used.system) / batch)
		}
	}
	const diffs = cpu[1]!.map((b, k) => b - cpu[0]![k]!)
	for (const [i, b] of builds.entries()) console.log(`${b.dir.padEnd(40)} ${median(cpu[i]!).toFixed(1)} µs per request (median of ${rounds} batches of ${batch})`)
	console.log(`B − A, paired by round: median ${median(diffs).toFixed(1)} µs; B lower in ${diffs.filter((d) => d < 0).length} of ${rounds}`)
} finally {
	for (const c of cleanups.reverse()) await c().catch(() => {})
	await admin?.end({ timeout: 5 })
	await mock.stop()
}
process.exit(0)

/** One build's services and app in this process, with an account and key; returns one request of the scenario. */
async function startBuild(repo: string, ports: MockPorts): Promise<() => Promise<void>> {
	const dir = mkdtempSync(join(tmpdir(), 'sb-duel-'))
	cleanups.push(async () => rmSync(dir, { recursive: true, force: true }))
	await Bun.write(join(dir, 'gateway.json'), JSON.stringify(gatewayConfig(ports, UPSTREAM_KEY)))
	const adminKey = `adm-${crypto.randomUUID()}`
	let databaseUrl = ''
	if (admin) {
		const name = `sb_duel_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
		await admin.unsafe(`CREATE DATABASE ${name}`)
		cleanups.push(async () => void (await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)))
		const u = new URL(serverUrl)
		u.pathname = `/${name}`
		databaseUrl = u.toString()
	}
	// Each build reads its settings from the environment when its services start.
	Object.assign(process.env, { DATABASE_URL: databaseUrl, GATEWAY_CONFIG: join(dir, 'gateway.json'), DATA_DIR: join(dir, 'data'), ADMIN_KEY: adminKey, LOG_LEVEL: 'error' })
	process.env.SECRET_KEY ??= `${crypto.randomUUID()}${crypto.randomUUID()}`
	const { loadEnv } = await import(`${repo}/src/config/env`)
	const { createServices } = await import(`${repo}/src/services`)
	const { createApp } = await import(`${repo}/src/app`)
	const svc = await createServices(loadEnv())
	cleanups.push(() => svc.close())
	const app = createApp(svc)
	const post = async <T>(path: string, body: unknown): Promise<T> => {
		const res = await app.handle(new Request(`http://localhost${path}`, { method: 'POST', headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }))
		if (!res.ok) throw new Error(`${repo}: POST ${path}: ${res.status} ${await res.text()}`)
		return (await res.json()) as T
	}
	const account = await post<{ id: number }>('/api/accounts', { name: 'duel', balance: 1_000_000_000 })
	const token = await post<{ key: string }>('/api/tokens', { account_id: account.id, name: 'duel' })
	const spec = requestFor(scenario!, 'sb-postgres', { direct: { ...ports }, bare: { ...ports }, gateways: { 'sb-postgres': 1 } }, { upstream: UPSTREAM_KEY, gateway: token.key })
	return async () => {
		const res = await app.handle(new Request(`http://localhost${spec.path}`, { method: 'POST', headers: spec.headers, body: spec.body }))
		const text = await res.text()
		if (res.status !== 200) throw new Error(`${repo}: ${spec.path}: ${res.status} ${text.slice(0, 300)}`)
	}
}

/** Answers requests to the mocks from memory: each distinct call (URL, streamed or not) is fetched once for real. */
function stubUpstream(ports: MockPorts) {
	const real = globalThis.fetch
	const mocks = [ports.openai, ports.anthropic, ports.slow].map((p) => `http://127.0.0.1:${p}/`)
	const replies = new Map<string, { body: string; headers: Record<string, string>; status: number }>()
	const stub = async (input: string | URL | Request, init?: RequestInit) => {
		const url = String(input)
		if (!mocks.some((m) => url.startsWith(m))) return real(input, init)
		const key = `${url} ${String(init?.body ?? '').includes('"stream":true')}`
		let r = replies.get(key)
		if (!r) {
			const res = await real(input, init)
			r = { body: await res.text(), headers: Object.fromEntries(res.headers), status: res.status }
			replies.set(key, r)
		}
		return new Response(r.body, { status: r.status, headers: r.headers })
	}
	globalThis.fetch = Object.assign(stub, { preconnect: real.preconnect }) as typeof fetch
}
