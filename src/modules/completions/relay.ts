/**
 * The legacy completions relay: a same-protocol passthrough to the channels that speak OpenAI's protocol (type
 * `openai`: OpenAI, and the OpenAI-compatible servers that keep /v1/completions: vLLM, Ollama, DeepSeek's beta FIM…).
 * The client's body goes upstream as written but for the model (`model_map`), `stream_options.include_usage` on
 * streams (the bill is the usage the upstream reports) and a `max_tokens` the balance lowered; the answer comes back
 * as the upstream wrote it, the model renamed back. Reserved, failed over and settled as chat is (relay/budget.ts,
 * routing/attempts.ts): failover only before the first byte, key `allowed_models`, the usage row and the per-minute
 * token count in `settle`. There is no conversion to other protocols: a model only Anthropic or Gemini channels serve
 * is refused with 400.
 * @module
 */
import type { AuthToken } from '../../auth/api-key'
import { failedRow } from '../../billing/usage-record'
import { GatewayError } from '../../core/errors'
import { errorResponse } from '../../http/error-shapes'
import { openaiChat } from '../../protocols/openai-chat'
import { credentialHooks, openaiUrl } from '../../passthrough/upstream'
import { chatAdapterFor } from '../../providers/registry'
import { upstreamError } from '../../providers/upstream-error'
import { type Budget, type CallInfo, release, reserveBudget, resolveModel, settle } from '../../relay/budget'
import { bodyText } from '../../relay/fast-path'
import { topLevelMembers } from '../../relay/json-members'
import { countText } from '../../relay/estimate'
import { channelTimeouts, fetchUpstream, malformedAnswer, unreadableAnswer, waitsFor } from '../../relay/upstream-fetch'
import { type ResponseAttempt as Attempt, tryChannels } from '../../routing/attempts'
import type { Channel } from '../../routing/catalog'
import type { Services } from '../../services'
import type { CompletionRequest } from './model'
import { boundPromptTokens, choiceText, countPromptTokens, generated } from './prompt'
import { relayCompletionStream } from './stream'
import { metricModel } from '../../metrics/model-label'

export const ENDPOINT = '/v1/completions'

/**
 * OpenAI's default `max_tokens` for completions: what the hold assumes when the client sets none (the body is then
 * left without one, so the upstream applies its own default).
 */
export const LEGACY_DEFAULT_MAX_TOKENS = 16

export type CompletionCall = {
	svc: Services
	token: AuthToken
	requestId: string
	startedAt: number
	body: CompletionRequest
	/** The body's text as the client sent it: forwarded with only the changed members spliced in. */
	raw?: string
	signal: AbortSignal
}

/** Channels whose adapter speaks OpenAI's chat protocol: the ones that also serve OpenAI's legacy completions. */
const speaksOpenAI = (ch: Channel) => chatAdapterFor(ch.type)?.protocol === openaiChat

export async function relayCompletion(call: CompletionCall): Promise<Response> {
	const { svc, body } = call
	const stream = body.stream === true
	const route = resolveModel(svc, call.token, body.model)
	const channels = route.channels.filter(speaksOpenAI)
	if (!channels.length) {
		const types = [...new Set(route.channels.map((c) => c.type))].join(', ')
		throw new GatewayError('invalid_request', `The legacy completions API (/v1/completions) is not available for model "${body.model}": it is served here only through the ${types} protocol. Use /v1/chat/completions.`, { code: 'unsupported_for_model', param: 'model' })
	}
	const info: CallInfo = { svc, token: call.token, requestId: call.requestId, endpoint: ENDPOINT, model: body.model, stream, startedAt: call.startedAt }
	const reserved = reserveBudget(svc, call.token, call.requestId, route.price, boundPromptTokens(body), body.max_tokens ?? LEGACY_DEFAULT_MAX_TOKENS, () => countPromptTokens(body), generated(body))
	const budget = reserved instanceof Promise ? await reserved : reserved
	let lastErr: GatewayError
	let lastChannel: Channel | undefined
	try {
		const r = await tryChannels(svc, channels, call.signal, (ch) => attempt(call, info, ch, budget), body.model)
		if ('ok' in r) return r.ok
		lastErr = r.error
		lastChannel = r.channel
	} catch (e) {
		lastErr = e instanceof GatewayError ? e : new GatewayError('api_error', 'Internal error')
		if (!(e instanceof GatewayError)) svc.log.error('completions relay failed', { request_id: call.requestId, error: String(e) })
	}
	const failed = failedRow(lastErr.status, call.signal.aborted)
	await release(info, budget, failed.status, failed.endReason, lastChannel)
	return errorResponse(lastErr, 'openai', call.requestId)
}

/**
 * The body for the upstream: the client's own object when nothing changes, else a shallow copy with the model
 * renamed, usage asked for on a stream (WIRE-NOTES §12) and `max_tokens` lowered to what the hold covers.
 */
export function upstreamBody(body: CompletionRequest, upstreamModel: string, budget: Pick<Budget, 'cap' | 'capChanged'>): CompletionRequest {
	let out: CompletionRequest | undefined
	const set = <K extends keyof CompletionRequest>(key: K, value: CompletionRequest[K]) => {
		if (body[key] !== value) (out ??= { ...body })[key] = value
	}
	set('model', upstreamModel)
	if (body.stream === true && body.stream_options?.include_usage !== true) set('stream_options', { ...body.stream_options, include_usage: true })
	if (budget.capChanged) set('max_tokens', budget.cap)
	return out ?? body
}

async function attempt(call: CompletionCall, info: CallInfo, ch: Channel, budget: Budget): Promise<Attempt> {
	const adapter = chatAdapterFor(ch.type)!
	const upstreamModel = ch.modelMap[call.body.model] ?? call.body.model
	const out = upstreamBody(call.body, upstreamModel, budget)
	const text = (call.raw !== undefined && bodyText(call.raw, call.body, out)) || JSON.stringify(out)
	let up
	const attemptStart = Date.now()
	try {
		up = await fetchUpstream(openaiUrl(ch, upstreamModel, '/completions'), { headers: adapter.headers(ch), body: text, ...credentialHooks(ch) }, channelTimeouts(ch.settings, waitsFor(call.body.stream === true)), call.signal)
	} catch (e) {
		return { error: e instanceof GatewayError ? e : new GatewayError('upstream', String(e), { retryable: true }) }
	}
	const { res } = up
	call.svc.metrics.ttfb.observe({ endpoint: ENDPOINT, model: metricModel(call.svc, call.body.model), channel: ch.name }, (Date.now() - attemptStart) / 1000)
	if (!res.ok) return { error: upstreamError(res.status, await res.text().catch(() => ''), res.headers) }
	const headers = { 'x-request-id': call.requestId }
	if (call.body.stream === true) {
		if (!res.body) return { error: new GatewayError('upstream', 'upstream sent an empty stream', { retryable: true }) }
		return relayCompletionStream({ info, budget, up, channel: ch, upstreamModel, model: call.body.model, includeUsage: call.body.stream_options?.include_usage === true, headers })
	}
	const malformed = { error: malformedAnswer() }
	let answer: string
	let json: { usage?: unknown; choices?: unknown }
	try {
		answer = await up.text()
		json = JSON.parse(answer)
	} catch (e) {
		return { error: unreadableAnswer(e) }
	}
	if (!json || typeof json !== 'object') return malformed
	// The answer goes out as it came; only a model_map alias is put back to the name the client asked for.
	if (upstreamModel !== call.body.model) {
		const model = topLevelMembers(answer, MODEL)?.get('model')
		if (model) answer = answer.slice(0, model.start) + JSON.stringify(call.body.model) + answer.slice(model.end)
	}
	await settle(info, budget, { usage: openaiChat.usageOf(json), estimateOutput: () => countText(choiceText(json.choices)), status: 200, endReason: 'ok', channel: ch, upstreamModel })
	return { ok: new Response(answer, { status: 200, headers: { 'content-type': 'application/json', ...headers } }) }
}

const MODEL = new Set(['model'])
