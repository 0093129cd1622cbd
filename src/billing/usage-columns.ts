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

/** A text value as it goes between quotes: `"` and `\` escaped (the only two characters that need it). */
const escaped = (v: string): string => (QUOTE_OR_BACKSLASH.test(v) ? v.replace(QUOTE_OR_BACKSLASH_ALL, '\\$&') : v)
/** Elements of the other columns: numbers as they are (joined as their decimal text), NULL, t/f. */
const num = (v: number | null | undefined): number | 'NULL' => (v === null || v === undefined ? 'NULL' : v)
const bool = (v: boolean): 't' | 'f' => (v ? 't' : 'f')

/** Which columns hold text (quoted in the literal), by parameter position. */
const TEXT_COLUMNS = new Set([0, 3, 4, 5, 7, 17])

export class UsageColumns {
	/**
	 * Each column's values so far, in sb_lease_flush's parameter order (drizzle/0003_flush_once.sql), turned into
	 * literals once at the flush. A row adds its values as they are (text escaped only when it must be): formatting
	 * each one as its literal element here made ~18 strings per request. Appending to one string per column instead
	 * builds ropes that the driver must flatten when it measures and copies them: ~0.35 µs per row, against ~0.05 for
	 * the join.
	 */
	private readonly cols: Array<Array<string | number | undefined>> = Array.from({ length: USAGE_COLUMNS }, () => [])
	/** Text columns holding a NULL (a failed request has no upstream model or channel): joined element by element. */
	private readonly nulls = new Set<number>()

	/** Rows held. */
	get size(): number {
		return this.cols[0]!.length
	}

	private text(col: number, v: string | undefined) {
		if (v === undefined) this.nulls.add(col)
		this.cols[col]!.push(v === undefined ? undefined : escaped(v))
	}

	/** Adds a settled request's row, charged `cost` at `at` (ms); returns how many rows are held. */
	add(u: UsageRecord, cost: number, at: number): number {
		const c = this.cols
		this.text(0, u.requestId)
		c[1]!.push(num(u.accountId))
		c[2]!.push(num(u.tokenId))
		this.text(3, u.model)
		this.text(4, u.upstreamModel)
		this.text(5, u.endpoint)
		c[6]!.push(num(u.channelId))
		this.text(7, u.channel)
		c[8]!.push(num(u.inputTokens))
		c[9]!.push(num(u.outputTokens))
		c[10]!.push(num(u.cachedTokens))
		c[11]!.push(num(u.cacheWriteTokens))
		c[12]!.push(num(u.reasoningTokens))
		c[13]!.push(num(cost))
		c[14]!.push(num(u.status))
		c[15]!.push(num(u.latencyMs))
		c[16]!.push(bool(u.estimated))
		this.text(17, u.endReason)
		c[18]!.push(bool(u.stream))
		return c[19]!.push(num(at))
	}

	/** One array literal per column, in the function's parameter order. */
	literals(): string[] {
		return this.cols.map((c, i) => {
			if (c.length === 0) return '{}'
			if (!TEXT_COLUMNS.has(i)) return `{${c.join(',')}}`
			if (!this.nulls.has(i)) return `{"${c.join('","')}"}`
			return `{${c.map((v) => (v === undefined ? 'NULL' : `"${v}"`)).join(',')}}`
		})
	}
}
