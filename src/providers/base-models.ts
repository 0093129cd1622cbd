/**
 * What an upstream id stands for when it names no model: an Amazon Bedrock application inference profile's ARN
 * (`arn:aws:bedrock:us-east-1:111122223333:application-inference-profile/a1b2c3`), whose foundation model the channel's
 * `settings.base_models` says (validated as a map of strings: config/channel-settings.ts), else the one Bedrock's
 * control plane named when asked (providers/bedrock-profiles.ts, kept here per channel). Read for the API a call goes
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

/** Where one channel's application inference profiles stand: learnt (`model`), being asked (`pending`), or failed until `retryAt`. */
export type ProfileLookup = { model?: string; pending?: Promise<void>; retryAt?: number; failure?: string }

/** A channel's lookups, for the base URL and key they were made with: an edited channel starts over. */
type ChannelProfiles = { baseUrl: string; apiKey: string; profiles: Map<string, ProfileLookup> }

const byChannel = new Map<number, ChannelProfiles>()
/** Bumped when a profile's model is learnt: what was derived from the ARN alone (the catalog's limits) is derived again. */
let learnt = 0

/** The lookup state of `profile` on `ch`, made empty when there is none. One entry per channel and profile for the process's life (they are few). */
export function profileLookup(ch: Pick<Channel, 'id' | 'baseUrl' | 'apiKey'>, profile: string): ProfileLookup {
	let c = byChannel.get(ch.id)
	if (!c || c.baseUrl !== ch.baseUrl || c.apiKey !== ch.apiKey) {
		c = { baseUrl: ch.baseUrl, apiKey: ch.apiKey, profiles: new Map() }
		byChannel.set(ch.id, c)
	}
	let p = c.profiles.get(profile)
	if (!p) c.profiles.set(profile, (p = {}))
	return p
}

/** Records the foundation model Bedrock said `lookup`'s profile serves. */
export function learnBaseModel(lookup: ProfileLookup, model: string) {
	lookup.model = model
	lookup.failure = undefined
	lookup.retryAt = undefined
	learnt++
}

/** A number that changes whenever a profile's model is learnt. */
export const learntVersion = () => learnt

/** What Bedrock said `model` (a profile's ARN) serves on `ch`, when it was asked and answered; nothing is made. */
function learntBaseModel(ch: Pick<Channel, 'id' | 'baseUrl' | 'apiKey'>, model: string): string | undefined {
	const c = byChannel.get(ch.id)
	if (!c || c.baseUrl !== ch.baseUrl || c.apiKey !== ch.apiKey) return undefined
	return c.profiles.get(model)?.model
}

type Named = Pick<Channel, 'id' | 'baseUrl' | 'apiKey' | 'settings'>

/**
 * The foundation model a profile's ARN serves: the channel's `settings.base_models` entry (it always wins), else what
 * Bedrock said when asked; undefined for any other id, or a profile not (yet) known.
 */
export const baseModelOf = (ch: Named, model: string): string | undefined =>
	baseModelIn(ch, model) ?? (byChannel.size && model.startsWith('arn:') ? learntBaseModel(ch, model) : undefined)

/**
 * The foundation model an upstream id stands for: {@link baseModelOf}, else the id itself.
 * @example foundationModelOf({ settings: { base_models: { 'arn:…/a1b2': 'anthropic.claude-sonnet-4-6-v1:0' } } }, 'arn:…/a1b2') === 'anthropic.claude-sonnet-4-6-v1:0'
 */
export const foundationModelOf = (ch: Named, model: string): string => baseModelOf(ch, model) ?? model
