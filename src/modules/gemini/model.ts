/**
 * Schemas of the Gemini model methods besides generateContent (https://ai.google.dev/api/tokens,
 * https://ai.google.dev/api/embeddings). Like the generateContent schemas they are permissive: unknown fields pass.
 * @module
 */
import { t } from 'elysia'
import { Integer } from '../../protocols/json-types'
import { GeminiRequest, GeminiResponse } from '../../protocols/gemini'
import { GeminiContent } from '../../protocols/gemini/model'
import { MAX_EMBEDDING_INPUTS } from '../embeddings/model'

const open = { additionalProperties: true } as const

/** `:countTokens`: plain `contents`, or a whole `generateContentRequest` (with system instruction and tools). */
export const GeminiCountTokensRequest = t.Object(
	{ contents: t.Optional(t.Array(GeminiContent)), generateContentRequest: t.Optional(GeminiRequest) },
	open,
)

export const GeminiCountTokensResponse = t.Object({ totalTokens: Integer(), cachedContentTokenCount: t.Optional(Integer()) }, open)

export const GeminiEmbedContentRequest = t.Object(
	{
		model: t.Optional(t.String()),
		content: GeminiContent,
		taskType: t.Optional(t.String()),
		title: t.Optional(t.String()),
		outputDimensionality: t.Optional(Integer({ minimum: 1 })),
	},
	open,
)

/** At most MAX_EMBEDDING_INPUTS requests: converted for Vertex's gemini-embedding-001, each is an upstream call (Gemini itself takes 100). */
export const GeminiBatchEmbedRequest = t.Object({ requests: t.Array(GeminiEmbedContentRequest, { minItems: 1, maxItems: MAX_EMBEDDING_INPUTS }) }, open)

const Embedding = t.Object({ values: t.Array(t.Number()) }, open)

export const GeminiEmbedContentResponse = t.Object({ embedding: Embedding }, open)

export const GeminiBatchEmbedResponse = t.Object({ embeddings: t.Array(Embedding) }, open)

/** Body of `POST /v1beta/models/{model}:{method}`: which one applies depends on the method. */
export const GeminiMethodBody = t.Union([GeminiRequest, GeminiCountTokensRequest, GeminiEmbedContentRequest, GeminiBatchEmbedRequest])

/** Answer of `POST /v1beta/models/{model}:{method}`. */
export const GeminiMethodResponse = t.Union([GeminiResponse, GeminiCountTokensResponse, GeminiEmbedContentResponse, GeminiBatchEmbedResponse])

export type GeminiCountTokensRequest = typeof GeminiCountTokensRequest.static
export type GeminiEmbedContentRequest = typeof GeminiEmbedContentRequest.static
export type GeminiBatchEmbedRequest = typeof GeminiBatchEmbedRequest.static
