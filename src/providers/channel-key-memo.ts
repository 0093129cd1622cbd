/**
 * A channel key parsed once per key, not on every call (a service principal's or a service account's JSON is read
 * where each call needs to know what the key is). A key that does not parse keeps its error, thrown by the call's
 * `authorize` as the channel's misconfiguration.
 * @module
 */
import type { GatewayError } from '../core/errors'
import type { Channel } from '../routing/catalog'
import type { KeySource } from './channel-key'

/** What `parse` made of the key (its fields optional), or the error it threw as `bad`; `from`, where the key came from. */
export type ParsedKey<P> = P & { key: string; from?: KeySource; bad?: GatewayError }

/**
 * Memoises `parse` per channel id, parsing again when the channel's key changes, or where it came from
 * (`keySource`, one object per source: channel-key.ts apiKeySource).
 * @example const keyOf = channelKeyMemo((key, from) => ({ cred: googleCredentialOf(key, from) })); keyOf(ch).cred
 */
export function channelKeyMemo<P extends object>(parse: (key: string, from?: KeySource) => P): (ch: Pick<Channel, 'id' | 'apiKey' | 'keySource'>) => ParsedKey<P> {
	const keys = new Map<number, ParsedKey<P>>()
	return (ch) => {
		const k = keys.get(ch.id)
		if (k && k.key === ch.apiKey && k.from === ch.keySource) return k
		let fresh: ParsedKey<P>
		try {
			fresh = { ...parse(ch.apiKey, ch.keySource), key: ch.apiKey, from: ch.keySource }
		} catch (e) {
			fresh = { key: ch.apiKey, from: ch.keySource, bad: e as GatewayError } as ParsedKey<P>
		}
		keys.set(ch.id, fresh)
		return fresh
	}
}

/** A string setting of the channel (`settings.project`, `settings.client_id`…), undefined when unset or empty. */
export const stringSetting = (ch: Pick<Channel, 'settings'>, name: string): string | undefined =>
	typeof ch.settings[name] === 'string' && ch.settings[name] ? (ch.settings[name] as string) : undefined
