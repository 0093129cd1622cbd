import type { Usage } from '../core/ir'

/** One usage row as the relay reports it to the ledger (cost is decided by the ledger at settle). */
export type UsageRecord = {
	requestId: string
	accountId: number
	tokenId: number | null
	model: string
	upstreamModel?: string
	endpoint: string
	channelId?: number
	channel?: string
	inputTokens: number
	outputTokens: number
	cachedTokens: number
	cacheWriteTokens: number
	reasoningTokens: number
	status: number
	latencyMs: number
	estimated: boolean
	/**
	 * How the request ended (the `end_reason` column; README "Usage rows" lists them): ok, error, client_abort,
	 * shutdown (cut when SHUTDOWN_GRACE_MS ran out), upstream_cut, upstream_malformed; tasks add rejected,
	 * existing_task and refund.
	 */
	endReason: string
	stream: boolean
	cost?: number
}

/**
 * How a request that got no answer is recorded: as the client's own doing when it went away first (status 499, nginx's
 * "client closed request": nothing was sent, so the error that ended the attempt, often our 500 for the aborted call,
 * would read as a server fault in the usage statistics), else as the error it got.
 * @example failedRow(502, false) // { status: 502, endReason: 'error' }
 */
export function failedRow(status: number, aborted: boolean): { status: number; endReason: 'client_abort' | 'error' } {
	return aborted ? { status: CLIENT_CLOSED, endReason: 'client_abort' } : { status, endReason: 'error' }
}

export const CLIENT_CLOSED = 499

/** What every usage row of one request shares. */
export type RecordBase = { requestId: string; token: { id: number; accountId: number }; model: string; endpoint: string; stream: boolean; startedAt: number }

export type RecordOutcome = {
	channel?: { id: number; name: string }
	upstreamModel?: string
	status: number
	endReason: string
	usage?: Partial<Usage>
	estimated?: boolean
}

/** Builds the usage row of a finished request (latency measured now). */
export function usageRecord(b: RecordBase, o: RecordOutcome): UsageRecord {
	const u = o.usage ?? {}
	return {
		requestId: b.requestId,
		accountId: b.token.accountId,
		tokenId: b.token.id,
		model: b.model,
		upstreamModel: o.upstreamModel,
		endpoint: b.endpoint,
		channelId: o.channel?.id,
		channel: o.channel?.name,
		inputTokens: u.input ?? 0,
		outputTokens: u.output ?? 0,
		cachedTokens: u.cacheRead ?? 0,
		cacheWriteTokens: u.cacheWrite ?? 0,
		reasoningTokens: u.reasoning ?? 0,
		status: o.status,
		latencyMs: Date.now() - b.startedAt,
		estimated: o.estimated ?? false,
		endReason: o.endReason,
		stream: b.stream,
	}
}
