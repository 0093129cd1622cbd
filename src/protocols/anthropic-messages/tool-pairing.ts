/**
 * Anthropic's `tool_use` ⇄ `tool_result` pairing, as the Messages API refuses a conversation that breaks it: each
 * tool_use is answered by a tool_result in the next message, and each tool_result answers a tool_use of the message
 * before. Checked by the gateway only when the request goes to another vendor, whose refusal would name its own
 * fields and indices.
 * @module
 */
import { badRequest, type GatewayError } from '../../core/errors'
import type { AnthropicRequest } from './model'

type Message = AnthropicRequest['messages'][number]

/** The ids of a message's blocks of `type`, read from `key`. */
function ids(m: Message | undefined, type: 'tool_use' | 'tool_result', key: 'id' | 'tool_use_id'): string[] {
	if (!m || typeof m.content === 'string') return []
	const out: string[] = []
	for (const b of m.content) if (b.type === type) out.push(String((b as Record<string, unknown>)[key]))
	return out
}

/**
 * The first break of the pairing, in Anthropic's words (`messages.1: …`), or undefined. Consecutive user messages,
 * which Anthropic joins into one turn, answer together; a tool_use in the last message is left to the vendor.
 * @example unpairedTools({ model: 'm', max_tokens: 9, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't' }] }] })?.message.startsWith('messages.0.content.0: unexpected `tool_use_id`') === true
 */
export function unpairedTools(body: AnthropicRequest): GatewayError | undefined {
	const messages = body.messages
	for (let i = 0; i < messages.length; i++) {
		const m = messages[i]!
		if (m.role === 'assistant') {
			const uses = ids(m, 'tool_use', 'id')
			if (!uses.length || i + 1 === messages.length) continue
			const answered = new Set<string>()
			for (let j = i + 1; j < messages.length && messages[j]!.role === 'user'; j++) for (const id of ids(messages[j], 'tool_result', 'tool_use_id')) answered.add(id)
			const missing = uses.filter((id) => !answered.has(id))
			if (missing.length)
				return badRequest(
					`messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
				)
			continue
		}
		if (typeof m.content === 'string') continue
		let k = i - 1
		while (k >= 0 && messages[k]!.role === 'user') k--
		const uses = ids(messages[k], 'tool_use', 'id')
		for (let j = 0; j < m.content.length; j++) {
			const b = m.content[j]!
			if (b.type !== 'tool_result') continue
			const id = String((b as Record<string, unknown>).tool_use_id)
			if (uses.includes(id)) continue
			return badRequest(
				`messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
			)
		}
	}
	return undefined
}
