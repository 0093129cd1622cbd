/**
 * `call_id`s of converted answers. Besides a packed Gemini thought signature (core/tool-ids.ts), the second and later
 * function calls of one answer carry a prefix that says so: clients that record each call with its output (Codex CLI)
 * replay parallel calls interleaved (call A, output A, call B, output B), which reads the same as two steps, each of
 * one call. Vendors that need the answer back as it was given (Anthropic: "echo the assistant message exactly as
 * received", the thinking block of a step first; Gemini: the signature on a step's first call) must get one step
 * with both calls (items.ts). The prefix is stripped before any vendor sees the id; OpenAI's own Responses API takes
 * the id as the opaque string it is.
 * @module
 */
import { packToolCallId, unpackToolCallId } from '../../core/tool-ids'

/** Prefix of the `call_id` of a function call that is not the first of its answer. */
export const SIBLING_MARK = 'sbp_'

/**
 * The client-facing `call_id` of a canonical call, the `n`th (from 0) of its answer.
 * @example callIdOut('toolu_B', undefined, 1) === 'sbp_toolu_B'
 */
export const callIdOut = (id: string, signature: string | undefined, n: number): string => (n > 0 ? SIBLING_MARK : '') + packToolCallId(id, signature)

/**
 * A client's `call_id` → the canonical id, its packed signature, and whether it was not the first call of its answer.
 * @example callIdIn('sbp_call_1__ts_c2ln') // { id: 'call_1', signature: 'c2ln', sibling: true }
 */
export function callIdIn(raw: string): { id: string; signature?: string; sibling: boolean } {
	const sibling = raw.startsWith(SIBLING_MARK)
	return { ...unpackToolCallId(sibling ? raw.slice(SIBLING_MARK.length) : raw), sibling }
}
