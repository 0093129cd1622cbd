/**
 * `bun bench/ab.ts OLD NEW …`: two or more builds of the gateway side by side against one mock, short loads
 * alternated between them several times, medians printed. On a noisy machine this is the only fair comparison of
 * builds: whole-machine slowdowns come and go within minutes, so two separate `bun run bench` runs differ by more
 * than most changes are worth.
 *
 * A build is a checkout (`git worktree add -f /tmp/old <rev> --detach`; node_modules may be a symlink), optionally
 * with environment settings: `/tmp/old`, `.@MIMALLOC_PURGE_DELAY=0`, `.@A=1,B=2`. `bare` is the bare proxy.
 * @module
 */
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { type Gateway, type MockPorts, startGateway } from './gateway'
import { type Context, type Target, measure } from './measure'
import { type Options, parseOptions } from './options'
import { type Child, processTree, spawnChild, statusBytes } from './procs'
import { median } from './stats'
import { requestFor, selectScenarios, type Upstream } from './scenarios'
import type { Measurement } from './types'
import { findWrk } from './wrk'

const REPO = resolve(import.meta.dir, '..')
const UPSTREAM_KEY = 'bench-upstream-key'

/** A gateway checkout (`dir`), or a proxy script that speaks bare-proxy.ts's interface (`proxy`). */
export type Build = { label: string; dir?: string; proxy?: string; env: Record<string, string> }

/** `dir[@K=V,K=V]`, `bare`, or `proxy:FILE` (UPSTREAMS in its environment, `{"ports":[…]}` on stdout, as bare-proxy.ts). */
export function parseBuild(spec: string): Build {
	if (spec === 'bare') return { label: 'bare', proxy: resolve(import.meta.dir, 'bare-proxy.ts'), env: {} }
	const at = spec.indexOf('@')
	const path = at < 0 ? spec : spec.slice(0, at)
	const env: Record<string, string> = {}
	for (const kv of at < 0 ? [] : spec.slice(at + 1).split(',')) {
		const eq = kv.indexOf('=')
		if (eq <= 0) throw new Error(`bad setting "${kv}" in ${spec} (want NAME=value)`)
		env[kv.slice(0, eq)] = kv.slice(eq + 1)
	}
	if (path.startsWith('proxy:')) return { label: spec, proxy: resolve(path.slice(6)), env }
	return { label: spec, dir: resolve(path), env }
}

const USAGE = `bun bench/ab.ts [options] BUILD BUILD…   (BUILD: a checkout dir, dir@NAME=value,…, bare, or proxy:FILE)
  -s LIST          scenarios (default chat-sse-c64,chat-json-c64)
  --rounds N       alternations (default 6)
  --duration S     measured seconds per load (default 3)
  --warmup S       unmeasured seconds before each (default 1)
  --db pglite|postgres   (default postgres)`

if (import.meta.main) {
	const { values, positionals } = parseArgs({
		args: Bun.argv.slice(2),
		options: { s: { type: 'string' }, rounds: { type: 'string' }, duration: { type: 'string' }, warmup: { type: 'string' }, db: { type: 'string' } },
		allowPositionals: true,
	})
	if (positionals.length < 2) {
		console.error(USAGE)
		process.exit(2)
	}
	const builds = positionals.map(parseBuild)
	const argv = ['-s', values.s ?? 'chat-sse-c64,chat-json-c64', '--rounds', values.rounds ?? '6', '--duration', values.duration ?? '3', '--warmup', values.warmup ?? '1', '--db', values.db ?? 'postgres']
	const opts = parseOptions(argv) as Options
	await run(builds, opts)
}

async function run(builds: Build[], opts: Options) {
	const children: Child[] = []
	const gateways: Gateway[] = []
	const stopAll = async () => {
		await Promise.all(gateways.map((g) => g.stop().catch(() => {})))
		await Promise.all(children.map((c) => c.stop()))
	}
	process.on('SIGINT', () => void stopAll().then(() => process.exit(130)))
	try {
		const mock = spawnChild('mock', ['bun', 'bench/mock-server.ts'], { UPSTREAM_KEY, MOCK_DELAY_MS: '0', SLOW_CHUNK_MS: '500' }, REPO)
		children.push(mock)
		const mp = await mock.firstJson<MockPorts>(30_000)
		const fetchEnv = { BUN_CONFIG_MAX_HTTP_REQUESTS: String(opts.fetchLimit) }
		const kind = opts.databases[0]
		// Each build gets its own ports record: requestFor addresses a gateway by target name, a proxy by upstream.
		const targets: { build: Build; target: Target; port: (up: Upstream) => number; key: string }[] = []
		for (const b of builds) {
			if (b.proxy) {
				const origins = [mp.openai, mp.anthropic, mp.slow, mp.paced].map((p) => `http://127.0.0.1:${p}`)
				const proxy = spawnChild(b.label, ['bun', b.proxy], { ...fetchEnv, ...b.env, UPSTREAMS: JSON.stringify(origins) }, REPO)
				children.push(proxy)
				const pp = (await proxy.firstJson<{ ports: number[] }>(30_000)).ports
				const byUp = { openai: pp[0], anthropic: pp[1], slow: pp[2], paced: pp[3] }
				targets.push({ build: b, target: { name: 'bare', pid: proxy.pid }, port: (u) => byUp[u], key: UPSTREAM_KEY })
				continue
			}
			const gw = await startGateway(kind, mp, { repo: b.dir!, upstreamKey: UPSTREAM_KEY, postgresUrl: opts.postgresUrl, startTimeoutMs: 180_000, env: { ...fetchEnv, ...b.env } })
			gateways.push(gw)
			const name = `sb-${kind}` as const
			targets.push({ build: b, target: { name, pid: gw.child.pid, dbBackends: kind === 'postgres' ? gw.dbBackends : undefined, billing: gw.billing }, port: () => gw.port, key: gw.key })
		}
		const ctx: Context = { opts, wrk: findWrk(), mock: { pid: mock.pid, control: mp.control } }
		// What each build holds before any request: the loaded code's share of the peak, apart from the load's.
		await Bun.sleep(2000)
		for (const t of targets) console.log(`${t.build.label.padEnd(28)} idle rss ${(statusBytes(processTree(t.target.pid), 'VmRSS') / 1048576).toFixed(1)} MB`)
		const scenarios = selectScenarios(opts).filter((s) => !s.memory)
		const results = new Map<string, Measurement[]>()
		for (let round = 1; round <= opts.rounds; round++) {
			for (const s of scenarios) {
				const k = round % targets.length
				for (const t of [...targets.slice(k), ...targets.slice(0, k)]) {
					const up = s.upstream
					const ports = { direct: { openai: 0, anthropic: 0, slow: 0, paced: 0 }, bare: { openai: t.port('openai'), anthropic: t.port('anthropic'), slow: t.port('slow'), paced: t.port('paced') }, gateways: { [t.target.name]: t.port(up) } }
					const req = requestFor(s, t.target.name, ports, { upstream: UPSTREAM_KEY, gateway: t.key })
					const m = await measure(ctx, s, t.target, req, round)
					const key = `${s.name}\u0000${t.build.label}`
					results.set(key, [...(results.get(key) ?? []), m])
					const n = Math.max(1, m.load.completed)
					console.log(
						`[${round}] ${s.name.padEnd(20)} ${t.build.label.padEnd(28)} cpu ${(m.target_usage.cpuUs / n).toFixed(1).padStart(6)} µs  main ${(m.target_usage.mainUs / n).toFixed(1).padStart(6)}  db ${((m.db_cpu_us ?? 0) / n).toFixed(1).padStart(5)}  ${String(m.load.rps).padStart(8)} req/s  p99 ${m.load.latency.p99} ms  peak ${(m.target_usage.peakRss / 1048576).toFixed(1)} MB${m.problems.length ? `  PROBLEMS: ${m.problems.join('; ')}` : ''}`,
					)
				}
			}
		}
		for (const t of targets) console.log(`${t.build.label.padEnd(28)} rss after the loads ${(statusBytes(processTree(t.target.pid), 'VmRSS') / 1048576).toFixed(1)} MB`)
		console.log('\nmedians over rounds')
		for (const s of scenarios) {
			for (const t of targets) {
				const ms = results.get(`${s.name}\u0000${t.build.label}`) ?? []
				const per = (f: (m: Measurement) => number) => median(ms.map((m) => f(m) / Math.max(1, m.load.completed)))
				const med = (f: (m: Measurement) => number) => median(ms.map(f))
				console.log(
					`${s.name.padEnd(20)} ${t.build.label.padEnd(28)} cpu ${per((m) => m.target_usage.cpuUs).toFixed(1).padStart(6)} µs  main ${per((m) => m.target_usage.mainUs).toFixed(1).padStart(6)}  db ${per((m) => m.db_cpu_us ?? 0).toFixed(1).padStart(5)}  ${med((m) => m.load.rps).toFixed(0).padStart(7)} req/s  p50 ${med((m) => m.load.latency.p50).toFixed(3)}  p99 ${med((m) => m.load.latency.p99).toFixed(3)} ms  peak ${(med((m) => m.target_usage.peakRss) / 1048576).toFixed(1)} MB`,
				)
			}
		}
	} finally {
		await stopAll()
	}
}
