/**
 * JavaScriptCore's JIT code, named for `perf`: with `BUN_JSC_useJITDump=1` Bun writes every piece of machine code it
 * generates to a jitdump file (`/tmp/jit-<pid>-<tid>-<random>`, the format of the Linux kernel's
 * tools/perf/Documentation/jitdump-specification.txt), and `perf report` names addresses from `/tmp/perf-<pid>.map`
 * ("START SIZE name" per line, hexadecimal). This turns the one into the other.
 * @module
 */

export type CodeLoad = { start: bigint; size: bigint; name: string }

const MAGIC = 0x4a695444 // 'JiTD', written in the producer's byte order
const JIT_CODE_LOAD = 0

/**
 * The code loads of a jitdump, in file order. A record is { id u32, total_size u32, timestamp u64 } and, for a code
 * load, { pid u32, tid u32, vma u64, code_addr u64, code_size u64, code_index u64, name\0, code }.
 */
export function parseJitdump(buf: Uint8Array): CodeLoad[] {
	const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
	if (buf.length < 40 || dv.getUint32(0, true) !== MAGIC) throw new Error('not a little-endian jitdump file')
	const loads: CodeLoad[] = []
	const text = new TextDecoder()
	let off = dv.getUint32(8, true)
	while (off + 16 <= buf.length) {
		const id = dv.getUint32(off, true)
		const size = dv.getUint32(off + 4, true)
		// The last record may be cut short while the process still writes.
		if (size < 16 || off + size > buf.length) break
		if (id === JIT_CODE_LOAD) {
			const start = dv.getBigUint64(off + 32, true)
			const codeSize = dv.getBigUint64(off + 40, true)
			const nameAt = off + 56
			const end = buf.indexOf(0, nameAt)
			loads.push({ start, size: codeSize, name: text.decode(buf.subarray(nameAt, end === -1 ? off + size : end)) })
		}
		off += size
	}
	return loads
}

/**
 * The perf map of what is loaded at the end: JavaScriptCore reuses the memory of code it throws away, so a later load
 * over an address replaces every earlier one there (without this, a hot function is charged to whatever ran at its
 * address during start-up).
 */
export function perfMap(loads: CodeLoad[]): string {
	const kept: CodeLoad[] = []
	for (let i = loads.length - 1; i >= 0; i--) {
		const l = loads[i]!
		if (!kept.some((k) => l.start < k.start + k.size && k.start < l.start + l.size)) kept.push(l)
	}
	kept.sort((a, b) => (a.start < b.start ? -1 : 1))
	return kept.map((l) => `${l.start.toString(16)} ${l.size.toString(16)} ${l.name}\n`).join('')
}
