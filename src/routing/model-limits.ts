/**
 * A model's limits: its context window (the most input it reads) and its maximum output (the largest cap a request may
 * name). The model entry's `context_window` and `max_output_tokens` win; otherwise the built-in figures below, for
 * the well-known models whose vendors document them (a name looked up as the client sent it, else as the channel's
 * `model_map` sends it upstream). Unknown otherwise: nothing is made up.
 *
 * Sources (as of 2026-11): OpenAI https://developers.openai.com/api/docs/models (each model's page: "context window",
 * "max output tokens"), Anthropic https://platform.claude.com/docs/en/about-claude/models/overview and each model's
 * page, models/<id>/overview ("Context window", "Max output"), Google https://ai.google.dev/gemini-api/docs/models
 * ("Input token limit", "Output token limit").
 * @module
 */
import type { Price } from '../billing/pricing'

export type ModelLimits = { contextWindow?: number; maxOutput?: number }

/** `[pattern, context window, max output]`; a pattern matches the whole name, dated snapshots included where given; the first match wins. */
const BUILT_IN: Array<[RegExp, number, number]> = [
	// OpenAI (developers.openai.com/api/docs/models/<id>)
	[/^gpt-5(\.\d+)?-chat-latest$/, 128_000, 16_384],
	[/^gpt-5-pro(-\d{4}-\d{2}-\d{2})?$/, 400_000, 272_000],
	[/^gpt-5\.4(-pro)?(-\d{4}-\d{2}-\d{2})?$/, 1_050_000, 128_000],
	// The GPT-5.6 and GPT-6 families' Sol, Terra and Luna (gpt-6.2-sol: a 1,050,000 context window, 922,000 of it input,
	// and 128,000 output); their Astra, Cyber and Rosalind models are left out, not having been read.
	[/^gpt-(5\.6|6|6\.1|6\.2)-(sol|terra|luna)(-\d{4}-\d{2}-\d{2})?$/, 1_050_000, 128_000],
	[/^gpt-5(\.[12])?(-mini|-nano|-codex(-mini|-max)?)?(-\d{4}-\d{2}-\d{2})?$/, 400_000, 128_000],
	[/^gpt-4\.1(-mini|-nano)?(-\d{4}-\d{2}-\d{2})?$/, 1_047_576, 32_768],
	[/^gpt-4o-2024-05-13$/, 128_000, 4_096],
	[/^gpt-4o(-mini)?(-\d{4}-\d{2}-\d{2})?$/, 128_000, 16_384],
	[/^(o1|o1-pro|o3|o3-pro|o3-mini|o4-mini)(-\d{4}-\d{2}-\d{2})?$/, 200_000, 100_000],
	[/^gpt-4-turbo(-\d{4}-\d{2}-\d{2})?$/, 128_000, 4_096],
	// Anthropic (platform.claude.com/docs/en/models/<id>/overview): every model from Opus 4.7 and Sonnet 5 on reads 1M
	// and writes 128K; Sonnet 4.6 writes 64K.
	[/^claude-(opus-4-[6-8]|(opus|sonnet|fable|mythos)-(5|5-\d))(-\d{8})?$/, 1_000_000, 128_000],
	[/^claude-sonnet-4-6(-\d{8})?$/, 1_000_000, 64_000],
	[/^claude-(sonnet-4-5|haiku-4-5|opus-4-5)(-\d{8})?$/, 200_000, 64_000],
	[/^claude-(opus-4-1|opus-4-0|opus-4)(-\d{8})?$/, 200_000, 32_000],
	[/^claude-(sonnet-4-0|sonnet-4)(-\d{8})?$/, 200_000, 64_000],
	[/^claude-3-7-sonnet-(latest|\d{8})$/, 200_000, 64_000],
	[/^claude-3-5-(haiku|sonnet)-(latest|\d{8})$/, 200_000, 8_192],
	[/^claude-3-(haiku|opus)-(latest|\d{8})$/, 200_000, 4_096],
	// Google (ai.google.dev/gemini-api/docs/models/<id>)
	[/^gemini-3-pro-image-preview$/, 65_536, 32_768],
	[/^gemini-3(\.\d+)?-(pro|flash|flash-lite)(-preview)?$/, 1_048_576, 65_536],
	[/^gemini-2\.5-(pro|flash|flash-lite)(-preview-\d{2}-\d{4})?$/, 1_048_576, 65_536],
	[/^gemini-2\.0-flash(-lite)?(-001)?$/, 1_048_576, 8_192],
	[/^gemini-1\.5-pro(-latest|-\d{3})?$/, 2_097_152, 8_192],
	[/^gemini-1\.5-flash(-latest|-\d{3})?$/, 1_048_576, 8_192],
]

/**
 * The vendor-documented limits of a model name, when it is one of the well-known ones.
 * @example builtInLimits('claude-sonnet-4-5-20250929') // { contextWindow: 200000, maxOutput: 64000 }
 * @example builtInLimits('us.anthropic.claude-sonnet-4-5-20250929-v1:0') // the same, on Bedrock
 * @example builtInLimits('claude-sonnet-4-5@20250929') // the same, on Vertex AI
 */
export function builtInLimits(name: string): ModelLimits {
	// A field-cheap test first: most names are no Bedrock id. Vertex names a Claude snapshot `claude-…@20250929`.
	const at = name.indexOf('@')
	const claude = name.includes('anthropic.') ? (BEDROCK_ID.exec(name)?.[1] ?? name) : at > 0 && name.startsWith('claude-') ? name.slice(0, at) : name
	for (const [re, contextWindow, maxOutput] of BUILT_IN) if (re.test(claude)) return { contextWindow, maxOutput }
	return {}
}

/**
 * A Claude model id on Amazon Bedrock, bare or as an inference profile or ARN (`anthropic.claude-sonnet-4-5-20250929-v1:0`,
 * `us.anthropic.claude-sonnet-4-6-v1:0`, `arn:aws:bedrock:…:inference-profile/eu.anthropic.…`): the Claude name inside.
 */
const BEDROCK_ID = /^(?:arn:[^/]+\/)?(?:[a-z]+\.)?anthropic\.(claude-[a-z0-9-]+?)(?:-v\d+(?::\d+)?)?$/

/**
 * A model's limits: the entry's own, else the built-in ones of its name, else of the names its channels send upstream
 * (`model_map`), the largest where they differ (a request is refused only when no channel's model could take it).
 * @example modelLimits('fast', { maxOutputTokens: 8000 }, ['gpt-4.1-mini']) // { contextWindow: 1047576, maxOutput: 8000 }
 */
export function modelLimits(name: string, price: Pick<Price, 'contextWindow' | 'maxOutputTokens'> | undefined, upstreamNames: string[] = []): ModelLimits {
	let known = builtInLimits(name)
	if (known.maxOutput === undefined)
		for (const u of upstreamNames) {
			const l = builtInLimits(u)
			if (l.maxOutput !== undefined && l.maxOutput > (known.maxOutput ?? 0)) known = l
		}
	const contextWindow = price?.contextWindow ?? known.contextWindow
	const maxOutput = price?.maxOutputTokens ?? known.maxOutput
	return { ...(contextWindow ? { contextWindow } : {}), ...(maxOutput ? { maxOutput } : {}) }
}
