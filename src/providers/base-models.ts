/**
 * What an upstream id stands for when it names no model: an Amazon Bedrock application inference profile's ARN
 * (`arn:aws:bedrock:us-east-1:111122223333:application-inference-profile/a1b2c3`), whose foundation model the channel's
 * `settings.base_models` says (validated as a map of strings: config/channel-settings.ts). Read for the API a call goes
 * over (providers/bedrock.ts), its counter and the model's limits (routing/catalog.ts).
 * @module
 */
import type { Channel } from '../routing/catalog'

/** The channel's `settings.base_models` entry for `model`, if any. */
export function baseModelIn(ch: Pick<Channel, 'settings'>, model: string): string | undefined {
	const map = ch.settings.base_models
	const found = map && typeof map === 'object' && Object.hasOwn(map, model) ? (map as Record<string, unknown>)[model] : undefined
	return typeof found === 'string' ? found : undefined
}

/**
 * The foundation model an upstream id stands for: the channel's `settings.base_models` entry, else the id itself.
 * @example foundationModelOf({ settings: { base_models: { 'arn:…/a1b2': 'anthropic.claude-sonnet-4-6-v1:0' } } }, 'arn:…/a1b2') === 'anthropic.claude-sonnet-4-6-v1:0'
 */
export const foundationModelOf = (ch: Pick<Channel, 'settings'>, model: string): string => baseModelIn(ch, model) ?? model
