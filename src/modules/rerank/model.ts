/** Schemas of POST /v1/rerank (the Cohere / Jina rerank shape: docs.cohere.com/reference/rerank, jina.ai/reranker). */
import { t } from 'elysia'
import { Integer } from '../../protocols/json-types'

export const RerankRequest = t.Object(
	{
		model: t.String({ minLength: 1 }),
		query: t.String({ minLength: 1 }),
		documents: t.Array(t.Union([t.String(), t.Record(t.String(), t.Unknown())]), { minItems: 1, maxItems: 10000, description: 'Strings, or objects (e.g. `{text}`)' }),
		top_n: t.Optional(Integer({ minimum: 1 })),
		return_documents: t.Optional(t.Boolean()),
	},
	{ additionalProperties: true },
)
export type RerankRequest = typeof RerankRequest.static

export const RerankResponse = t.Object({
	id: t.Optional(t.String()),
	model: t.String(),
	results: t.Array(
		t.Object({
			index: Integer({ description: 'Position in `documents`' }),
			relevance_score: t.Number(),
			document: t.Optional(t.Union([t.Object({ text: t.String() }), t.Record(t.String(), t.Unknown())])),
		}),
		{ description: 'Highest score first' },
	),
	usage: t.Object({ prompt_tokens: Integer(), total_tokens: Integer() }),
})
export type RerankResponse = typeof RerankResponse.static
