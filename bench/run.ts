/**
 * `bun run bench`: Switchboard against a direct call to the mock upstream and against a bare Bun proxy, all
 * on this machine, same run. Starts the mock (its own process), the bare proxy, one gateway per database, runs
 * every selected scenario with the targets alternating within each round, prints the table and the issue-7
 * targets, and writes bench/results/<timestamp>.json. See bench/README.md.
 * @module
 */
import { cpus, totalmem } from 'node:os'
import { join, resolve } from 'node:path'
import { type Gateway, type MockPorts, startGateway } from './gateway'
import { type Context, type Target, measure, prime } from './measure'
import { USAGE, parseOptions } from './options'
import { type Child, loadavg, spawnChild, statusBytes } from './procs'
import { formatTable, formatVerdicts, summarize, verdicts, writeReport } from './report'
import { type Ports, allScenarios, requestFor, selectScenarios } from './scenarios'
import type { Measurement, TargetName } from './types'
import { findWrk } from './wrk'

const REPO = join(import.meta.dir, '..')
const UPSTREAM_KEY = 'bench-upstream-key'

const parsed = (() => {
	try {
		return parseOptions(Bun.argv.slice(2))
	} catch (e) {
		console.error(`${(e as Error).message}\n\n${USAGE}`)
		process.exit(2)
	}
})()
if (parsed === 'help') {
	console.log(USAGE)
	process.exit(0)
}
const opts = parsed
if (opts.list) {
	for (const s of allScenarios(opts)) console.log(`${s.name.padEnd(24)} ${s.description}`)
	process.exit(0)
}
const scenarios = selectScenarios(opts)
if (scenarios.length === 0) {
	console.error(`no scenario matches ${opts.scenarios.join(',')} (see --list)`)
	process.exit(2)
}

const children: Child[] = []
const gateways: Gateway[] = []
let cleaning: Promise<void> | undefined
/** Stops everything we started (gateways first: stopping one drops its PostgreSQL database). */
const cleanup = () =>
	(cleaning ??= (async () => {
		await Promise.all(gateways.map((g) => g.stop().catch((e) => console.error(`stopping ${g.kind}: ${e}`))))
		await Promise.all(children.map((c) => c.stop()))
	})())
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
	process.on(sig, () => {
		console.error(`\n${sig}: stopping the benchmark processes`)
		void cleanup().then(() => process.exit(130))
	})
}

const log = (s: string) => console.log(s)

try {
	const wrk = opts.noWrk ? undefined : findWrk()
	if (!opts.noWrk && !wrk) log('wrk unavailable: the own generator runs the non-stream scenarios too')

	const mock = spawnChild('mock', ['bun', 'bench/mock-server.ts'], { UPSTREAM_KEY, MOCK_DELAY_MS: String(opts.mockDelayMs), SLOW_CHUNK_MS: String(opts.slowChunkMs) }, REPO)
	children.push(mock)
	const mp = await mock.firstJson<MockPorts>(30_000)
	const origins = [mp.openai, mp.anthropic, mp.slow, mp.paced].map((p) => `http://127.0.0.1:${p}`)
	// Bun's fetch runs at most 256 requests at once by default and queues the rest. The bare proxy gets the limit the
	// gateways set for themselves when started as operators start them (src/lib/runtime-settings.ts): they get nothing here.
	const fetchEnv: Record<string, string> = opts.fetchLimit > 0 ? { BUN_CONFIG_MAX_HTTP_REQUESTS: String(opts.fetchLimit) } : {}
	// The GC log is the proxy's and the gateways' only: the mock serves every target.
	const proxy = spawnChild('bare proxy', ['bun', 'bench/bare-proxy.ts'], { ...fetchEnv, UPSTREAMS: JSON.stringify(origins) }, REPO, { gcLog: opts.gcLog })
	children.push(proxy)
	const pp = (await proxy.firstJson<{ ports: number[] }>(30_000)).ports

	const ports: Ports = {
		direct: { openai: mp.openai, anthropic: mp.anthropic, slow: mp.slow, paced: mp.paced },
		bare: { openai: pp[0], anthropic: pp[1], slow: pp[2], paced: pp[3] },
		gateways: {},
	}
	const targets: Target[] = [
		{ name: 'direct', pid: mock.pid },
		{ name: 'bare', pid: proxy.pid, gc: proxy.gc },
	]
	const keys: Record<string, string> = {}
	for (const kind of opts.databases) {
		log(`starting switchboard on ${kind}…`)
		const started = Date.now()
		try {
			const gw = await startGateway(kind, mp, { repo: REPO, upstreamKey: UPSTREAM_KEY, postgresUrl: opts.postgresUrl, startTimeoutMs: 180_000, cpuProf: opts.cpuProf, gcLog: opts.gcLog })
			gateways.push(gw)
			const name: TargetName = `sb-${kind}`
			ports.gateways[name] = gw.port
			keys[name] = gw.key
			targets.push({ name, pid: gw.child.pid, dbBackends: kind === 'postgres' ? gw.dbBackends : undefined, billing: gw.billing, gc: gw.child.gc })
			log(`  ready in ${((Date.now() - started) / 1000).toFixed(1)} s on port ${gw.port}`)
		} catch (e) {
			log(`  cannot start switchboard on ${kind}: ${(e as Error).message.split('\n')[0]} (skipped)`)
		}
	}
	const idleRss = Object.fromEntries(targets.map((t) => [t.name, statusBytes([t.pid], 'VmRSS')]))
	const startHwm = Object.fromEntries(targets.map((t) => [t.name, statusBytes([t.pid], 'VmHWM')]))

	const ctx: Context = { opts, wrk, mock: { pid: mock.pid, control: mp.control } }
	const results: Measurement[] = []
	const timed = scenarios.filter((s) => !s.memory).length
	const secs = timed * targets.length * opts.rounds * ((opts.durationMs + opts.warmupMs) / 1000 + 1) + (timed ? (targets.length * opts.primeMs) / 1000 : 0)
	const memory = scenarios.length > timed ? ' plus ~30 s per target for the memory scenario' : ''
	log(`${scenarios.length} scenario(s) × ${targets.length} targets × ${opts.rounds} round(s): about ${secs < 120 ? `${Math.ceil(secs)} s` : `${Math.ceil(secs / 60)} min`}${memory}; load ${loadavg()}`)
	const first = scenarios.find((s) => !s.memory)
	if (first && opts.primeMs > 0) {
		log(`priming each target with ${opts.primeMs / 1000} s of ${first.name}, unmeasured`)
		for (const t of targets) await prime(ctx, first, requestFor(first, t.name, ports, { upstream: UPSTREAM_KEY, gateway: t.name.startsWith('sb-') ? keys[t.name] : '' }), opts.primeMs)
	}
	for (let round = 1; round <= opts.rounds; round++) {
		for (const [i, s] of scenarios.entries()) {
			// Rotate the order so no target always runs first (or right after the heaviest one).
			const k = (i + round) % targets.length
			for (const t of [...targets.slice(k), ...targets.slice(0, k)]) {
				const gateway = t.name.startsWith('sb-')
				const req = requestFor(s, t.name, ports, { upstream: UPSTREAM_KEY, gateway: gateway ? keys[t.name] : '' })
				const m = await measure(ctx, s, t, req, round)
				results.push(m)
				const l = m.load
				const ttfb = l.ttfb ? ` ttfb p50 ${l.ttfb.p50} ms` : ''
				const alloc = m.gc ? `  ${(m.gc.alloc_bytes / 1024 / Math.max(1, l.completed)).toFixed(1)} KB/req` : ''
				log(`[${round}] ${s.name.padEnd(22)} ${t.name.padEnd(12)} ${String(l.rps).padStart(8)} req/s  p50 ${l.latency.p50} p99 ${l.latency.p99} ms${ttfb}  ${Math.round(m.target_usage.cpuUs / Math.max(1, l.completed))} µs/req${alloc}${m.problems.length ? `  PROBLEMS: ${m.problems.join('; ')}` : ''}`)
			}
		}
	}

	const rows = summarize(results)
	const v = verdicts(rows)
	log(formatTable(rows))
	log(formatVerdicts(v))
	const path = await writeReport(resolve(REPO, opts.out), {
		started_at: new Date().toISOString(),
		machine: { cpus: cpus().length, model: cpus()[0]?.model, memory_mb: Math.round(totalmem() / 1048576), bun: Bun.version, loadavg_end: loadavg() },
		options: opts,
		targets: targets.map((t) => ({ name: t.name, idle_rss: idleRss[t.name], hwm_after_start: startHwm[t.name] })),
		summary: rows,
		verdicts: v,
		measurements: results,
	})
	log(`\nreport: ${path}`)
	const problems = rows.reduce((a, r) => a + r.problems.length, 0)
	if (problems) log(`${problems} problem(s) found: see the "!" lines above`)
	await cleanup()
	process.exit(problems ? 1 : 0)
} catch (e) {
	console.error(`bench failed: ${(e as Error).stack ?? e}`)
	await cleanup()
	process.exit(1)
}
