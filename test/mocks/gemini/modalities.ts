/**
 * What a non-streamed generateContent answers for `generationConfig.responseModalities` asking for audio
 * (ai.google.dev/gemini-api/docs/speech-generation): an `inlineData` part, and its tokens in `candidatesTokensDetails`
 * by modality. AUDIO (text-to-speech) answers the audio alone: 0.25 s of silence per word of the last user text as
 * 24 kHz 16-bit PCM (`audio/L16;codec=pcm;rate=24000`, as the TTS models send it), at Gemini's 25 tokens per second of
 * audio. Images come from the image models (image-out.ts).
 * @module
 */
import { asNum, asObj, type Obj } from '../shared/json'
import { countWords } from '../shared/text'

export const TTS_MIME = 'audio/L16;codec=pcm;rate=24000'
/** PCM bytes per word of input (0.25 s at 24 kHz, 2 bytes a sample). */
export const TTS_BYTES_PER_WORD = 12_000
export const ttsTokens = (words: number) => Math.ceil(words * 0.25 * 25)

/** The answer `whole` (one candidate) with the asked modalities' parts and tokens; unchanged when none is asked. */
export function withModalities(whole: Obj, generationConfig: Obj, lastUserText: string): Obj {
	const asked = Array.isArray(generationConfig.responseModalities) ? generationConfig.responseModalities.map((m) => String(m).toUpperCase()) : []
	if (!asked.includes('AUDIO')) return whole
	const candidate = (whole.candidates as Obj[])[0]!
	const content = asObj(candidate.content) ?? {}
	const usage = { ...(asObj(whole.usageMetadata) ?? {}) }
	const text = asNum(usage.candidatesTokenCount) ?? 0
	const words = countWords(lastUserText)
	const parts = [{ inlineData: { mimeType: TTS_MIME, data: Buffer.alloc(words * TTS_BYTES_PER_WORD).toString('base64') } }]
	const answer = ttsTokens(words)
	const details = [{ modality: 'AUDIO', tokenCount: answer }]
	usage.totalTokenCount = (asNum(usage.totalTokenCount) ?? 0) - text + answer
	usage.candidatesTokenCount = answer
	usage.candidatesTokensDetails = details
	return { ...whole, candidates: [{ ...candidate, content: { ...content, parts } }], usageMetadata: usage }
}
