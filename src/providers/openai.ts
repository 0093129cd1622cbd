/** OpenAI and every OpenAI-compatible vendor: base_url includes /v1; Bearer auth. */
import { openaiChat } from '../protocols/openai-chat'
import { type ChatAdapter, channelHeaders, joinUrl } from './adapter'

/** Mistral's API refuses tool call ids other than nine letters or digits, e.g. another vendor's `toolu_…`. */
const isMistral = (baseUrl: string) => /^https?:\/\/([^/]*\.)?mistral\.ai(:\d+)?(\/|$)/i.test(baseUrl)

export const openaiAdapter: ChatAdapter = {
	protocol: openaiChat,
	chatUrl: (ch) => joinUrl(ch.baseUrl, '/chat/completions'),
	responsesUrl: (ch) => joinUrl(ch.baseUrl, '/responses'),
	headers: (ch) => ({ 'content-type': 'application/json', ...channelHeaders(ch), authorization: `Bearer ${ch.apiKey}` }),
	// The setting for Mistral models served elsewhere (vLLM, La Plateforme behind a proxy); Mistral's own API by its URL.
	upstreamOptions: (ch) => (ch.settings.tool_call_ids === 'alnum9' || isMistral(ch.baseUrl) ? { toolCallIds: 'alnum9' } : {}),
}
