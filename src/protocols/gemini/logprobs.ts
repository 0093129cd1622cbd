/**
 * `candidates[].logprobsResult` ⇄ canonical token log probabilities (https://ai.google.dev/api/generate-content, LogprobsResult:
 * `chosenCandidates[]` of `{token, tokenId, logProbability}`, one per decoding step, and `topCandidates[].candidates[]`,
 * the alternatives at each step). Streamed chunks carry the result for their own tokens (stream.ts, stream-encode.ts).
 * @module
 */
import type { TokenLogprob } from '../../core/ir'
import { get, isObj, num, type Obj, str } from './read'

const candidate = (c: Obj) => ({ token: str(get(c, 'token')) ?? '', logprob: num(get(c, 'logProbability')) ?? 0 })

/** Upstream `candidate.logprobsResult` → canonical, or undefined when there are none. */
export function decodeLogprobs(raw: unknown): TokenLogprob[] | undefined {
	if (!isObj(raw)) return undefined
	const chosen = get(raw, 'chosenCandidates')
	if (!Array.isArray(chosen) || !chosen.length) return undefined
	const tops = get(raw, 'topCandidates')
	return chosen.map((c, i): TokenLogprob => {
		const step = Array.isArray(tops) && isObj(tops[i]) ? get(tops[i], 'candidates') : undefined
		return { ...candidate(isObj(c) ? c : {}), top: Array.isArray(step) ? step.filter(isObj).map(candidate) : [] }
	})
}

/** Canonical → `logprobsResult`, or undefined when the answer has none. */
export function encodeLogprobs(list: TokenLogprob[] | undefined): Obj | undefined {
	if (!list?.length) return undefined
	const entry = (token: string, logprob: number) => ({ token, logProbability: logprob })
	return {
		topCandidates: list.map((t) => ({ candidates: t.top.map((a) => entry(a.token, a.logprob)) })),
		chosenCandidates: list.map((t) => entry(t.token, t.logprob)),
	}
}
