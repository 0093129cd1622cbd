/**
 * DeepSeek's thinking mode, for models named `deepseek-*` on this mock (https://api-docs.deepseek.com/guides/thinking_mode):
 * thinking is on by default and off with `thinking: {type: "disabled"}`; the chain of thought comes as
 * `reasoning_content`. On later turns, "between two user messages, if the model did not call tools, the intermediate
 * assistant's reasoning_content does not take part in the context" (sending it is ignored), while for turns that did
 * call tools "the reasoning_content must be fully passed back to the API in all subsequent requests", else a 400 (its
 * wording as users report it: QuantumNous/new-api#4543, anomalyco/opencode#24722).
 * @module
 */
import { asArr, asObj, asStr, type Obj } from '../shared/json'
import type { JsonReply } from '../shared/reply'
import { openaiError } from './errors'

export const isDeepSeek = (model: unknown): boolean => typeof model === 'string' && model.startsWith('deepseek-')

/** Whether a DeepSeek request thinks: unless `thinking.type` is `disabled`. */
export const deepseekThinks = (b: Obj): boolean => asStr(asObj(b.thinking)?.type) !== 'disabled'

/**
 * DeepSeek's 400 for an assistant message of a tool-calling span (from a user message to the next) sent back without
 * its `reasoning_content`, in thinking mode; undefined otherwise.
 */
export function checkReasoningPassedBack(b: Obj): JsonReply | undefined {
	if (!isDeepSeek(b.model) || !deepseekThinks(b)) return undefined
	const messages = asArr(b.messages).map((m) => asObj(m) ?? {})
	let span: Obj[] = []
	const check = (): JsonReply | undefined => {
		if (!span.some((m) => asArr(m.tool_calls).length > 0)) return undefined
		if (span.some((m) => !asStr(m.reasoning_content))) return openaiError(400, 'The reasoning_content in the thinking mode must be passed back to the API.', 'messages')
	}
	for (const m of messages) {
		if (m.role === 'user') {
			const bad = check()
			if (bad) return bad
			span = []
		} else if (m.role === 'assistant') span.push(m)
	}
	return check()
}
