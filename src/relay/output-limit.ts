/**
 * The model's maximum output (routing/model-limits.ts) where a request meets it. A cap above the vendor's documented
 * maximum is refused before anything is reserved or sent, in the words the caller's vendor uses for it, when the
 * request would reach that vendor in its own protocol (the vendor would refuse it the same way); a request converted
 * for another vendor, whose client cannot know that vendor's limits (Claude Code sends `max_tokens: 32000` to every
 * model), and any request above a maximum the operator configured, have the cap lowered to the maximum instead. A request that names no cap to a vendor that requires one (Anthropic `max_tokens`) is
 * reserved for, and sent, the model's maximum rather than a fixed default that cuts long answers short.
 * @module
 */
import { GatewayError } from '../core/errors'
import { defaultOutputCap } from '../core/reasoning'
import type { Price } from '../billing/pricing'
import type { ChatRequest } from '../core/ir'
import type { ProtocolName } from '../protocols/codec'
import { chatAdapterFor } from '../providers/registry'
import type { Channel } from '../routing/catalog'
import type { ModelLimits } from '../routing/model-limits'

/**
 * The 400 a vendor answers to a cap above the model's maximum, in the caller's protocol. Wordings: OpenAI
 * ("max_tokens is too large: 100000. This model supports at most 16384 completion tokens, whereas you provided
 * 100000."), Anthropic ("max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for …"),
 * Gemini ("… has a maxOutputTokens value of 100000 but the supported range is from 1 (inclusive) to 65537 (exclusive)").
 * @example capTooLarge('anthropic-messages', {}, 'claude-sonnet-4-5', 100000, 64000).status === 400
 */
export function capTooLarge(protocol: ProtocolName, body: Record<string, unknown>, model: string, requested: number, max: number): GatewayError {
	switch (protocol) {
		case 'anthropic-messages':
			return new GatewayError('invalid_request', `max_tokens: ${requested} > ${max}, which is the maximum allowed number of output tokens for ${model}`, { param: 'max_tokens' })
		case 'gemini':
			return new GatewayError(
				'invalid_request',
				`Unable to submit request because it has a maxOutputTokens value of ${requested} but the supported range is from 1 (inclusive) to ${max + 1} (exclusive). Update the value and try again.`,
				{ param: 'generationConfig.maxOutputTokens' },
			)
		default: {
			const field = protocol === 'openai-responses' ? 'max_output_tokens' : body.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens'
			return new GatewayError('invalid_request', `${field} is too large: ${requested}. This model supports at most ${max} completion tokens, whereas you provided ${requested}.`, {
				param: field,
				code: 'invalid_value',
			})
		}
	}
}

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
 * not, or when the maximum is the model entry's `max_output_tokens` (the reservation lowers the cap to it); with the
 * vendor's documented maximum as `maxOutputTokens` (lowered likewise, every path sending the lowered cap) when some
 * channel converts the request. Throws `capTooLarge` when every channel takes the caller's own protocol: its vendor
 * would refuse the cap in the same words.
 * @example fitOutputCap('openai-chat', body, { ...ir, maxTokens: 32000 }, [anthropicChannel], price, { maxOutput: 16384 }).maxOutputTokens === 16384
 */
export function fitOutputCap<P extends Price>(protocol: ProtocolName, body: Record<string, unknown>, ir: ChatRequest, channels: Channel[], price: P, limits: ModelLimits): P {
	const max = limits.maxOutput
	// A maximum the operator configured is the gateway's own cap, which no client can know: always lowered to.
	if (max === undefined || ir.maxTokens === undefined || ir.maxTokens <= max || price.maxOutputTokens != null) return price
	if (channels.every((ch) => speaksNatively(protocol, ch))) throw capTooLarge(protocol, body, ir.model, ir.maxTokens, max)
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
