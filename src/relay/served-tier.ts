/**
 * The tier a vendor names in a response header rather than (or as well as) the body (protocols/codec.ts `TierHeader`:
 * Gemini's `x-gemini-service-tier`): read for the bill, and written for a client whose protocol has such a header.
 * @module
 */
import type { ServiceTier, Usage } from '../core/ir'
import type { ProtocolCodec, UpstreamCodec } from '../protocols/codec'

/** What the upstream's header says: its name and value as sent, and the tier it names for the bill (undefined: standard). */
export function tierSaid(codec: UpstreamCodec, res: Response): { name: string; value: string; tier: ServiceTier | undefined } | undefined {
	const h = codec.tierHeader
	const value = h && res.headers.get(h.name)
	return value ? { name: h.name, value, tier: h.decode(value) } : undefined
}

/** `usage` with the tier the header named, when its body named none (the answer is shown and billed at it). */
export function withTierSaid(usage: Usage, tier: ServiceTier | undefined): Usage {
	if (usage.tier === undefined && tier) usage.tier = tier
	return usage
}

/** The client's tier header for an answer converted for it (none when its protocol has no such header). */
export function tierHeaderOf(client: ProtocolCodec, usage: Usage): Record<string, string> {
	const h = client.tierHeader
	return h ? { [h.name]: h.encode(usage.tier) } : {}
}
