/**
 * A burst: N slow streams (the memory scenario's upstream, content every --slow-chunk-ms) sent at once, each on a new
 * connection, in waves, through the gateway on PostgreSQL and then straight to the mock. Prints each wave's time to
 * the first byte (p10, p50, p90, max) and the gateway's CPU for the wave (process tree and main thread). The
 * gateway's first byte is the first content (it holds the role-only chunk: src/relay/prefetch.ts), direct's the
 * role-only chunk, sent one pause earlier: compare the gateway's with direct's plus that pause.
 *
 *   bun bench/burst.ts [--streams 1000] [--waves 3] [--postgres-url URL]
 * @module
 */
import { parseArgs } from 'node:util'
import { MODELS, startRig } from './gateway'
import { encodeRequest, openConn } from './http-client'
import { cpuMicros, mainThreadMicros, processTree } from './procs'

const { values } = parseArgs({
	args: Bun.argv.slice(2),
	options: { streams: { type: 'string' }, waves: { type: 'string' }, 'postgres-url': { type: 'string' } },
})
const n = Number(values.streams ?? 1000)
const waves = Number(values.waves ?? 3)
const rig = await startRig('postgres', values['postgres-url'] ?? 'postgres://postgres@127.0.0.1:5432/postgres')
const body = JSON.stringify({ model: MODELS.slow, stream: true, messages: [{ role: 'user', content: 'Say hello' }] })

async function wave(label: string, port: number, headers: Record<string, string>, model: string) {
	const conns = await Promise.all(Array.from({ length: n }, () => openConn(port)))
	const request = encodeRequest(port, '/v1/chat/completions', headers, body.replace(MODELS.slow, model))
	const pids = processTree(rig.gw.child.pid)
	const [cpu0, main0] = [cpuMicros(pids), mainThreadMicros(rig.gw.child.pid)]
	const start = performance.now()
	const done = await Promise.all(conns.map((c) => c.send(request, start)))
	const [cpu1, main1] = [cpuMicros(pids), mainThreadMicros(rig.gw.child.pid)]
	for (const c of conns) c.close('done')
	const ttfb = done.map((e) => e.ttfbMs).sort((a, b) => a - b)
	const at = (q: number) => ttfb[Math.floor(q * (n - 1))]!.toFixed(1)
	const failed = done.filter((e) => e.status !== 200 || e.error).length
	console.log(`${label.padEnd(10)} first byte p10 ${at(0.1)} p50 ${at(0.5)} p90 ${at(0.9)} max ${at(1)} ms  failed ${failed}  gateway cpu ${((cpu1 - cpu0) / 1000).toFixed(0)} ms (main ${((main1 - main0) / 1000).toFixed(0)})`)
}

try {
	const json = { 'content-type': 'application/json' }
	for (let i = 1; i <= waves; i++) await wave(`gateway ${i}`, rig.gw.port, { ...json, authorization: `Bearer ${rig.gw.key}` }, MODELS.slow)
	// The slow mock answers any model name; the gateway renames bench-slow to one it knows.
	await wave('direct', rig.ports.slow, { ...json, authorization: 'Bearer bench-upstream-key' }, 'gpt-4o-mini')
} finally {
	await rig.stop()
}
