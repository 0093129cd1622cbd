/** The usage row a passthrough call writes through the ledger (settle or release), and what it reports. */
import { type UsageRecord, usageRecord } from '../billing/usage-record'
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
export function passUsage(call: CallContext & { endpoint: string; model: string; stream?: boolean }, o: PassOutcome): UsageRecord {
	return usageRecord(
		{ ...call, stream: call.stream ?? false },
		{ channel: o.ch, upstreamModel: o.upstreamModel, status: o.status, endReason: o.endReason, usage: { input: o.input, output: o.output }, estimated: o.estimated },
	)
}
