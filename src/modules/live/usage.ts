/**
 * What a Live turn used. Reported: each server message may carry `usageMetadata` (ai.google.dev/api/live#UsageMetadata:
 * `promptTokenCount` including `cachedContentTokenCount`, `responseTokenCount`, `thoughtsTokenCount`,
 * `toolUsePromptTokenCount`, and per-modality `promptTokensDetails` / `cacheTokensDetails` / `responseTokensDetails`),
 * read as generateContent's usage is (protocols/gemini/usage.ts), with the response counts in place of the candidates'.
 * Estimated, when a turn ends without a report: text by the tokenizer, audio by its duration at Gemini's 32 tokens
 * per second (ai.google.dev/gemini-api/docs/tokens: "Audio: 32 tokens per second"), the duration from the PCM16 bytes
 * and the part's `mimeType` rate (`audio/pcm;rate=16000`; input 16 kHz and output 24 kHz when unnamed).
 * @module
 */
import type { Usage } from '../../core/ir'
import { decodeUsage } from '../../protocols/gemini/usage'
import { isObj } from '../../protocols/gemini/read'

/** Undefined when the message carries no usage. */
export function liveUsage(meta: unknown): Usage | undefined {
	if (!isObj(meta)) return undefined
	return decodeUsage({ ...meta, candidatesTokenCount: meta.responseTokenCount, candidatesTokensDetails: meta.responseTokensDetails })
}

/** Adds a generation's usage to the turn's (a turn with a tool call runs the model once before the call and once after). */
export function addUsage(a: Usage, b: Usage): Usage {
	const sum = (k: keyof Usage) => ((a[k] as number | undefined) ?? 0) + ((b[k] as number | undefined) ?? 0)
	const out: Usage = { ...a, input: sum('input'), output: sum('output'), cacheRead: sum('cacheRead'), cacheWrite: sum('cacheWrite'), reasoning: sum('reasoning'), audioInput: sum('audioInput'), audioOutput: sum('audioOutput'), imageOutput: sum('imageOutput') }
	// Input images and cached audio, priced apart too, when either generation reported them.
	if (sum('imageInput')) out.imageInput = sum('imageInput')
	if (sum('audioCacheRead')) out.audioCacheRead = sum('audioCacheRead')
	return out
}

const AUDIO_TOKENS_PER_SECOND = 32

/** Tokens of base64 PCM16 audio of a `mimeType` (its `rate=`, else `defaultRate`). */
export function audioTokens(base64Length: number, mimeType: unknown, defaultRate: number): number {
	const rate = Number(/rate=(\d+)/.exec(typeof mimeType === 'string' ? mimeType : '')?.[1]) || defaultRate
	const bytes = Math.floor((base64Length * 3) / 4)
	return bytes > 0 ? Math.ceil((bytes / (rate * 2)) * AUDIO_TOKENS_PER_SECOND) : 0
}

export const INPUT_RATE = 16_000
export const OUTPUT_RATE = 24_000
