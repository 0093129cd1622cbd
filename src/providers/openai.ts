/** OpenAI and every OpenAI-compatible vendor: base_url includes /v1; Bearer auth. */
import type { UpstreamOptions } from '../protocols/codec'
import type { ChatRequest } from '../core/ir'
import { openaiChat } from '../protocols/openai-chat'
import { isSearchModel } from '../protocols/openai-chat/web-search'
import { openaiResponses } from '../protocols/openai-responses'
import type { Channel } from '../routing/catalog'
import { fixedSampling, openaiEfforts, takesReasoningEffort } from '../routing/reasoning-models'
import { type ChatAdapter, channelHeaders, joinUrl } from './adapter'

/** Mistral's API refuses tool call ids other than nine letters or digits, e.g. another vendor's `toolu_…`. */
const isMistral = (baseUrl: string) => /^https?:\/\/([^/]*\.)?mistral\.ai(:\d+)?(\/|$)/i.test(baseUrl)
/** DeepSeek's own API, whose chat prefix completion is on its beta base URL (https://api-docs.deepseek.com/guides/chat_prefix_completion). */
const deepseekOrigin = (baseUrl: string) => /^(https?:\/\/([^/]*\.)?deepseek\.com(:\d+)?)(\/|$)/i.exec(baseUrl)?.[1]

/** OpenAI's own API, which serves the Responses API. */
const isOpenAI = (baseUrl: string) => /^https:\/\/api\.openai\.com(:443)?(\/|$)/i.test(baseUrl)

/**
 * Whether a request searching the web goes to the vendor's Responses API: on Chat Completions only OpenAI's search
 * models search (others answer 400), while every other GPT model searches through the Responses `web_search` tool
 * (https://platform.openai.com/docs/guides/tools-web-search). OpenAI's own API, or a channel whose `responses_api`
 * setting says its vendor has the Responses API; an OpenAI-compatible vendor is not assumed to have it.
 */
export const searchesThroughResponses = (ch: Channel, model: string, request: ChatRequest): boolean =>
	request.webSearch !== undefined && !isSearchModel(model) && (ch.settings.responses_api ?? isOpenAI(ch.baseUrl)) === true

/** How the channel's vendor continues a prefill, if it does: by the setting, else by the vendor's own URL. */
function prefixOf(ch: Channel): UpstreamOptions['prefix'] {
	const s = ch.settings.prefix_completion
	if (s) return s === 'mistral' ? 'echoed' : 'continued'
	if (isMistral(ch.baseUrl)) return 'echoed'
	if (deepseekOrigin(ch.baseUrl)) return 'continued'
	return undefined
}

export const openaiAdapter: ChatAdapter = {
	protocol: openaiChat,
	chatUrl: (ch, _model, _stream, prefill) => {
		const deepseek = prefill ? deepseekOrigin(ch.baseUrl) : undefined
		return deepseek ? `${deepseek}/beta/chat/completions` : joinUrl(ch.baseUrl, '/chat/completions')
	},
	responsesUrl: (ch) => joinUrl(ch.baseUrl, '/responses'),
	headers: (ch) => ({ 'content-type': 'application/json', ...channelHeaders(ch), authorization: `Bearer ${ch.apiKey}` }),
	upstreamOptions(ch, model) {
		const o: UpstreamOptions = {}
		// The setting for Mistral models served elsewhere (vLLM, La Plateforme behind a proxy); Mistral's own API by its URL.
		if (ch.settings.tool_call_ids === 'alnum9' || isMistral(ch.baseUrl)) o.toolCallIds = 'alnum9'
		const prefix = prefixOf(ch)
		if (prefix) o.prefix = prefix
		// The channel's setting, else the model's name: only OpenAI's models known not to reason go without an effort
		// (another vendor's model, unknown here, gets it as before).
		if ((ch.settings.reasoning_effort ?? takesReasoningEffort(model)) === false) o.reasoningEffort = false
		if (fixedSampling(model)) o.fixedSampling = true
		const efforts = openaiEfforts(model)
		if (efforts) o.efforts = efforts
		return o
	},
	routeFor: (ch, model, request) => (searchesThroughResponses(ch, model, request) ? openaiResponsesAdapter : undefined),
}

/** The same vendor over its Responses API (`{base_url}/responses`), for what only it does there (searchesThroughResponses). */
const openaiResponsesAdapter: ChatAdapter = {
	...openaiAdapter,
	protocol: openaiResponses,
	chatUrl: (ch) => joinUrl(ch.baseUrl, '/responses'),
	routeFor: undefined,
}
