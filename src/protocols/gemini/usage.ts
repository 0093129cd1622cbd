/**
 * Gemini usage and finish reasons ⇄ canonical ones.
 * Usage: `promptTokenCount` INCLUDES `cachedContentTokenCount`
 * (https://ai.google.dev/api/generate-content#UsageMetadata), while canonical `input` excludes cache reads, so
 * input = prompt − cached. Thinking is `thoughtsTokenCount`, separate
 * from `candidatesTokenCount` but billed as output, so output = candidates + thoughts (WIRE-NOTES #13, §17).
 * @module
 */
import { emptyUsage, type GoogleTier, promptTokens, type ServiceTier, type StopReason, type Usage } from '../../core/ir'
import { splitModalities } from '../../core/usage-modalities'
import type { TierHeader } from '../codec'
import type { GeminiUsageMetadata } from './model'
import { get, isObj, num } from './read'

/**
 * Canonical usage from a `usageMetadata` object; `undefined` when there is none.
 * `toolUsePromptTokenCount` (results of built-in tools such as Google Search, fed back as input) counts as input.
 * @example decodeUsage({ promptTokenCount: 100, cachedContentTokenCount: 60, candidatesTokenCount: 5, thoughtsTokenCount: 7 })
 * // → { input: 40, cacheRead: 60, cacheWrite: 0, output: 12, reasoning: 7 }
 */
export function decodeUsage(meta: unknown): Usage | undefined {
	if (!isObj(meta)) return undefined
	const prompt = num(get(meta, 'promptTokenCount')) ?? 0
	const cached = num(get(meta, 'cachedContentTokenCount')) ?? 0
	const toolUse = num(get(meta, 'toolUsePromptTokenCount')) ?? 0
	const candidates = num(get(meta, 'candidatesTokenCount')) ?? 0
	const thoughts = num(get(meta, 'thoughtsTokenCount')) ?? 0
	const out: Usage = {
		input: Math.max(0, prompt - cached) + toolUse,
		output: candidates + thoughts,
		cacheRead: cached,
		cacheWrite: 0,
		reasoning: thoughts,
		...(toolUse > 0 && { toolUseInput: toolUse }),
	}
	// The tier that served the request (Flex, or Priority unless over its limit, when it runs as standard), which
	// Google prices apart (ai.google.dev/gemini-api/docs/optimization); on Vertex, its `trafficType`.
	const tier = servedTier(get(meta, 'serviceTier')) ?? trafficTier(get(meta, 'trafficType'))
	if (tier) out.tier = tier
	// Audio in the prompt and audio or images among the candidates are priced apart (ai.google.dev/gemini-api/docs/pricing),
	// and so are input images where a model lists a price for them (as the Images API bills Gemini image edits); the
	// modality lists split the counts above, thoughts excluded. The uncached input's share of a modality is the
	// prompt's (`promptTokensDetails`) less what was read from the cache (`cacheTokensDetails`), plus what the built-in
	// tools fed back (`toolUsePromptTokensDetails`, counted in the input above).
	const lists = { prompt: 'promptTokensDetails', cached: 'cacheTokensDetails', toolUse: 'toolUsePromptTokensDetails', output: 'candidatesTokensDetails' }
	return splitModalities(out, (list, m) => modality(meta, lists[list], m.toUpperCase()), cached, candidates)
}

/**
 * Gemini's name of the tier that served a request (`usageMetadata.serviceTier`, an Interaction's `service_tier`, the
 * `x-gemini-service-tier` header; `priority`, or the enum's `SERVICE_TIER_PRIORITY`) → the tier priced apart, or
 * undefined for the standard one.
 */
export function servedTier(v: unknown): ServiceTier | undefined {
	const tier = askedTier(v)
	return tier === 'standard' ? undefined : tier
}

/**
 * Vertex's `usageMetadata.trafficType` of the tiers it prices apart: Priority and Flex PayGo, asked with the
 * `X-Vertex-AI-LLM-Shared-Request-Type` header (docs.cloud.google.com/vertex-ai/generative-ai/docs/priority-paygo,
 * …/flex-paygo; a channel's `settings.headers` sends it). `ON_DEMAND` and Provisioned Throughput are the standard prices.
 */
const trafficTier = (v: unknown): ServiceTier | undefined => (v === 'ON_DEMAND_PRIORITY' ? 'priority' : v === 'ON_DEMAND_FLEX' ? 'flex' : undefined)

/**
 * The tier a Google request names (`serviceTier` / `service_tier`, in the enum's spelling or not), or undefined for none
 * or one Google does not document (`unspecified` is the default).
 * @example askedTier('SERVICE_TIER_FLEX') === 'flex'
 */
export function askedTier(v: unknown): GoogleTier | undefined {
	if (typeof v !== 'string') return undefined
	const tier = v.toLowerCase().replace(/^service_tier_/, '')
	return tier === 'priority' || tier === 'flex' || tier === 'standard' ? tier : undefined
}

/** A canonical tier in Google's words, when it is one Google prices apart (Flex, Priority); undefined for the others. */
export const googleTierOf = (tier: ServiceTier | undefined): 'priority' | 'flex' | undefined => (tier === 'priority' || tier === 'flex' ? tier : undefined)

/** Gemini's `x-gemini-service-tier` (ai.google.dev/gemini-api/docs/priority-inference), on generateContent and Interactions. */
export const TIER_HEADER: TierHeader = {
	name: 'x-gemini-service-tier',
	decode: servedTier,
	encode: (tier) => googleTierOf(tier) ?? 'standard',
}

/** The tokens of one modality in a `ModalityTokenCount` list (`[{ modality: 'AUDIO', tokenCount: 120 }, …]`). */
function modality(meta: Record<string, unknown>, list: string, name: string): number {
	const entries = get(meta, list)
	if (!Array.isArray(entries)) return 0
	let n = 0
	for (const e of entries) if (isObj(e) && e.modality === name) n += num(get(e, 'tokenCount')) ?? 0
	return n
}

/**
 * Canonical usage → `usageMetadata` (cache writes have no Gemini field, so they count in the prompt). What built-in
 * tools fed back is `toolUsePromptTokenCount`, apart from `promptTokenCount` as Gemini gives it; the total counts both.
 */
export function encodeUsage(u: Partial<Usage>): GeminiUsageMetadata {
	const full = { ...emptyUsage(), ...u }
	const toolUse = Math.min(full.toolUseInput ?? 0, full.input)
	const prompt = promptTokens(full) - toolUse
	const meta: GeminiUsageMetadata = {
		promptTokenCount: prompt,
		candidatesTokenCount: Math.max(0, full.output - full.reasoning),
		totalTokenCount: prompt + toolUse + full.output,
	}
	if (toolUse > 0) meta.toolUsePromptTokenCount = toolUse
	const tier = googleTierOf(full.tier)
	if (tier) meta.serviceTier = tier
	if (full.reasoning > 0) meta.thoughtsTokenCount = full.reasoning
	if (full.cacheRead > 0) meta.cachedContentTokenCount = full.cacheRead
	if (full.audioCacheRead) meta.cacheTokensDetails = details([['TEXT', full.cacheRead - full.audioCacheRead], ['AUDIO', full.audioCacheRead]])
	// The modality split, when the upstream reported tokens priced apart (text is what is left).
	if (full.audioInput || full.imageInput || full.audioCacheRead) {
		const audio = (full.audioInput ?? 0) + (full.audioCacheRead ?? 0)
		meta.promptTokensDetails = details([['TEXT', prompt - audio - (full.imageInput ?? 0)], ['IMAGE', full.imageInput ?? 0], ['AUDIO', audio]])
	}
	if (full.audioOutput || full.imageOutput) {
		const media = (full.audioOutput ?? 0) + (full.imageOutput ?? 0)
		const split: Array<[string, number]> = [['TEXT', (meta.candidatesTokenCount ?? 0) - media], ['AUDIO', full.audioOutput ?? 0], ['IMAGE', full.imageOutput ?? 0]]
		meta.candidatesTokensDetails = details(split)
	}
	return meta
}

const details = (split: Array<[string, number]>) => split.filter(([, n]) => n > 0).map(([modality, tokenCount]) => ({ modality, tokenCount }))

const FILTERED = new Set([
	'SAFETY',
	'RECITATION',
	'BLOCKLIST',
	'PROHIBITED_CONTENT',
	'SPII',
	'IMAGE_SAFETY',
	'IMAGE_PROHIBITED_CONTENT',
	'IMAGE_RECITATION',
])

/**
 * Gemini `finishReason` → canonical stop reason. A turn that emitted a functionCall ends with `tool_use` even when
 * Gemini says STOP (WIRE-NOTES §6; BerriAI/litellm PR #10485); filtered and truncated turns keep their reason.
 * @example decodeFinishReason('STOP', true) === 'tool_use'
 */
export function decodeFinishReason(reason: string | undefined, toolSeen: boolean): StopReason {
	if (reason === 'MAX_TOKENS') return 'max_tokens'
	if (reason !== undefined && FILTERED.has(reason)) return 'content_filter'
	return toolSeen ? 'tool_use' : 'end_turn'
}

/** Canonical stop reason → Gemini `finishReason` (Gemini has no tool or stop-sequence reason: both are STOP). */
export function encodeFinishReason(reason: StopReason): string {
	if (reason === 'max_tokens') return 'MAX_TOKENS'
	if (reason === 'content_filter' || reason === 'refusal') return 'SAFETY'
	return 'STOP'
}
