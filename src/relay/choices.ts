/**
 * Several answers (OpenAI `n`, Gemini `candidateCount`) from a channel of another protocol. The canonical answer is
 * one answer, so the relay makes several: a vendor whose protocol gives several in one call (`severalAnswers`: OpenAI
 * `n`, Gemini `candidateCount`) is asked once and each answer read by its index; any other (Anthropic) is asked once
 * per answer, all at once, the prompt paid each time. The client's codec merges them (`encodeChoices`,
 * `choicesEncoder`), each at its index, with the whole request's usage (summed over the calls), billed once.
 * When one call fails the request fails in the client's shape: the calls the vendor answered are billed (it charged
 * for them), and nothing more. Stop sequences the vendor cannot take are enforced on each answer (stop-sequences.ts).
 * A vendor asked once per answer is asked for at most `MAX_FANNED_ANSWERS` (OpenAI's `n` goes to 128).
 * @module
 */
import { failedRow } from '../billing/usage-record'
import { GatewayError, unsupportedForModel } from '../core/errors'
import { type ChatRequest, type ChatResponse, type Usage, sumUsage } from '../core/ir'
import type { UpstreamCodec } from '../protocols/codec'
import { continuedPrefill } from '../protocols/final-turn'
import type { ChatAdapter, Via } from '../providers/adapter'
import { chatAdapterOf } from '../providers/registry'
import { upstreamError } from '../providers/upstream-error'
import type { ResponseAttempt as Attempt } from '../routing/attempts'
import type { Channel } from '../routing/catalog'
import { type Budget, type CallInfo, settle } from './budget'
import type { ChatCall } from './chat'
import { streamedChoices } from './choices-stream'
import { countOutputText } from './output-count'
import { cutAnswer } from './stop-sequences'
import { convertedBody } from './upstream-codec'
import { channelTimeouts, fetchUpstream, type Timeouts, unreadableAnswer, waitsFor } from './upstream-fetch'

/** How the answers are asked for: `calls` calls of `perCall` answers each, answer `k * perCall + i` being call k's i-th. */
export type ChoicesPlan = {
	n: number
	calls: number
	perCall: number
	codec: UpstreamCodec
	body: string
	url: string
	headers: Record<string, string>
	/** The channel and adapter the calls go through (their hooks: providers/adapter.ts). */
	via: Via
	timeouts: Timeouts
}

export type ChoicesAttempt = {
	call: ChatCall
	info: CallInfo
	budget: Budget
	plan: ChoicesPlan
	channel: Channel
	upstreamModel: string
	/** The stop sequences the vendor was not sent, which the gateway cuts each answer at. */
	held: string[]
}

/**
 * The most answers one request gets from a vendor asked once per answer (Anthropic): each is a call of its own, all
 * sent at once with the prompt paid each time, so one request must not become a hundred. Gemini's own most candidates.
 */
export const MAX_FANNED_ANSWERS = 8

/** The client's field asking for several answers. */
export const choicesField = (call: ChatCall) => (call.client.name === 'gemini' ? 'generationConfig.candidateCount' : 'n')

/** The most answers a channel gives one request: its protocol's most in one call, or MAX_FANNED_ANSWERS calls. */
export function mostAnswers(call: ChatCall, ch: Channel): number {
	const protocol = chatAdapterOf(ch, call.ir.model)?.protocol
	return protocol?.severalAnswers === true ? (protocol.mostAnswers ?? Infinity) : MAX_FANNED_ANSWERS
}

/**
 * More answers than a vendor asked once per answer gives (`MAX_FANNED_ANSWERS`). Retryable on one channel: another of
 * the model's, whose vendor gives several in one call, may serve it.
 */
export const tooManyAnswers = (call: ChatCall, retryable: boolean, most = MAX_FANNED_ANSWERS) => {
	const field = choicesField(call)
	return unsupportedForModel(
		`model "${call.ir.model}" gives at most ${most} answers per request (${field} is ${call.ir.choices}); ask for fewer`,
		retryable,
		field,
	)
}

/** The request for one of several answers. */
const oneAnswer = (ir: ChatRequest): ChatRequest => {
	const out = { ...ir }
	delete out.choices
	return out
}

/** `stops`: the request as the vendor takes its stop sequences, and those left for the gateway (splitStops). */
export async function choicesAttempt(
	call: ChatCall,
	info: CallInfo,
	ch: Channel,
	adapter: ChatAdapter,
	budget: Budget,
	upstreamModel: string,
	stops: { ir: ChatRequest; held: string[] },
): Promise<Attempt> {
	const n = call.ir.choices ?? 1
	if (!call.client.encodeChoices || !call.client.choicesEncoder) return { error: new GatewayError('invalid_request', `${call.client.name} clients cannot ask for several answers`) }
	const together = adapter.protocol.severalAnswers === true
	// Checked on the adapter the call goes through: it may be the vendor's other API (OpenAI Responses: no `n`).
	// A vendor giving several in one call has its own most (Gemini's 8), which its 400 would name in its own words.
	const most = together ? (adapter.protocol.mostAnswers ?? Infinity) : MAX_FANNED_ANSWERS
	if (n > most) return { error: tooManyAnswers(call, true, most) }
	let sent
	try {
		sent = await convertedBody(call, ch, adapter, budget, upstreamModel, together ? stops.ir : oneAnswer(stops.ir))
	} catch (e) {
		if (e instanceof GatewayError) return { error: e }
		throw e
	}
	const plan: ChoicesPlan = {
		n,
		calls: together ? 1 : n,
		perCall: together ? n : 1,
		...sent,
		url: adapter.chatUrl(ch, upstreamModel, call.ir.stream, continuedPrefill(call.ir) !== undefined),
		headers: adapter.headers(ch),
		via: { ch, adapter },
		timeouts: channelTimeouts(ch.settings, waitsFor(call.ir.stream)),
	}
	const a: ChoicesAttempt = { call, info, budget, plan, channel: ch, upstreamModel, held: stops.held }
	return call.ir.stream ? streamedChoices(a) : wholeChoices(a)
}

/** A failure that ends the request as it is: some calls were billed, so no other channel is tried (nor the hold released). */
export const finalError = (e: GatewayError): GatewayError =>
	new GatewayError(e.kind, e.message, { code: e.code, status: e.status, retryable: false, retryAfter: e.retryAfter, param: e.param, detail: e.detail, details: e.details })

/**
 * Streamed calls for several answers, each aborted when another fails (`fail`): the signal the calls run under and
 * the first failure. Each call also stops when the client goes away.
 */
export function siblings(client: AbortSignal) {
	const ctl = new AbortController()
	let first: GatewayError | undefined
	return {
		signal: AbortSignal.any([client, ctl.signal]),
		fail(e: GatewayError) {
			first ??= e
			ctl.abort(e)
		},
		get first() {
			return first
		},
	}
}

/** One call's answers and usage: as reported, or counted here when the vendor reported none. */
type Answered = { answers: ChatResponse[]; usage: Partial<Usage>; estimated: boolean }

/**
 * Whole answers: the calls all run to their end, also when one fails (a call the vendor is answering is charged by it
 * whether or not the answer is read, and only an answer read tells what it cost).
 */
async function wholeChoices(a: ChoicesAttempt): Promise<Attempt> {
	const { call, plan } = a
	const results = await Promise.all(Array.from({ length: plan.calls }, () => answersOf(a, call.signal)))
	const done = results.filter((r): r is Answered => !('error' in r))
	const usage = sumUsage(done.map((d) => d.usage))
	const estimated = done.some((d) => d.estimated)
	const outcome = { usage, estimated, estimateOutput: () => usage.output, channel: a.channel, upstreamModel: a.upstreamModel }
	const failed = results.find((r): r is { error: GatewayError } => 'error' in r)?.error
	if (failed) {
		if (!done.length) return { error: failed }
		await settle(a.info, a.budget, { ...outcome, ...failedRow(failed.status, call.signal.aborted) })
		return { error: finalError(failed) }
	}
	await settle(a.info, a.budget, { ...outcome, status: 200, endReason: 'ok' })
	const body = call.client.encodeChoices!(
		done.flatMap((d) => d.answers),
		usage,
		{ model: call.ir.model, includeUsage: call.includeUsage },
	)
	return { ok: new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json', 'x-request-id': call.requestId } }) }
}

/** One upstream call for `perCall` whole answers. */
async function answersOf(a: ChoicesAttempt, signal: AbortSignal): Promise<Answered | { error: GatewayError }> {
	const { plan } = a
	let up
	try {
		up = await fetchUpstream(plan.url, { headers: plan.headers, body: plan.body, ...plan.via }, plan.timeouts, signal)
	} catch (e) {
		return { error: e instanceof GatewayError ? e : new GatewayError('upstream', String(e), { retryable: true }) }
	}
	const { res } = up
	try {
		if (!res.ok) return { error: upstreamError(res.status, await res.text().catch(() => ''), res.headers) }
		let json: unknown
		try {
			json = JSON.parse(await up.text())
		} catch (e) {
			return { error: unreadableAnswer(e) }
		}
		const answers = Array.from({ length: plan.perCall }, (_, i) => plan.codec.decodeResponse(json, i))
		// Cut as the vendor would have: its usage stays the whole answers' (it generated them).
		if (a.held.length) for (const r of answers) cutAnswer(r, a.held)
		// The usage of a body with several answers covers all of them: it is read once.
		const reported = answers[0]!.usage
		if (reported.input + reported.output + reported.cacheRead > 0) return { answers, usage: reported, estimated: false }
		// No usage from the upstream: counted here, and the client is shown the same counts (WIRE-NOTES #12).
		let output = 0
		for (const r of answers) output += countOutputText(r)
		return { answers, usage: { ...reported, input: a.budget.countInput(), output }, estimated: true }
	} catch (e) {
		return { error: e instanceof GatewayError ? e : new GatewayError('upstream', 'upstream sent a response we could not read', { retryable: true, code: 'upstream_malformed' }) }
	} finally {
		up.release()
	}
}
