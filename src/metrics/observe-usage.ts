/**
 * What every finished model request (chat relay or passthrough, settled or failed) reports besides its usage row:
 * metrics, and the key's tokens-per-minute count.
 */
import type { AuthToken } from '../auth/api-key'
import type { UsageRecord } from '../billing/usage-record'
import type { Services } from '../services'

export function observeUsage(svc: Services, token: AuthToken, r: UsageRecord, charged: number) {
	const m = svc.metrics
	m.requests.inc({ endpoint: r.endpoint, model: r.model, channel: r.channel ?? '', status: r.status })
	m.latency.observe({ endpoint: r.endpoint, model: r.model }, r.latencyMs / 1000)
	if (charged > 0) m.cost.inc({ model: r.model }, charged / 1e6)
	// Written out rather than through a helper closure: this runs for every request.
	if (r.inputTokens) m.tokens.inc({ model: r.model, kind: 'input' }, r.inputTokens)
	if (r.outputTokens) m.tokens.inc({ model: r.model, kind: 'output' }, r.outputTokens)
	if (r.cachedTokens) m.tokens.inc({ model: r.model, kind: 'cache_read' }, r.cachedTokens)
	if (r.cacheWriteTokens) m.tokens.inc({ model: r.model, kind: 'cache_write' }, r.cacheWriteTokens)
	if (r.reasoningTokens) m.tokens.inc({ model: r.model, kind: 'reasoning' }, r.reasoningTokens)
	const total = r.inputTokens + r.cachedTokens + r.cacheWriteTokens + r.outputTokens
	if (token.tpmLimit !== null && total > 0) svc.limits.addTokens(token.keyId, total)
}
