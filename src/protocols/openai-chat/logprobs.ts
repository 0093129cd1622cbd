/**
 * `choices[].logprobs` ⇄ canonical token log probabilities (chat object reference: `logprobs.content[]` of
 * `{token, logprob, bytes, top_logprobs[]}`); streamed chunks carry the same object for their own tokens.
 * @module
 */
import type { TokenLogprob } from '../../core/ir'
import { isObject, str } from './guards'

const utf8 = new TextEncoder()

/** Upstream `choice.logprobs` → canonical, or undefined when there are none. */
export function decodeLogprobs(raw: unknown): TokenLogprob[] | undefined {
	if (!isObject(raw) || !Array.isArray(raw.content)) return undefined
	const out = raw.content.filter(isObject).map(
		(t): TokenLogprob => ({
			token: str(t.token) ?? '',
			logprob: typeof t.logprob === 'number' ? t.logprob : 0,
			top: (Array.isArray(t.top_logprobs) ? t.top_logprobs.filter(isObject) : []).map((a) => ({ token: str(a.token) ?? '', logprob: typeof a.logprob === 'number' ? a.logprob : 0 })),
		}),
	)
	return out.length ? out : undefined
}

/**
 * Canonical → `choice.logprobs` (`bytes` are the token's UTF-8 bytes, as OpenAI gives them), or null when the answer
 * has none.
 * @example encodeLogprobs([{ token: 'Hi', logprob: -0.1, top: [] }]) // { content: [{ token: 'Hi', logprob: -0.1, bytes: [72, 105], top_logprobs: [] }], refusal: null }
 */
export function encodeLogprobs(list: TokenLogprob[] | undefined) {
	if (!list?.length) return null
	const entry = (token: string, logprob: number) => ({ token, logprob, bytes: [...utf8.encode(token)] })
	return { content: list.map((t) => ({ ...entry(t.token, t.logprob), top_logprobs: t.top.map((a) => entry(a.token, a.logprob)) })), refusal: null }
}
