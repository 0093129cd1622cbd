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
 * - BUN_JSC_minEdenToOldGenerationRatio: JavaScriptCore collects the young generation every ~30 MB allocated, and
 *   what is live at that moment (the state of the requests in flight, ~20 KB each) moves to the old generation,
 *   which only a full collection empties. By default a full one runs when the old generation reaches 3× the young
 *   one's allowance (ratio 1/3), so under load the heap climbs to ~80 MB between them; at 0.6 it peaks near 46 MB
 *   (BUN_JSC_logGC=1, 64 streamed connections). Measured on PostgreSQL (bench/ab.ts, 5–8 alternations; chat at 64
 *   connections streamed and not, messages converted at 16): peak RSS 15–26 MB lower, CPU per request unchanged
 *   within the noise (±3 µs either way; at one connection, non-streamed, three A/Bs gave +12, +12 and −12 µs);
 *   0.75 measured the same, and at 1.0 the peak fell a little further but CPU rose by up to 7 µs.
 */
export const RUNTIME_DEFAULTS: Readonly<Record<string, string>> = {
	BUN_CONFIG_MAX_HTTP_REQUESTS: '4096',
	BUN_JSC_minEdenToOldGenerationRatio: '0.6',
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
