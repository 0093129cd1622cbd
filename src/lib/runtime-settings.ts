/**
 * Settings Bun reads only when the process starts (setting them later changes nothing), which a gateway needs other
 * than Bun's defaults. When one is missing from the environment, the server replaces its own process image with the
 * same command and the missing ones added (execve: same PID, same file descriptors, nothing started yet), before
 * anything else runs. An operator's own values are kept as they are.
 * @module
 */
import { dlopen, FFIType, type Pointer, ptr } from 'bun:ffi'

/**
 * What the server runs with unless the operator sets these:
 * - BUN_CONFIG_MAX_HTTP_REQUESTS: Bun's fetch runs at most 256 requests at once and queues the rest (it accepts up to
 *   65535). A gateway's upstream calls last as long as their streams, so the 257th concurrent stream would wait for
 *   another to end before it even reached the vendor.
 * - BUN_JSC_heapGrowthMaxIncrease and BUN_JSC_minEdenToOldGenerationRatio, together: after a full collection that
 *   left L live, JavaScriptCore lets the heap grow to (1 + increase) × L (Bun sets the increase to 2: a young
 *   generation of 2 L, ~28 MB here), collects the young generation each time that fills, and runs a full collection
 *   next once what is left of the allowance falls under `ratio` of the heap (its default, 1/3, lets the old
 *   generation grow to about twice L first). Under load what a young collection keeps is the state of the requests
 *   in flight (~20 KB each), so the heap's peak is about L + (what survives until a full collection) + the young
 *   allowance. At increase 1 and ratio 0.4 the allowance is L and a full collection comes once the survivors pass
 *   0.2 L: the heap peaks near 2.2 L instead of ~3.2 L (ratio 0.6, increase 2) or ~4 L (Bun's defaults). The ratio
 *   must stay under increase / (1 + increase), else every collection is a full one (increase 1 with the earlier 0.6:
 *   9–12% more CPU per request). Measured on PostgreSQL (bench/ab.ts, 4–5 alternations; chat at 64 connections
 *   streamed and not, messages at 16 converted and on the fast path): peak RSS 13–24 MB lower than at 0.6 alone;
 *   non-streamed CPU −3 to +4 µs, streamed +2 to +9 µs per request (3–12%) in five of six runs (−3.6 in the sixth: a
 *   streamed request allocates twice what a non-streamed one does, so it meets twice the young collections); increase
 *   0.75 with ratio 0.3 measured the same. A coding agent's 90 KB bodies cost 8–14% more CPU (their parsed bodies in
 *   flight survive the more frequent collections); increase 1.5 with ratio 0.5 costs ~1.5% (agent bodies ~2.5%) and
 *   saves about half the memory. The peak is one of the gateway's stated targets, missed by ~20 MB before this; the
 *   README says how to trade the memory back.
 */
export const RUNTIME_DEFAULTS: Readonly<Record<string, string>> = {
	BUN_CONFIG_MAX_HTTP_REQUESTS: '4096',
	BUN_JSC_heapGrowthMaxIncrease: '1',
	BUN_JSC_minEdenToOldGenerationRatio: '0.4',
}

/** The C library that has execve, by platform (tried in order). */
const LIBC: Record<string, string[]> = {
	linux: ['libc.so.6', 'libc.musl-x86_64.so.1', 'libc.musl-aarch64.so.1', 'libc.so'],
	darwin: ['libSystem.B.dylib'],
}

/** A NUL-terminated array of pointers to NUL-terminated strings, as execve takes argv and envp (kept alive by `keep`). */
function cStrings(list: string[], keep: unknown[]): BigUint64Array {
	const out = new BigUint64Array(list.length + 1)
	list.forEach((s, i) => {
		const b = Buffer.from(`${s}\0`, 'utf8')
		keep.push(b)
		out[i] = BigInt(ptr(b))
	})
	keep.push(out)
	return out
}

/** The defaults the environment lacks (empty: nothing to do). */
export function missingSettings(env: Record<string, string | undefined>): Record<string, string> {
	const missing: Record<string, string> = {}
	for (const [k, v] of Object.entries(RUNTIME_DEFAULTS)) if (!env[k]) missing[k] = v
	return missing
}

/**
 * Relaunches the process with the missing settings added. Returns only when it did not relaunch: nothing was
 * missing (undefined), or the platform has no execve (Windows) or the call failed (then the reason, to be logged).
 */
export function ensureRuntimeSettings(env: Record<string, string | undefined> = process.env): string | undefined {
	const missing = missingSettings(env)
	if (Object.keys(missing).length === 0) return undefined
	const names = LIBC[process.platform]
	const consequence = `Bun's defaults apply for ${Object.keys(missing).join(', ')}${'BUN_CONFIG_MAX_HTTP_REQUESTS' in missing ? ' (fetch runs at most 256 upstream requests at once)' : ''}`
	if (!names) return `no execve on ${process.platform}: ${consequence}`
	let execve: ((path: Pointer, argv: Pointer, envp: Pointer) => number) | undefined
	for (const name of names) {
		try {
			execve = dlopen(name, { execve: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 } }).symbols.execve
			break
		} catch {
			// the next name
		}
	}
	if (!execve) return `cannot load the C library to relaunch: ${consequence}`
	const keep: unknown[] = []
	const path = Buffer.from(`${process.execPath}\0`, 'utf8')
	const vars = Object.entries({ ...env, ...missing })
		.filter((e): e is [string, string] => e[1] !== undefined)
		.map(([k, v]) => `${k}=${v}`)
	// The command as it was run: `bun [runtime flags] file args…`, or a compiled binary and its args (its argv[1] is
	// the virtual path of its own bundle, not an argument it was given).
	const compiled = process.argv[1]?.startsWith('/$bunfs/') ?? false
	const command = compiled ? [process.execPath, ...process.argv.slice(2)] : [process.execPath, ...process.execArgv, ...process.argv.slice(1)]
	const argv = cStrings(command, keep)
	const envp = cStrings(vars, keep)
	execve(ptr(path), ptr(argv), ptr(envp))
	// execve returns only on failure.
	return `relaunching failed: ${consequence}`
}
