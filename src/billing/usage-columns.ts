/**
 * Usage rows waiting for the ledger's next flush, kept column by column and sent to `sb_lease_flush` as one
 * PostgreSQL array literal per column, which the database reads with `unnest`. Recording a row appends its values to
 * the columns (no object serialised per request), and the database inserts a batch with about half the CPU
 * it needed to read a JSON array of objects (bench/README.md).
 * @module
 */
import type { UsageRecord } from './usage-record'

/** How many array parameters a batch has (sb_lease_flush takes them after the leases). */
export const USAGE_COLUMNS = 20

/** The two characters an array literal's quoted element must escape. One object, tested per element: a regex literal
 * in the function would be a new RegExp at each of the six text columns of every row. */
const QUOTE_OR_BACKSLASH = /["\\]/
const QUOTE_OR_BACKSLASH_ALL = /["\\]/g

/** Array literal elements: quoted text with `"` and `\` escaped (the only two characters that need it), numbers, t/f. */
const text = (v: string | undefined): string => (v === undefined ? 'NULL' : `"${QUOTE_OR_BACKSLASH.test(v) ? v.replace(QUOTE_OR_BACKSLASH_ALL, '\\$&') : v}"`)
const num = (v: number | null | undefined): string => (v === null || v === undefined ? 'NULL' : String(v))
const bool = (v: boolean): string => (v ? 't' : 'f')

export class UsageColumns {
	/**
	 * Each column's elements so far, in sb_lease_flush's parameter order (drizzle/0003_flush_once.sql), joined once at
	 * the flush. Appending to one string per column instead builds ropes that the driver must flatten when it measures
	 * and copies them: ~0.35 µs per row, against ~0.05 for the join.
	 */
	private readonly cols: string[][] = Array.from({ length: USAGE_COLUMNS }, () => [])

	/** Rows held. */
	get size(): number {
		return this.cols[0]!.length
	}

	/** Adds a settled request's row, charged `cost` at `at` (ms); returns how many rows are held. */
	add(u: UsageRecord, cost: number, at: number): number {
		const c = this.cols
		c[0]!.push(text(u.requestId))
		c[1]!.push(num(u.accountId))
		c[2]!.push(num(u.tokenId))
		c[3]!.push(text(u.model))
		c[4]!.push(text(u.upstreamModel))
		c[5]!.push(text(u.endpoint))
		c[6]!.push(num(u.channelId))
		c[7]!.push(text(u.channel))
		c[8]!.push(num(u.inputTokens))
		c[9]!.push(num(u.outputTokens))
		c[10]!.push(num(u.cachedTokens))
		c[11]!.push(num(u.cacheWriteTokens))
		c[12]!.push(num(u.reasoningTokens))
		c[13]!.push(num(cost))
		c[14]!.push(num(u.status))
		c[15]!.push(num(u.latencyMs))
		c[16]!.push(bool(u.estimated))
		c[17]!.push(text(u.endReason))
		c[18]!.push(bool(u.stream))
		return c[19]!.push(num(at))
	}

	/** One array literal per column, in the function's parameter order. */
	literals(): string[] {
		return this.cols.map((c) => `{${c.join(',')}}`)
	}
}
