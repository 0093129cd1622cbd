/**
 * The benchmark's output: one row per scenario and target (medians over rounds), ratios to the direct and
 * bare-proxy targets of the same run, the issue-7 targets checked, and the JSON report.
 * @module
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { median } from './stats'
import type { Measurement, TargetName } from './types'

/** Medians over rounds of one scenario × target. */
export type Row = {
	scenario: string
	target: TargetName
	rps: number
	p50: number
	p99: number
	ttfb50: number
	ttfb99: number
	/** Target process tree CPU per completed request, µs. */
	cpu: number
	/** Of `cpu`, the main thread's (where JavaScript runs), µs per request. */
	mainCpu: number
	mockCpu: number
	dbCpu?: number
	/** With `--gc-log`: KB the JavaScript heap allocated per request, and GC cycle µs per request. */
	allocKb?: number
	gcUs?: number
	peakRssMb: number
	rssBeforeMb: number
	rssAfterMb: number
	hwmMb: number
	failed: number
	problems: string[]
}

const mb = (b: number) => Math.round(b / 104857.6) / 10
const r1 = (x: number) => Math.round(x * 10) / 10
const r3 = (x: number) => Math.round(x * 1000) / 1000

/** Combines the rounds of each scenario × target. */
export function summarize(ms: Measurement[]): Row[] {
	const groups = new Map<string, Measurement[]>()
	for (const m of ms) {
		const k = `${m.scenario}\u0000${m.target}`
		groups.set(k, [...(groups.get(k) ?? []), m])
	}
	return [...groups.values()].map((g) => {
		const med = (f: (m: Measurement) => number) => median(g.map(f))
		const per = (f: (m: Measurement) => number | undefined) => (m: Measurement) => (f(m) ?? 0) / Math.max(1, m.load.completed)
		const db = g[0].db_cpu_us !== undefined ? r1(med(per((m) => m.db_cpu_us))) : undefined
		const gc = g.every((m) => m.gc) ? { allocKb: r1(med(per((m) => m.gc!.alloc_bytes / 1024))), gcUs: r1(med(per((m) => m.gc!.gc_ms * 1000))) } : {}
		return {
			scenario: g[0].scenario,
			target: g[0].target,
			rps: r1(med((m) => m.load.rps)),
			p50: r3(med((m) => m.load.latency.p50)),
			p99: r3(med((m) => m.load.latency.p99)),
			ttfb50: r3(med((m) => (m.load.ttfb ?? m.load.latency).p50)),
			ttfb99: r3(med((m) => (m.load.ttfb ?? m.load.latency).p99)),
			cpu: r1(med(per((m) => m.target_usage.cpuUs))),
			mainCpu: r1(med(per((m) => m.target_usage.mainUs))),
			mockCpu: r1(med(per((m) => m.mock_usage.cpuUs))),
			dbCpu: db,
			...gc,
			peakRssMb: mb(Math.max(...g.map((m) => m.target_usage.peakRss))),
			rssBeforeMb: mb(med((m) => m.target_usage.rssBefore)),
			rssAfterMb: mb(med((m) => m.target_usage.rssAfter)),
			hwmMb: mb(Math.max(...g.map((m) => m.target_usage.hwm))),
			failed: g.reduce((a, m) => a + m.load.failed, 0),
			problems: g.flatMap((m) => m.problems.map((p) => `round ${m.round}: ${p}`)),
		}
	})
}

// Latencies keep three decimals below 10 ms (the added-latency targets are fractions of a millisecond).
const fmt = (x: number) => (Math.abs(x) >= 1000 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : String(x))
const pad = (s: string | number, n: number) => ` ${typeof s === 'number' ? fmt(s) : s}`.padStart(n)
const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}×` : '-')
const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(3)}`

/** The table and the ratio lines, as text. */
export function formatTable(rows: Row[]): string {
	const out: string[] = []
	// The GC columns only when some target ran with the GC log (--gc-log); the table is unchanged otherwise.
	const gcCols = rows.some((r) => r.allocKb !== undefined)
	const gcHead = gcCols ? `${pad('alloc KB', 10)}${pad('gc µs', 8)}` : ''
	const gcCells = (r: Row) => (gcCols ? `${pad(r.allocKb?.toFixed(1) ?? '-', 10)}${pad(r.gcUs?.toFixed(1) ?? '-', 8)}` : '')
	const head = `${'target'.padEnd(12)}${pad('req/s', 9)}${pad('p50 ms', 9)}${pad('p99 ms', 9)}${pad('ttfb50', 9)}${pad('ttfb99', 9)}${pad('cpu µs/rq', 11)}${pad('main µs', 9)}${pad('mock µs', 9)}${pad('db µs', 7)}${gcHead}${pad('rss MB', 8)}${pad('fail', 6)}`
	for (const scenario of [...new Set(rows.map((r) => r.scenario))]) {
		const rs = rows.filter((r) => r.scenario === scenario)
		out.push('', `## ${scenario}`, head)
		for (const r of rs) {
			const db = r.dbCpu === undefined ? '-' : r.dbCpu
			out.push(
				`${r.target.padEnd(12)}${pad(r.rps, 9)}${pad(r.p50, 9)}${pad(r.p99, 9)}${pad(r.ttfb50, 9)}${pad(r.ttfb99, 9)}${pad(r.cpu, 11)}${pad(r.mainCpu, 9)}${pad(r.mockCpu, 9)}${pad(db, 7)}${gcCells(r)}${pad(r.peakRssMb, 8)}${pad(r.failed, 6)}`,
			)
		}
		const direct = rs.find((r) => r.target === 'direct')
		const bare = rs.find((r) => r.target === 'bare')
		for (const r of rs.filter((x) => x.target !== 'direct')) {
			const parts: string[] = []
			if (direct) parts.push(`req/s ${ratio(r.rps, direct.rps)} direct`, `added p50 ${signed(r.p50 - direct.p50)} p99 ${signed(r.p99 - direct.p99)} ttfb50 ${signed(r.ttfb50 - direct.ttfb50)} ms`)
			if (bare && r !== bare) parts.push(`req/s ${ratio(r.rps, bare.rps)} bare`, `cpu ${ratio(r.cpu, bare.cpu)} bare`)
			out.push(`  ${r.target}: ${parts.join(', ')}`)
		}
		if (rs.some((r) => r.target === 'sb-pglite' || r.target === 'sb-postgres')) {
			const after = rs.filter((r) => r.scenario.startsWith('streams-')).map((r) => `${r.target} rss ${r.rssBeforeMb} → peak ${r.peakRssMb} → ${r.rssAfterMb} MB 5 s after`)
			if (after.length) out.push(...after.map((a) => `  ${a}`))
			// The slow mock sends its role-only chunk at once and the content one pause later. The gateway holds a stream's
			// preamble until content comes (up to 1 s, so it can still fail over: src/relay/prefetch.ts), so its first byte
			// is the content's and its ttfb is not direct's; the time to the first token, what a user waits for, is.
			if (after.length) out.push("  (ttfb: the gateway's first byte is the first content, one --slow-chunk-ms after the role-only chunk it holds back)")
		}
		for (const r of rs) for (const p of r.problems) out.push(`  ! ${r.target} ${p}`)
	}
	return out.join('\n')
}

type Verdict = { target: string; value: string; ok: boolean | undefined }

/** The issue-7 targets, evaluated on whatever scenarios ran (one gateway at a time). */
export function verdicts(rows: Row[]): Verdict[] {
	const v: Verdict[] = []
	const get = (s: string, t: TargetName) => rows.find((r) => r.scenario === s && r.target === t)
	for (const gw of ['sb-postgres', 'sb-pglite'] as const) {
		for (const s of ['chat-json-c64', 'chat-sse-c64']) {
			const g = get(s, gw)
			const b = get(s, 'bare')
			if (!g || !b) continue
			v.push({ target: `${gw} ${s}: req/s ≥ 0.5× bare`, value: ratio(g.rps, b.rps), ok: g.rps >= 0.5 * b.rps })
			v.push({ target: `${gw} ${s}: cpu ≤ 2× bare`, value: `${g.cpu} vs ${b.cpu} µs (${ratio(g.cpu, b.cpu)})`, ok: g.cpu <= 2 * b.cpu })
		}
		for (const s of ['chat-json-c1', 'chat-sse-c1']) {
			const g = get(s, gw)
			const d = get(s, 'direct')
			if (!g || !d) continue
			// The bare proxy's own figure in the same run: on a shared 2-core machine the floor's tail moves too, and
			// a gateway tail no worse than the floor's is the machine's, not the gateway's.
			const b = get(s, 'bare')
			const floor = (k: 'p50' | 'p99' | 'ttfb50') => (b ? ` (bare proxy ${signed(b[k] - d[k])} ms)` : '')
			v.push({ target: `${gw} ${s}: added p50 ≤ 0.3 ms`, value: `${signed(g.p50 - d.p50)} ms${floor('p50')}`, ok: g.p50 - d.p50 <= 0.3 })
			v.push({ target: `${gw} ${s}: added p99 ≤ 1 ms`, value: `${signed(g.p99 - d.p99)} ms${floor('p99')}`, ok: g.p99 - d.p99 <= 1 })
			if (s.includes('sse')) v.push({ target: `${gw} ${s}: added ttfb p50 ≤ 0.3 ms`, value: `${signed(g.ttfb50 - d.ttfb50)} ms${floor('ttfb50')}`, ok: g.ttfb50 - d.ttfb50 <= 0.3 })
		}
		for (const c of ['c1', 'c16']) {
			const conv = get(`messages-sse-conv-${c}`, gw)
			const fast = get(`messages-sse-fast-${c}`, gw)
			if (conv && fast) v.push({ target: `${gw} messages ${c}: conversion cpu ≤ 1.5× fast path`, value: `${conv.cpu} vs ${fast.cpu} µs (${ratio(conv.cpu, fast.cpu)})`, ok: conv.cpu <= 1.5 * fast.cpu })
		}
		// Large bodies (not among the scenarios): the same CPU bar, and their peak memory shown on its own.
		const agent = (r: Row) => r.scenario.includes('-agent-')
		for (const g of rows.filter((r) => r.target === gw && agent(r))) {
			const b = get(g.scenario, 'bare')
			if (b) v.push({ target: `${gw} ${g.scenario}: cpu ≤ 2× bare`, value: `${g.cpu} vs ${b.cpu} µs (${ratio(g.cpu, b.cpu)})`, ok: g.cpu <= 2 * b.cpu })
			v.push({ target: `${gw} ${g.scenario}: peak RSS (no target)`, value: `${g.peakRssMb} MB`, ok: undefined })
		}
		const standard = rows.filter((r) => r.target === gw && !r.scenario.startsWith('streams-') && !agent(r))
		if (standard.length) {
			const peak = Math.max(...standard.map((r) => r.peakRssMb))
			v.push({ target: `${gw} peak RSS ≤ 120 MB (sampled, standard scenarios)`, value: `${peak} MB (VmHWM since start ${Math.max(...standard.map((r) => r.hwmMb))} MB)`, ok: peak <= 120 })
		}
		for (const r of rows.filter((x) => x.target === gw && x.scenario.startsWith('streams-'))) {
			v.push({ target: `${gw} ${r.scenario}: peak RSS ≤ 250 MB`, value: `${r.peakRssMb} MB`, ok: r.peakRssMb <= 250 })
			v.push({ target: `${gw} ${r.scenario}: back near idle after (≤ +20 MB)`, value: `${r.rssBeforeMb} → ${r.rssAfterMb} MB`, ok: r.rssAfterMb - r.rssBeforeMb <= 20 })
		}
	}
	for (const s of [...new Set(rows.map((r) => r.scenario))]) {
		const l = get(s, 'sb-pglite')
		const p = get(s, 'sb-postgres')
		if (l && p) v.push({ target: `${s}: PGlite req/s ≥ 0.5× PostgreSQL`, value: ratio(l.rps, p.rps), ok: l.rps >= 0.5 * p.rps })
	}
	return v
}

export const formatVerdicts = (v: Verdict[]): string =>
	['', '## issue 7 targets (this run; noisy on a shared machine)', ...v.map((x) => `${x.ok === undefined ? '  ?' : x.ok ? 'ok  ' : 'MISS'} ${x.target}: ${x.value}`)].join('\n')

/** Writes the JSON report to `<dir>/<timestamp>.json` and returns its path. */
export async function writeReport(dir: string, report: Record<string, unknown>): Promise<string> {
	mkdirSync(dir, { recursive: true })
	const path = join(dir, `${new Date().toISOString().replaceAll(':', '-').replace(/\..+$/, '')}.json`)
	await Bun.write(path, `${JSON.stringify(report, null, 2)}\n`)
	return path
}
