/**
 * Where the gateway's CPU goes, on-CPU: Linux `perf` samples the gateway process while a bench scenario loads it,
 * with JavaScriptCore's JIT code named through its jitdump (bench/jitdump.ts). Each main-thread sample is charged to
 * the innermost JavaScript function on its stack and split by where the thread was: the kernel (socket calls),
 * Bun's native code (the runtime: fetch, streams, promises, the collector, the allocator, the interpreter) or JIT
 * code (our JavaScript and the libraries', compiled). `bun --cpu-prof` samples the JavaScript stack whether the
 * thread runs or waits, and names native frames only by the JavaScript function that called them; this counts
 * only time on the CPU, and shows how much of a function's cost is the runtime's work on its behalf.
 *
 *   bun bench/perf-profile.ts [-s chat-sse-c64] [--duration 10] [--db postgres|pglite] [--depth 1] [--top 30]
 *
 * Needs `perf` (Debian: `apt-get install linux-perf`) and permission to profile (root, or perf_event_paranoid ≤ 1).
 * @module
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { startRig } from './gateway'
import { parseJitdump, perfMap } from './jitdump'
import { runLoadgen } from './measure'
import { type Options, parseOptions } from './options'
import { loadFor, requestFor, selectScenarios } from './scenarios'
import { findWrk, runWrk } from './wrk'

export type Split = { n: number; kernel: number; native: number; jit: number; other: number }

const emptySplit = (): Split => ({ n: 0, kernel: 0, native: 0, jit: 0, other: 0 })

/** Where a sample's leaf frame was, from the object perf names for it. */
function leafKind(dso: string): Exclude<keyof Split, 'n'> {
	if (dso.includes('kernel')) return 'kernel'
	if (dso.includes('/tmp/perf-') || dso.includes('JIT')) return 'jit'
	if (/\bbun(\.exe)?\)?$/.test(dso.replace(/[()]/g, ''))) return 'native'
	return 'other'
}

/** A JavaScript function's name from a jitdump symbol ("JSC-FTL: fastStream#AZlheR"); undefined for stubs and thunks. */
export function jsFunction(sym: string): string | undefined {
	const m = /^JSC-(?:LLInt|Baseline|DFG|FTL|BBQ|OMG|Wasm\w*): ([^#]*)#/.exec(sym)
	if (!m) return undefined
	return m[1] || '(anonymous)'
}

/**
 * Aggregates `perf script -F comm,ip,sym,dso` output (with call chains): every thread's samples split by leaf kind,
 * and the main thread's (`main`, the process's command name) by its innermost `depth` JavaScript functions.
 */
export function aggregate(script: string, main: string, depth = 1): { threads: Map<string, Split>; functions: Map<string, Split>; total: number } {
	const threads = new Map<string, Split>()
	const functions = new Map<string, Split>()
	let total = 0
	for (const block of script.split(/\n\s*\n/)) {
		const lines = block.split('\n').filter((l) => l.trim() !== '')
		if (lines.length < 2) continue
		const comm = lines[0]!.trim()
		const frames = lines.slice(1).map((l) => {
			const m = /^\s*[0-9a-f]+\s+(.*?)\s+\(([^)]*)\)\s*$/.exec(l)
			return m ? { sym: m[1]!, dso: m[2]! } : { sym: '', dso: '' }
		})
		total++
		const kind = leafKind(frames[0]!.dso)
		const t = threads.get(comm) ?? emptySplit()
		t.n++
		t[kind]++
		threads.set(comm, t)
		if (comm !== main) continue
		const names: string[] = []
		for (const f of frames) {
			const name = jsFunction(f.sym)
			if (name !== undefined) names.push(name)
			if (names.length >= depth) break
		}
		const key = names.length ? names.join(' < ') : '(no JavaScript on the stack: event loop, I/O, collector)'
		const s = functions.get(key) ?? emptySplit()
		s.n++
		s[kind]++
		functions.set(key, s)
	}
	return { threads, functions, total }
}

const pct = (n: number, total: number) => `${((100 * n) / total).toFixed(1)}%`.padStart(6)
const row = (s: Split, total: number) => `${pct(s.n, total)}  kernel ${pct(s.kernel, total)}  native ${pct(s.native, total)}  jit ${pct(s.jit, total)}`

if (import.meta.main) {
	const { values } = parseArgs({
		args: Bun.argv.slice(2),
		options: { s: { type: 'string' }, duration: { type: 'string' }, db: { type: 'string' }, depth: { type: 'string' }, top: { type: 'string' } },
	})
	const perf = Bun.which('perf')
	if (!perf) {
		console.error('perf not found (Debian: apt-get install linux-perf)')
		process.exit(2)
	}
	const opts = parseOptions(['-s', values.s ?? 'chat-sse-c64', '--db', values.db ?? 'postgres', '--duration', values.duration ?? '10']) as Options
	const scenario = selectScenarios(opts).find((s) => !s.memory)
	if (!scenario) {
		console.error(`no scenario matches ${values.s} (bun run bench --list)`)
		process.exit(2)
	}
	const kind = opts.databases[0]!
	const rig = await startRig(kind, opts.postgresUrl, { BUN_JSC_useJITDump: '1', BUN_CONFIG_MAX_HTTP_REQUESTS: String(opts.fetchLimit) })
	try {
		const { gw, ports: mp } = rig
		const pid = gw.child.pid
		// The main thread's name is the executable's: `bun`, or `bun.exe` when Bun came from npm.
		const mainComm = (await Bun.file(`/proc/${pid}/comm`).text()).trim()
		const name = `sb-${kind}` as const
		const request = requestFor(scenario, name, { direct: mp, bare: mp, gateways: { [name]: gw.port } }, { upstream: 'bench-upstream-key', gateway: gw.key })
		const warmupMs = 2000
		const spec = { ...loadFor(scenario, request, opts, false), durationMs: warmupMs + opts.durationMs + 1000 }
		const wrk = !scenario.stream && scenario.mode === 'closed' ? findWrk() : undefined
		console.log(`${scenario.name} on ${kind}: ${warmupMs / 1000} s of warm-up, then perf samples the gateway (pid ${pid}) for ${opts.durationMs / 1000} s`)
		const load = wrk ? runWrk(wrk, spec) : runLoadgen(spec)
		await Bun.sleep(warmupMs)
		mkdirSync(join(import.meta.dir, 'results'), { recursive: true })
		const data = join(import.meta.dir, 'results', `perf-${pid}.data`)
		const rec = Bun.spawnSync([perf, 'record', '-e', 'cpu-clock', '-F', '999', '-g', '-p', String(pid), '-o', data, '--', 'sleep', String(opts.durationMs / 1000)], { stderr: 'pipe' })
		if (rec.exitCode !== 0) throw new Error(`perf record failed: ${rec.stderr.toString()}`)
		const result = await load
		console.log(`load: ${result.completed} requests, ${result.rps} req/s, ${result.failed} failed`)
		// jit-<thread that writes it>-<pid>-<random>. The launcher writes one too before it relaunches itself with its
		// runtime settings (src/lib/runtime-settings.ts: the same pid); the serving process's is the large one.
		const dumps = readdirSync('/tmp').filter((f) => f.startsWith('jit-') && f.split('-')[2] === String(pid))
		const dump = dumps.sort((a, b) => Bun.file(join('/tmp', b)).size - Bun.file(join('/tmp', a)).size)[0]
		const mapFile = `/tmp/perf-${pid}.map`
		if (dump) await Bun.write(mapFile, perfMap(parseJitdump(new Uint8Array(await Bun.file(join('/tmp', dump)).arrayBuffer()))))
		else console.log('no jitdump found: JIT frames stay unnamed')
		const script = Bun.spawnSync([perf, 'script', '-i', data, '-F', 'comm,ip,sym,dso'], { stdout: 'pipe', stderr: 'pipe', maxBuffer: 2 ** 31 }).stdout.toString()
		const { threads, functions, total } = aggregate(script, mainComm, Number(values.depth ?? 1))
		console.log(`\n${total} samples; by thread (leaf: kernel, Bun's native code, JIT code)`)
		for (const [comm, s] of [...threads].sort((a, b) => b[1].n - a[1].n)) console.log(`${row(s, total)}  ${comm}`)
		console.log('\nmain thread, by innermost JavaScript function')
		for (const [fn, s] of [...functions].sort((a, b) => b[1].n - a[1].n).slice(0, Number(values.top ?? 30))) console.log(`${row(s, total)}  ${fn}`)
		console.log(`\nperf data: ${data} (perf report -i ${data} --comm ${mainComm}; the map ${mapFile} names JIT code while it exists)`)
		for (const d of dumps) rmSync(join('/tmp', d), { force: true })
	} finally {
		await rig.stop()
	}
	process.exit(0)
}
