/**
 * Anthropic: base_url without /v1; `x-api-key` auth and a required `anthropic-version`
 * (https://docs.anthropic.com/en/api/versioning). A client speaking Anthropic keeps its own version and beta
 * headers; converted calls use the stable 2023-06-01.
 */
import { anthropicMessages } from '../protocols/anthropic-messages'
import { type ChatAdapter, channelHeaders, joinUrl } from './adapter'

export const ANTHROPIC_VERSION = '2023-06-01'

export const anthropicAdapter: ChatAdapter = {
	protocol: anthropicMessages,
	chatUrl: (ch) => joinUrl(ch.baseUrl, '/v1/messages'),
	headers(ch, inbound) {
		const h: Record<string, string> = {
			'content-type': 'application/json',
			...channelHeaders(ch),
			'x-api-key': ch.apiKey,
			'anthropic-version': inbound?.get('anthropic-version') ?? ANTHROPIC_VERSION,
		}
		const beta = inbound?.get('anthropic-beta')
		if (beta) h['anthropic-beta'] = beta
		return h
	},
}
