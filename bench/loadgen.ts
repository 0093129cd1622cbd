/**
 * The load generator process, for streams and open loop (wrk covers closed-loop non-stream). Runs on its own so
 * that its CPU never mixes with the orchestrator's. Reads a LoadSpec (JSON) from the BENCH_LOAD environment
 * variable, prints one LoadResult (JSON) on stdout and exits.
 *
 * Closed loop: `concurrency` connections, each sends its next request when the last one ended.
 * Open loop: request i is due at start + i/rate; its latency counts from that scheduled time, so a slow target
 * cannot hide its queueing (no coordinated omission).
 * @module
 */
import { checkResponse } from './checks'
import { type Conn, type Exchange, encodeRequest, openConn } from './http-client'
import { percentiles } from './stats'
import type { LoadResult, LoadSpec } from './types'

const spec = JSON.parse(process.env.BENCH_LOAD ?? 'null') as LoadSpec | null
if (!spec) {
	console.error('loadgen: set BENCH_LOAD to a LoadSpec JSON (bench/types.ts); run through `bun run bench`')
	process.exit(2)
}

const req = spec.request
const bytes = encodeRequest(req.port, req.path, req.headers, req.body)
const latency: number[] = []
const ttfb: number[] = []
const failures: Record<string, number> = {}
const samples: string[] = []
let sent = 0
let completed = 0
let failed = 0
let dropped = 0

const fail = (kind: string, detail: string) => {
	failed++
	failures[kind] = (failures[kind] ?? 0) + 1
	if (samples.length < 5) samples.push(`${kind}: ${detail.slice(0, 300)}`)
}

const record = (x: Exchange) => {
	const problem = x.error ?? checkResponse(req.expect, x.status, x.body)
	if (problem) return fail(problem.startsWith('status') ? problem : problem.split(':')[0], `${problem} | ${x.body.slice(-200)}`)
	completed++
	latency.push(x.totalMs)
	ttfb.push(x.ttfbMs)
}

const conns: Conn[] = []
const tryOpen = async (): Promise<Conn | undefined> => {
	try {
		const c = await openConn(req.port)
		conns.push(c)
		return c
	} catch (e) {
		fail('connect', String(e))
		return undefined
	}
}

// Requests that outlive the timeout are cut, so every run ends by itself.
const watchdog = setInterval(() => {
	const now = performance.now()
	for (const c of conns) if (c.alive && c.busySince && now - c.busySince > spec.timeoutMs) c.close('timeout')
}, 250)

/** BENCH_LATENCY_LOG=FILE: every request's send time (ms since the epoch) and latency, for looking at when the slow ones happen. */
const timeline: number[] | undefined = process.env.BENCH_LATENCY_LOG ? [] : undefined
const exchange = async (c: Conn, startedAt: number) => {
	sent++
	const x = await c.send(bytes, startedAt)
	timeline?.push(performance.timeOrigin + startedAt, x.totalMs)
	record(x)
}

async function closedLoop(): Promise<number> {
	const cap = spec!.maxRequests ?? Number.POSITIVE_INFINITY
	// Connections are opened before the clock starts, as wrk does.
	const initial = (await Promise.all(Array.from({ length: spec!.concurrency }, tryOpen))).filter((c) => c !== undefined)
	const start = performance.now()
	const end = start + spec!.durationMs
	let issued = 0
	const worker = async (first: Conn) => {
		let c: Conn | undefined = first
		while (performance.now() < end && issued < cap) {
			if (!c?.alive) c = await tryOpen()
			if (!c) return
			issued++
			await exchange(c, performance.now())
		}
	}
	await Promise.all(initial.map(worker))
	return start
}

async function openLoop(): Promise<number> {
	const rate = spec!.rate ?? 100
	const idle: Conn[] = []
	const prewarm = await Promise.all(Array.from({ length: Math.min(spec!.concurrency, 16) }, tryOpen))
	for (const c of prewarm) if (c) idle.push(c)
	let open = idle.length
	const inflight = new Set<Promise<void>>()
	const start = performance.now()
	const total = Math.min(Math.floor((spec!.durationMs / 1000) * rate), spec!.maxRequests ?? Number.POSITIVE_INFINITY)
	const run = async (scheduled: number) => {
		let c = idle.pop()
		while (c && !c.alive) {
			open--
			c = idle.pop()
		}
		if (!c) {
			if (open >= spec!.concurrency) {
				dropped++
				return fail('dropped', 'no free connection (target too slow for this rate)')
			}
			open++
			c = await tryOpen()
			if (!c) return void open--
		}
		await exchange(c, scheduled)
		if (c.alive) idle.push(c)
		else open--
	}
	for (let i = 0; i < total; ) {
		const now = performance.now()
		for (; i < total && start + (i * 1000) / rate <= now; i++) {
			const p = run(start + (i * 1000) / rate).finally(() => inflight.delete(p))
			inflight.add(p)
		}
		if (i < total) await Bun.sleep(Math.max(0, Math.min(5, start + (i * 1000) / rate - performance.now())))
	}
	await Promise.all(inflight)
	return start
}

// The clock starts once the first connections are open (as wrk's does).
const t0 = spec.mode === 'open' ? await openLoop() : await closedLoop()
const elapsedMs = performance.now() - t0
clearInterval(watchdog)
for (const c of conns) c.close('done')

const result: LoadResult = {
	tool: 'loadgen',
	sent,
	completed,
	failed,
	failures,
	samples,
	elapsedMs: Math.round(elapsedMs),
	rps: Math.round((completed / elapsedMs) * 1000 * 10) / 10,
	latency: percentiles(latency),
	ttfb: percentiles(ttfb),
	dropped: spec.mode === 'open' ? dropped : undefined,
}
if (timeline) await Bun.write(`${process.env.BENCH_LATENCY_LOG}.${process.pid}.json`, JSON.stringify(timeline))
console.log(JSON.stringify(result))
process.exit(0)
