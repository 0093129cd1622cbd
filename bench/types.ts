/**
 * Types shared by the benchmark orchestrator (run.ts), its load generator process (loadgen.ts) and the report.
 * @module
 */

/**
 * What a good response looks like; checked on every response by both generators. `chat-sse-plain`: a chat stream
 * whose client did not ask for usage (the SDKs' default), so it must carry none.
 */
export type Expect = 'chat-json' | 'chat-sse' | 'chat-sse-plain' | 'messages-json' | 'messages-sse'

/** One HTTP request, prepared once and sent many times. */
export type RequestSpec = {
	port: number
	path: string
	headers: Record<string, string>
	body: string
	expect: Expect
}

/**
 * A load to apply. `closed`: `concurrency` connections each send the next request when the previous one ends.
 * `open`: requests are scheduled at `rate` per second whatever happens, latency counted from the scheduled time;
 * `concurrency` caps the connections (a request that finds none free counts as dropped).
 */
export type LoadSpec = {
	request: RequestSpec
	mode: 'closed' | 'open'
	concurrency: number
	rate?: number
	durationMs: number
	/** Stop after this many requests (the memory scenario sends exactly one per connection). */
	maxRequests?: number
	/** A request still unanswered after this is a failure (the run always ends). */
	timeoutMs: number
}

/** Latency percentiles, milliseconds. */
export type Percentiles = { n: number; p50: number; p90: number; p99: number; max: number; mean: number }

export type LoadResult = {
	tool: 'wrk' | 'loadgen'
	/** Requests written to the wire (they reached the target). */
	sent: number
	/** Responses that passed the checks. */
	completed: number
	failed: number
	/** Failure kind → count, plus up to a few samples in `samples`. */
	failures: Record<string, number>
	samples: string[]
	elapsedMs: number
	rps: number
	latency: Percentiles
	/** Time to the first body byte (streams: the first chunk); equal to latency for wrk. */
	ttfb?: Percentiles
	/** Open loop: requests that found no free connection. */
	dropped?: number
}

export type TargetName = 'direct' | 'bare' | 'sb-pglite' | 'sb-postgres'

/** CPU and memory of a process tree over one measurement. */
export type ProcUsage = {
	cpuUs: number
	/** Of `cpuUs`, the main process's main thread (JavaScript in Bun); 0 when not measured. */
	mainUs: number
	/** Highest VmRSS sampled during the measurement, bytes. */
	peakRss: number
	rssBefore: number
	rssAfter: number
	/** VmHWM of the main process at the end (peak since start), bytes. */
	hwm: number
}

/** The target's JavaScript heap over one measurement, from JavaScriptCore's GC log (`--gc-log`). */
export type GcUsage = {
	/** Bytes allocated, counted at the collections that started during the measurement. */
	alloc_bytes: number
	/** Cycle time of the collections that ended during the measurement, ms. */
	gc_ms: number
	cycles: number
}

export type Measurement = {
	scenario: string
	target: TargetName
	round: number
	load: LoadResult
	target_usage: ProcUsage
	mock_usage: ProcUsage
	/** PostgreSQL backends serving the gateway's database (sb-postgres only). */
	db_cpu_us?: number
	/** With `--gc-log`, targets that run it (the bare proxy and the gateways). */
	gc?: GcUsage
	/** POST requests the mock received during the measurement. */
	mock_seen: number
	/** Gateways: micro-USD settled on the key and usage rows written (PostgreSQL) during the measurement. */
	billed?: { spent: number; usage_rows?: number; expected_each: number }
	/** Human-readable problems: failed responses, count mismatches. Empty when all checks passed. */
	problems: string[]
	loadavg: string
}
