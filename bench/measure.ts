/**
 * One measurement: a scenario against one target. Warms up, snapshots CPU (process trees), the GC log's totals
 * (`--gc-log`) and the mock's request count, applies the load (wrk or the own generator, each in its own process),
 * samples RSS meanwhile, and checks that every response passed and that the mock saw as many requests as were sent.
 * @module
 */
import { join } from 'node:path'
import { cpuMicros, loadavg, mainThreadMicros, processTree, statusBytes } from './procs'
import type { Billing } from './gateway'
import type { GcTotals } from './gc-log'
import { type Scenario, expectedCost, loadFor } from './scenarios'
import type { LoadResult, LoadSpec, Measurement, ProcUsage, RequestSpec, TargetName } from './types'
import { runWrk } from './wrk'
import type { Options } from './options'

/** A process tree we measure; `gc`: its GC log's running totals, when it runs with one. */
export type Target = { name: TargetName; pid: number; dbBackends?: () => Promise<number[]>; billing?: () => Promise<Billing>; gc?: () => GcTotals }

export type Context = { opts: Options; wrk?: string; mock: { pid: number; control: number } }

/** Runs the own load generator (bench/loadgen.ts) in a child process and returns its report. */
export async function runLoadgen(spec: LoadSpec): Promise<LoadResult> {
	const proc = Bun.spawn(['bun', join(import.meta.dir, 'loadgen.ts')], {
		env: { ...process.env, BENCH_LOAD: JSON.stringify(spec) },
		stdout: 'pipe',
		stderr: 'pipe',
	})
	// The generator ends by itself (duration, then per-request timeouts); this is the backstop.
	const limit = setTimeout(() => proc.kill('SIGKILL'), spec.durationMs + spec.timeoutMs + 60_000)
	const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
	await proc.exited
	clearTimeout(limit)
	const line = out.trim().split('\n').pop() ?? ''
	if (!line.startsWith('{')) throw new Error(`loadgen failed (exit ${proc.exitCode}): ${err || out}`)
	return JSON.parse(line) as LoadResult
}

const useWrk = (ctx: Context, s: Scenario) => ctx.wrk && !s.stream && s.mode === 'closed' && !s.memory

const runLoad = (ctx: Context, s: Scenario, spec: LoadSpec) => (useWrk(ctx, s) ? runWrk(ctx.wrk!, spec) : runLoadgen(spec))

async function mockCount(ctx: Context): Promise<number> {
	const counts = (await (await fetch(`http://127.0.0.1:${ctx.mock.control}/counts`)).json()) as Record<string, number>
	return Object.values(counts).reduce((a, b) => a + b, 0)
}

/** Samples VmRSS of a process tree every 100 ms until stopped; returns the highest value. */
function rssSampler(pids: number[]) {
	let peak = statusBytes(pids, 'VmRSS')
	const timer = setInterval(() => {
		peak = Math.max(peak, statusBytes(pids, 'VmRSS'))
	}, 100)
	return {
		stop() {
			clearInterval(timer)
			return Math.max(peak, statusBytes(pids, 'VmRSS'))
		},
	}
}

const diff = (a?: number, b?: number) => (a === undefined || b === undefined ? undefined : a - b)
const union = (a: number[], b: number[]) => [...new Set([...a, ...b])]

/**
 * Checks the bill: every completed request settled at its exact cost, usage rows written, no reservation left
 * open. Settlement may trail the response (batched writes), so the final state is awaited for up to 5 s.
 * Requests wrk abandoned when its time was up may be charged too (a client that leaves pays what it consumed).
 */
async function checkBilling(t: Target, before: Billing, s: Scenario, load: LoadResult, slack: number): Promise<{ after: Billing; problems: string[] }> {
	const cost = expectedCost(s)
	const lo = load.completed * cost
	const hi = (load.completed + slack) * cost
	let after = await t.billing!()
	for (let i = 0; i < 50 && (after.reserved !== 0 || after.spent - before.spent < lo); i++) {
		await Bun.sleep(100)
		after = await t.billing!()
	}
	const problems: string[] = []
	const spent = after.spent - before.spent
	if (spent < lo || spent > hi) problems.push(`billed ${spent} µUSD for ${load.completed} requests, expected ${lo}${hi > lo ? `..${hi}` : ''} (${cost} each)`)
	if (after.reserved !== 0) problems.push(`${after.reserved} µUSD still reserved after the run`)
	if (before.usageRows !== undefined && after.usageRows !== undefined) {
		const rows = after.usageRows - before.usageRows
		if (rows < load.completed || rows > load.completed + slack) problems.push(`${rows} usage rows for ${load.completed} requests`)
	}
	return { after, problems }
}

/** Runs `s`'s load against a target for `ms`, unmeasured (a process just started, bench/options.ts DEFAULT_PRIME_S). */
export async function prime(ctx: Context, s: Scenario, request: RequestSpec, ms: number): Promise<void> {
	await runLoad(ctx, s, { ...loadFor(s, request, ctx.opts, true), durationMs: ms })
	await Bun.sleep(300)
}

/** Measures `scenario` against `target` with `request`. */
export async function measure(ctx: Context, s: Scenario, target: Target, request: RequestSpec, round: number): Promise<Measurement> {
	if (!s.memory && ctx.opts.warmupMs > 0) {
		await runLoad(ctx, s, loadFor(s, request, ctx.opts, true))
		// Let requests a warm-up abandoned (wrk stops mid-request) reach the mock before counting.
		await Bun.sleep(300)
	}
	const spec = loadFor(s, request, ctx.opts, false)
	const bill0 = await target.billing?.()
	const tree0 = processTree(target.pid)
	const mockTree = processTree(ctx.mock.pid)
	const db0 = (await target.dbBackends?.()) ?? []
	const [cpu0, mockCpu0, dbCpu0, seen0] = [cpuMicros(tree0), cpuMicros(mockTree), cpuMicros(db0), await mockCount(ctx)]
	const main0 = mainThreadMicros(target.pid)
	const gc0 = target.gc?.()
	const rssBefore = statusBytes(tree0, 'VmRSS')
	const mockRssBefore = statusBytes(mockTree, 'VmRSS')
	const sampler = rssSampler(tree0)
	const mockSampler = rssSampler(mockTree)
	const load = await runLoad(ctx, s, spec)
	// Requests wrk abandoned at the end may still be on their way upstream.
	await Bun.sleep(useWrk(ctx, s) ? 300 : 50)
	const tree1 = union(tree0, processTree(target.pid))
	const db1 = (await target.dbBackends?.()) ?? []
	const [cpu1, mockCpu1, dbCpu1, seen1] = [cpuMicros(tree1), cpuMicros(mockTree), cpuMicros(db1), await mockCount(ctx)]
	const main1 = mainThreadMicros(target.pid)
	// The pause above also lets the log lines of the load's last collections arrive through the pipe.
	const gc1 = target.gc?.()
	const peakRss = sampler.stop()
	const mockPeak = mockSampler.stop()
	// The memory scenario's point: does RSS come back down once the streams are over?
	if (s.memory) await Bun.sleep(5000)
	const usage = (cpu: number, main: number, peak: number, before: number, pids: number[]): ProcUsage => ({
		cpuUs: Math.round(cpu),
		mainUs: Math.round(main),
		peakRss: peak,
		rssBefore: before,
		rssAfter: statusBytes(pids, 'VmRSS'),
		hwm: statusBytes([pids[0]], 'VmHWM'),
	})
	const seen = seen1 - seen0
	const problems: string[] = []
	if (load.failed > 0) problems.push(`${load.failed} failed: ${JSON.stringify(load.failures)} ${load.samples.join(' | ')}`)
	if (load.completed === 0) problems.push('no request completed')
	// wrk abandons up to one request per connection when its time is up; the own generator waits for them.
	const slack = load.tool === 'wrk' ? s.concurrency : 0
	if (seen < load.sent || seen > load.sent + slack) problems.push(`mock saw ${seen} requests, client sent ${load.sent}${slack ? ` (+ up to ${slack} in flight)` : ''}`)
	// Failed requests may be charged (what they consumed), so the bill is only exact when all passed.
	const billing = bill0 && load.failed === 0 ? await checkBilling(target, bill0, s, load, slack) : undefined
	if (billing) problems.push(...billing.problems)
	return {
		scenario: s.name,
		target: target.name,
		round,
		load,
		target_usage: usage(cpu1 - cpu0, main1 - main0, peakRss, rssBefore, tree1),
		mock_usage: usage(mockCpu1 - mockCpu0, 0, mockPeak, mockRssBefore, mockTree),
		db_cpu_us: target.dbBackends ? Math.round(dbCpu1 - dbCpu0) : undefined,
		gc: gc0 && gc1 ? { alloc_bytes: gc1.allocatedBytes - gc0.allocatedBytes, gc_ms: Math.round((gc1.gcMs - gc0.gcMs) * 1000) / 1000, cycles: gc1.cycles - gc0.cycles } : undefined,
		mock_seen: seen,
		billed: billing && bill0 ? { spent: billing.after.spent - bill0.spent, usage_rows: diff(billing.after.usageRows, bill0.usageRows), expected_each: expectedCost(s) } : undefined,
		problems,
		loadavg: loadavg(),
	}
}
