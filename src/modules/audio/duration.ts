/**
 * How long an audio file is, for pricing by the minute when the upstream does not say (an OpenAI-compatible upstream
 * such as Groq answers `json` with the text alone), and the end of the last cue of an SRT/VTT transcript.
 *
 * The rule, in order:
 * 1. The upstream's figure (verbose_json/diarized_json `duration`, `usage.seconds`, the last SRT/VTT cue) always wins
 *    (transcriptions.ts).
 * 2. Else the file's own header (media-duration.ts: WAV, MP3 and AAC/ADTS frame walks, MP4/M4A `mvhd`, FLAC, Ogg
 *    Opus/Vorbis, WebM/Matroska blocks), settled as exact. The header is the client's: a duration too short for the
 *    file's size (below size ÷ the format's top bitrate, plus a second) is not believed, and that floor is charged
 *    instead, marked estimated.
 * 3. Else (a format not read here, e.g. AMR, or a damaged file) the size at {@link SETTLE_BYTES_PER_SECOND}
 *    (128 kbit/s, the usual bitrate of MP3/AAC exports and of browser MediaRecorder Opus by default), marked
 *    estimated: close for common uploads, an undercharge for low-bitrate speech codecs rather than the 8× overcharge
 *    the size bound gives at 128 kbit/s. An operator who needs exact figures for such files should use upstreams that
 *    report the duration.
 * The hold stays an upper bound: size at {@link MIN_BYTES_PER_SECOND} (16 kbit/s), or the header's figure if longer.
 * @module
 */
import { mediaDuration } from './media-duration'

/** Compressed speech rarely goes below 16 kbit/s (2,000 bytes per second): the hold's bound for unknown formats. */
export const MIN_BYTES_PER_SECOND = 2000

/** 128 kbit/s: what a file whose duration cannot be read is charged at. */
export const SETTLE_BYTES_PER_SECOND = 16_000

export type DurationGuess = {
	/** Seconds to charge when the upstream reports none. */
	seconds: number
	/** Seconds to hold for: never below what may be charged. */
	upper: number
	/** Read from the file (not a size-based guess). */
	exact: boolean
}

/** What to charge and hold for this file (see the module's rule). @example await estimateSeconds(mp3) */
export async function estimateSeconds(file: Blob): Promise<DurationGuess> {
	const bound = file.size / MIN_BYTES_PER_SECOND
	const d = await mediaDuration(file).catch(() => undefined)
	if (d) {
		const floor = d.audioBytes / d.maxBytesPerSecond
		if (d.seconds + 1 >= floor) return { seconds: d.seconds, upper: Math.max(bound, d.seconds), exact: true }
		return { seconds: floor, upper: Math.max(bound, floor), exact: false }
	}
	return { seconds: file.size / SETTLE_BYTES_PER_SECOND, upper: bound, exact: false }
}

/**
 * End time of the last cue of an SRT (`00:00:05,120`) or VTT (`00:00:05.120`, hours optional) transcript, in seconds.
 * @example cueEnd('1\n00:00:00,000 --> 00:00:03,500\nHi\n') === 3.5
 */
export function cueEnd(text: string): number | undefined {
	let end: number | undefined
	for (const m of text.matchAll(/-->\s*(?:(\d+):)?(\d{1,2}):(\d{2})[.,](\d{1,3})/g)) {
		const s = Number(m[1] ?? 0) * 3600 + Number(m[2]) * 60 + Number(m[3]) + Number(m[4]!.padEnd(3, '0')) / 1000
		end = Math.max(end ?? 0, s)
	}
	return end
}
