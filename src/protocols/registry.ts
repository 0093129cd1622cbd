/** The wire protocols by name. */
import { anthropicMessages } from './anthropic-messages'
import type { ProtocolCodec, ProtocolName } from './codec'
import { gemini } from './gemini'
import { openaiChat } from './openai-chat'

export const protocols: Record<ProtocolName, ProtocolCodec> = {
	'openai-chat': openaiChat,
	'anthropic-messages': anthropicMessages,
	gemini,
}
