/**
 * Summarises a `.cpuprofile` (Chrome DevTools format, written by `bun --cpu-prof`, e.g. through
 * `bun run bench --cpu-prof DIR`): the functions with the most self samples and the most total samples (self
 * plus callees), as file:line, so hot spots can be read without DevTools. Samples are counted, not their time
 * deltas: Bun takes none while the process idles, so the delta after an idle gap would charge seconds to
 * whatever ran next.
 *
 *   bun bench/cpu-profile.ts /tmp/prof/switchboard-postgres.cpuprofile [--top 30] [--filter src/]
 * @module
 */
import { parseArgs } from 'node:util'

type CallFrame = { functionName: string; url: string; lineNumber: number; columnNumber: number }
type ProfileNode = { id: number; callFrame: CallFrame; children?: number[] }
type Profile = { nodes: ProfileNode[]; samples: number[] }

const { values, positionals } = parseArgs({
	args: Bun.argv.slice(2),
	options: { top: { type: 'string' }, filter: { type: 'string' } },
	allowPositionals: true,
})
const file = positionals[0]
if (!file) {
	console.error('usage: bun bench/cpu-profile.ts FILE.cpuprofile [--top N] [--filter SUBSTRING_OF_URL]')
	process.exit(2)
}
const top = Number(values.top ?? 25)
const filter = values.filter
const root = `${process.cwd()}/`

const profile = (await Bun.file(file).json()) as Profile
const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const parent = new Map<number, number>()
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)

// Self samples per node.
const self = new Map<number, number>()
for (const id of profile.samples) self.set(id, (self.get(id) ?? 0) + 1)
const total = profile.samples.length

const keyOf = (f: CallFrame) => {
	const url = f.url.startsWith(root) ? f.url.slice(root.length) : f.url || '(native)'
	return `${f.functionName || '(anonymous)'}  ${url}:${f.lineNumber + 1}`
}

const selfByKey = new Map<string, number>()
const totalByKey = new Map<string, number>()
for (const [id, t] of self) {
	const k = keyOf(byId.get(id)!.callFrame)
	selfByKey.set(k, (selfByKey.get(k) ?? 0) + t)
	// Inclusive time: the sample counts once for every distinct function on its stack (recursion counted once).
	const seen = new Set<string>()
	for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
		const key = keyOf(byId.get(n)!.callFrame)
		if (seen.has(key)) continue
		seen.add(key)
		totalByKey.set(key, (totalByKey.get(key) ?? 0) + t)
	}
}

const show = (title: string, m: Map<string, number>) => {
	console.log(`\n${title}`)
	const rows = [...m].filter(([k]) => !filter || k.includes(filter)).sort((a, b) => b[1] - a[1])
	for (const [k, t] of rows.slice(0, top)) console.log(`${((t / total) * 100).toFixed(1).padStart(6)}%  ${String(t).padStart(7)}  ${k}`)
}

console.log(`${file}: ${total} samples`)
show('self samples', selfByKey)
show('total samples (self + callees)', totalByKey)
