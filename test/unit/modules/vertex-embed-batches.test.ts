/** How embeddings inputs are cut into Vertex `:predict` calls (modules/embeddings/vertex.ts) and how answers are read. */
import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../src/core/errors'
import { countText } from '../../../src/relay/estimate'
import { joinAnswers, VERTEX_BATCH_LIMIT, VERTEX_BATCH_TOKENS, vertexBatches, vertexPredictions } from '../../../src/modules/embeddings/vertex'

const texts = (n: number, text = 'a short text') => Array.from({ length: n }, (_, i) => ({ content: `${text} ${i}` }))

describe('vertexBatches', () => {
	it('should put one text in each call for gemini-embedding models', () => {
		expect(vertexBatches(texts(3), 'gemini-embedding-001').map((b) => b.length)).toEqual([1, 1, 1])
	})

	it('should cut other models at 250 texts, in input order', () => {
		const input = texts(VERTEX_BATCH_LIMIT * 2 + 1)
		const batches = vertexBatches(input, 'text-embedding-005')
		expect(batches.map((b) => b.length)).toEqual([250, 250, 1])
		expect(batches.flat()).toEqual(input)
	})

	it("should cut before a batch's local count would pass three quarters of Vertex's 20,000 tokens, a long text alone", () => {
		const long = 'word '.repeat(6000)
		const per = countText(`${long} 0`)
		expect(per * 2).toBeLessThanOrEqual((VERTEX_BATCH_TOKENS * 3) / 4)
		expect(per * 3).toBeGreaterThan((VERTEX_BATCH_TOKENS * 3) / 4)
		expect(vertexBatches(texts(5, long), 'text-embedding-005').map((b) => b.length)).toEqual([2, 2, 1])
		const huge = [{ content: 'word '.repeat(30_000) }, { content: 'tail' }]
		expect(vertexBatches(huge, 'text-embedding-005').map((b) => b.length)).toEqual([1, 1])
	})
})

describe('vertexPredictions', () => {
	const prediction = (values: number[], tokens?: number) => ({ embeddings: { values, ...(tokens !== undefined && { statistics: { token_count: tokens, truncated: false } }) } })

	it('should read the vectors and sum the token counts', () => {
		expect(vertexPredictions({ predictions: [prediction([1, 2], 3), prediction([3, 4], 5)] }, 2)).toEqual({ vectors: [[1, 2], [3, 4]], tokens: 8 })
	})

	it('should leave the tokens unknown when a prediction lacks its count, for every batch joined', () => {
		const a = vertexPredictions({ predictions: [prediction([1], 3), prediction([2])] }, 2)
		expect(a.tokens).toBeUndefined()
		expect(joinAnswers([{ vectors: [[0]], tokens: 4 }, a])).toEqual({ vectors: [[0], [1], [2]], tokens: undefined })
	})

	it('should call an answer with the wrong number of predictions malformed (retryable)', () => {
		const e = (() => {
			try {
				vertexPredictions({ predictions: [prediction([1], 1)] }, 2)
			} catch (err) {
				return err
			}
		})() as GatewayError
		expect(e).toBeInstanceOf(GatewayError)
		expect(e.retryable).toBe(true)
	})
})
