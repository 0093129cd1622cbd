/**
 * OpenAI's tool-message pairing, as Chat Completions refuses a conversation that breaks it: each `tool` message answers
 * a call of the assistant message before its run of tool messages, and each call is answered there. Checked by the
 * gateway only when the request goes to another vendor, whose refusal would name its own fields and indices.
 * @module
 */
import { badRequest, type GatewayError } from '../../core/errors'
import type { OpenAIChatRequest } from './model'

type Message = OpenAIChatRequest['messages'][number]

const callIds = (m: Message | undefined): string[] => (m?.role === 'assistant' && m.tool_calls ? m.tool_calls.map((c) => c.id) : [])

/**
 * The first break of the pairing, in OpenAI's words and with its `param` (`messages.[2].role`), or undefined. A call of
 * the conversation's last message is left to the vendor: it is the one turn a client may end with unanswered.
 * @example unpairedTools({ model: 'm', messages: [{ role: 'tool', tool_call_id: 'c', content: 'x' }] })?.param === 'messages.[0].role'
 */
export function unpairedTools(body: OpenAIChatRequest): GatewayError | undefined {
	const messages = body.messages
	for (let i = 0; i < messages.length; i++) {
		const m = messages[i]!
		const calls = callIds(m)
		if (calls.length && i + 1 < messages.length) {
			const answered = new Set<string>()
			for (let j = i + 1; j < messages.length; j++) {
				const r = messages[j]!
				if (r.role !== 'tool') break
				answered.add(r.tool_call_id)
			}
			const missing = calls.filter((id) => !answered.has(id))
			if (missing.length)
				return badRequest(
					`An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(', ')}`,
					`messages.[${i}].role`,
				)
		}
		if (m.role !== 'tool') continue
		let k = i - 1
		while (k >= 0 && messages[k]!.role === 'tool') k--
		const owner = callIds(messages[k])
		if (!owner.length) return badRequest("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", `messages.[${i}].role`)
		if (!owner.includes(m.tool_call_id)) return badRequest(`Invalid parameter: 'tool_call_id' of '${m.tool_call_id}' not found in 'tool_calls' of previous message.`, `messages.[${i}].tool_call_id`)
	}
	return undefined
}
