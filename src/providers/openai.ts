/** OpenAI and every OpenAI-compatible vendor: base_url includes /v1; Bearer auth. */
import { openaiChat } from '../protocols/openai-chat'
import { type ChatAdapter, channelHeaders, joinUrl } from './adapter'

export const openaiAdapter: ChatAdapter = {
	protocol: openaiChat,
	chatUrl: (ch) => joinUrl(ch.baseUrl, '/chat/completions'),
	responsesUrl: (ch) => joinUrl(ch.baseUrl, '/responses'),
	headers: (ch) => ({ 'content-type': 'application/json', ...channelHeaders(ch), authorization: `Bearer ${ch.apiKey}` }),
}
