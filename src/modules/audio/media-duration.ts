/**
 * How long an audio file plays, read from its container where that is cheap: WAV (RIFF chunks), MP3 and AAC/ADTS
 * (walks over their frame headers), MP4/M4A (`moov/mvhd`), FLAC (STREAMINFO), Ogg Opus/Vorbis (the last page's granule
 * position) and WebM/Matroska (the blocks' timestamps; browsers' MediaRecorder writes no Duration). Each reader answers the seconds and the most bytes a second of that format can take, so a header that
 * claims too short a duration for the file's size can be caught (duration.ts).
 * References: RIFF/WAVE (Microsoft Multimedia Programming Interface 1.0); ISO/IEC 11172-3 and 13818-3 frame header;
 * ISO/IEC 14496-12 §8.2.2 (mvhd); https://xiph.org/flac/format.html#metadata_block_streaminfo;
 * RFC 7845 §4 (Opus granule position, pre-skip) and the Vorbis I spec §4.2.2; ISO/IEC 13818-7 §6.2 (ADTS header);
 * RFC 8794 (EBML) and RFC 9559 §5.1 (Matroska Info, Cluster, SimpleBlock).
 * @module
 */

export type MediaDuration = {
	seconds: number
	/** Most bytes one second of this stream can take (its format's ceiling). */
	maxBytesPerSecond: number
	/** Bytes of the file that are audio (without tags, cover art, metadata). */
	audioBytes: number
	format: 'wav' | 'mp3' | 'mp4' | 'flac' | 'ogg' | 'aac' | 'webm'
}

const ascii = (b: Uint8Array, at: number, n = 4) => String.fromCharCode(...b.subarray(at, at + n))
const bytesOf = (file: Blob, from: number, to: number) => file.slice(from, Math.min(to, file.size)).bytes()

/**
 * The whole file's bytes, read once for the formats walked end to end (WebM, ADTS, MP3): a 20 MB upload copied for
 * each of the three in turn held the event loop some 50–90 ms a copy on a 2-core VM (fresh pages to fault in).
 */
const wholes = new WeakMap<Blob, Promise<Uint8Array>>()
function wholeOf(file: Blob): Promise<Uint8Array> {
	let whole = wholes.get(file)
	if (!whole) wholes.set(file, (whole = file.bytes()))
	return whole
}
const u32be = (b: Uint8Array, at: number) => ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0

/**
 * WAV: the `fmt ` chunk's rate and the `data` chunk's size (the file's rest when the size is 0 or 0xFFFFFFFF, as
 * streamed recordings leave it). For PCM and float the rate is sample rate × block align, what a decoder plays.
 * @example await wavDuration(new Blob([header, samples]))
 */
export async function wavDuration(file: Blob): Promise<MediaDuration | undefined> {
	const b = await bytesOf(file, 0, 65536)
	if (b.length < 12 || ascii(b, 0) !== 'RIFF' || ascii(b, 8) !== 'WAVE') return undefined
	const v = new DataView(b.buffer, b.byteOffset, b.byteLength)
	let rate = 0
	for (let at = 12; at + 8 <= b.length; ) {
		const id = ascii(b, at)
		const size = v.getUint32(at + 4, true)
		if (id === 'fmt ' && at + 24 <= b.length) {
			const tag = v.getUint16(at + 8, true)
			const sampleRate = v.getUint32(at + 12, true)
			const blockAlign = v.getUint16(at + 20, true)
			rate = tag === 1 || tag === 3 || tag === 0xfffe ? sampleRate * blockAlign : v.getUint32(at + 16, true)
		}
		if (id === 'data') {
			if (!rate) return undefined
			const start = at + 8
			const data = size === 0 || size === 0xffffffff || start + size > file.size ? file.size - start : size
			return { seconds: data / rate, maxBytesPerSecond: rate, audioBytes: data, format: 'wav' }
		}
		at += 8 + size + (size & 1)
	}
	return undefined
}

// MPEG audio frame header tables (kbit/s), indexed by the 4-bit bitrate index.
const BITRATES = {
	v1l1: [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
	v1l2: [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
	v1l3: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
	v2l1: [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
	v2l23: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
}
const SAMPLE_RATES = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] } as Record<number, number[]>

type MpegFrame = { length: number; samples: number; sampleRate: number; kbps: number; maxKbps: number; key: number; xingAt: number }

/** The MPEG audio frame header at `at`, or undefined when there is none (free-format bitrate is not read). */
export function mpegFrame(b: Uint8Array, at: number): MpegFrame | undefined {
	if (at + 4 > b.length || b[at] !== 0xff || (b[at + 1]! & 0xe0) !== 0xe0) return undefined
	const h = u32be(b, at)
	const ver = (h >>> 19) & 3 // 3 MPEG-1, 2 MPEG-2, 0 MPEG-2.5
	const layer = (h >>> 17) & 3 // 3 layer I, 2 layer II, 1 layer III
	const bri = (h >>> 12) & 15
	const sri = (h >>> 10) & 3
	if (ver === 1 || layer === 0 || bri === 0 || bri === 15 || sri === 3) return undefined
	const table = ver === 3 ? (layer === 3 ? BITRATES.v1l1 : layer === 2 ? BITRATES.v1l2 : BITRATES.v1l3) : layer === 3 ? BITRATES.v2l1 : BITRATES.v2l23
	const kbps = table[bri]!
	const sampleRate = SAMPLE_RATES[ver]![sri]!
	const pad = (h >>> 9) & 1
	const mono = ((h >>> 6) & 3) === 3
	const samples = layer === 3 ? 384 : layer === 2 || ver === 3 ? 1152 : 576
	const length = layer === 3 ? Math.floor((12 * kbps * 1000) / sampleRate + pad) * 4 : Math.floor(((samples / 8) * kbps * 1000) / sampleRate) + pad
	// Where a Xing/Info tag sits in layer III: after the header and the side information.
	const xingAt = at + 4 + (ver === 3 ? (mono ? 17 : 32) : mono ? 9 : 17)
	return { length, samples, sampleRate, kbps, maxKbps: table[14]!, key: h & 0xfffe0c00, xingAt }
}

/** Offset of the first of two consecutive frames that agree (with `key` when given) in [from, to), or -1. */
function syncAt(b: Uint8Array, from: number, to: number, key?: number): number {
	for (let i = from; i < to; i++) {
		if (b[i] !== 0xff) continue
		const f = mpegFrame(b, i)
		if (!f || (key !== undefined && f.key !== key)) continue
		const g = mpegFrame(b, i + f.length)
		if (g && g.key === f.key) return i
		// The very last frame of the file has no successor.
		if (key !== undefined && i + f.length === b.length) return i
	}
	return -1
}

const id3Size = (b: Uint8Array): number =>
	b.length >= 10 && ascii(b, 0, 3) === 'ID3' && [6, 7, 8, 9].every((i) => b[i]! < 0x80) ? 10 + ((b[6]! << 21) | (b[7]! << 14) | (b[8]! << 7) | b[9]!) + (b[5]! & 0x10 ? 10 : 0) : 0

/**
 * MP3 (any MPEG audio layer): skips an ID3v2 tag, finds two consecutive frames that agree, then walks every frame
 * header to the end, as a decoder would (a Xing/Info/VBRI first frame, which carries no audio, is not counted; a
 * forged frame count in it changes nothing). Trailing bytes that are not frames (ID3v1, APE tags) are ignored.
 */
export async function mp3Duration(file: Blob): Promise<MediaDuration | undefined> {
	const b = await wholeOf(file)
	const start = id3Size(b)
	const at = syncAt(b, start, Math.min(b.length, start + 8192))
	if (at < 0) return undefined
	const first = mpegFrame(b, at)!
	const tag = ascii(b, first.xingAt)
	const info = tag === 'Xing' || tag === 'Info' || ascii(b, at + 36) === 'VBRI'
	let samples = 0
	let audio = 0
	for (let i = at; i >= 0; i = syncAt(b, i, b.length, first.key)) {
		// Consecutive frames; past a damaged stretch the walk finds the next pair, as decoders resynchronise.
		for (let f = mpegFrame(b, i); f && f.key === first.key; f = mpegFrame(b, i)) {
			if (!(info && i === at)) samples += f.samples
			audio += f.length
			i += f.length
		}
	}
	// Everything past the ID3v2 tag counts towards the size floor: bytes that are not frames are not free audio.
	return { seconds: samples / first.sampleRate, maxBytesPerSecond: (first.maxKbps * 1000) / 8, audioBytes: Math.max(audio, b.length - start), format: 'mp3' }
}

/** MP4/M4A/MOV: the top-level boxes are walked to `moov`, whose `mvhd` gives duration ÷ timescale. */
export async function mp4Duration(file: Blob): Promise<MediaDuration | undefined> {
	const head = await bytesOf(file, 0, 12)
	if (head.length < 12 || !['ftyp', 'moov', 'wide', 'free', 'mdat'].includes(ascii(head, 4))) return undefined
	for (let at = 0, n = 0; at + 8 <= file.size && n < 64; n++) {
		const h = await bytesOf(file, at, at + 16)
		let size = u32be(h, 0)
		const type = ascii(h, 4)
		let header = 8
		if (size === 1) {
			size = u32be(h, 8) * 2 ** 32 + u32be(h, 12)
			header = 16
		} else if (size === 0) size = file.size - at
		if (size < header) return undefined
		if (type === 'moov') {
			const moov = await bytesOf(file, at + header, at + Math.min(size, 16 << 20))
			for (let c = 0; c + 8 <= moov.length; ) {
				const csize = u32be(moov, c)
				if (ascii(moov, c + 4) === 'mvhd' && c + 40 <= moov.length) {
					const v1 = moov[c + 8] === 1
					const timescale = u32be(moov, c + (v1 ? 28 : 20))
					const duration = v1 ? u32be(moov, c + 32) * 2 ** 32 + u32be(moov, c + 36) : u32be(moov, c + 24)
					if (!timescale || (!v1 && duration === 0xffffffff)) return undefined
					// 8 Mbit/s: an .mp4 may carry video, so the ceiling is loose (see duration.ts).
					return { seconds: duration / timescale, maxBytesPerSecond: 1_000_000, audioBytes: file.size, format: 'mp4' }
				}
				if (csize < 8) break
				c += csize
			}
			return undefined
		}
		at += size
	}
	return undefined
}

/** FLAC: STREAMINFO's total samples ÷ sample rate; the audio starts after the last metadata block. */
export async function flacDuration(file: Blob): Promise<MediaDuration | undefined> {
	const skip = id3Size(await bytesOf(file, 0, 10))
	const b = await bytesOf(file, skip, skip + 42)
	if (b.length < 42 || ascii(b, 0) !== 'fLaC' || (b[4]! & 0x7f) !== 0) return undefined
	const s = 8 + 10 // STREAMINFO data (at 8), past its min/max block and frame sizes
	const sampleRate = (b[s]! << 12) | (b[s + 1]! << 4) | (b[s + 2]! >> 4)
	const channels = ((b[s + 2]! >> 1) & 7) + 1
	const bits = (((b[s + 2]! & 1) << 4) | (b[s + 3]! >> 4)) + 1
	const total = (b[s + 3]! & 0x0f) * 2 ** 32 + u32be(b, s + 4)
	if (!sampleRate || !total) return undefined
	// Walk the metadata blocks (cover art among them) to where the frames begin.
	let at = skip + 4
	for (let n = 0; n < 256; n++) {
		const h = await bytesOf(file, at, at + 4)
		if (h.length < 4) return undefined
		at += 4 + ((h[1]! << 16) | (h[2]! << 8) | h[3]!)
		if (h[0]! & 0x80) break
	}
	// Verbatim subframes (incompressible noise) take a little more than PCM: a quarter more is the ceiling.
	return { seconds: total / sampleRate, maxBytesPerSecond: ((sampleRate * channels * bits) / 8) * 1.25, audioBytes: Math.max(0, file.size - at), format: 'flac' }
}

/** Ogg Opus or Vorbis: the last page's granule position (Opus: 48 kHz, less the pre-skip). */
export async function oggDuration(file: Blob): Promise<MediaDuration | undefined> {
	const b = await bytesOf(file, 0, 512)
	if (b.length < 47 || ascii(b, 0) !== 'OggS') return undefined
	const serial = new DataView(b.buffer, b.byteOffset).getUint32(14, true)
	const p = 27 + b[26]!
	const v = new DataView(b.buffer, b.byteOffset, b.byteLength)
	let rate: number
	let preSkip = 0
	let channels: number
	if (ascii(b, p, 8) === 'OpusHead' && p + 19 <= b.length) {
		channels = b[p + 9]!
		preSkip = v.getUint16(p + 10, true)
		rate = 48000
	} else if (b[p] === 1 && ascii(b, p + 1, 6) === 'vorbis' && p + 16 <= b.length) {
		channels = b[p + 11]!
		rate = v.getUint32(p + 12, true)
	} else return undefined
	if (!rate || !channels) return undefined
	// An Ogg page is at most 65,307 bytes: the last one starts within the last 64 KiB and a bit.
	const tail = await bytesOf(file, Math.max(0, file.size - 65536 - 512), file.size)
	const t = new DataView(tail.buffer, tail.byteOffset, tail.byteLength)
	for (let i = tail.length - 27; i >= 0; i--) {
		if (tail[i] !== 0x4f || ascii(tail, i) !== 'OggS' || t.getUint32(i + 14, true) !== serial) continue
		const granule = t.getUint32(i + 6, true) + t.getUint32(i + 10, true) * 2 ** 32
		if (t.getInt32(i + 10, true) < 0) continue // -1: no packet ends on this page
		// 512 kbit/s per channel: above Opus's 510 and Vorbis's practical ceiling.
		return { seconds: Math.max(0, granule - preSkip) / rate, maxBytesPerSecond: channels * 64_000, audioBytes: file.size, format: 'ogg' }
	}
	return undefined
}

const ADTS_RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]

type AdtsFrame = { length: number; samples: number; sampleRate: number; channels: number; key: number }

/** The ADTS header at `at` (sync 0xFFF, layer 0), or undefined. */
function adtsFrame(b: Uint8Array, at: number): AdtsFrame | undefined {
	if (at + 7 > b.length || b[at] !== 0xff || (b[at + 1]! & 0xf6) !== 0xf0) return undefined
	const sri = (b[at + 2]! >> 2) & 15
	const length = ((b[at + 3]! & 3) << 11) | (b[at + 4]! << 3) | (b[at + 5]! >> 5)
	if (sri >= ADTS_RATES.length || length < 7) return undefined
	const channels = ((b[at + 2]! & 1) << 2) | (b[at + 3]! >> 6)
	// Profile, rate and channels stay the same from frame to frame.
	const key = (b[at + 1]! << 16) | ((b[at + 2]! & 0xfd) << 8) | (b[at + 3]! & 0xc0)
	return { length, samples: 1024 * ((b[at + 6]! & 3) + 1), sampleRate: ADTS_RATES[sri]!, channels, key }
}

/**
 * AAC in ADTS (a raw `.aac`): past an ID3v2 tag, two consecutive frames that agree, then every frame header to the
 * end (1,024 samples per raw data block). Bytes that are not frames end the walk.
 */
export async function adtsDuration(file: Blob): Promise<MediaDuration | undefined> {
	const b = await wholeOf(file)
	const start = id3Size(b)
	let at = -1
	for (let i = start; i < Math.min(b.length, start + 8192) && at < 0; i++) {
		const f = adtsFrame(b, i)
		if (f && adtsFrame(b, i + f.length)?.key === f.key) at = i
	}
	if (at < 0) return undefined
	const first = adtsFrame(b, at)!
	let samples = 0
	for (let f: AdtsFrame | undefined = first; f && f.key === first.key && at + f.length <= b.length; f = adtsFrame(b, at)) {
		samples += f.samples
		at += f.length
	}
	// AAC's ceiling: 6,144 bits per channel per 1,024 samples (ISO/IEC 14496-3 §4.5.3.2); channel configuration 0 as 8.
	const maxBytesPerSecond = ((first.channels || 8) * 768 * first.sampleRate) / 1024
	return { seconds: samples / first.sampleRate, maxBytesPerSecond, audioBytes: Math.max(0, b.length - start), format: 'aac' }
}

// Matroska/WebM element IDs (RFC 9559), with their marker bits.
const EBML_HEADER = 0x1a45dfa3
const SEGMENT = 0x18538067
const INFO = 0x1549a966
const TIMESTAMP_SCALE = 0x2ad7b1
const DURATION = 0x4489
const CLUSTER = 0x1f43b675
const CLUSTER_TIMESTAMP = 0xe7
const BLOCK_GROUP = 0xa0
const BLOCK = 0xa1
const SIMPLE_BLOCK = 0xa3
const BLOCK_DURATION = 0x9b
/** Elements whose children are read in place (the walk goes into them rather than over them). */
const ENTERED = new Set([SEGMENT, INFO, CLUSTER, BLOCK_GROUP])

/** An EBML variable-size integer at `at`: its value (the marker bit kept for IDs) and length; undefined past the end. */
function vint(b: Uint8Array, at: number, keepMarker: boolean): { value: number; length: number; unknown: boolean } | undefined {
	const first = b[at]
	if (first === undefined || first === 0) return undefined
	const length = Math.clz32(first) - 23
	if (at + length > b.length) return undefined
	let value = keepMarker ? first : first & (0xff >> length)
	let ones = value === 0xff >> length
	for (let i = 1; i < length; i++) {
		value = value * 256 + b[at + i]!
		ones &&= b[at + i] === 0xff
	}
	return { value, length, unknown: !keepMarker && ones }
}

const uintOf = (b: Uint8Array, at: number, n: number) => {
	let v = 0
	for (let i = 0; i < n; i++) v = v * 256 + b[at + i]!
	return v
}

/**
 * WebM/Matroska: the end of the last block (cluster timestamp + the block's own, plus its duration or the gap between
 * the last two blocks), scaled by the Info's TimestampScale; the Info's Duration when there are no blocks. What
 * MediaRecorder writes (clusters of unknown size, no Duration) is read the same way.
 */
export async function webmDuration(file: Blob): Promise<MediaDuration | undefined> {
	const b = await wholeOf(file)
	if (uintOf(b, 0, 4) !== EBML_HEADER) return undefined
	const v = new DataView(b.buffer, b.byteOffset, b.byteLength)
	let scale = 1_000_000
	let declared: number | undefined
	let cluster = 0
	let last: number | undefined
	let gap = 0
	let end = 0
	for (let at = 0; at < b.length; ) {
		const id = vint(b, at, true)
		const size = id && vint(b, at + id.length, false)
		if (!id || !size) break
		const body = at + id.length + size.length
		if (ENTERED.has(id.value)) {
			at = body
			continue
		}
		if (size.unknown || body + size.value > b.length) break
		const n = size.value
		if (id.value === TIMESTAMP_SCALE && n <= 8) scale = uintOf(b, body, n) || scale
		else if (id.value === DURATION && (n === 4 || n === 8)) declared = n === 4 ? v.getFloat32(body) : v.getFloat64(body)
		else if (id.value === CLUSTER_TIMESTAMP && n <= 8) cluster = uintOf(b, body, n)
		else if (id.value === SIMPLE_BLOCK || id.value === BLOCK) {
			const track = vint(b, body, false)
			if (track && track.length + 2 <= n) {
				const t = cluster + v.getInt16(body + track.length)
				if (last !== undefined && t > last) gap = t - last
				last = t
				end = Math.max(end, t + gap)
			}
		} else if (id.value === BLOCK_DURATION && n <= 8 && last !== undefined) end = Math.max(end, last + uintOf(b, body, n))
		at = body + n
	}
	const ticks = last !== undefined ? end : declared
	if (ticks === undefined || !Number.isFinite(ticks)) return undefined
	// 1 MB/s: a .webm may carry video, so the ceiling is loose, as for MP4.
	return { seconds: (ticks * scale) / 1e9, maxBytesPerSecond: 1_000_000, audioBytes: b.length, format: 'webm' }
}

/** The first reader that recognises the file, or undefined. @example await mediaDuration(file) */
export async function mediaDuration(file: Blob): Promise<MediaDuration | undefined> {
	for (const read of [wavDuration, flacDuration, oggDuration, webmDuration, mp4Duration, adtsDuration, mp3Duration]) {
		const d = await read(file)
		if (d && Number.isFinite(d.seconds)) return d
	}
	return undefined
}
