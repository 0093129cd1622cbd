/**
 * The local token count an embeddings request is held for: its texts by the o200k tokenizer (relay/estimate.ts), its
 * token arrays by their length. A synchronous POST /v1/embeddings and a Batch API line of that endpoint are bounded
 * alike, so a batch is not refused for balance its lines do not need.
 * @module
 */
import { Value } from '@sinclair/typebox/value'
import { countText } from '../../relay/estimate'
import { EmbeddingsRequest } from './model'

type Input = EmbeddingsRequest['input']

/** @example countInput(['hello world', 'hi']) === 3 */
export function countInput(input: Input): number {
	if (typeof input === 'string') return countText(input)
	let n = 0
	for (const x of input) n += typeof x === 'string' ? countText(x) : typeof x === 'number' ? 1 : x.length
	return n
}

/**
 * A batch line's count (its `body.input`), or undefined when the input is not one the endpoint takes (the upstream
 * refuses that line, which is not billed).
 */
export const countLineInput = (input: unknown): number | undefined => (Value.Check(EmbeddingsRequest.properties.input, input) ? countInput(input) : undefined)
