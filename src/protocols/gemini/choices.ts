/**
 * Several candidates (`generationConfig.candidateCount` > 1) of answers the gateway got one by one or from another
 * vendor's several choices: each answer is a candidate with its `index`, and `usageMetadata` is the whole request's
 * (Gemini's counts every candidate's tokens).
 * @module
 */
import type { ChatResponse, Usage } from '../../core/ir'
import { newId } from '../../lib/ids'
import type { ChoicesEncoder, EncodeContext } from '../codec'
import { choicesOf } from '../choices'
import type { GeminiResponse } from './model'
import { encodeResponse } from './response'
import { streamEncoder } from './stream-encode'

/** Whole answers → one GenerateContentResponse with `candidates[i]` the answer `answers[i]`; the first answer's id. */
export function encodeChoices(answers: ChatResponse[], usage: Usage, ctx: EncodeContext): GeminiResponse {
	const body = encodeResponse({ ...answers[0]!, usage }, ctx)
	body.candidates = answers.map((a, i) => encodeResponse(a, { ...ctx, choice: i }).candidates![0]!)
	return body
}

/**
 * Several answers' events → one `alt=sse` stream: each chunk carries one candidate with its `index`; each candidate's
 * last chunk carries the usage known by then, so the last one carries the whole request's. No terminator, as Gemini.
 */
export function choicesEncoder(ctx: EncodeContext, n: number): ChoicesEncoder {
	return choicesOf(n, {
		encoderOf: (choice) => streamEncoder({ ...ctx, choice }),
		idOf: (id) => id || newId('gemini'),
		close() {},
	})
}
