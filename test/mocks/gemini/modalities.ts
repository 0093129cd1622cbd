/**
 * What a non-streamed generateContent answers for `generationConfig.responseModalities` asking for images or audio
 * (ai.google.dev/gemini-api/docs/image-generation, /speech-generation): an `inlineData` part, and its tokens in
 * `candidatesTokensDetails` by modality. IMAGE adds one 1×1 PNG after the text, counted as 1,290 tokens (what Gemini
 * reports for an image up to 1024×1024); AUDIO (text-to-speech) answers the audio alone: 0.25 s of silence per word of
 * the last user text as 24 kHz 16-bit PCM (`audio/L16;codec=pcm;rate=24000`, as the TTS models send it), at Gemini's
 * 25 tokens per second of audio.
 * @module
 */
import { asNum, asObj, type Obj } from '../shared/json'
import { countWords } from '../shared/text'

export const IMAGE_OUT_TOKENS = 1290
export const PNG_OUT = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
export const TTS_MIME = 'audio/L16;codec=pcm;rate=24000'
/** PCM bytes per word of input (0.25 s at 24 kHz, 2 bytes a sample). */
export const TTS_BYTES_PER_WORD = 12_000
export const ttsTokens = (words: number) => Math.ceil(words * 0.25 * 25)

/** The answer `whole` (one candidate) with the asked modalities' parts and tokens; unchanged when none is asked. */
export function withModalities(whole: Obj, generationConfig: Obj, lastUserText: string): Obj {
	const asked = Array.isArray(generationConfig.responseModalities) ? generationConfig.responseModalities.map((m) => String(m).toUpperCase()) : []
	const image = asked.includes('IMAGE')
	const audio = asked.includes('AUDIO')
	if (!image && !audio) return whole
	const candidate = (whole.candidates as Obj[])[0]!
	const content = asObj(candidate.content) ?? {}
	const usage = { ...(asObj(whole.usageMetadata) ?? {}) }
	const text = asNum(usage.candidatesTokenCount) ?? 0
	let parts = (content.parts as Obj[]) ?? []
	let details: Obj[]
	let answer: number
	if (audio) {
		const words = countWords(lastUserText)
		parts = [{ inlineData: { mimeType: TTS_MIME, data: Buffer.alloc(words * TTS_BYTES_PER_WORD).toString('base64') } }]
		answer = ttsTokens(words)
		details = [{ modality: 'AUDIO', tokenCount: answer }]
	} else {
		parts = [...parts, { inlineData: { mimeType: 'image/png', data: PNG_OUT } }]
		answer = text + IMAGE_OUT_TOKENS
		details = [{ modality: 'TEXT', tokenCount: text }, { modality: 'IMAGE', tokenCount: IMAGE_OUT_TOKENS }]
	}
	usage.totalTokenCount = (asNum(usage.totalTokenCount) ?? 0) - text + answer
	usage.candidatesTokenCount = answer
	usage.candidatesTokensDetails = details
	return { ...whole, candidates: [{ ...candidate, content: { ...content, parts } }], usageMetadata: usage }
}
