/** The usage row a passthrough call writes through the ledger (settle or release), and what it reports. */
import type { UsageRecord } from '../billing/usage-record'
import type { Channel } from '../routing/catalog'
import type { CallContext } from './relay'

export type PassOutcome = {
	ch?: Channel
	upstreamModel?: string
	status: number
	endReason: string
	input?: number
	output?: number
	estimated?: boolean
}

/** @example passUsage(op, { ch, status: 200, endReason: 'ok', input: 12 }) */
export function passUsage(call: CallContext & { endpoint: string; model: string }, o: PassOutcome): UsageRecord {
	return {
		requestId: call.requestId,
		accountId: call.token.accountId,
		tokenId: call.token.id,
		model: call.model,
		upstreamModel: o.upstreamModel,
		endpoint: call.endpoint,
		channelId: o.ch?.id,
		channel: o.ch?.name,
		inputTokens: o.input ?? 0,
		outputTokens: o.output ?? 0,
		cachedTokens: 0,
		cacheWriteTokens: 0,
		reasoningTokens: 0,
		status: o.status,
		latencyMs: Date.now() - call.startedAt,
		estimated: o.estimated ?? false,
		endReason: o.endReason,
		stream: false,
	}
}
