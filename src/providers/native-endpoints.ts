/**
 * Vendor endpoints that native (same-protocol) routes call besides chat: token counting and Gemini's other model
 * methods. Base URLs follow the adapters: Anthropic's and Gemini's without a version.
 * @module
 */
import type { Channel } from '../routing/catalog'
import { joinUrl } from './adapter'

/** https://docs.anthropic.com/en/api/messages-count-tokens */
export const anthropicCountTokensUrl = (ch: Channel): string => joinUrl(ch.baseUrl, '/v1/messages/count_tokens')

/**
 * A Gemini model method: `countTokens`, `embedContent`, `batchEmbedContents`… (https://ai.google.dev/api).
 * @example geminiMethodUrl(ch, 'gemini-2.5-flash', 'countTokens') // '{root}/v1beta/models/gemini-2.5-flash:countTokens'
 */
export const geminiMethodUrl = (ch: Channel, model: string, method: string): string =>
	joinUrl(ch.baseUrl.replace(/\/v1(beta)?$/, ''), `/v1beta/models/${encodeURIComponent(model)}:${method}`)
