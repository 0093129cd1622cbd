/**
 * What one request allocates, by JavaScriptCore cell type (`bun bench/alloc-types.ts`): closures, promises, strings,
 * async frames… per request of a bench scenario, to see which kinds of object a change adds or removes. `--gc-log`
 * gives the bytes; this gives the kinds, which the bytes alone do not.
 *
 * How: the gateway runs in this process (its own services and app, embedded PGlite in its thread, or DATABASE_URL),
 * the bench's mock upstream in another. After warm-up, a full collection, then `--requests` requests one after
 * another through the route's handler (the hot route's for chat and messages, else `app.handle`; no sockets), then
 * `heapStats().objectTypeCounts` again: with no collection in between, every cell allocated meanwhile is still
 * counted, dead or alive. Five runs, medians. Keep `--requests`
 * small enough that no collection starts during a run (the runs' totals then agree; the tool says when they do not).
 * The in-process client adds a little: the Request it builds, and reading the body (consuming a streamed response in
 * the same process also makes two Error cells per stream that a socket client does not).
 *
 *   bun bench/alloc-types.ts [-s chat-sse-c1] [--requests 200] [--top 30]
 * @module
 */
import { heapStats } from 'bun:jsc'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { type MockPorts, gatewayConfig } from './gateway'
import { parseOptions } from './options'
import { spawnChild } from './procs'
import { allScenarios, requestFor } from './scenarios'

const { values } = parseArgs({
	args: Bun.argv.slice(2),
	options: { scenario: { type: 'string', short: 's' }, requests: { type: 'string' }, top: { type: 'string' } },
})
const scenario = allScenarios(parseOptions([]) as Exclude<ReturnType<typeof parseOptions>, 'help'>).find((s) => s.name === (values.scenario ?? 'chat-sse-c1'))
if (!scenario || scenario.memory || scenario.mode !== 'closed') {
	console.error('usage: bun bench/alloc-types.ts [-s SCENARIO] [--requests N] [--top N]  (a closed-loop scenario of `bun run bench --list`)')
	process.exit(2)
}
const requests = Number(values.requests ?? 200)
const top = Number(values.top ?? 30)
const RUNS = 5

const repo = join(import.meta.dir, '..')
const mock = spawnChild('mock', ['bun', 'bench/mock-server.ts'], { UPSTREAM_KEY: 'bench-upstream-key', MOCK_DELAY_MS: '0', SLOW_CHUNK_MS: '500' }, repo)
const dir = mkdtempSync(join(tmpdir(), 'sb-alloc-'))
try {
	const ports = await mock.firstJson<MockPorts>(30_000)
	await Bun.write(join(dir, 'gateway.json'), JSON.stringify(gatewayConfig(ports, 'bench-upstream-key')))
	const adminKey = `adm-${crypto.randomUUID()}`
	Object.assign(process.env, { GATEWAY_CONFIG: join(dir, 'gateway.json'), DATA_DIR: join(dir, 'data'), ADMIN_KEY: adminKey, LOG_LEVEL: 'error' })
	const { loadEnv } = await import('../src/config/env')
	const { createServices } = await import('../src/services')
	const { createApp } = await import('../src/app')
	const svc = await createServices(loadEnv())
	const app = createApp(svc)
	const admin = async <T>(path: string, body: unknown): Promise<T> => {
		const res = await app.handle(new Request(`http://localhost${path}`, { method: 'POST', headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }))
		if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`)
		return (await res.json()) as T
	}
	const account = await admin<{ id: number }>('/api/accounts', { name: 'alloc', balance: 1_000_000_000 })
	const token = await admin<{ key: string }>('/api/tokens', { account_id: account.id, name: 'alloc' })
	const spec = requestFor(scenario, 'sb-postgres', { direct: ports, bare: ports, gateways: { 'sb-postgres': 1 } }, { upstream: 'bench-upstream-key', gateway: token.key })
	// The served gateway answers the plain case of its two hottest routes from Bun's router (src/http/hot-route.ts), not
	// through Elysia's pipeline: the same handler here, so the counts are the served path's.
	const routes = (app.config.serve as { routes?: Record<string, { POST?: (r: Request) => Promise<Response> }> } | undefined)?.routes
	const hot = routes?.[spec.path]?.POST
	const handle = app.handle.bind(app)
	const serve = hot ?? handle
	// The hot route hands anything but the plain case to Elysia (through `app.handle`): counted, so that a request the
	// tool builds differently from a client's cannot measure that path unnoticed (it did, without its content-length).
	let handedOn = 0
	if (hot)
		app.handle = ((r: Request) => {
			handedOn++
			return handle(r)
		}) as typeof app.handle
	const one = async () => {
		// With its length, as every client sends it: a body without one goes to Elysia's pipeline, which measures it
		// as it arrives (src/http/request-guard.ts, `hasUnsizedBody`), and the counts would be that path's.
		const res = await serve(new Request(`http://localhost${spec.path}`, { method: 'POST', headers: { ...spec.headers, 'content-length': String(Buffer.byteLength(spec.body)) }, body: spec.body }))
		const text = await res.text()
		if (res.status !== 200) throw new Error(`${spec.path}: ${res.status} ${text.slice(0, 300)}`)
	}

	for (let i = 0; i < 3000; i++) await one()
	// The first one goes there by design: the key is not cached yet.
	handedOn = 0
	const counts = () => heapStats().objectTypeCounts as Record<string, number>
	const runs: Record<string, number>[] = []
	for (let r = 0; r < RUNS; r++) {
		// Settle the ledger's batch and anything else pending, then start from a collected heap.
		await svc.ledger.flush()
		Bun.gc(true)
		const before = counts()
		for (let i = 0; i < requests; i++) await one()
		const after = counts()
		const perRequest: Record<string, number> = {}
		for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) perRequest[k] = ((after[k] ?? 0) - (before[k] ?? 0)) / requests
		runs.push(perRequest)
	}
	if (handedOn > 0) throw new Error(`${handedOn} of ${RUNS * requests} measured requests left the hot route for Elysia's pipeline: the counts would not be the served path's`)
	const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
	const totals = runs.map((r) => Object.values(r).reduce((a, b) => a + b, 0))
	const types = Object.keys(runs[0]!).map((k) => ({ k, n: median(runs.map((r) => r[k] ?? 0)) })).sort((a, b) => b.n - a.n)
	console.log(`${scenario.name}: cells allocated per request (${requests} requests per run, medians of ${RUNS} runs)`)
	console.log(`total ${median(totals).toFixed(1)} (runs: ${totals.map((t) => t.toFixed(0)).join(' ')})`)
	if (Math.max(...totals) > 1.1 * Math.min(...totals)) console.log('! the runs disagree by more than 10%: a collection probably ran during one; try fewer --requests')
	for (const { k, n } of types.slice(0, top)) if (n >= 0.01) console.log(`${n.toFixed(2).padStart(9)}  ${k}`)
	await svc.close()
} finally {
	await mock.stop()
	rmSync(dir, { recursive: true, force: true })
}
process.exit(0)
