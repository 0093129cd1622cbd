/**
 * The model's maximum output (routing/model-limits.ts) where a request meets it. A request converted for another
 * vendor, whose client cannot know that vendor's limits (Claude Code sends `max_tokens: 32000` to every model), and any
 * request above a maximum the operator configured, have the cap lowered to the maximum. A request that reaches the
 * vendor in its own protocol keeps its cap: the vendor judges it, with what the built-in figures cannot know (a beta
 * header raising the limit, as Anthropic's `output-128k-2025-02-19` does for Claude 3.7 Sonnet, or a newer limit), and
 * answers a cap too large in its own words. A request that names no cap to a vendor that requires one (Anthropic
 * `max_tokens`) is reserved for, and sent, the model's maximum rather than a fixed default that cuts long answers
 * short.
 * @module
 */
import { defaultOutputCap } from '../core/reasoning'
import type { Price } from '../billing/pricing'
import type { ChatRequest } from '../core/ir'
import type { ProtocolName } from '../protocols/codec'
import { chatAdapterFor } from '../providers/registry'
import type { Channel } from '../routing/catalog'
import type { ModelLimits } from '../routing/model-limits'

/** Whether `ch` takes the caller's own protocol: its vendor judges the cap as the caller expects. */
function speaksNatively(protocol: ProtocolName, ch: Channel): boolean {
	const adapter = chatAdapterFor(ch.type)
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
	if (channels.every((ch) => speaksNatively(protocol, ch))) return price
	return { ...price, maxOutputTokens: max }
}

/**
 * The output cap a request that names none is reserved for: the model's known maximum when a channel that may serve
 * it speaks a protocol requiring a cap (which is then sent that cap, or less when the balance affords less), else a
 * default answer above the thinking budget (core/reasoning.ts), the vendor's own default applying upstream.
 * @example uncappedOutput(ir, [anthropicChannel], { maxOutput: 64000 }) === 64000
 */
export function uncappedOutput(ir: ChatRequest, channels: Channel[], limits: ModelLimits): number {
	if (limits.maxOutput !== undefined && channels.some((ch) => chatAdapterFor(ch.type)?.protocol.requiresMaxTokens === true)) return limits.maxOutput
	return defaultOutputCap(ir.reasoning)
}
