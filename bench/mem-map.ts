/**
 * Where the gateway's memory is, mapping by mapping: a gateway and the bench mock (as `perf-profile.ts` starts them),
 * the scenarios' load one after another, and the process's resident memory read from `/proc/<pid>/smaps` each second:
 * the largest mappings at idle, at each scenario's peak and five seconds after. JavaScriptCore's heaps (the main
 * thread's and PGlite's thread's) and PGlite's WebAssembly memory are anonymous mappings, the executable's pages
 * are named; which of them grows tells which part to look at (bench/README, eighteenth VM).
 *
 *   bun bench/mem-map.ts [-s chat-json-c64,chat-sse-c16] [--db pglite|postgres] [--duration 12]
 *
 * @module
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { startRig } from './gateway'
import { runLoadgen } from './measure'
import { type Options, parseOptions } from './options'
import { loadFor, requestFor, selectScenarios } from './scenarios'
import { findWrk, runWrk } from './wrk'

/** Resident kB per mapping, each named by its file (or `[anon]`), size and start address. */
export function smaps(text: string): Map<string, number> {
	const out = new Map<string, number>()
	let label = ''
	for (const line of text.split('\n')) {
		const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line)
		if (head) {
			const mb = (parseInt(head[2]!, 16) - parseInt(head[1]!, 16)) / 2 ** 20
			label = `${head[3] || '[anon]'} ${mb >= 1024 ? `${(mb / 1024).toFixed(0)}G` : `${mb.toFixed(0)}M`}@${head[1]!.slice(0, 7)}`
			continue
		}
		const rss = /^Rss:\s+(\d+) kB/.exec(line)
		if (rss) out.set(label, (out.get(label) ?? 0) + Number(rss[1]))
	}
	return out
}

const totalMb = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0) / 1024
const top = (m: Map<string, number>, n: number) =>
	[...m]
		.sort((a, b) => b[1] - a[1])
		.slice(0, n)
		.map(([k, v]) => `${(v / 1024).toFixed(1).padStart(8)} MB  ${k}`)
		.join('\n')

if (import.meta.main) {
	const { values } = parseArgs({ args: Bun.argv.slice(2), options: { s: { type: 'string' }, db: { type: 'string' }, duration: { type: 'string' } } })
	const opts = parseOptions(['-s', values.s ?? 'chat-json-c64', '--db', values.db ?? 'pglite', '--duration', values.duration ?? '12']) as Options
	const scenarios = selectScenarios(opts).filter((s) => !s.memory)
	const kind = opts.databases[0]!
	const rig = await startRig(kind, opts.postgresUrl)
	try {
		const { gw, ports } = rig
		const read = () => smaps(readFileSync(`/proc/${gw.child.pid}/smaps`, 'utf8'))
		await Bun.sleep(2000)
		const idle = read()
		console.log(`${kind} gateway idle: ${totalMb(idle).toFixed(1)} MB\n${top(idle, 8)}`)
		for (const scenario of scenarios) {
			const name = `sb-${kind}` as const
			const request = requestFor(scenario, name, { direct: ports, bare: ports, gateways: { [name]: gw.port } }, { upstream: 'bench-upstream-key', gateway: gw.key })
			const spec = { ...loadFor(scenario, request, opts, false), durationMs: opts.durationMs }
			const wrk = !scenario.stream && scenario.mode === 'closed' ? findWrk() : undefined
			let done = false
			const load = (wrk ? runWrk(wrk, spec) : runLoadgen(spec)).finally(() => (done = true))
			let peak = idle
			const series: string[] = []
			while (!done) {
				await Bun.sleep(1000)
				const now = read()
				series.push(totalMb(now).toFixed(0))
				if (totalMb(now) > totalMb(peak)) peak = now
			}
			const r = await load
			console.log(`\n${scenario.name}: ${r.completed} requests, ${r.rps} req/s, ${r.failed} failed; MB each second: ${series.join(' ')}`)
			console.log(`peak ${totalMb(peak).toFixed(1)} MB\n${top(peak, 4)}`)
			await Bun.sleep(5000)
			const after = read()
			console.log(`5 s after ${totalMb(after).toFixed(1)} MB\n${top(after, 4)}`)
		}
	} finally {
		await rig.stop()
	}
}
