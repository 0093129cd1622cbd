/** Audio files for the transcription tests. */

/** A mono 16-bit PCM WAV file at `rate` Hz (16 kHz: 32,000 bytes a second) holding `bytes` of silence. */
export function wavBytes(bytes: number, rate = 16000): Uint8Array<ArrayBuffer> {
	const out = new Uint8Array(44 + bytes)
	const v = new DataView(out.buffer)
	const ascii = (at: number, s: string) => [...s].forEach((c, i) => v.setUint8(at + i, c.charCodeAt(0)))
	ascii(0, 'RIFF')
	v.setUint32(4, 36 + bytes, true)
	ascii(8, 'WAVEfmt ')
	v.setUint32(16, 16, true)
	v.setUint16(20, 1, true)
	v.setUint16(22, 1, true)
	v.setUint32(24, rate, true)
	v.setUint32(28, rate * 2, true)
	v.setUint16(32, 2, true)
	v.setUint16(34, 16, true)
	ascii(36, 'data')
	v.setUint32(40, bytes, true)
	return out
}

/** `seconds` of silence as such a WAV file. */
export const wav = (seconds: number): Uint8Array<ArrayBuffer> => wavBytes(Math.round(seconds * 32000))
