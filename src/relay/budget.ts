/**
 * Before the upstream call: find who serves the model and at what price, reserve the worst case through the ledger,
 * and decide the output cap (lowered to the model's maximum, and to what the remaining balance covers).
 * After it: turn usage into a cost and a usage row and settle.
 * @module
 */
import type { AuthToken } from '../auth/api-key'
import type { Hold } from '../billing/ledger'
import { type Reach, affordableOutput, searchHold, tokenCost, upperBound } from '../billing/pricing'
import { usageRecord } from '../billing/usage-record'
import { GatewayError } from '../core/errors'
import { DEFAULT_ANSWER_TOKENS } from '../core/reasoning'
import { observeUsage } from '../metrics/observe-usage'
import { withTierSaid } from './served-tier'
import { type ChatRequest, type ServiceTier, type Usage, emptyUsage } from '../core/ir'
import { type Channel, type ModelInfo, matchesModel } from '../routing/catalog'
import type { Services } from '../services'

/**
 * Output cap assumed when neither the request nor the price list gives one (a thinking request adds its budget:
 * `defaultOutputCap`, core/reasoning.ts).
 */
export const DEFAULT_MAX_OUTPUT = DEFAULT_ANSWER_TOKENS
/** The smallest answer worth starting; below this headroom the request is refused with 402. */
export const MIN_ANSWER_TOKENS = 16

export type Route = { channels: Channel[]; price: ModelInfo }

/**
 * Throws 404 for a model no channel serves, 503 for one whose channels are all disabled, 403 for one the key may not
 * use or that has no price.
 */
export function resolveModel(svc: Services, token: AuthToken, model: string): Route {
	if (token.allowedModels && !matchesModel(token.allowedModels, model))
		throw new GatewayError('permission', `This API key may not use model "${model}"`, { code: 'model_not_allowed' })
	const channels = svc.catalog.channelsFor(model)
	if (!channels.length) throw unservedModel(svc, model)
	const price = svc.catalog.price(model) ?? (svc.env.allowUnpriced ? { name: model, inputPerMtok: 0, outputPerMtok: 0 } : undefined)
	if (!price) throw new GatewayError('permission', `The model "${model}" has no price configured; ask an administrator`, { code: 'model_not_priced' })
	return { channels, price }
}

/**
 * The error for a model no enabled channel serves: 503 when it exists here (priced, or listed by a disabled channel,
 * e.g. one disabled after its key was refused), since an operator can bring it back; else 404. The 503 says
 * `x-should-retry: false`: only an operator brings a channel back (a cooling one is still tried), so the SDKs' two
 * retries a second apart would only repeat it.
 */
export function unservedModel(svc: Services, model: string): GatewayError {
	if (svc.catalog.known(model))
		return new GatewayError('unavailable', `No channel is available for model "${model}" right now`, { code: 'model_unavailable', param: 'model', clientRetry: false })
	return new GatewayError('not_found', `The model "${model}" does not exist or is not served here`, { code: 'model_not_found', param: 'model' })
}

export type Budget = {
	hold: Hold
	/** The output cap to send upstream. */
	cap: number
	/**
	 * Whether the upstream body must carry `cap`: it differs from the client's cap, or the client set none and a
	 * configured model maximum or the balance limits the answer. Otherwise a client that set no cap keeps the vendor's
	 * default: the fast path adds nothing the client did not send.
	 */
	capChanged: boolean
	price: ModelInfo
	/** The prompt-token bound the reservation was sized with. */
	inputEstimate: number
	/** The token kinds and tiers the request can reach, which the reservation priced (relay/reach.ts); later rounds of
	 * the same conversation (src/mcp) reserve with it too. */
	reach?: Reach
	/** The prompt tokens counted with the tokenizer (computed on first call): for usage the upstream did not report and
	 * for Anthropic's message_start when the upstream reports input only at the end. */
	countInput: () => number
}

/**
 * The output cap a converted request carries upstream, as the fast path decides it: the client's (lowered when the
 * model's maximum or the balance requires), or the one the budget imposes on a client that set none; else none, and
 * the vendor's default applies (a client that set no cap is not given a hidden one). A protocol that requires a cap
 * (Anthropic `max_tokens`) gets the one the reservation assumed: the model's configured maximum, else the default.
 * @example upstreamCap({ cap: 4096, capChanged: false }, undefined, false) === undefined
 */
export function upstreamCap(budget: Pick<Budget, 'cap' | 'capChanged'>, requested: number | undefined, required: boolean): number | undefined {
	return requested !== undefined || budget.capChanged || required ? budget.cap : undefined
}

/** `ir` (with the client's own cap) carrying the cap `upstreamCap` gives, or none. */
export function withUpstreamCap(ir: ChatRequest, budget: Pick<Budget, 'cap' | 'capChanged'>, required: boolean): ChatRequest {
	const out = { ...ir }
	const cap = upstreamCap(budget, ir.maxTokens, required)
	if (cap === undefined) delete out.maxTokens
	else out.maxTokens = cap
	return out
}

/**
 * Reserves the request's bound: at once from this instance's lease when it has room (the common case: a Budget, not
 * a promise), else through the ledger's take. `choices` answers (OpenAI `n`) may each reach the output cap.
 * `uncapped` is the cap assumed when neither the client nor the model's configured maximum gives one. `reach` prices
 * only the token kinds and tiers the request can produce (relay/reach.ts); without it, every kind the model prices.
 * `prompts`: how many times the prompt may be paid (the choices asked of a vendor one call per answer: choices.ts).
 */
export function reserveBudget(
	svc: Services,
	token: AuthToken,
	requestId: string,
	price: ModelInfo,
	inputEstimate: number,
	requested?: number,
	count?: () => number,
	choices = 1,
	uncapped = DEFAULT_MAX_OUTPUT,
	reach?: Reach,
	prompts = 1,
): Budget | Promise<Budget> {
	const modelMax = price.maxOutputTokens ?? undefined
	const cap = Math.min(requested ?? modelMax ?? uncapped, modelMax ?? Number.MAX_SAFE_INTEGER)
	const tokens = upperBound(inputEstimate * prompts, cap * choices, price, reach)
	const want = tokens + searchHold(price, reach) * prompts
	const owner = { accountId: token.accountId, tokenId: token.id }
	const shape = { maxCap: cap, requested, uncapped, price, inputEstimate, count, choices, reach, prompts }
	const now = svc.ledger.reserveNow(owner, requestId, want)
	if (now) return budgetOf(now, tokens, shape)
	const min = upperBound(inputEstimate * prompts, Math.min(cap, MIN_ANSWER_TOKENS) * choices, price, reach)
	return svc.ledger.reserve(owner, requestId, want, min).then((hold) => budgetOf(hold, tokens, shape))
}

type Shape = {
	maxCap: number
	requested: number | undefined
	uncapped: number
	price: ModelInfo
	inputEstimate: number
	count: (() => number) | undefined
	choices: number
	reach: Reach | undefined
	prompts: number
}

/** The budget a hold makes: the output cap lowered to what it affords (shared by the choices) when it is less than the tokens' bound `want`. */
function budgetOf(hold: Hold, want: number, { maxCap, requested, uncapped, price, inputEstimate, count, choices, reach, prompts }: Shape): Budget {
	const modelMax = price.maxOutputTokens ?? undefined
	const cap = hold.amount < want ? Math.max(1, Math.min(maxCap, Math.floor(affordableOutput(hold.amount, inputEstimate * prompts, price, reach) / choices))) : maxCap
	const capChanged = requested !== undefined ? cap !== requested : modelMax !== undefined || cap < uncapped
	let counted: number | undefined
	const countInput = () => (counted ??= count ? count() : inputEstimate)
	return { hold, cap, capChanged, price, inputEstimate, countInput, reach }
}

export type Outcome = {
	usage?: Partial<Usage>
	/** Output text produced, for counting when the upstream gave no output count. */
	estimateOutput: () => number | Promise<number>
	/** The thinking part of that text, counted: an estimated output says how much of it was reasoning. */
	estimateReasoning?: () => number
	status: number
	endReason: string
	channel?: Channel
	upstreamModel?: string
	/** Part of `usage` was counted here rather than reported (several calls, some of which reported none: choices.ts). */
	estimated?: boolean
	/**
	 * The gateway ended the stream before the upstream's end (a stop sequence it enforces: stop-sequences.ts): usage
	 * reported so far may be a placeholder (Anthropic message_start says 1), so the output is counted as on an abort.
	 */
	stoppedEarly?: boolean
	/** The tier a response header says served the request (codec.ts `TierHeader`), for usage whose body named none. */
	servedTier?: ServiceTier
}

/** Told the usage a settlement bills, before it is charged; with none when the settlement failed before it knew it. */
export type BilledHook = (usage?: Usage) => void

export type CallInfo = {
	svc: Services
	token: AuthToken
	requestId: string
	endpoint: string
	model: string
	stream: boolean
	startedAt: number
	/** Told each usage `settle` bills (a stored chat completion keeps it: modules/chat-stored/keep.ts); unset for any other request. */
	billed?: BilledHook
}

/** What the upstream left out of its usage, which the bill counts instead (and a converted answer shows the same). */
export function unreported(u: Partial<Usage> | undefined): { input: boolean; output: boolean } {
	return { input: u?.input === undefined && u?.cacheRead === undefined, output: u?.output === undefined }
}

/**
 * The counts `settle` bills in place of what the upstream reported, for the client to be shown the same: the input
 * when unreported; the output when unreported or, for an answer that ended early (cut, or stopped at a sequence the
 * gateway enforces), when the count is more than the reported one, which may be a placeholder (Anthropic's
 * message_start says 1). Undefined when the reported usage stands as it is.
 */
export function countedUsage(reported: Partial<Usage> | undefined, countInput: () => number, countOutput: () => number, early: boolean): Partial<Usage> | undefined {
	const missing = unreported(reported)
	const counted = missing.output || early ? countOutput() : 0
	if (!missing.input && !missing.output && counted <= (reported?.output ?? 0)) return undefined
	const out: Partial<Usage> = {}
	if (missing.input) out.input = countInput()
	if (missing.output || counted > (reported?.output ?? 0)) out.output = counted
	return out
}

/**
 * The size of a vendor-kept conversation after a turn (an Anthropic message thread): the turn's whole input (cache
 * reads and writes included) plus its output, as reported; an input the upstream did not report is the one counted.
 * @example threadSize({ input: 10, cacheRead: 90, output: 5 }, budget) === 105
 */
export function threadSize(u: Partial<Usage> | undefined, budget: Pick<Budget, 'countInput'>): number {
	const input = unreported(u).input ? budget.countInput() : (u?.input ?? 0) + (u?.cacheRead ?? 0) + (u?.cacheWrite ?? 0)
	return input + (u?.output ?? 0)
}

/** Completes usage (estimating what the upstream did not report), prices it and settles the hold. */
export async function settle(call: CallInfo, budget: Budget, o: Outcome): Promise<number> {
	const reported = o.usage
	const usage = withTierSaid({ ...emptyUsage(), ...reported }, o.servedTier)
	let estimated = o.estimated === true
	const missing = unreported(reported)
	if (missing.input) {
		usage.input = budget.countInput()
		estimated = true
	}
	let outputCounted = missing.output
	if (missing.output) {
		usage.output = await o.estimateOutput()
		estimated = true
	} else if (o.endReason !== 'ok' || o.stoppedEarly) {
		// A cut or abandoned stream may carry only an early placeholder (Anthropic message_start says 1): count
		// what was actually produced when that is more.
		const counted = await o.estimateOutput()
		if (counted > usage.output) {
			usage.output = counted
			estimated = outputCounted = true
		}
	}
	if (outputCounted && !usage.reasoning && o.estimateReasoning) usage.reasoning = Math.min(o.estimateReasoning(), usage.output)
	call.billed?.(usage)
	const record = usageRecord(call, { channel: o.channel, upstreamModel: o.upstreamModel, status: o.status, endReason: o.endReason, usage, estimated })
	const charged = await budget.hold.settle(tokenCost(usage, budget.price), record)
	observeUsage(call.svc, call.token, record, charged)
	return charged
}


/** Gives the hold back and records the failed request (cost 0). */
export async function release(call: CallInfo, budget: Budget, status: number, endReason: string, channel?: Channel) {
	const record = usageRecord(call, { channel, status, endReason })
	await budget.hold.release(record)
	observeUsage(call.svc, call.token, record, 0)
}
