/**
 * Anthropic: base_url without /v1; `x-api-key` auth and a required `anthropic-version`
 * (https://docs.anthropic.com/en/api/versioning). A client speaking Anthropic keeps its own version and beta
 * headers; converted calls use the stable 2023-06-01.
 */
import type { UpstreamOptions } from '../protocols/codec'
import { anthropicMessages } from '../protocols/anthropic-messages'
import { claudeFixedSampling, claudeThinking } from '../routing/claude-models'
import { type ChatAdapter, channelHeaders, joinUrl } from './adapter'

/**
 * Models with structured outputs (GA on Claude 4.5 and later:
 * https://platform.claude.com/docs/en/build-with-claude/structured-outputs). `claude-sonnet-4-20250514` is not one:
 * the version must end at a dash or the name's end.
 */
const STRUCTURED_OUTPUT_MODELS = /claude-(?:opus|sonnet|haiku)-(?:4-[5-9]|[5-9]|\d\d)(?:-|@|$)/

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
	// A channel setting decides for vendors that speak Anthropic's protocol without the feature (or with it on
	// models named otherwise); else the model's name.
	upstreamOptions(ch, model) {
		const o: UpstreamOptions = {
			nativeStructuredOutputs: ch.settings.structured_outputs === undefined ? STRUCTURED_OUTPUT_MODELS.test(model) : ch.settings.structured_outputs === 'native',
		}
		// Claude Opus 4.7 and later refuse a thinking budget and sampling settings (routing/claude-models.ts).
		const thinking = claudeThinking(model)
		if (thinking !== 'budget') o.adaptiveThinking = thinking === 'always' ? 'always' : 'only'
		if (claudeFixedSampling(model)) o.fixedSampling = true
		return o
	},
}
