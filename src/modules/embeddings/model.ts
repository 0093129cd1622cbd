/** Schemas of POST /v1/embeddings (platform.openai.com/docs/api-reference/embeddings). */
import { t } from 'elysia'
import { Integer } from '../../protocols/json-types'

/**
 * Inputs in one embeddings request: OpenAI's documented cap ("The input must not exceed the max input tokens for the
 * model (8192 tokens), cannot be an empty string, and any array must be 2048 dimensions or less",
 * platform.openai.com/docs/api-reference/embeddings/create), held on every embeddings route, Gemini's `batchEmbedContents`
 * too: gemini-embedding-001 on Vertex takes one text a call, so each input is an upstream call.
 */
export const MAX_EMBEDDING_INPUTS = 2048

export const EmbeddingsRequest = t.Object(
	{
		model: t.String({ minLength: 1 }),
		input: t.Union(
			[
				t.String({ minLength: 1 }),
				t.Array(t.String({ minLength: 1 }), { minItems: 1, maxItems: MAX_EMBEDDING_INPUTS }),
				t.Array(Integer({ minimum: 0 }), { minItems: 1 }),
				t.Array(t.Array(Integer({ minimum: 0 }), { minItems: 1 }), { minItems: 1, maxItems: MAX_EMBEDDING_INPUTS }),
			],
			{ description: 'A string, an array of strings, or token arrays (token arrays only for OpenAI-type upstreams)' },
		),
		encoding_format: t.Optional(t.Union([t.Literal('float'), t.Literal('base64')], { description: 'base64: float32 little-endian' })),
		dimensions: t.Optional(Integer({ minimum: 1, description: 'Output size, for models that support shortening' })),
		user: t.Optional(t.String()),
	},
	{ additionalProperties: true },
)
export type EmbeddingsRequest = typeof EmbeddingsRequest.static

export const EmbeddingList = t.Object({
	object: t.Literal('list'),
	data: t.Array(t.Object({ object: t.Literal('embedding'), index: Integer(), embedding: t.Union([t.Array(t.Number()), t.String()]) })),
	model: t.String(),
	usage: t.Object({ prompt_tokens: Integer(), total_tokens: Integer() }),
})
export type EmbeddingList = typeof EmbeddingList.static
