/**
 * The context window check Anthropic makes since Claude 3.7 Sonnet: the prompt's tokens plus `max_tokens` (which
 * includes the thinking budget) must fit the model's context window, else a 400, however short the answer would have
 * been. "With extended thinking models, max_tokens (including your thinking budget when thinking is enabled) is
 * enforced as a strict limit … if prompt tokens + max_tokens exceeds the context window size, the system will return
 * a validation error" (docs.anthropic.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size).
 * Tokens are counted as the mock counts usage (words, 85 per image).
 * @module
 */

import type { Obj } from '../shared/json'
import type { JsonReply } from '../shared/reply'
import { type Conversation, inputTokens } from '../shared/scenario'
import { invalid } from './errors'

/** Claude's standard context window (docs.anthropic.com/en/docs/about-claude/models/overview). */
const STANDARD = 200_000
/** Models whose window is 1M tokens without a beta; Sonnet 4 and 4.5 reach it with the `context-1m-2025-08-07` beta. */
const MILLION = /^claude-(opus|sonnet)-4-6/
const MILLION_BETA = /^claude-sonnet-4(-5)?(-\d{8})?$/

/** The model's context window for this request. */
export function contextWindow(model: string, headers: Headers): number {
	if (MILLION.test(model)) return 1_000_000
	if (MILLION_BETA.test(model) && (headers.get('anthropic-beta') ?? '').includes('context-1m-2025-08-07')) return 1_000_000
	return STANDARD
}

/** The 400 for a prompt and `max_tokens` that together exceed the window, worded as Anthropic words it. */
export function checkContext(b: Obj, conv: Pick<Conversation, 'inputTexts' | 'images' | 'maxTokens'>, headers: Headers): JsonReply | undefined {
	const window = contextWindow(String(b.model), headers)
	const input = inputTokens(conv)
	const max = conv.maxTokens ?? 0
	if (input + max <= window) return undefined
	return invalid(`input length and \`max_tokens\` exceed context limit: ${input} + ${max} > ${window}, decrease input length or \`max_tokens\` and try again`)
}
