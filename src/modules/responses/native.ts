/**
 * The Responses API's own route: a channel whose adapter has a Responses URL (OpenAI) takes the client's body
 * verbatim, with only `model` renamed and `max_output_tokens` lowered when the budget requires it, so every feature
 * (stored responses, built-in tools, encrypted reasoning) works as on OpenAI. Other channels convert through the
 * canonical model, which the request may forbid (`unconvertible`): a 400, unless an OpenAI channel of the model can
 * serve it.
 * A channel can opt out (an OpenAI-compatible vendor without /responses) with `settings.responses_api: false`.
 * The ids of stored responses are recorded to the account (ownership.ts), and a continuation goes to the channel
 * that holds its response.
 * @module
 */
import type { AuthToken } from '../../auth/api-key'
import { GatewayError, unsupportedForModel } from '../../core/errors'
import type { ChatRequest } from '../../core/ir'
import { openaiResponses, unconvertible } from '../../protocols/openai-responses'
import { withoutForeignReasoning } from '../../protocols/openai-responses/reasoning'
import type { ChatAdapter } from '../../providers/adapter'
import { chatAdapterFor } from '../../providers/registry'
import { errorOnlyAnswer, upstreamError } from '../../providers/upstream-error'
import { type CallInfo, resolveModel, settle } from '../../relay/budget'
import type { NativeRoute } from '../../relay/chat'
import { countOutputText } from '../../relay/output-count'
import { credentialHooks } from '../../passthrough/upstream'
import { channelTimeouts, fetchUpstream, unreadableAnswer, waitsFor } from '../../relay/upstream-fetch'
import type { Channel } from '../../routing/catalog'
import type { Services } from '../../services'
import { chargeBackground, isRunningBackground } from './background'
import { completionWindow } from './window-price'
import { outputItemIds, recordItems, recordResponse } from './ownership'
import { relayResponsesStream } from './stream'
import { appendPath } from '../../providers/append-path'

export type NativeCall = {
	body: Record<string, unknown>
	ir: ChatRequest
	inbound: Headers
	signal: AbortSignal
	/** The channel holding the response this request continues (ownership.ts `checkContinuation`), when it serves the model. */
	holder?: number
	/**
	 * The conversation of this gateway's the request is a turn of (modules/conversations): sent upstream as plain input,
	 * so OpenAI answers `conversation: null`; the client is shown its conversation, as OpenAI's own shows it.
	 */
	conversation?: string
	/** `POST /v1/responses/compact` (compact.ts): to `{responses URL}/compact`, never stored nor streamed, OpenAI only. */
	compact?: boolean
}

/**
 * Why a compaction cannot go to another vendor: its `compaction` item is encrypted for OpenAI alone, and no other
 * vendor could read it back next turn.
 */
export const COMPACT_REFUSAL =
	'responses.compact (POST /v1/responses/compact) is only available on OpenAI models: its `compaction` item is encrypted for OpenAI alone. For this model keep the whole conversation in `input` (or in a conversation of this gateway, `conversation`)'

/** The channel's Responses URL, or undefined when it converts (no such API, or opted out). */
export const responsesUrlOf = (ch: Channel, adapter: ChatAdapter | undefined): string | undefined =>
	ch.settings.responses_api === false ? undefined : adapter?.responsesUrl?.(ch)

/** The field a refusal starts with (`tools[1]`, `input[2] content[0]`, `` `conversation` ``), as the error's `param`. */
const paramOf = (refusal: string) => /^`?([a-z_]+(?:\[\d+\])?(?: content\[\d+\])?)/.exec(refusal)?.[1]?.replace(' ', '.')

const refusalError = (refusal: string, model: string, retryable: boolean) => unsupportedForModel(`${refusal} (model "${model}")`, retryable, paramOf(refusal))

/**
 * Throws the 400 up front (before anything is reserved) when the request needs OpenAI and no channel of the model
 * is an OpenAI one; a 403 or 404 for the model comes first.
 */
export function refuseUnconvertible(svc: Services, token: AuthToken, body: Record<string, unknown>, model: string, refusal = unconvertible(body)): void {
	if (refusal && !reachesOpenAI(svc, token, model)) throw refusalError(refusal, model, false)
}

/** Whether a channel of the model takes the body as it is (an OpenAI one), so OpenAI may read the ids it names. */
export const reachesOpenAI = (svc: Services, token: AuthToken, model: string): boolean =>
	resolveModel(svc, token, model).channels.some((ch) => responsesUrlOf(ch, chatAdapterFor(ch.type)))

/** `reachesOpenAI` of a body's `model` before it is checked: false for one that is no string or no model served. */
export function mayReachOpenAI(svc: Services, token: AuthToken, model: unknown): boolean {
	try {
		return typeof model === 'string' && reachesOpenAI(svc, token, model)
	} catch {
		return false
	}
}

/** The NativeRoute of one Responses request. */
export function responsesNative(call: NativeCall): NativeRoute {
	const refusal = call.compact ? COMPACT_REFUSAL : unconvertible(call.body)
	// OpenAI stores a response unless `store: false`; only a stored one can be continued. A compaction is not one.
	const stored = !call.compact && call.body.store !== false
	return async (ch, adapter, info, budget) => {
		// Another vendor key does not hold the response: skip the channel (not its fault) for the one that does.
		if (call.holder !== undefined && ch.id !== call.holder) return { error: unsupportedForModel(`The response continued is held by another channel of model "${call.ir.model}"`, true) }
		const base = responsesUrlOf(ch, adapter)
		const url = base && call.compact ? appendPath(base, '/compact') : base
		if (!url) {
			if (!refusal) return undefined
			// The model also has an OpenAI channel (refuseUnconvertible checked): "retryable" moves on to it. This skips a
			// channel that cannot take the request; it is not the channel's fault.
			return { error: refusalError(refusal, call.ir.model, true) }
		}
		const upstreamModel = ch.modelMap[call.ir.model] ?? call.ir.model
		const body: Record<string, unknown> = { ...call.body, model: upstreamModel }
		const input = withoutForeignReasoning(call.body.input)
		if (input) body.input = input
		// A compaction takes no cap (OpenAI refuses unknown parameters); its reservation holds the model's default.
		if (budget.capChanged && !call.compact) body.max_output_tokens = budget.cap
		let up
		try {
			up = await fetchUpstream(url, { headers: adapter.headers(ch, call.inbound), body: JSON.stringify(body), ...credentialHooks(ch) }, channelTimeouts(ch.settings, waitsFor(body.stream === true)), call.signal)
		} catch (e) {
			return { error: e instanceof GatewayError ? e : new GatewayError('upstream', String(e), { retryable: true }) }
		}
		const { res } = up
		if (!res.ok) return { error: upstreamError(res.status, await res.text().catch(() => ''), res.headers) }
		const outcome = { channel: ch, upstreamModel }
		if (call.ir.stream) {
			if (!res.body) return { error: new GatewayError('upstream', 'upstream sent an empty stream', { retryable: true }) }
			return relayResponsesStream({
				info,
				budget,
				up,
				...outcome,
				clientModel: call.ir.model,
				conversation: call.conversation,
				record: stored ? (id) => record(info, ch, id, call.conversation) : undefined,
				recordItems: stored ? (ids) => keepItems(info, ch, ids) : undefined,
				background: call.body.background === true,
			})
		}
		let json: Record<string, unknown>
		try {
			json = JSON.parse(await up.text()) as Record<string, unknown>
		} catch (e) {
			return { error: unreadableAnswer(e) }
		}
		const failed = errorOnlyAnswer(json, up.res.headers)
		if (failed) return { error: failed }
		const estimateOutput = () => {
			try {
				return countOutputText(openaiResponses.decodeResponse(json))
			} catch {
				return 0
			}
		}
		// A background response runs on after this answer: its reservation is charged now and settled when it ends.
		if (isRunningBackground(call.body, json)) await chargeBackground(info, budget, ch, upstreamModel, json, completionWindow(call.body))
		else await settle(info, budget, { usage: openaiResponses.usageOf(json), estimateOutput, status: 200, endReason: 'ok', ...outcome })
		if (stored) await Promise.all([record(info, ch, json.id, call.conversation), keepItems(info, ch, outputItemIds(json))])
		// A model_map alias is shown to the client as it asked for it.
		let out = upstreamModel !== call.ir.model && 'model' in json ? { ...json, model: call.ir.model } : json
		if (call.conversation) out = { ...out, conversation: { id: call.conversation } }
		return { ok: new Response(JSON.stringify(out), { status: 200, headers: { 'content-type': 'application/json', 'x-request-id': info.requestId } }) }
	}
}

/** Records a stored response's id to the account; a failure is logged, never the answer's (it was paid for). */
async function record(info: CallInfo, ch: Channel, id: unknown, conversation: string | undefined): Promise<void> {
	try {
		await recordResponse(info.svc, info.token.accountId, ch.id, id, conversation)
	} catch (e) {
		info.svc.log.error('response id not recorded', { request_id: info.requestId, error: String(e) })
	}
}

/** Records a stored response's item ids to the account (ownership.ts); a failure is logged, as for its id. */
async function keepItems(info: CallInfo, ch: Channel, ids: string[]): Promise<void> {
	try {
		await recordItems(info.svc, info.token.accountId, ch.id, ids)
	} catch (e) {
		info.svc.log.error('response items not recorded', { request_id: info.requestId, error: String(e) })
	}
}
