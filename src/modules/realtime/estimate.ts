/**
 * What a Realtime response used when its `response.done` never came (the upstream cut it): counted from the frames
 * the gateway saw, as other relays bill an answer without reported usage. Text by the tokenizer (estimate.ts); audio by
 * its duration at OpenAI's documented rates (developers.openai.com/api/docs/guides/realtime-costs: "audio tokens in
 * user messages are 1 token per 100 ms of audio, while audio tokens in assistant messages are 1 token per 50ms"),
 * the duration from the bytes and the session's audio format (`audio/pcm` 24 kHz 16-bit mono, default; G.711
 * `audio/pcmu`/`audio/pcma` 8 kHz 8-bit; the beta's `pcm16`/`g711_ulaw`/`g711_alaw`).
 * @module
 */
import { countText } from '../../relay/estimate'

const USER_MS_PER_TOKEN = 100
const ASSISTANT_MS_PER_TOKEN = 50

/** Bytes per second of an audio format; PCM16 at 24 kHz when unknown (the API's default). */
export function audioBytesPerSecond(format: unknown): number {
	const type = typeof format === 'string' ? format : (format as { type?: unknown } | undefined)?.type
	return type === 'audio/pcmu' || type === 'audio/pcma' || type === 'g711_ulaw' || type === 'g711_alaw' ? 8_000 : 48_000
}

/** Decoded size of base64 text, without decoding it. */
export function base64Bytes(b64: string): number {
	const pad = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0
	return Math.max(0, Math.floor((b64.length * 3) / 4) - pad)
}

const audioTokens = (bytes: number, bytesPerSecond: number, msPerToken: number) => (bytes > 0 ? Math.ceil((bytes / bytesPerSecond) * (1000 / msPerToken)) : 0)

/** Tokens of audio the user sent (`input_audio_buffer.append`, `input_audio` content). */
export const userAudioTokens = (bytes: number, bytesPerSecond: number) => audioTokens(bytes, bytesPerSecond, USER_MS_PER_TOKEN)

/** Tokens of audio the model produced (`response.output_audio.delta`). */
export const assistantAudioTokens = (bytes: number, bytesPerSecond: number) => audioTokens(bytes, bytesPerSecond, ASSISTANT_MS_PER_TOKEN)

type Json = Record<string, unknown>

/**
 * The input a client event adds to the conversation: text tokens (item text, transcripts, function outputs) and audio
 * bytes (appended to the input buffer, or in an `input_audio` part).
 */
export function clientInput(event: Json): { text: number; audioBytes: number } {
	if (event.type === 'input_audio_buffer.append' && typeof event.audio === 'string') return { text: 0, audioBytes: base64Bytes(event.audio) }
	if (event.type !== 'conversation.item.create') return { text: 0, audioBytes: 0 }
	const item = (event.item ?? {}) as Json
	let text = 0
	let audioBytes = 0
	if (typeof item.output === 'string') text += countText(item.output)
	if (typeof item.arguments === 'string') text += countText(item.arguments)
	for (const part of Array.isArray(item.content) ? (item.content as Json[]) : []) {
		if (typeof part?.text === 'string') text += countText(part.text)
		else if (typeof part?.transcript === 'string') text += countText(part.transcript)
		if (typeof part?.audio === 'string') audioBytes += base64Bytes(part.audio)
	}
	return { text, audioBytes }
}

/** Server events whose `delta` is output text (GA names and the beta's). */
export const TEXT_DELTAS = new Set([
	'response.output_text.delta',
	'response.text.delta',
	'response.output_audio_transcript.delta',
	'response.audio_transcript.delta',
	'response.function_call_arguments.delta',
])
/** Server events whose `delta` is base64 output audio. */
export const AUDIO_DELTAS = new Set(['response.output_audio.delta', 'response.audio.delta'])
