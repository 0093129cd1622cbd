/**
 * Closed-loop non-stream load with Debian's `wrk` (github.com/wg/wrk): C, epoll, a fraction of the CPU any
 * JavaScript client needs. The Lua script (wrk/post.lua) sends the POST body and checks every response.
 * @module
 */
import { join } from 'node:path'
import { USAGE_MARKER } from './checks'
import type { LoadResult, LoadSpec } from './types'

type WrkOut = {
	requests: number
	duration_us: number
	connect: number
	read: number
	write: number
	status: number
	timeout: number
	bad_status: number
	bad_body: number
	p50: number
	p90: number
	p99: number
	max: number
	mean: number
	samples: string[]
}

/**
 * The path of wrk, installing Debian's package when it is missing and we may (root with apt-get); undefined when
 * it cannot be had (the caller falls back to the own generator).
 */
export function findWrk(): string | undefined {
	const found = Bun.which('wrk')
	if (found) return found
	if (process.getuid?.() !== 0 || !Bun.which('apt-get')) return undefined
	console.log('wrk not found: apt-get install -y wrk')
	const r = Bun.spawnSync(['apt-get', 'install', '-y', '--no-install-recommends', 'wrk'], { stdout: 'inherit', stderr: 'inherit' })
	if (r.exitCode !== 0) Bun.spawnSync(['sh', '-c', 'apt-get update && apt-get install -y --no-install-recommends wrk'], { stdout: 'inherit', stderr: 'inherit' })
	return Bun.which('wrk') ?? undefined
}

const ms = (us: number) => Math.round(us) / 1000

/** Runs wrk for `spec` (closed loop, whole seconds) and converts its report. */
export async function runWrk(wrk: string, spec: LoadSpec): Promise<LoadResult> {
	const r = spec.request
	const seconds = Math.max(1, Math.round(spec.durationMs / 1000))
	const threads = Math.min(2, spec.concurrency)
	const script = join(import.meta.dir, 'wrk', 'post.lua')
	const timeout = `${Math.ceil(spec.timeoutMs / 1000)}s`
	const url = `http://127.0.0.1:${r.port}${r.path}`
	const proc = Bun.spawn([wrk, '-t', String(threads), '-c', String(spec.concurrency), '-d', `${seconds}s`, '--timeout', timeout, '-s', script, url], {
		env: { ...process.env, BENCH_BODY: r.body, BENCH_HEADERS: JSON.stringify(r.headers), BENCH_MARKER: USAGE_MARKER[r.expect] },
		stdout: 'pipe',
		stderr: 'pipe',
	})
	const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
	await proc.exited
	const line = out.split('\n').find((l) => l.startsWith('{"requests"'))
	if (!line) throw new Error(`wrk gave no report (exit ${proc.exitCode}): ${err || out}`)
	const w = JSON.parse(line) as WrkOut
	const failures: Record<string, number> = {}
	const add = (k: string, n: number) => {
		if (n > 0) failures[k] = n
	}
	add('status', w.bad_status)
	add('no usage', w.bad_body)
	add('connect', w.connect)
	add('read', w.read)
	add('write', w.write)
	add('timeout', w.timeout)
	const completed = w.requests - w.bad_status - w.bad_body
	const elapsedMs = w.duration_us / 1000
	return {
		tool: 'wrk',
		sent: w.requests,
		completed,
		failed: w.bad_status + w.bad_body + w.connect + w.read + w.write + w.timeout,
		failures,
		samples: w.samples,
		elapsedMs: Math.round(elapsedMs),
		rps: Math.round((completed / elapsedMs) * 10000) / 10,
		latency: { n: completed, p50: ms(w.p50), p90: ms(w.p90), p99: ms(w.p99), max: ms(w.max), mean: ms(w.mean) },
	}
}
