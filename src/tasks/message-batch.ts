/**
 * Anthropic's message batches as tasks (kind `message_batch`; modules/message-batches). The upper bound of every
 * request was charged when the upstream accepted the batch; when it has ended (`processing_status: "ended"`,
 * platform.claude.com/docs/en/api/messages/batches/retrieve) its results are read, each `succeeded` result's
 * `message.usage` (cache reads and writes included) priced at the batch prices recorded at creation, and the rest of
 * the charge refunded, once, by the settlement OpenAI's batches use (batch.ts `settleBatch`). An `errored`,
 * `canceled` or `expired` request is not billed, as Anthropic bills none of them. Learned when the client retrieves
 * the batch (or asks for its results), or by the background poller.
 * @module
 */
import { decodeUsage } from '../protocols/anthropic-messages/usage'
import { authHeaders, channelUrl } from '../passthrough/upstream'
import { fetchUpstream } from '../relay/upstream-fetch'
import type { Channel } from '../routing/catalog'
import type { Services } from '../services'
import { type BatchEnd, type BatchRecord, batchToAsk, settleBatch } from './batch'
import { type BatchTerms, type ModelUsage, addLine } from './batch-usage'
import { type TaskRow, advance, getTask } from './store'
import { pollJson } from './upstream'
import { jsonLines } from '../lib/json-lines'
import { isObject } from '../core/json'

type Obj = Record<string, unknown>

const FETCH_TIMEOUTS = { firstByteMs: 30_000, idleMs: 30_000 }
export const MESSAGE_BATCHES = '/v1/messages/batches'

/** The upstream's results of a batch that ended, as JSONL text; undefined when they cannot be read now. */
export async function resultsText(ch: Channel, id: string, signal: AbortSignal): Promise<string | undefined> {
	const { res } = await fetchUpstream(channelUrl(ch, `${MESSAGE_BATCHES}/${encodeURIComponent(id)}/results`), { method: 'GET', headers: authHeaders(ch) }, FETCH_TIMEOUTS, signal)
	const text = await res.text().catch(() => undefined)
	return res.ok ? text : undefined
}

/**
 * The succeeded results of a batch, per model (a request's model: `terms.models[custom_id]`, else `defaultModel`),
 * each priced at its model's batch price.
 * @example resultsUsage('{"custom_id":"a","result":{"type":"succeeded","message":{"usage":{"input_tokens":9,"output_tokens":3}}}}', terms, 'claude').get('claude')?.usage.input === 9
 */
export function resultsUsage(text: string, terms: BatchTerms, defaultModel: string): Map<string, ModelUsage> {
	const out = new Map<string, ModelUsage>()
	for (const { value: line } of jsonLines(text)) {
		if (!isObject(line) || !isObject(line.result) || line.result.type !== 'succeeded' || !isObject(line.result.message)) continue
		const model = (typeof line.custom_id === 'string' ? terms.models?.[line.custom_id] : undefined) ?? defaultModel
		const price = terms.prices[model]
		if (price) addLine(out, model, decodeUsage(line.result.message.usage), price)
	}
	return out
}

/** A batch canceled before it ended pays for what it answered, but is not the task's success. */
function endOf(batch: Obj): BatchEnd {
	const canceled = typeof batch.cancel_initiated_at === 'string'
	return { status: canceled ? 'failed' : 'completed', reason: canceled ? 'cancelled' : 'ok', endpoint: MESSAGE_BATCHES, error: canceled ? 'batch canceled' : null }
}

/**
 * Asks the upstream for the batch and applies it: processing → the last seen object is kept; ended → settled (once).
 * Returns the task and the MessageBatch object to show (the upstream's, or the last one seen when it cannot be asked).
 */
export async function refreshMessageBatch(svc: Services, task: TaskRow, signal: AbortSignal = new AbortController().signal): Promise<{ task: TaskRow; batch: Obj }> {
	const ask = await batchToAsk(svc, task)
	if (!('ch' in ask)) return ask
	const { ch, upstreamId, seen } = ask
	const batch = (await pollJson(ch, `${MESSAGE_BATCHES}/${encodeURIComponent(upstreamId)}`, signal).catch(() => undefined)) as Obj | undefined
	if (!batch || typeof batch.processing_status !== 'string') return { task, batch: seen }
	if (batch.processing_status === 'ended') {
		const text = await resultsText(ch, upstreamId, signal).catch(() => undefined)
		// Not readable now: settle on a later poll rather than refund work that was done.
		if (text === undefined) return { task, batch }
		await settleBatch(svc, task, batch, resultsUsage(text, task.result as BatchRecord, task.model), endOf(batch))
		return { task: (await getTask(svc.db, task.id)) ?? task, batch }
	}
	const moved = await advance(svc.db, task.id, { status: 'in_progress', result: { ...(task.result as BatchRecord), batch } })
	return { task: moved ?? task, batch }
}
