/**
 * How long an audio file is, for pricing by the minute when the upstream does not say: exact for WAV (RIFF header),
 * otherwise an upper bound from the size; and the end of the last cue of an SRT/VTT transcript.
 * @module
 */

/** Compressed speech rarely goes below 16 kbit/s (2,000 bytes per second): the bound for unknown formats. */
const MIN_BYTES_PER_SECOND = 2000

/** Seconds of a PCM WAV file from its header (byte rate at offset 28), or undefined when it is not one. */
export async function wavSeconds(file: Blob): Promise<number | undefined> {
	if (file.size < 44) return undefined
	const head = new DataView(await file.slice(0, 44).arrayBuffer())
	const tag = (at: number) => String.fromCharCode(head.getUint8(at), head.getUint8(at + 1), head.getUint8(at + 2), head.getUint8(at + 3))
	if (tag(0) !== 'RIFF' || tag(8) !== 'WAVE') return undefined
	const byteRate = head.getUint32(28, true)
	return byteRate > 0 ? (file.size - 44) / byteRate : undefined
}

/** Exact seconds for WAV, else an upper bound from the size. @example await estimateSeconds(mp3) */
export async function estimateSeconds(file: Blob): Promise<{ seconds: number; exact: boolean }> {
	const wav = await wavSeconds(file)
	if (wav !== undefined) return { seconds: wav, exact: true }
	return { seconds: file.size / MIN_BYTES_PER_SECOND, exact: false }
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
