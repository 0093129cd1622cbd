/**
 * Child processes of the benchmark (mock, bare proxy, gateway, load generators) and their CPU and memory,
 * read from /proc: utime+stime of every process in the tree plus cutime+cstime of exited children
 * (proc(5)), and VmRSS / VmHWM from /proc/<pid>/status.
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs'
import type { Subprocess } from 'bun'
import { type GcTotals, feedGcLine, gcTotals, isGcLogLine, newGcLog } from './gc-log'

/** Clock ticks per second of /proc/<pid>/stat times (`getconf CLK_TCK`; 100 on Linux). */
const CLK_TCK = Number(Bun.spawnSync(['getconf', 'CLK_TCK']).stdout.toString().trim()) || 100

/** A child whose stdout and stderr are drained line by line (a full pipe would block it). */
export type Child = {
	proc: Subprocess<'pipe', 'pipe', 'pipe'>
	pid: number
	/** Last lines of stdout+stderr, for error messages. */
	tail(): string
	/** Resolves with the first stdout line that parses as a JSON object (how our children announce their ports). */
	firstJson<T>(timeoutMs: number): Promise<T>
	/** Resolves with the first line matching `test`. */
	waitLine(test: (line: string) => boolean, timeoutMs: number): Promise<string>
	stop(): Promise<void>
	/** With `gcLog`: JavaScriptCore's GC log so far, as running totals (bench/gc-log.ts). */
	gc?: () => GcTotals
}

/**
 * Starts a child process in the repository root with extra environment variables. `gcLog` sets `BUN_JSC_logGC=1`
 * (a bun child then logs every collection on stderr) and sums that log.
 */
export function spawnChild(name: string, cmd: string[], env: Record<string, string>, cwd: string, opts: { gcLog?: boolean } = {}): Child {
	const gcLog = opts.gcLog ? newGcLog() : undefined
	const proc = Bun.spawn(cmd, { cwd, env: { ...process.env, ...env, ...(gcLog ? { BUN_JSC_logGC: '1' } : {}) }, stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' })
	const lines: string[] = []
	const watchers = new Set<(line: string) => void>()
	const pump = async (stream: ReadableStream<Uint8Array>) => {
		let rest = ''
		const decoder = new TextDecoder()
		const reader = stream.getReader()
		for (;;) {
			const { done, value } = await reader.read()
			if (done) return
			rest += decoder.decode(value, { stream: true })
			let at = rest.indexOf('\n')
			while (at >= 0) {
				const line = rest.slice(0, at)
				rest = rest.slice(at + 1)
				// GC lines (several a second under load) stay out of the tail, which is there for error output.
				if (gcLog && isGcLogLine(line)) feedGcLine(gcLog, line)
				else {
					lines.push(line)
					if (lines.length > 50) lines.shift()
					for (const w of watchers) w(line)
				}
				at = rest.indexOf('\n')
			}
		}
	}
	void pump(proc.stdout)
	void pump(proc.stderr)
	const tail = () => `${name}: ${lines.join('\n')}`
	const waitLine = (test: (line: string) => boolean, timeoutMs: number) =>
		new Promise<string>((resolve, reject) => {
			const timer = setTimeout(() => done(new Error(`${name}: no expected output within ${timeoutMs} ms\n${tail()}`)), timeoutMs)
			// A child that dies before printing the line fails the wait at once (later calls of `done` are no-ops).
			void proc.exited.then((code) => done(new Error(`${name} exited with ${code}\n${tail()}`)))
			const watch = (line: string) => test(line) && done(undefined, line)
			function done(err?: Error, line?: string) {
				clearTimeout(timer)
				watchers.delete(watch)
				if (err) reject(err)
				else resolve(line ?? '')
			}
			for (const l of lines) if (test(l)) return done(undefined, l)
			watchers.add(watch)
		})
	return {
		proc,
		pid: proc.pid,
		tail,
		waitLine,
		gc: gcLog && (() => gcTotals(gcLog)),
		async firstJson<T>(timeoutMs: number) {
			const line = await waitLine((l) => l.startsWith('{') && l.endsWith('}'), timeoutMs)
			return JSON.parse(line) as T
		},
		async stop() {
			if (proc.exitCode !== null || proc.signalCode !== null) return
			proc.kill('SIGTERM')
			const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(10_000).then(() => false)])
			if (!exited) proc.kill('SIGKILL')
			await proc.exited
		},
	}
}

const statOf = (pid: number, thread?: number): string[] | undefined => {
	try {
		const s = readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, 'utf8')
		// The command name (field 2) may contain spaces; fields after it are split from the last ')'.
		return s.slice(s.lastIndexOf(')') + 2).split(' ')
	} catch {
		return undefined
	}
}

/** Every live descendant of `root`, root included. */
export function processTree(root: number): number[] {
	const parent = new Map<number, number>()
	for (const d of readdirSync('/proc')) {
		const pid = Number(d)
		if (!Number.isInteger(pid)) continue
		const f = statOf(pid)
		if (f) parent.set(pid, Number(f[1]))
	}
	const tree = [root]
	for (let i = 0; i < tree.length; i++) for (const [pid, ppid] of parent) if (ppid === tree[i]) tree.push(pid)
	return tree
}

/**
 * CPU time in microseconds used so far by these processes (all their threads) and their reaped children.
 * Fields after the name: [11] utime, [12] stime, [13] cutime, [14] cstime (proc(5), 0-based from `state`).
 */
export function cpuMicros(pids: number[]): number {
	let ticks = 0
	for (const pid of pids) {
		const f = statOf(pid)
		if (f) ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])
	}
	return (ticks * 1e6) / CLK_TCK
}

/**
 * CPU time in microseconds of one process's main thread alone (/proc/<pid>/task/<pid>/stat): in Bun, the thread
 * that runs JavaScript. The rest of the tree's figure is the runtime's helpers (HTTP client, JIT, collector).
 */
export function mainThreadMicros(pid: number): number {
	const f = statOf(pid, pid)
	return f ? ((Number(f[11]) + Number(f[12])) * 1e6) / CLK_TCK : 0
}

/** Sum of one /proc/<pid>/status field (kB) over processes, in bytes. */
export function statusBytes(pids: number[], field: 'VmRSS' | 'VmHWM'): number {
	let kb = 0
	for (const pid of pids) {
		try {
			const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'))
			if (m) kb += Number(m[1])
		} catch {
			// The process is gone; it uses no memory.
		}
	}
	return kb * 1024
}

/** The 1-, 5- and 15-minute load averages, to show how busy the machine was. */
export const loadavg = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
