/**
 * POST /v1/rerank: Cohere/Jina-style rerankers on channels of type `rerank` (`{base_url}/rerank`) and on OpenAI-type
 * channels that list the model (same path under their /v1). The answer is normalised: results sorted by score, cut to
 * `top_n`, documents echoed from the request (never re-typed by the upstream), usage in tokens. Priced on tokens (the
 * upstream's count, else counted), plus `per_search_unit` × Cohere search units when listed, plus `per_request`.
 * @module
 */
import { Elysia } from 'elysia'
import { GatewayError } from '../../core/errors'
import { modelAuth } from '../../http/model-auth'
import { requestFee, tokensCost, unitPrice } from '../../passthrough/pricing'
import { jsonResponse, readJson, relayPassthrough } from '../../passthrough/relay'
import { openaiErrors } from '../../passthrough/schemas'
import { channelUrl, jsonHeaders, withModel } from '../../passthrough/upstream'
import { countText } from '../../relay/estimate'
import type { ModelInfo } from '../../routing/catalog'
import type { Services } from '../../services'
import { RerankRequest, RerankResponse } from './model'

type Upstream = {
	id?: unknown
	results?: unknown
	data?: unknown
	usage?: { total_tokens?: unknown; prompt_tokens?: unknown }
	meta?: { billed_units?: { search_units?: unknown; input_tokens?: unknown } }
}
type Scored = { index: number; relevance_score: number; document?: unknown }

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined)

const docText = (d: RerankRequest['documents'][number]) => (typeof d === 'string' ? d : typeof d.text === 'string' ? d.text : JSON.stringify(d))

/** Results of a Cohere (`results`), Jina (`results`) or Voyage (`data`) answer, validated. */
export function scoredResults(body: Upstream, count: number): Scored[] {
	const list = Array.isArray(body.results) ? body.results : Array.isArray(body.data) ? body.data : undefined
	if (!list) throw new GatewayError('upstream', 'upstream sent a malformed rerank response', { retryable: true, code: 'upstream_malformed' })
	const out: Scored[] = []
	for (const r of list as Array<Record<string, unknown>>) {
		const index = r?.index
		const score = r?.relevance_score ?? r?.score
		if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count || typeof score !== 'number')
			throw new GatewayError('upstream', 'upstream sent a malformed rerank result', { retryable: true, code: 'upstream_malformed' })
		out.push({ index, relevance_score: score, document: r.document })
	}
	return out
}

const searchUnits = (docs: number) => Math.max(1, Math.ceil(docs / 100))

export const rerankModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['OpenAI'] } }).use(modelAuth(svc)).post(
		'/v1/rerank',
		({ body, token, requestId, startedAt, request }) => {
			const counted = countText(body.query) * body.documents.length + body.documents.reduce((n, d) => n + countText(docText(d)), 0)
			const price = (p: ModelInfo, tokens: number, units: number) => requestFee(p) + tokensCost(p, tokens) + units * (unitPrice(p, 'per_search_unit') ?? 0)
			return relayPassthrough({
				svc,
				token,
				requestId,
				startedAt,
				signal: request.signal,
				endpoint: '/v1/rerank',
				model: body.model,
				types: ['rerank', 'openai'],
				hold: (p) => ({ want: price(p, counted, searchUnits(body.documents.length)), min: price(p, counted, 1) }),
				request: (ch, upstreamModel) => ({ url: channelUrl(ch, '/rerank'), headers: jsonHeaders(ch), body: JSON.stringify(withModel(body, upstreamModel)) }),
				async respond(res, _ch, _m, p) {
					const up = await readJson<Upstream>(res)
					const scored = scoredResults(up, body.documents.length).sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
					const top = body.top_n ? scored.slice(0, body.top_n) : scored
					const reported = num(up.usage?.total_tokens) ?? num(up.usage?.prompt_tokens) ?? num(up.meta?.billed_units?.input_tokens)
					const tokens = reported ?? counted
					const units = num(up.meta?.billed_units?.search_units) ?? searchUnits(body.documents.length)
					const out: RerankResponse = {
						...(typeof up.id === 'string' ? { id: up.id } : {}),
						model: body.model,
						results: top.map((r) => {
							const withDoc = body.return_documents === true || (body.return_documents === undefined && r.document !== undefined)
							const d = body.documents[r.index]!
							return { index: r.index, relevance_score: r.relevance_score, ...(withDoc ? { document: typeof d === 'string' ? { text: d } : d } : {}) }
						}),
						usage: { prompt_tokens: tokens, total_tokens: tokens },
					}
					return { response: jsonResponse(out, requestId), cost: price(p, tokens, units), input: tokens, estimated: reported === undefined }
				},
			})
		},
		{
			body: RerankRequest,
			response: { 200: RerankResponse, ...openaiErrors },
			detail: { summary: 'Rerank documents', description: 'Cohere/Jina-style rerank: `results[{index, relevance_score, document?}]` sorted by score, with usage.' },
		},
	)
