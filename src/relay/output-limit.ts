/**
 * The model's maximum output (routing/model-limits.ts) where a request meets it. A request converted for another
 * vendor, whose client cannot know that vendor's limits (Claude Code sends `max_tokens: 32000` to every model), and any
 * request above a maximum the operator configured, have the cap lowered to the maximum. A request that reaches the
 * vendor in its own protocol keeps its cap: the vendor judges it, with what the built-in figures cannot know (a beta
 * header raising the limit, as Anthropic's `output-128k-2025-02-19` does for Claude 3.7 Sonnet, or a newer limit), and
 * answers a cap too large in its own words. A request that names no cap to a vendor that requires one (Anthropic
 * `max_tokens`) is reserved for, and sent, the model's maximum rather than a fixed default that cuts long answers
 * short. Where the gateway chooses the cap (none named, or a converted one lowered to the maximum) for a vendor that
 * counts it against the context window (Anthropic), it is fitted to the room the prompt leaves.
 * @module
 */
import { DEFAULT_ANSWER_TOKENS, defaultOutputCap } from '../core/reasoning'
import type { Price } from '../billing/pricing'
import type { ChatRequest } from '../core/ir'
import type { ProtocolName } from '../protocols/codec'
import { chatAdapterOf } from '../providers/registry'
import type { Channel } from '../routing/catalog'
import type { ModelLimits } from '../routing/model-limits'

/** Whether `ch` takes the caller's own protocol: its vendor judges the cap as the caller expects. */
function speaksNatively(protocol: ProtocolName, ch: Channel, model: string | undefined): boolean {
	const adapter = chatAdapterOf(ch, model)
	if (!adapter) return false
	if (adapter.protocol.name === protocol) return true
	// OpenAI channels serve the Responses API natively unless opted out (modules/responses/native.ts).
	return protocol === 'openai-responses' && ch.settings.responses_api !== false && adapter.responsesUrl !== undefined
}

/**
 * The price to reserve with, for a request whose cap may exceed the model's known maximum: unchanged when it does
 * not, when the maximum is the model entry's `max_output_tokens` (the reservation lowers the cap to it), or when every
 * channel takes the caller's own protocol (its vendor judges the cap); with the vendor's documented maximum as
 * `maxOutputTokens` (lowered likewise, every path sending the lowered cap) when some channel converts the request.
 * @example fitOutputCap('openai-chat', { ...ir, maxTokens: 32000 }, [anthropicChannel], price, { maxOutput: 16384 }).maxOutputTokens === 16384
 */
export function fitOutputCap<P extends Price>(protocol: ProtocolName, ir: ChatRequest, channels: Channel[], price: P, limits: ModelLimits): P {
	const max = limits.maxOutput
	// A maximum the operator configured is the gateway's own cap, which no client can know: always lowered to.
	if (max === undefined || ir.maxTokens === undefined || ir.maxTokens <= max || price.maxOutputTokens != null) return price
	if (channels.every((ch) => speaksNatively(protocol, ch, ir.model))) return price
	return { ...price, maxOutputTokens: max }
}

/**
 * The output cap a request that names none is reserved for: the model's known maximum when a channel that may serve
 * it speaks a protocol requiring a cap (which is then sent that cap, or less when the balance affords less), else a
 * default answer above the thinking budget (core/reasoning.ts), the vendor's own default applying upstream.
 * @example uncappedOutput(ir, [anthropicChannel], { maxOutput: 64000 }) === 64000
 */
export function uncappedOutput(ir: ChatRequest, channels: Channel[], limits: ModelLimits): number {
	if (limits.maxOutput !== undefined && channels.some((ch) => chatAdapterOf(ch, ir.model)?.protocol.requiresMaxTokens === true)) return limits.maxOutput
	return defaultOutputCap(ir.reasoning)
}

/**
 * Our prompt count is o200k's (relay/estimate.ts; texts over 64K characters by length / 3), and Claude's tokenizer is
 * another that splits the same text into more tokens: OpenAI documents ~4 English characters per token, while ~3.5 is
 * the usual figure for Claude, so ~15% more for English prose and more for code and other scripts; 25% covers that with
 * room to spare (too large a margin only shortens the longest answer possible, too small one brings the vendor's 400
 * back). The fixed part covers what the vendor adds to the prompt: the tool-use system prompt (up to 530 tokens,
 * docs.anthropic.com/en/docs/tool-use-pricing-and-tokens) and the turns' markers.
 */
const PROMPT_MARGIN = 1.25
const PROMPT_OVERHEAD = 1024
/**
 * The least cap the gateway fits down to: a default answer's room, which a thinking budget still fits under
 * (core/reasoning.ts). A prompt that leaves less is sent it and judged by the vendor, whose own 400 is then the answer.
 */
export const MIN_FITTED_OUTPUT = DEFAULT_ANSWER_TOKENS

/**
 * The output room a context window leaves after a prompt of `input` estimated tokens, with the estimate's margin,
 * never below `MIN_FITTED_OUTPUT`.
 * @example outputRoom(200_000, 150_000) === 11_476
 */
export function outputRoom(window: number, input: number): number {
	return Math.max(MIN_FITTED_OUTPUT, window - Math.ceil(input * PROMPT_MARGIN) - PROMPT_OVERHEAD)
}

/**
 * The cap the gateway chooses for a request, before the balance: the model's maximum (configured, or set by
 * `fitOutputCap`) or `uncapped` when the client named none, the maximum when the client's is above it; undefined when
 * the client's own cap stands.
 * @example chosenCap(undefined, { maxOutputTokens: null }, 64000) === 64000
 */
export function chosenCap(requested: number | undefined, price: Pick<Price, 'maxOutputTokens'>, uncapped: number): number | undefined {
	const max = price.maxOutputTokens ?? undefined
	if (requested === undefined) return max ?? uncapped
	return max !== undefined && requested > max ? max : undefined
}

/**
 * The largest cap the gateway may choose for a request converted for a vendor that refuses a prompt plus cap over the
 * context window (Anthropic: "input length and `max_tokens` exceed context limit", since Claude 3.7 Sonnet,
 * docs.anthropic.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size; OpenAI and Gemini
 * refuse only a prompt over the window, their caps being separate). Undefined when `chosen` (chosenCap) fits or there
 * is none, no window is known, or no channel converting the request has the rule: a request reaching Anthropic in its
 * own protocol names its cap, and the vendor judges it. `bound` (the reservation's generous bound) settles the common
 * case without counting; `count` (the tokenizer's) is asked only when the bound does not fit.
 * @example contextRoom('openai-chat', [anthropicChannel], { contextWindow: 200000 }, 64000, 190000, () => 150000) === 11476
 */
export function contextRoom(
	protocol: ProtocolName,
	channels: Channel[],
	limits: ModelLimits,
	chosen: number | undefined,
	bound: number,
	count: () => number,
	/** The public model, for a vendor with a protocol per model (Vertex AI). */
	model?: string,
): number | undefined {
	const window = limits.contextWindow
	if (window === undefined || chosen === undefined || outputRoom(window, bound) >= chosen) return undefined
	if (!channels.some((ch) => chatAdapterOf(ch, model)?.protocol.capWithinContext === true && !speaksNatively(protocol, ch, model))) return undefined
	const room = outputRoom(window, count())
	return room < chosen ? room : undefined
}

/** What the reservation is sized with: the price (its `maxOutputTokens` possibly lowered) and the cap assumed when none is named. */
export type FittedCap<P extends Price> = { price: P; uncapped: number }

/**
 * The three steps above for one model call: the price lowered to the model's maximum where the request is converted
 * (`fitOutputCap`), the cap assumed when none is named (`uncappedOutput`), then whichever of the two the gateway chooses
 * fitted to the room the prompt leaves in the context window (`contextRoom`). Each round of the gateway's MCP loop
 * (src/mcp/loop.ts) runs it again on its grown prompt, so a later round is sent a cap chosen as the first one was.
 * `bound` and `count` are as for `contextRoom`.
 */
export function fitCap<P extends Price>(protocol: ProtocolName, ir: ChatRequest, channels: Channel[], basePrice: P, limits: ModelLimits, bound: number, count: () => number): FittedCap<P> {
	let price = fitOutputCap(protocol, ir, channels, basePrice, limits)
	let uncapped = uncappedOutput(ir, channels, limits)
	const room = contextRoom(protocol, channels, limits, chosenCap(ir.maxTokens, price, uncapped), bound, count, ir.model)
	if (room !== undefined) {
		if (price.maxOutputTokens != null) price = { ...price, maxOutputTokens: room }
		else uncapped = room
	}
	return { price, uncapped }
}
