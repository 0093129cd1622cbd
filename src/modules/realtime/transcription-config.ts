/**
 * Where a Realtime session config names its input audio transcription: GA `audio.input.transcription`, the beta's
 * `input_audio_transcription` (platform.openai.com/docs/api-reference/realtime-client-events/session/update). Read by
 * transcription sessions (their model) and conversation sessions (transcription billed on top of responses).
 * @module
 */
type Json = Record<string, any>

/** The transcription model a session config names: GA `audio.input.transcription.model`, the beta's `input_audio_transcription.model`. */
export const transcriptionModelOf = (session: Json | undefined): unknown => session?.audio?.input?.transcription?.model ?? session?.input_audio_transcription?.model

/**
 * The transcription a config sets: undefined when it does not mention it (a partial update keeps the current one),
 * null when it turns it off, else its settings.
 */
export function transcriptionSetting(session: Json | undefined): Json | null | undefined {
	const input = session?.audio?.input
	const set = input && typeof input === 'object' && 'transcription' in input ? input.transcription : session && 'input_audio_transcription' in session ? session.input_audio_transcription : undefined
	if (set === undefined) return undefined
	return set && typeof set === 'object' ? set : null
}

/** The config with the transcription model renamed for the upstream (only where it was named). */
export function withModel(session: Json, model: string): Json {
	if (session.audio?.input?.transcription?.model !== undefined)
		return { ...session, audio: { ...session.audio, input: { ...session.audio.input, transcription: { ...session.audio.input.transcription, model } } } }
	if (session.input_audio_transcription?.model !== undefined) return { ...session, input_audio_transcription: { ...session.input_audio_transcription, model } }
	return session
}

/** GA `audio.input.format`, the beta's `input_audio_format`: undefined when the config does not set it. */
export const formatOf = (session: Json | undefined): unknown => session?.audio?.input?.format ?? session?.input_audio_format
