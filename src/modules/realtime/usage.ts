/**
 * `response.usage` of a Realtime `response.done` event, read into the canonical Usage. OpenAI counts cached tokens
 * inside `input_tokens` ("cached tokens here are counted as a subset of input tokens") and splits both totals by
 * modality (`input_token_details.{text,audio,image}_tokens`, `cached_tokens_details`, `output_token_details`); the
 * canonical `input` excludes cache reads, and its `audioInput` is the audio in that uncached part.
 * @module
 */
import type { Usage } from '../../core/ir'

type Counts = Record<string, unknown>

const count = (o: Counts | undefined, k: string): number => {
	const v = o?.[k]
	return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0
}

/** Undefined when the event carries no usage (then the response is billed as unreported). */
export function realtimeUsage(usage: unknown): Usage | undefined {
	if (!usage || typeof usage !== 'object') return undefined
	const u = usage as Counts
	if (typeof u.input_tokens !== 'number' && typeof u.output_tokens !== 'number') return undefined
	const inDetails = u.input_token_details as Counts | undefined
	const cachedDetails = inDetails?.cached_tokens_details as Counts | undefined
	const outDetails = u.output_token_details as Counts | undefined
	const prompt = count(u, 'input_tokens')
	const cached = Math.min(count(inDetails, 'cached_tokens'), prompt)
	const output = count(u, 'output_tokens')
	return {
		input: prompt - cached,
		cacheRead: cached,
		cacheWrite: 0,
		output,
		reasoning: 0,
		audioInput: Math.max(0, count(inDetails, 'audio_tokens') - count(cachedDetails, 'audio_tokens')),
		audioOutput: Math.min(count(outDetails, 'audio_tokens'), output),
	}
}
