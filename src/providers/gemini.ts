/** Google Gemini API: base_url is the host; the adapter appends /v1beta. Auth by `x-goog-api-key` (never `?key=`,
 * which ends up in access logs). */
import { gemini, geminiPath } from '../protocols/gemini'
import { type ChatAdapter, channelHeaders, joinUrl } from './adapter'

export const geminiAdapter: ChatAdapter = {
	protocol: gemini,
	chatUrl: (ch, model, stream) => joinUrl(ch.baseUrl.replace(/\/v1(beta)?$/, ''), geminiPath(model, stream)),
	headers: (ch) => ({ 'content-type': 'application/json', ...channelHeaders(ch), 'x-goog-api-key': ch.apiKey }),
}
