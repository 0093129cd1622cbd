/**
 * The foundation model of an Amazon Bedrock application inference profile the channel's `settings.base_models` does not
 * list, asked of Bedrock's control plane: GetInferenceProfile
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_GetInferenceProfile.html),
 * `GET {control plane}/inference-profiles/{ARN, encoded}` with the channel's credentials (SigV4, service `bedrock`, or
 * the API key as bearer), answering `{"models": [{"modelArn": "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-…"}], …}`
 * (one per region for a profile copied from a cross-region one: the same model).
 * - Asked once per channel and profile, by the first request that needs it, which waits for it at most LOOKUP_WAIT_MS
 *   (the call goes on, up to LOOKUP_TIMEOUT_MS, for the requests after it); concurrent requests share that call. The
 *   answer is kept for the channel's life (a profile's model never changes), in base-models.ts, where every reader of
 *   the profile's model finds it; nothing more is asked or awaited then.
 * - A failure (no `bedrock:GetInferenceProfile` permission: 403 AccessDeniedException; a timeout…) is kept
 *   RETRY_AFTER_MS, logged when it differs from the last one: one call a minute, not one per request. Meanwhile, and
 *   while unknown, the profile goes over Converse, as without a lookup.
 * - The control plane: `settings.control_plane_url`, else the host beside a `bedrock-runtime.{region}.amazonaws.com`
 *   base_url (`bedrock.{region}.amazonaws.com`, FIPS and China's too); on any other base_url (a proxy, a VPC endpoint)
 *   without the setting nothing is asked.
 * @module
 */
import { GatewayError } from '../core/errors'
import type { Logger } from '../lib/log'
import { fetchUpstream } from '../relay/upstream-fetch'
import type { Channel } from '../routing/catalog'
import { joinUrl } from './adapter'
import { baseModelIn, learnBaseModel, profileLookup, type ProfileLookup } from './base-models'
import { bedrockCountHooks } from './bedrock'
import { stringSetting } from './channel-key-memo'

/** The longest a request waits for its profile's model before going on without it (over Converse). */
export const LOOKUP_WAIT_MS = 3_000
/** A lookup's own limit: one slower than a request waits still serves the requests after it. */
export const LOOKUP_TIMEOUT_MS = 10_000
/** A failed lookup is not made again for this long. */
export const RETRY_AFTER_MS = 60_000

/** `arn:aws:bedrock:us-east-1:111122223333:application-inference-profile/a1b2c3` (and the other partitions'). */
const APPLICATION_PROFILE = /^arn:aws[a-z-]*:bedrock:[a-z0-9-]+:\d{12}:application-inference-profile\/[A-Za-z0-9]+$/
/** `bedrock-runtime.us-east-1.amazonaws.com`, `bedrock-runtime-fips.us-gov-west-1.amazonaws.com`, `….amazonaws.com.cn` */
const RUNTIME_HOST = /^bedrock-runtime(-fips)?\.([a-z0-9-]+\.amazonaws\.com(?:\.cn)?)$/

export const isApplicationProfile = (model: string) => APPLICATION_PROFILE.test(model)

/** Where the channel's control plane is asked, or undefined when it cannot be known. */
export function controlPlaneUrl(ch: Pick<Channel, 'baseUrl' | 'settings'>): string | undefined {
	const set = stringSetting(ch, 'control_plane_url')
	if (set) return set
	try {
		const m = RUNTIME_HOST.exec(new URL(ch.baseUrl).hostname)
		return m ? `https://bedrock${m[1] ?? ''}.${m[2]}` : undefined
	} catch {
		return undefined
	}
}

/**
 * What the route's Bedrock channels still need to learn for `model` (its upstream id an application inference profile
 * they do not map, not known, not failed lately): a promise that settles once they know or LOOKUP_WAIT_MS passed, never
 * rejecting; undefined (nothing made) when there is nothing to wait for, as for every other model.
 */
export function profilesLearnt(channels: Channel[], model: string, log: Logger): Promise<void> | undefined {
	let waits: Promise<void>[] | undefined
	for (const ch of channels) {
		if (ch.type !== 'bedrock') continue
		const upstream = ch.modelMap[model] ?? model
		if (!isApplicationProfile(upstream) || baseModelIn(ch, upstream) !== undefined) continue
		const lookup = profileLookup(ch, upstream)
		if (lookup.model !== undefined || (lookup.retryAt !== undefined && Date.now() < lookup.retryAt)) continue
		if (!lookup.pending) {
			const control = controlPlaneUrl(ch)
			if (!control) {
				unaskable(ch, upstream, lookup, log)
				continue
			}
			lookup.pending = lookUp(ch, control, upstream, lookup, log)
		}
		;(waits ??= []).push(lookup.pending)
	}
	if (!waits) return undefined
	let timer: Timer | undefined
	const waited = new Promise<void>((resolve) => {
		timer = setTimeout(resolve, LOOKUP_WAIT_MS)
	})
	return Promise.race([Promise.all(waits).then(() => {}), waited]).finally(() => clearTimeout(timer))
}

/** No control plane to ask (a proxy's or a VPC endpoint's base_url, no control_plane_url): said once, the profile on Converse. */
function unaskable(ch: Channel, profile: string, lookup: ProfileLookup, log: Logger) {
	// Not asked again for RETRY_AFTER_MS, as after a failure: nothing is derived from the base URL on every request.
	lookup.retryAt = Date.now() + RETRY_AFTER_MS
	if (lookup.failure === NO_CONTROL_PLANE) return
	lookup.failure = NO_CONTROL_PLANE
	log.info('bedrock application inference profile: its model is not asked of Bedrock (no control plane: set settings.control_plane_url or base_models); it goes over Converse', {
		channel: ch.name,
		profile,
	})
}

const NO_CONTROL_PLANE = 'no control plane'

/** One GetInferenceProfile call; what it learns or why it failed is kept in `lookup`. Never rejects. */
async function lookUp(ch: Channel, control: string, profile: string, lookup: ProfileLookup, log: Logger): Promise<void> {
	try {
		const url = joinUrl(control, `/inference-profiles/${encodeURIComponent(profile)}`)
		// Shared by the requests waiting: no client's leaving cancels it; its own timeouts bound it.
		const { res } = await fetchUpstream(
			url,
			{ method: 'GET', headers: { accept: 'application/json' }, ch, adapter: bedrockCountHooks },
			{ firstByteMs: LOOKUP_TIMEOUT_MS, idleMs: LOOKUP_TIMEOUT_MS },
			new AbortController().signal,
		)
		const text = await res.text()
		if (!res.ok) throw new Error(`HTTP ${res.status}${errorTypeOf(res)}: ${messageOf(text)}`)
		const model = foundationModelIn(text)
		if (!model) throw new Error('the answer names no models[].modelArn')
		learnBaseModel(lookup, model)
		log.info('bedrock application inference profile learnt', { channel: ch.name, profile, base_model: model })
	} catch (e) {
		const why = e instanceof GatewayError ? (e.detail ?? e.message) : (e as Error).message
		lookup.retryAt = Date.now() + RETRY_AFTER_MS
		// Logged once for as long as it fails the same way (a missing permission fails every minute).
		if (why !== lookup.failure)
			log.warn('bedrock application inference profile: its model could not be learnt (GetInferenceProfile); it goes over Converse', {
				channel: ch.name,
				profile,
				error: why,
				retry_in_ms: RETRY_AFTER_MS,
			})
		lookup.failure = why
	} finally {
		lookup.pending = undefined
	}
}

const errorTypeOf = (res: Response) => {
	const type = res.headers.get('x-amzn-errortype')?.split(':')[0]
	return type ? ` ${type}` : ''
}

/** Bedrock's error body `{"message": …}`, cut short. */
function messageOf(text: string): string {
	try {
		const said = JSON.parse(text) as { message?: unknown; Message?: unknown }
		const m = said.message ?? said.Message
		if (typeof m === 'string') return m.slice(0, 300)
	} catch {
		// said as text below
	}
	return text.slice(0, 300)
}

/**
 * The foundation model id of GetInferenceProfile's answer: the model part of its first `models[].modelArn`
 * (`arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-sonnet-4-5-20250929-v1:0` → `anthropic.claude-sonnet-4-5-20250929-v1:0`).
 */
export function foundationModelIn(text: string): string | undefined {
	let body: { models?: Array<{ modelArn?: unknown }> }
	try {
		body = JSON.parse(text) as typeof body
	} catch {
		return undefined
	}
	const arn = Array.isArray(body?.models) ? body.models.find((m) => typeof m?.modelArn === 'string')?.modelArn : undefined
	if (typeof arn !== 'string') return undefined
	const id = arn.slice(arn.lastIndexOf('/') + 1)
	return /^[A-Za-z0-9][A-Za-z0-9.:_-]*$/.test(id) ? id : undefined
}
