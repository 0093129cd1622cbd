/**
 * What every finished model request (chat relay or passthrough, settled or failed) reports besides its usage row:
 * metrics, and the key's tokens-per-minute count.
 */
import type { AuthToken } from '../auth/api-key'
import type { UsageRecord } from '../billing/usage-record'
import type { Services } from '../services'
import { metricModel } from './model-label'

/**
 * The label sets, filled in for each observation: the registry reads a set's values and keeps nothing of the object
 * (registry.ts, `Series`), so one of each shape serves every request, where literals made six objects per request.
 */
const requestLabels = { endpoint: '', model: '', channel: '', status: 0 }
const latencyLabels = { endpoint: '', model: '' }
const modelLabels = { model: '' }
const tokenLabels = { model: '', kind: '' }

/** The token counter's label set for `kind` (its model set for the request). */
function tokenKind(kind: string) {
	tokenLabels.kind = kind
	return tokenLabels
}

export function observeUsage(svc: Services, token: AuthToken, r: UsageRecord, charged: number) {
	const m = svc.metrics
	requestLabels.endpoint = latencyLabels.endpoint = r.endpoint
	requestLabels.model = latencyLabels.model = modelLabels.model = tokenLabels.model = metricModel(svc, r.model)
	requestLabels.channel = r.channel ?? ''
	requestLabels.status = r.status
	m.requests.inc(requestLabels)
	m.latency.observe(latencyLabels, r.latencyMs / 1000)
	if (charged > 0) m.cost.inc(modelLabels, charged / 1e6)
	if (r.inputTokens) m.tokens.inc(tokenKind('input'), r.inputTokens)
	if (r.outputTokens) m.tokens.inc(tokenKind('output'), r.outputTokens)
	if (r.cachedTokens) m.tokens.inc(tokenKind('cache_read'), r.cachedTokens)
	if (r.cacheWriteTokens) m.tokens.inc(tokenKind('cache_write'), r.cacheWriteTokens)
	if (r.reasoningTokens) m.tokens.inc(tokenKind('reasoning'), r.reasoningTokens)
	const total = r.inputTokens + r.cachedTokens + r.cacheWriteTokens + r.outputTokens
	if (token.tpmLimit !== null && total > 0) svc.limits.addTokens(token.keyId, total)
}
