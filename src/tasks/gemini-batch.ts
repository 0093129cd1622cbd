/**
 * Gemini's batches (Batch Mode) as tasks (kind `gemini_batch`; modules/gemini-batches). The upper bound of every
 * request was charged when the upstream accepted the batch; when it has ended (the Operation is `done`, its
 * `metadata.state` BATCH_STATE_SUCCEEDED, FAILED, CANCELLED or EXPIRED: ai.google.dev/api/batch-mode) each inlined
 * response's `usageMetadata` (prompt, cached, candidates and thoughts tokens) is priced at the batch price recorded at
 * creation and the rest of the charge refunded, once, by the settlement the other batch kinds use (batch.ts
 * `settleBatch`). A request answered with an error, and the requests a cancelled or expired batch never ran, are not
 * billed. A batch from an input file answers in a responses file (`responsesFile`), read from the channel the same
 * way, line by line. Learned when the client gets (or deletes) the batch, or by the background poller.
 * @module
 */
import { recordVendorFile, vendorFileText } from '../modules/gemini-files/download'
import type { VendorFile } from '../modules/gemini-files/records'
import { decodeUsage } from '../protocols/gemini/usage'
import type { Channel } from '../routing/catalog'
import type { Services } from '../services'
import { type BatchEnd, type BatchRecord, batchToAsk, settleBatch } from './batch'
import { type BatchTerms, type ModelUsage, addLine } from './batch-usage'
import { type TaskRow, advance, getTask } from './store'
import { pollJson } from './upstream'
import { jsonLines } from '../lib/json-lines'
import { isObject } from '../core/json'

type Obj = Record<string, unknown>

/** The endpoint a Gemini batch's usage rows name. */
export const GEMINI_BATCH_ENDPOINT = '/v1beta/models/{model}:batchGenerateContent'
const ENDED = new Set(['BATCH_STATE_SUCCEEDED', 'BATCH_STATE_FAILED', 'BATCH_STATE_CANCELLED', 'BATCH_STATE_EXPIRED'])

/**
 * A Gemini batch task's record: the batch terms, the channel's name for the model (to show the client its own), and
 * for a batch from an input file, the gateway ids of that file and of its responses file (recorded when it ends).
 */
export type GeminiBatchRecord = BatchRecord & { upstreamModel?: string; inputFile?: string; responsesFile?: string }

/** The batch's state, from its Operation's metadata. */
export const stateOf = (op: Obj): string | undefined => (isObject(op.metadata) && typeof op.metadata.state === 'string' ? op.metadata.state : undefined)

/** The inlined responses of an ended batch's Operation (`response`, or the same list in `metadata.output`). */
export function inlinedResponses(op: Obj): Obj[] {
	const from = (o: unknown): unknown => (isObject(o) && isObject(o.inlinedResponses) ? o.inlinedResponses.inlinedResponses : undefined)
	const list = from(op.response) ?? (isObject(op.metadata) ? from(op.metadata.output) : undefined)
	return Array.isArray(list) ? list.filter(isObject) : []
}

/**
 * The answered requests of a batch, priced at the model's batch price (`terms.prices[model]`); an error response, or
 * one without `usageMetadata`, adds nothing.
 * @example inlinedUsage({ done: true, response: { inlinedResponses: { inlinedResponses: [{ response: { usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 3 } } }] } } }, terms, 'gemini-2.5-flash').get('gemini-2.5-flash')?.usage.input === 9
 */
export function inlinedUsage(op: Obj, terms: BatchTerms, model: string): Map<string, ModelUsage> {
	const out = new Map<string, ModelUsage>()
	const price = terms.prices[model]
	if (!price) return out
	for (const r of inlinedResponses(op)) {
		const usage = isObject(r.response) ? decodeUsage(r.response.usageMetadata) : undefined
		if (usage) addLine(out, model, usage, price)
	}
	return out
}

/** The vendor's name of an ended batch's responses file (`response.responsesFile`, or the same in `metadata.output`). */
export function responsesFileOf(op: Obj): string | undefined {
	const from = (o: unknown) => (isObject(o) && typeof o.responsesFile === 'string' && o.responsesFile ? o.responsesFile : undefined)
	return from(op.response) ?? (isObject(op.metadata) ? from(op.metadata.output) : undefined)
}

/**
 * The answered lines of a responses file (JSON Lines, each `{key, response}` or `{key, error}`, in the order of the
 * input), priced as `inlinedUsage` prices inline responses.
 */
export function fileUsage(text: string, terms: BatchTerms, model: string): Map<string, ModelUsage> {
	const out = new Map<string, ModelUsage>()
	const price = terms.prices[model]
	if (!price) return out
	for (const { value: line } of jsonLines(text)) {
		const usage = isObject(line) && isObject(line.response) ? decodeUsage(line.response.usageMetadata) : undefined
		if (usage) addLine(out, model, usage, price)
	}
	return out
}

/**
 * The usage of an ended batch: its inline responses', or its responses file's, read from the channel and recorded to
 * the account under the gateway id kept for it (before the batch shows as ended, so whoever sees it ended can
 * download it). Undefined when the file cannot be read now: settled on a later poll rather than refunding work done.
 */
async function endedUsage(svc: Services, task: TaskRow, ch: Channel, op: Obj, signal: AbortSignal): Promise<Map<string, ModelUsage> | undefined> {
	const record = task.result as GeminiBatchRecord
	const vendorName = responsesFileOf(op)
	if (!vendorName) return inlinedUsage(op, record, task.model)
	const text = await vendorFileText(ch, vendorName, signal).catch(() => undefined)
	if (text === undefined) return undefined
	if (record.responsesFile) {
		const file = ((await pollJson(ch, `/v1beta/${vendorName}`, signal).catch(() => undefined)) as VendorFile | undefined) ?? { name: vendorName }
		const rename = record.upstreamModel && record.upstreamModel !== task.model ? { from: record.upstreamModel, to: task.model } : undefined
		await recordVendorFile(svc, record.responsesFile, { accountId: task.accountId, tokenId: task.tokenId, channelId: ch.id, requestId: task.requestId }, { ...file, name: vendorName }, rename)
	}
	return fileUsage(text, record, task.model)
}

/** Only a batch that succeeded completes the task; one cancelled pays for what it answered, as one failed or expired does. */
function endOf(op: Obj): BatchEnd {
	const state = stateOf(op) ?? 'BATCH_STATE_FAILED'
	const ok = state === 'BATCH_STATE_SUCCEEDED'
	return { status: ok ? 'completed' : 'failed', reason: ok ? 'ok' : state === 'BATCH_STATE_CANCELLED' ? 'cancelled' : 'error', endpoint: GEMINI_BATCH_ENDPOINT, error: ok ? null : `batch ${state.replace('BATCH_STATE_', '').toLowerCase()}` }
}

/**
 * Asks the upstream for the batch and applies it: pending or running → the Operation is kept; ended → settled (once).
 * Returns the task and the Operation to show (the upstream's, or the last one seen when it cannot be asked).
 */
export async function refreshGeminiBatch(svc: Services, task: TaskRow, signal: AbortSignal = new AbortController().signal): Promise<{ task: TaskRow; batch: Obj }> {
	const ask = await batchToAsk(svc, task)
	if (!('ch' in ask)) return ask
	const { ch, upstreamId, seen } = ask
	// The upstream id is the batch's resource name, `batches/{id}`, a path under the API version.
	const op = (await pollJson(ch, `/v1beta/${upstreamId.split('/').map(encodeURIComponent).join('/')}`, signal).catch(() => undefined)) as Obj | undefined
	const state = op && stateOf(op)
	if (!op || !state) return { task, batch: seen }
	if (op.done === true || ENDED.has(state)) {
		const usage = await endedUsage(svc, task, ch, op, signal)
		if (!usage) return { task, batch: seen }
		await settleBatch(svc, task, op, usage, endOf(op))
		return { task: (await getTask(svc.db, task.id)) ?? task, batch: op }
	}
	const moved = await advance(svc.db, task.id, { status: state === 'BATCH_STATE_PENDING' ? 'queued' : 'in_progress', result: { ...(task.result as BatchRecord), batch: op } })
	return { task: moved ?? task, batch: op }
}
