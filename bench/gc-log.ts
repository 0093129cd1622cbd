/**
 * JavaScriptCore's GC log (`BUN_JSC_logGC=1`, on stderr) read as running totals: bytes the JavaScript heap allocated,
 * time spent in collection cycles, and the number of cycles. A collection prints `START <M|C> <N>kb` (heap size
 * when it starts) and, on the same or a later line, `=> <N>kb, p=… cycle <T>ms END]` (size after, cycle time);
 * what was allocated between two collections is the size at the next start minus the size after the previous one.
 * The totals only grow, so a measurement snapshots them before and after its load, like the CPU times.
 * @module
 */

export type GcTotals = {
	/** Bytes allocated by JavaScript, counted when the next collection starts. */
	allocatedBytes: number
	/** Sum of the cycle times of the collections that ended (concurrent marking included, not only pauses). */
	gcMs: number
	/** Collections that ended. */
	cycles: number
}

/** Running state of one process's log: totals so far and, per heap (a Worker has its own), its size after the last collection. */
export type GcLog = {
	allocatedBytes: number
	/** Nanoseconds, an integer, so sums are exact. */
	gcNs: number
	cycles: number
	/** Heap address → size after its last collection, kB (0 before the first: the heap started empty). */
	after: Map<string, number>
}

export const newGcLog = (): GcLog => ({ allocatedBytes: 0, gcNs: 0, cycles: 0, after: new Map() })

export const gcTotals = (log: GcLog): GcTotals => ({ allocatedBytes: log.allocatedBytes, gcMs: log.gcNs / 1e6, cycles: log.cycles })

/** Whether a line is the GC log's (not the program's own output). */
export const isGcLogLine = (line: string): boolean => line.startsWith('[GC<') || line.startsWith('Requesting GC because') || line === 'GC END!'

const HEAP = /^\[GC<([^>]*)>:/
const START = /START \w+ (\d+)kb/
const END = /=> (\d+)kb, p=.*cycle ([\d.]+)ms END\]/

/**
 * Adds one line to the totals. Only `START` and `END` pieces count; the "Requesting GC because bytes allocated" lines
 * are not used, since collections started by a timer print none.
 */
export function feedGcLine(log: GcLog, line: string): void {
	const heap = HEAP.exec(line)?.[1]
	if (heap === undefined) return
	// A short cycle starts and ends on one line: the start comes first.
	const start = START.exec(line)
	if (start) log.allocatedBytes += Math.max(0, Number(start[1]) - (log.after.get(heap) ?? 0)) * 1024
	const end = END.exec(line)
	if (end) {
		log.after.set(heap, Number(end[1]))
		log.gcNs += Math.round(Number(end[2]) * 1e6)
		log.cycles++
	}
}
