/**
 * Usage rows waiting for the ledger's next flush, kept column by column and sent to `sb_lease_flush` as one
 * PostgreSQL array literal per column, which the database reads with `unnest`. Recording a row appends its values to
 * the columns' literals (no object serialised per request), and the database inserts a batch with about half the CPU
 * it needed to read a JSON array of objects (bench/README.md).
 * @module
 */
import type { UsageRecord } from './usage-record'

/** How many array parameters a batch has (sb_lease_flush takes them after the leases). */
export const USAGE_COLUMNS = 20

/** Array literal elements: quoted text with `"` and `\` escaped (the only two characters that need it), numbers, t/f. */
const text = (v: string | undefined): string => (v === undefined ? 'NULL' : `"${/["\\]/.test(v) ? v.replace(/["\\]/g, '\\$&') : v}"`)
const num = (v: number | null | undefined): string => (v === null || v === undefined ? 'NULL' : String(v))
const bool = (v: boolean): string => (v ? 't' : 'f')

export class UsageColumns {
	/** Each column's elements so far, comma-separated, in sb_lease_flush's parameter order (drizzle/0003_flush_once.sql). */
	private readonly cols: string[] = new Array<string>(USAGE_COLUMNS).fill('')
	private n = 0

	/** Rows held. */
	get size(): number {
		return this.n
	}

	/** Adds a settled request's row, charged `cost` at `at` (ms); returns how many rows are held. */
	add(u: UsageRecord, cost: number, at: number): number {
		const c = this.cols
		const sep = this.n++ ? ',' : ''
		c[0] += sep + text(u.requestId)
		c[1] += sep + num(u.accountId)
		c[2] += sep + num(u.tokenId)
		c[3] += sep + text(u.model)
		c[4] += sep + text(u.upstreamModel)
		c[5] += sep + text(u.endpoint)
		c[6] += sep + num(u.channelId)
		c[7] += sep + text(u.channel)
		c[8] += sep + num(u.inputTokens)
		c[9] += sep + num(u.outputTokens)
		c[10] += sep + num(u.cachedTokens)
		c[11] += sep + num(u.cacheWriteTokens)
		c[12] += sep + num(u.reasoningTokens)
		c[13] += sep + num(cost)
		c[14] += sep + num(u.status)
		c[15] += sep + num(u.latencyMs)
		c[16] += sep + bool(u.estimated)
		c[17] += sep + text(u.endReason)
		c[18] += sep + bool(u.stream)
		c[19] += sep + num(at)
		return this.n
	}

	/** One array literal per column, in the function's parameter order. */
	literals(): string[] {
		return this.cols.map((c) => `{${c}}`)
	}
}
