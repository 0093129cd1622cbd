/**
 * Log probabilities of an answer for the mocks: one entry per stream piece (the mocks' tokens, `splitPieces`), the
 * i-th piece at -0.1·(i+1), with `top` alternatives at each position: the piece itself, then `alt1`, `alt2`… lower
 * by 1 each. Deterministic, so tests can predict them.
 * @module
 */
import { splitPieces } from './text'

export type MockLogprob = { token: string; logprob: number; top: Array<{ token: string; logprob: number }> }

/** @example pieceLogprobs('a b', 1) // [{ token: 'a', logprob: -0.1, top: [{ token: 'a', logprob: -0.1 }] }, { token: ' b', logprob: -0.2, top: [{ token: ' b', logprob: -0.2 }] }] */
export function pieceLogprobs(text: string, top: number): MockLogprob[] {
	return splitPieces(text).map((token, i) => {
		const logprob = -(i + 1) / 10
		return { token, logprob, top: Array.from({ length: top }, (_, k) => ({ token: k === 0 ? token : `alt${k}`, logprob: logprob - k })) }
	})
}
