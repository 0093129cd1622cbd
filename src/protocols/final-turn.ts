/**
 * What the last message of a conversation asks of the model, for the encoders of vendors that read it differently.
 * A final assistant message is a prefill: Anthropic continues it (the answer holds only the continuation), and so does
 * Gemini for a trailing `model` turn; OpenAI answers afresh after it. A final user message left empty would, once
 * left out, turn the assistant message before it into such a prefill.
 * @module
 */
import { unsupportedForModel } from '../core/errors'
import type { ChatRequest } from '../core/ir'

/** Client protocols whose final assistant turn asks for a continuation (Anthropic's prefill, Gemini's trailing model turn). */
const CONTINUING = new Set(['anthropic-messages', 'gemini'])

/**
 * The text of the prefill to continue: the request came from a client whose protocol continues a final assistant
 * turn, and it ends with one of text only (a turn with tool calls is history awaiting results, not a prefill).
 * Undefined otherwise, or when the turn has no text (nothing to continue: the vendor answers as after the user).
 * @example continuedPrefill({ model: 'm', stream: false, extra: { __protocol: 'anthropic-messages' }, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }, { role: 'assistant', content: [{ type: 'text', text: 'Sure:' }] }] }) === 'Sure:'
 */
export function continuedPrefill(req: ChatRequest): string | undefined {
	if (!CONTINUING.has(String(req.extra?.__protocol))) return undefined
	const last = req.messages[req.messages.length - 1]
	if (last?.role !== 'assistant' || last.content.some((p) => p.type === 'tool_call')) return undefined
	const text = last.content.map((p) => (p.type === 'text' ? p.text : '')).join('')
	return text === '' ? undefined : text
}

/**
 * A final user message the vendor refuses for having no content (empty, or only whitespace for Claude). Left out, the
 * conversation would end with the assistant's previous answer, which the vendor then continues (a prefill) instead of
 * replying: the meaning would change without a word, so the request is refused. Retryable, so a channel of the model
 * that takes it (OpenAI's, which accepts empty content) is tried next.
 */
export const emptyFinalUserMessage = (vendor: string, rule: string, at = 'messages') =>
	unsupportedForModel(
		`${at}: the last user message has no content, and ${vendor} models require non-empty content (${rule}); sent without it, the model would continue its previous answer instead of replying. Put some text in the last user message, or leave that message out`,
		true,
		at,
	)

/**
 * A conversation with no message the vendor can take (only a system prompt, or only empty messages: valid for OpenAI),
 * which Claude and Gemini refuse ("messages: at least one message is required", "contents is not specified").
 * Retryable, so a channel of the model that takes it is tried next.
 */
export const noConversation = (vendor: string, req: ChatRequest) => {
	const at = conversationField(req)
	return unsupportedForModel(
		`${at}: ${vendor} models need at least one user or assistant message with content, and this conversation has none${req.system?.length ? ' besides the system prompt' : ''}`,
		true,
		at,
	)
}

/** Where the client put its conversation, for a refusal to name (Gemini's `contents`, Responses' and Interactions' `input`). */
const CONVERSATION_FIELD: Record<string, string> = { gemini: 'contents', 'openai-responses': 'input', 'gemini-interactions': 'input' }
export const conversationField = (req: ChatRequest): string => CONVERSATION_FIELD[String(req.extra?.__protocol)] ?? 'messages'
