/**
 * Which earlier reasoning an OpenAI-compatible upstream gets back. The vendors that return their chain of thought as
 * `reasoning_content` / `reasoning` keep it in the context only while it can still steer a tool loop:
 * - DeepSeek's thinking mode (https://api-docs.deepseek.com/guides/thinking_mode): "between two user messages, if the
 *   model did not call tools, the intermediate assistant's reasoning_content does not take part in the context"
 *   (sent back, it is ignored; its earlier deepseek-reasoner answered a 400), while for a span that called tools it
 *   "must be fully passed back to the API in all subsequent requests", else a 400;
 * - gpt-oss (OpenAI's harmony format, https://cookbook.openai.com/articles/openai-harmony): the chain of thought of
 *   earlier answers is dropped, that of a turn still calling tools kept; Qwen3's chat template does the same.
 * So the reasoning of a span that ended with a final answer before a later user message, without calling tools, is
 * left out: signed or not, no vendor reads it (Anthropic, behind OpenRouter, drops earlier turns' thinking itself).
 * A span that called tools, and the current span (after the last user message: a loop in progress, a prefill), keep
 * theirs.
 * @module
 */
import type { WireMessage } from './messages'

/**
 * Drops `reasoning_content` and `reasoning_details` from the assistant messages of finished spans (from a user message
 * to the next) that called no tool; the messages are changed in place.
 * @example dropPastReasoning([{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b', reasoning_content: 'r' }, { role: 'user', content: 'c' }])
 * // the assistant message loses `reasoning_content`
 */
export function dropPastReasoning(messages: WireMessage[]): WireMessage[] {
	let span: Array<Extract<WireMessage, { role: 'assistant' }>> = []
	for (const m of messages) {
		if (m.role === 'assistant') span.push(m)
		else if (m.role === 'user') {
			if (!span.some((a) => a.tool_calls?.length))
				for (const a of span) {
					delete a.reasoning_content
					delete a.reasoning_details
				}
			span = []
		}
	}
	return messages
}
