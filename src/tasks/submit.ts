/**
 * Submitting an asynchronous task (video, Midjourney, Suno) through the passthrough relay: hold the price, call the
 * upstream, and charge only when it accepts the job; a refusal is passed back to the client uncharged. The accepted
 * task is recorded to the account (so only it can read the task) with the charged amount, which a later failure
 * refunds exactly once (refund.ts).
 * @module
 */
import { GatewayError } from '../core/errors'
import type { ErrorShape } from '../http/error-shapes'
import type { CallContext, PassOp, UpstreamRequest } from '../passthrough/relay'
import type { ChannelType } from '../providers/channel-types'
import type { Channel, ModelInfo } from '../routing/catalog'
import { refundCharge } from './refund'
import { applyUpdate } from './refresh'
import { type TaskKind, type TaskRow, type TaskUpdate, insertTask } from './store'

/** The upstream's reading of a submit: accepted (with its task id), or not (the response goes back as is). */
export type Acceptance = {
	response: Response
	/** Set when the upstream took the job. */
	upstreamId?: string
	/** The upstream's state in its accept answer, applied at once. */
	update?: TaskUpdate
	/** The upstream named a task it already had: nothing is charged. */
	existing?: boolean
	/** Overrides the price computed before the call (e.g. from the seconds the upstream will render). */
	cost?: number
	result?: Record<string, unknown>
}

export type TaskSubmit = {
	ctx: CallContext
	kind: TaskKind
	endpoint: string
	model: string
	types: readonly ChannelType[]
	pin?: (ch: Channel) => boolean
	/** The shape of the gateway's errors (PassOp `shape`). */
	shape?: ErrorShape
	/** Switchboard's id for the task (video answers with it); generated when absent. */
	id?: string
	/** Flat price of the job, micro-USD. */
	cost(price: ModelInfo): number
	request(ch: Channel, upstreamModel: string): UpstreamRequest | Promise<UpstreamRequest>
	accept(res: Response, ch: Channel, price: ModelInfo): Promise<Acceptance>
	/** The client's answer once the task is recorded (default: the upstream's answer). */
	reply?: (task: TaskRow) => Response
}

/** The PassOp of a task submit. */
export function taskOp(s: TaskSubmit): PassOp {
	return {
		...s.ctx,
		endpoint: s.endpoint,
		model: s.model,
		types: s.types,
		pin: s.pin,
		shape: s.shape,
		failoverOnTimeout: false,
		hold: (price) => ({ want: s.cost(price), min: s.cost(price) }),
		request: (ch, upstreamModel) => s.request(ch, upstreamModel),
		async respond(res, ch, _upstreamModel, price) {
			const a = await s.accept(res, ch, price)
			if (!a.upstreamId) return { response: a.response, cost: 0, endReason: 'rejected' }
			if (a.existing) return { response: a.response, cost: 0, endReason: 'existing_task' }
			const upstreamId = a.upstreamId
			return {
				response: a.response,
				cost: a.cost ?? s.cost(price),
				async commit(charged, channel) {
					let task: TaskRow
					try {
						// The charge is written before the task exists: another instance's poll (or this one after a restart)
						// may fail it and refund at once, and a refund of a charge still in this ledger's batch would credit
						// money the crash loses, or clamp the key's spend at zero and count the charge on it for good.
						await s.ctx.svc.ledger.flush()
						task = await insertTask(s.ctx.svc.db, {
							id: s.id,
							kind: s.kind,
							accountId: s.ctx.token.accountId,
							tokenId: s.ctx.token.id,
							model: s.model,
							channelId: channel.id,
							upstreamId,
							requestId: s.ctx.requestId,
							cost: charged,
							result: a.result,
						})
					} catch (e) {
						// The charge stands only with a task to refund it from: give it back now.
						await refundCharge(s.ctx.svc, { accountId: s.ctx.token.accountId, tokenId: s.ctx.token.id }, charged, s.ctx.requestId, { model: s.model, endpoint: s.endpoint, channelId: channel.id })
						s.ctx.svc.log.error('task not recorded; charge refunded', { request_id: s.ctx.requestId, error: String(e) })
						throw new GatewayError('api_error', 'The task was submitted but could not be recorded; you were not charged', { code: 'task_not_recorded' })
					}
					if (a.update && a.update.status !== 'queued') task = await applyUpdate(s.ctx.svc, task, a.update)
					return s.reply?.(task)
				},
			}
		},
	}
}
