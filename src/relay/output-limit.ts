/**
 * The model's maximum output (routing/model-limits.ts) where a request meets it: a cap above it is refused before
 * anything is reserved or sent, in the words the caller's vendor uses for it, and a request that names no cap to a
 * vendor that requires one (Anthropic `max_tokens`) is reserved for, and sent, the model's maximum rather than a
 * fixed default that cuts long answers short.
 * @module
 */
import { GatewayError } from '../core/errors'
import { defaultOutputCap } from '../core/reasoning'
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

/** Throws `capTooLarge` for a request whose cap exceeds the model's known maximum. */
export function checkOutputCap(protocol: ProtocolName, body: Record<string, unknown>, ir: ChatRequest, limits: ModelLimits): void {
	if (limits.maxOutput !== undefined && ir.maxTokens !== undefined && ir.maxTokens > limits.maxOutput) throw capTooLarge(protocol, body, ir.model, ir.maxTokens, limits.maxOutput)
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
