/**
 * Command-line options of `bun run bench` (see bench/README.md).
 * @module
 */
import { parseArgs } from 'node:util'

export type Options = {
	/** Substrings; a scenario runs when its name contains one of them (empty: all). */
	scenarios: string[]
	durationMs: number
	warmupMs: number
	/** Unmeasured load each target gets once after it starts, before the first round (see DEFAULT_PRIME_S). */
	primeMs: number
	rounds: number
	databases: ('pglite' | 'postgres')[]
	/** Open-loop rate, requests per second. */
	rate: number
	/** Concurrent slow streams in the memory scenario. */
	streams: number
	slowChunkMs: number
	mockDelayMs: number
	/** BUN_CONFIG_MAX_HTTP_REQUESTS for the proxy and gateways (Bun's fetch allows 256 at once by default); 0 keeps the default. */
	fetchLimit: number
	postgresUrl: string
	/** Use the own generator for non-stream scenarios too. */
	noWrk: boolean
	/** Directory for `bun --cpu-prof` profiles of the gateways (written when they stop). */
	cpuProf?: string
	/** Run the bare proxy and the gateways with JavaScriptCore's GC log on and report allocation and GC time per request. */
	gcLog: boolean
	out: string
	list: boolean
}

/**
 * Seconds of unmeasured load before each measurement. JavaScriptCore compiles a path that has just become hot for
 * several seconds: on a fresh gateway under streamed load its JIT thread used 20–27% of a core for the first 4–5 s,
 * ~0 after 6 s (bench/README, ninth VM). With one second, the first scenario to run a path (converted messages at
 * one connection, say) measured that compilation more than the path.
 */
export const DEFAULT_WARMUP_S = 3

/**
 * Seconds of the first scenario's load each target gets once, unmeasured, before the first round. A gateway just
 * started compiles for its first ~10 s of load whatever the path: the standard run's first scenario (non-streamed chat
 * at one connection) measured its p90 at 1.22 ms and p99 at 4.85 after the 3 s warm-up, and 0.45–0.52 and 2.2–2.7 ms
 * in the same load's next runs (bench/README, fortieth VM). The warm-up before each measurement stays: it covers the
 * path each scenario newly makes hot.
 */
export const DEFAULT_PRIME_S = 10

export const USAGE = `bun run bench [options]
  --scenario, -s LIST   comma-separated substrings of scenario names (default: all; --list shows them)
  --duration SECONDS    measured time per scenario and target (default 5)
  --warmup SECONDS      unmeasured load before each measurement (default 3: JIT compilation of a newly hot path)
  --prime SECONDS       unmeasured load of the first scenario each target gets once after it starts (default 10:
                        a process just started compiles for its first seconds whatever the path)
  --rounds N            rounds; the targets alternate within each round, figures are medians (default 1)
  --db pglite|postgres|both   database(s) of the gateway (default both)
  --postgres-url URL    server to create the bench database on (default postgres://postgres@127.0.0.1:5432/postgres)
  --rate N              open-loop requests per second (default 100)
  --streams N           concurrent slow streams in the memory scenario (default 1000)
  --slow-chunk-ms N     pause between chunks of the slow upstream (default 500; a stream lasts ~12 s)
  --mock-delay-ms N     upstream delay before every response's headers (default 0)
  --fetch-limit N       BUN_CONFIG_MAX_HTTP_REQUESTS of the bare proxy: simultaneous upstream fetches (default 4096,
                        what the gateways set for themselves; Bun's own default, 256, queues the memory scenario;
                        0 leaves it unset)
  --no-wrk              use the own generator for non-stream scenarios too
  --cpu-prof DIR        run the gateways under bun --cpu-prof, profiles written to DIR when they stop
  --gc-log              run the bare proxy and the gateways with BUN_JSC_logGC=1 and report the JavaScript heap's
                        allocation (alloc KB) and GC cycle time (gc µs) per request
  --out DIR             JSON report directory (default bench/results)
  --list                print the scenarios and exit`

const num = (v: string | undefined, fallback: number, name: string, min = 0): number => {
	if (v === undefined) return fallback
	const n = Number(v)
	if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number ≥ ${min}, got "${v}"`)
	return n
}

/** Parses argv (without the runtime and script). Throws with a message on bad input. */
export function parseOptions(argv: string[]): Options | 'help' {
	const { values } = parseArgs({
		args: argv,
		options: {
			scenario: { type: 'string', short: 's' },
			duration: { type: 'string' },
			warmup: { type: 'string' },
			prime: { type: 'string' },
			rounds: { type: 'string' },
			db: { type: 'string' },
			'postgres-url': { type: 'string' },
			rate: { type: 'string' },
			streams: { type: 'string' },
			'slow-chunk-ms': { type: 'string' },
			'mock-delay-ms': { type: 'string' },
			'fetch-limit': { type: 'string' },
			'no-wrk': { type: 'boolean' },
			'cpu-prof': { type: 'string' },
			'gc-log': { type: 'boolean' },
			out: { type: 'string' },
			list: { type: 'boolean' },
			help: { type: 'boolean', short: 'h' },
		},
		strict: true,
	})
	if (values.help) return 'help'
	const db = values.db ?? 'both'
	if (!['pglite', 'postgres', 'both'].includes(db)) throw new Error(`--db must be pglite, postgres or both, got "${db}"`)
	return {
		scenarios: (values.scenario ?? '')
			.split(',')
			.map((s) => s.trim())
			.filter(Boolean),
		durationMs: num(values.duration, 5, 'duration', 0.5) * 1000,
		warmupMs: num(values.warmup, DEFAULT_WARMUP_S, 'warmup') * 1000,
		primeMs: num(values.prime, DEFAULT_PRIME_S, 'prime') * 1000,
		rounds: Math.floor(num(values.rounds, 1, 'rounds', 1)),
		databases: db === 'both' ? ['pglite', 'postgres'] : [db as 'pglite' | 'postgres'],
		rate: num(values.rate, 100, 'rate', 1),
		streams: Math.floor(num(values.streams, 1000, 'streams', 1)),
		slowChunkMs: num(values['slow-chunk-ms'], 500, 'slow-chunk-ms', 1),
		mockDelayMs: num(values['mock-delay-ms'], 0, 'mock-delay-ms'),
		fetchLimit: Math.floor(num(values['fetch-limit'], 4096, 'fetch-limit')),
		postgresUrl: values['postgres-url'] ?? process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
		noWrk: values['no-wrk'] ?? false,
		cpuProf: values['cpu-prof'],
		gcLog: values['gc-log'] ?? false,
		out: values.out ?? 'bench/results',
		list: values.list ?? false,
	}
}
