/**
 * Bun's fetch runs at most 256 requests at once and queues the rest (BUN_CONFIG_MAX_HTTP_REQUESTS, read once when
 * the process starts; setting it later changes nothing). A gateway's upstream calls last as long as their streams,
 * so the 257th concurrent stream would wait for another to end before it even reached the vendor. When the variable
 * is not set, the server therefore replaces its own process image with the same command and the variable added
 * (execve: same PID, same file descriptors, nothing started yet), before anything else runs. An operator's own value
 * is kept as it is.
 * @module
 */
import { dlopen, FFIType, type Pointer, ptr } from 'bun:ffi'

/** What the server runs with unless the operator sets BUN_CONFIG_MAX_HTTP_REQUESTS (Bun accepts up to 65535). */
export const DEFAULT_MAX_HTTP_REQUESTS = 4096

const VAR = 'BUN_CONFIG_MAX_HTTP_REQUESTS'

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

/**
 * Relaunches the process with BUN_CONFIG_MAX_HTTP_REQUESTS set when it is not. Returns only when it did not
 * relaunch: the variable was set already, the platform has no execve (Windows), or the call failed (then the reason).
 */
export function ensureFetchLimit(env: Record<string, string | undefined> = process.env): string | undefined {
	if (env[VAR]) return undefined
	const names = LIBC[process.platform]
	if (!names) return `no execve on ${process.platform}: fetch runs at most 256 upstream requests at once unless ${VAR} is set`
	let execve: ((path: Pointer, argv: Pointer, envp: Pointer) => number) | undefined
	for (const name of names) {
		try {
			execve = dlopen(name, { execve: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 } }).symbols.execve
			break
		} catch {
			// the next name
		}
	}
	if (!execve) return `cannot load the C library to relaunch with ${VAR} set`
	const keep: unknown[] = []
	const path = Buffer.from(`${process.execPath}\0`, 'utf8')
	const vars = Object.entries({ ...env, [VAR]: String(DEFAULT_MAX_HTTP_REQUESTS) })
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
	return `relaunching with ${VAR} set failed: fetch runs at most 256 upstream requests at once`
}
