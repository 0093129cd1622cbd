/**
 * The tier a vendor names in a response header rather than (or as well as) the body (protocols/codec.ts `TierHeader`:
 * Gemini's `x-gemini-service-tier`): read for the bill, and written for a client whose protocol has such a header.
 * @module
 */
import type { ServiceTier, Usage } from '../core/ir'
import type { ProtocolCodec, UpstreamCodec } from '../protocols/codec'

/** What the upstream's header says: its value as sent, and the tier it names for the bill (undefined: standard). */
export function tierSaid(codec: UpstreamCodec, res: Response): { value: string; tier: ServiceTier | undefined } | undefined {
	const value = codec.tierHeader && res.headers.get(codec.tierHeader.name)
	return value ? { value, tier: codec.tierHeader!.decode(value) } : undefined
}

/** The client's tier header for an answer converted for it (none when its protocol has no such header). */
export function tierHeaderOf(client: ProtocolCodec, usage: Usage): Record<string, string> {
	const h = client.tierHeader
	return h ? { [h.name]: h.encode(usage.tier) } : {}
}
