/**
 * The charge of one completed transcription in a Realtime transcription session, from the `usage` of its
 * `conversation.item.input_audio_transcription.completed` event (platform.openai.com/docs/api-reference/realtime-server-events):
 * `{ type: 'tokens', input_tokens, input_token_details: { audio_tokens, text_tokens }, output_tokens }` (gpt-4o
 * transcription models) or `{ type: 'duration', seconds }` (whisper-1). Priced as POST /v1/audio/transcriptions
 * prices the same model (modules/audio/transcriptions.ts): `per_minute`/`per_second` by duration, else by tokens;
 * what the event does not report (a duration for a model priced by time, tokens for one priced by token) comes from
 * the audio the gateway forwarded for that item, and the row says estimated.
 * @module
 */
import type { Price } from '../../billing/pricing'
import { emptyUsage, type Usage } from '../../core/ir'
import { durationCost, pricedByDuration, requestFee } from '../../passthrough/pricing'
import { countText } from '../../relay/estimate'
import { AUDIO_TOKENS_PER_SECOND, audioTokensCost } from '../audio/transcriptions'

type Counts = Record<string, unknown>

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined)
const int = (v: unknown): number | undefined => (num(v) === undefined ? undefined : Math.floor(v as number))

/** `seconds`: the audio forwarded for the item, for what the usage leaves out; `text`: its transcript. */
export function transcriptionCharge(price: Price, usage: unknown, seconds: number, text: string): { cost: number; usage: Usage; estimated: boolean } {
	const u = (usage && typeof usage === 'object' ? usage : {}) as Counts
	const byDuration = pricedByDuration(price)
	const reported = u.type === 'duration' ? num(u.seconds) : undefined
	const input = u.type === 'tokens' ? int(u.input_tokens) : undefined
	const output = u.type === 'tokens' ? int(u.output_tokens) : undefined
	const audio = u.type === 'tokens' ? int((u.input_token_details as Counts | undefined)?.audio_tokens) : undefined
	let cost = requestFee(price) + (byDuration ? durationCost(price, reported ?? seconds) : 0)
	let tokens = { input: input ?? 0, audio: audio ?? input ?? 0, output: output ?? 0 }
	if (input !== undefined || output !== undefined) cost += audioTokensCost(price, tokens.input, tokens.audio, tokens.output)
	else if (!byDuration) {
		const t = Math.ceil(seconds * AUDIO_TOKENS_PER_SECOND)
		tokens = { input: t, audio: t, output: countText(text) }
		cost += audioTokensCost(price, t, t, tokens.output)
	}
	const estimated = byDuration ? reported === undefined : input === undefined
	return { cost, usage: { ...emptyUsage(), input: tokens.input, audioInput: Math.min(tokens.audio, tokens.input), output: tokens.output }, estimated }
}
