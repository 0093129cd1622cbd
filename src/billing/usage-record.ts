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
	/** ok | error | client_abort | upstream_cut | timeout */
	endReason: string
	stream: boolean
	cost?: number
}
