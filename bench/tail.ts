/**
 * Where the slow requests' time goes: the scenario's load against the gateway with every request's send time and
 * latency logged (BENCH_LATENCY_LOG, the own generator), and the scheduler's events of the whole machine recorded
 * meanwhile (`perf sched record`). For the slow requests and for the fast ones it sums, per request, what ran on the
 * CPUs while they were in flight (the gateway's threads by name, the mock's, every other process by its command
 * name: `bun` is the load generator), and how long the gateway's main thread waited for a CPU once woken. What
 * shows up in the slow requests' time and not in the fast ones' is where the tail comes from (bench/README, eleventh
 * VM). A one-connection scenario gives the clearest picture: one request in flight at a time.
 *
 *   bun bench/tail.ts [-s chat-sse-c1] [--warmup 5] [--duration 5] [--slow-ms 1.5] [--db postgres|pglite]
 *
 * Needs `perf` (Debian: `apt-get install linux-perf`) and permission to record scheduler events (root).
 * @module
 */
import { dlopen, FFIType, ptr } from 'bun:ffi'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { startRig } from './gateway'
import { runLoadgen } from './measure'
import { type Options, parseOptions } from './options'
import { loadFor, requestFor, selectScenarios } from './scenarios'

/** A thread's stretch on a CPU (seconds, CLOCK_MONOTONIC), and how long it waited for the CPU after its wake-up. */
export type Run = { start: number; end: number; task: string; schedDelay: number }

/**
 * Parses `perf sched timehist` lines (`time [cpu] comm[tid/pid] wait delay run`, times in seconds, the rest in ms)
 * into runs, each task named by `label(comm, pid)` (the process's main thread prints as `comm[pid]`). Sorted by start.
 */
export function parseTimehist(text: string, label: (comm: string, pid: number) => string): Run[] {
	const runs: Run[] = []
	for (const line of text.split('\n')) {
		// A CPU's idle stretches print as `<idle>`, with no thread.
		const m = /^\s*(\d+\.\d+)\s+\[\d+\]\s+(\S.*?)(?:\[(\d+)(?:\/(\d+))?\])?\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$/.exec(line)
		if (!m) continue
		const end = Number(m[1])
		const run = Number(m[7]) / 1000
		runs.push({ start: end - run, end, task: label(m[2]!, Number(m[4] ?? m[3] ?? 0)), schedDelay: Number(m[6]) / 1000 })
	}
	return runs.sort((a, b) => a.start - b.start)
}

/** A request in flight, from its send to its end (seconds on the runs' clock: the loadgen's log shifted onto it). */
export type Flight = { from: number; to: number }

/** A task's time per request in flight (ms), and the share of those requests during which it ran at all. */
export type TaskShare = { task: string; ms: number; share: number }

export type TailProfile = { requests: number; meanMs: number; mainDelayMs: number; byTask: TaskShare[] }

/**
 * Per request in flight: CPU time of each task that ran meanwhile (sorted, largest first), in how many of the
 * requests it ran (a collector's helper threads run in only the few requests a collection overlaps), and the main
 * thread's wait for a CPU. `runs` sorted by start.
 */
export function inFlight(flights: Flight[], runs: Run[], mainTask: string): TailProfile {
	// How far before a request a run may start and still overlap it (an idle CPU's stretch can be long).
	let longest = 0
	for (const r of runs) longest = Math.max(longest, r.end - r.start)
	const byTask = new Map<string, number>()
	const seenIn = new Map<string, number>()
	const seen = new Set<string>()
	let span = 0
	let delay = 0
	for (const f of flights) {
		seen.clear()
		span += f.to - f.from
		let lo = 0
		let hi = runs.length
		while (lo < hi) {
			const mid = (lo + hi) >> 1
			if (runs[mid]!.start < f.from - longest) lo = mid + 1
			else hi = mid
		}
		for (let i = lo; i < runs.length && runs[i]!.start < f.to; i++) {
			const r = runs[i]!
			const overlap = Math.min(f.to, r.end) - Math.max(f.from, r.start)
			if (overlap > 0) {
				byTask.set(r.task, (byTask.get(r.task) ?? 0) + overlap)
				if (!seen.has(r.task)) {
					seen.add(r.task)
					seenIn.set(r.task, (seenIn.get(r.task) ?? 0) + 1)
				}
			}
			if (r.task === mainTask) {
				const waited = Math.min(f.to, r.start) - Math.max(f.from, r.start - r.schedDelay)
				if (waited > 0) delay += waited
			}
		}
	}
	const n = Math.max(1, flights.length)
	return {
		requests: flights.length,
		meanMs: (span / n) * 1000,
		mainDelayMs: (delay / n) * 1000,
		byTask: [...byTask].map(([task, v]) => ({ task, ms: (v / n) * 1000, share: (seenIn.get(task) ?? 0) / n })).sort((a, b) => b.ms - a.ms),
	}
}

/** CLOCK_REALTIME minus CLOCK_MONOTONIC in ms (perf's `-k mono` clock against the loadgen's epoch times). */
function realtimeOffsetMs(): number {
	const { clock_gettime } = dlopen('libc.so.6', { clock_gettime: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 } }).symbols
	const ts = new BigInt64Array(2)
	const read = (clock: number) => {
		clock_gettime(clock, ptr(ts))
		return Number(ts[0]) * 1000 + Number(ts[1]) / 1e6
	}
	const offsets = Array.from({ length: 5 }, () => {
		const mono0 = read(1)
		const real = read(0)
		return real - (mono0 + read(1)) / 2
	})
	return offsets.sort((a, b) => a - b)[2]!
}

if (import.meta.main) {
	const { values } = parseArgs({
		args: Bun.argv.slice(2),
		options: { s: { type: 'string' }, warmup: { type: 'string' }, duration: { type: 'string' }, 'slow-ms': { type: 'string' }, db: { type: 'string' }, top: { type: 'string' } },
	})
	const perf = Bun.which('perf')
	if (!perf) {
		console.error('perf not found (Debian: apt-get install linux-perf)')
		process.exit(2)
	}
	const warmupS = Number(values.warmup ?? 5)
	const durationS = Number(values.duration ?? 5)
	const slowMs = Number(values['slow-ms'] ?? 1.5)
	const opts = parseOptions(['-s', values.s ?? 'chat-sse-c1', '--db', values.db ?? 'postgres', '--duration', String(durationS)]) as Options
	const scenario = selectScenarios(opts).find((s) => !s.memory && s.mode === 'closed')
	if (!scenario) {
		console.error(`no closed-loop scenario matches ${values.s} (bun run bench --list)`)
		process.exit(2)
	}
	const kind = opts.databases[0]!
	const rig = await startRig(kind, opts.postgresUrl)
	const dir = mkdtempSync(join(tmpdir(), 'sb-tail-'))
	try {
		const { gw, ports: mp } = rig
		const pid = gw.child.pid
		const name = `sb-${kind}` as const
		const request = requestFor(scenario, name, { direct: mp, bare: mp, gateways: { [name]: gw.port } }, { upstream: 'bench-upstream-key', gateway: gw.key })
		process.env.BENCH_LATENCY_LOG = join(dir, 'lat')
		console.log(`${scenario.name} on ${kind}: ${warmupS} s of warm-up, then ${durationS} s with the scheduler recorded (gateway pid ${pid})`)
		const load = runLoadgen({ ...loadFor(scenario, request, opts, false), durationMs: (warmupS + durationS + 1) * 1000 })
		await Bun.sleep(warmupS * 1000)
		const data = join(dir, 'sched.data')
		const rec = Bun.spawnSync([perf, 'sched', 'record', '-a', '-k', 'mono', '-o', data, '--', 'sleep', String(durationS)], { stdout: 'pipe', stderr: 'pipe' })
		if (rec.exitCode !== 0) throw new Error(`perf sched record failed: ${rec.stderr.toString()}`)
		const offsetMs = realtimeOffsetMs()
		const result = await load
		console.log(`load: ${result.completed} requests, ${result.rps} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms`)
		const hist = Bun.spawnSync([perf, 'sched', 'timehist', '-i', data], { stdout: 'pipe', stderr: 'pipe', maxBuffer: 2 ** 31 }).stdout.toString()
		const mockPid = rig.mock.pid
		const runs = parseTimehist(hist, (comm, p) => (p === pid ? `gateway ${comm}` : p === mockPid ? `mock ${comm}` : comm))
		const log = readdirSync(dir).find((f) => f.startsWith('lat.'))
		if (!log || runs.length === 0) throw new Error('no latency log or no scheduler events')
		const pairs = (await Bun.file(join(dir, log)).json()) as number[]
		const first = runs[0]!.start
		const last = runs[runs.length - 1]!.end
		const slow: Flight[] = []
		const fast: Flight[] = []
		for (let i = 0; i < pairs.length; i += 2) {
			const from = (pairs[i]! - offsetMs) / 1000
			const to = from + pairs[i + 1]! / 1000
			if (from < first || to > last) continue
			;(pairs[i + 1]! >= slowMs ? slow : fast).push({ from, to })
		}
		const mainTask = `gateway ${(await Bun.file(`/proc/${pid}/comm`).text()).trim()}`
		const top = Number(values.top ?? 14)
		for (const [label, flights] of [[`slow (≥ ${slowMs} ms)`, slow], [`fast (< ${slowMs} ms)`, fast]] as const) {
			const p = inFlight(flights, runs, mainTask)
			console.log(`\n${label}: ${p.requests} requests, ${p.meanMs.toFixed(3)} ms each on average; the gateway's main thread waited ${p.mainDelayMs.toFixed(3)} ms for a CPU`)
			console.log('  ms per request  share of its time  ran in  what ran')
			for (const { task, ms, share } of p.byTask.slice(0, top))
				console.log(`${ms.toFixed(3).padStart(16)}  ${`${((ms / p.meanMs) * 100).toFixed(0)}%`.padStart(17)}  ${`${(share * 100).toFixed(0)}%`.padStart(6)}  ${task}`)
		}
	} finally {
		await rig.stop()
		rmSync(dir, { recursive: true, force: true })
	}
	process.exit(0)
}
