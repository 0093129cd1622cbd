/** Small, valid audio files of known duration, built byte by byte for the duration readers' tests. */

/** PCM WAV: `rate` Hz, mono, 16-bit, `seconds` of silence; `extra` chunks (e.g. LIST) before `data`. */
export function wavFile(seconds: number, rate = 16000, extra = 0): Uint8Array<ArrayBuffer> {
	const data = Math.round(seconds * rate) * 2
	const out = new Uint8Array(44 + (extra ? 8 + extra : 0) + data)
	const v = new DataView(out.buffer)
	const tag = (at: number, s: string) => [...s].forEach((c, i) => v.setUint8(at + i, c.charCodeAt(0)))
	tag(0, 'RIFF')
	v.setUint32(4, out.length - 8, true)
	tag(8, 'WAVEfmt ')
	v.setUint32(16, 16, true)
	v.setUint16(20, 1, true)
	v.setUint16(22, 1, true)
	v.setUint32(24, rate, true)
	v.setUint32(28, rate * 2, true)
	v.setUint16(32, 2, true)
	v.setUint16(34, 16, true)
	let at = 36
	if (extra) {
		tag(at, 'LIST')
		v.setUint32(at + 4, extra, true)
		at += 8 + extra
	}
	tag(at, 'data')
	v.setUint32(at + 4, data, true)
	return out
}

/** One MPEG-1 layer III frame at 48 kHz (1152 samples = 24 ms): 128 kbit/s → 384 bytes, 64 → 192, 320 → 960. */
function mpegFrame(kbps: 64 | 128 | 320, body?: (f: Uint8Array) => void): Uint8Array {
	const index = { 64: 5, 128: 9, 320: 14 }[kbps]
	const f = new Uint8Array((144 * kbps * 1000) / 48000)
	f.set([0xff, 0xfb, (index << 4) | (1 << 2), 0x00])
	body?.(f)
	return f
}

/** An ID3v2.4 tag of `size` body bytes (cover art, say). */
function id3(size: number): Uint8Array {
	const t = new Uint8Array(10 + size)
	t.set([0x49, 0x44, 0x33, 4, 0, 0, (size >> 21) & 0x7f, (size >> 14) & 0x7f, (size >> 7) & 0x7f, size & 0x7f])
	return t
}

const concat = (parts: Uint8Array[]): Uint8Array<ArrayBuffer> => {
	const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
	let at = 0
	for (const p of parts) {
		out.set(p, at)
		at += p.length
	}
	return out
}

/** CBR MP3, 128 kbit/s 48 kHz stereo: `seconds` must be a multiple of 24 ms (60 s = 2500 frames = 960,000 bytes). */
export function mp3Cbr(seconds: number): Uint8Array<ArrayBuffer> {
	return concat(Array.from({ length: Math.round(seconds / 0.024) }, () => mpegFrame(128)))
}

/**
 * VBR MP3 with an ID3v2 tag (`artBytes` of it) and a Xing frame first, whose frame count says `xingFrames` (a liar
 * when it differs), then frames alternating 64 and 320 kbit/s; an ID3v1 tag at the end.
 */
export function mp3Vbr(seconds: number, artBytes: number, xingFrames?: number): Uint8Array<ArrayBuffer> {
	const n = Math.round(seconds / 0.024)
	const xing = mpegFrame(128, (f) => {
		f.set([0x58, 0x69, 0x6e, 0x67], 36) // 'Xing' after the 32 bytes of stereo side information
		f.set([0, 0, 0, 1], 40) // flags: frame count present
		new DataView(f.buffer).setUint32(44, xingFrames ?? n)
	})
	const tail = new Uint8Array(128)
	tail.set([0x54, 0x41, 0x47]) // 'TAG'
	return concat([id3(artBytes), xing, ...Array.from({ length: n }, (_, i) => mpegFrame(i % 2 ? 320 : 64)), tail])
}

const box = (type: string, ...body: Uint8Array[]): Uint8Array => {
	const inner = concat(body)
	const out = new Uint8Array(8 + inner.length)
	new DataView(out.buffer).setUint32(0, out.length)
	out.set([...type].map((c) => c.charCodeAt(0)), 4)
	out.set(inner, 8)
	return out
}

/** M4A: ftyp, then `mdatBytes` of media, then moov/mvhd (version 0) saying duration ÷ 1000 s: moov at the end. */
export function m4a(millis: number, mdatBytes: number): Uint8Array<ArrayBuffer> {
	const mvhd = new Uint8Array(100)
	const v = new DataView(mvhd.buffer)
	v.setUint32(12, 1000) // timescale
	v.setUint32(16, millis) // duration
	return concat([box('ftyp', new TextEncoder().encode('M4A \0\0\0\0M4A isom')), box('mdat', new Uint8Array(mdatBytes)), box('moov', box('mvhd', mvhd))])
}

/** FLAC: STREAMINFO (16 kHz mono 16-bit, total samples for `seconds`), a PICTURE block of `artBytes`, `frameBytes` of frames. */
export function flac(seconds: number, artBytes: number, frameBytes: number): Uint8Array<ArrayBuffer> {
	const info = new Uint8Array(4 + 34)
	info.set([0x00, 0, 0, 34])
	const total = seconds * 16000
	const rate = 16000
	// sample rate (20 bits) | channels-1 (3) | bits-1 (5) | total samples (36)
	info[4 + 10] = rate >> 12
	info[4 + 11] = (rate >> 4) & 0xff
	info[4 + 12] = ((rate & 0x0f) << 4) | (0 << 1) | (15 >> 4)
	info[4 + 13] = ((15 & 0x0f) << 4) | Math.floor(total / 2 ** 32)
	new DataView(info.buffer).setUint32(4 + 14, total >>> 0)
	const pic = new Uint8Array(4 + artBytes)
	pic.set([0x80 | 6, (artBytes >> 16) & 0xff, (artBytes >> 8) & 0xff, artBytes & 0xff])
	return concat([new TextEncoder().encode('fLaC'), info, pic, new Uint8Array(frameBytes)])
}

/** An Ogg page: header, one segment per 255 bytes of `packet`. */
function oggPage(granule: number, seq: number, packet: Uint8Array, flags = 0): Uint8Array {
	const segs = Math.floor(packet.length / 255) + 1
	const p = new Uint8Array(27 + segs + packet.length)
	const v = new DataView(p.buffer)
	p.set([0x4f, 0x67, 0x67, 0x53, 0, flags])
	v.setUint32(6, granule % 2 ** 32, true)
	v.setUint32(10, Math.floor(granule / 2 ** 32), true)
	v.setUint32(14, 0x1234, true)
	v.setUint32(18, seq, true)
	p[26] = segs
	for (let i = 0; i < segs; i++) p[27 + i] = i < segs - 1 ? 255 : packet.length % 255
	p.set(packet, 27 + segs)
	return p
}

/** Ogg Opus, stereo, pre-skip 312: the last page's granule is 48 kHz × `seconds` + 312. */
export function oggOpus(seconds: number, bodyBytes: number): Uint8Array<ArrayBuffer> {
	const head = new Uint8Array(19)
	head.set(new TextEncoder().encode('OpusHead'))
	head[8] = 1
	head[9] = 2
	new DataView(head.buffer).setUint16(10, 312, true)
	const mid = Array.from({ length: Math.ceil(bodyBytes / 4000) }, (_, i) => oggPage(48000 * (i + 1) * 0.01, i + 2, new Uint8Array(4000)))
	return concat([oggPage(0, 0, head, 2), ...mid, oggPage(seconds * 48000 + 312, mid.length + 2, new Uint8Array(200), 4)])
}

/** AAC in ADTS, 44.1 kHz stereo, one raw data block (1,024 samples) per `frameBytes`-byte frame, ~`seconds` long. */
export function adts(seconds: number, frameBytes = 372): Uint8Array<ArrayBuffer> {
	const frames = Math.round((seconds * 44100) / 1024)
	const out = new Uint8Array(frames * frameBytes)
	for (let i = 0; i < frames; i++) {
		const at = i * frameBytes
		// Sync, MPEG-4, layer 0, no CRC; AAC LC, rate index 4 (44.1 kHz), channels 2; frame length; fullness 0x7FF.
		out.set([0xff, 0xf1, (1 << 6) | (4 << 2), (2 << 6) | (frameBytes >> 11), (frameBytes >> 3) & 0xff, ((frameBytes & 7) << 5) | 0x1f, 0xfc], at)
	}
	return out
}

/** One EBML element: its ID's bytes, an 8-byte size (or unknown), its body. */
function ebml(id: number[], body: Uint8Array | Uint8Array[] | undefined, unknownSize = false): Uint8Array {
	const inner = body === undefined ? new Uint8Array() : Array.isArray(body) ? concat(body) : body
	const size = new Uint8Array(8)
	if (unknownSize) size.set([0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])
	else {
		size[0] = 0x01
		new DataView(size.buffer).setUint32(4, inner.length)
	}
	return concat([new Uint8Array(id), size, inner])
}

const uint = (n: number, bytes: number) => new Uint8Array(bytes).map((_, i) => Math.floor(n / 256 ** (bytes - 1 - i)) % 256)

/**
 * WebM as MediaRecorder writes it: no Duration, clusters of unknown size, Opus blocks every 20 ms (1 ms timestamps);
 * one cluster per second. With `declaredMs` the Info carries a Duration (a float64 of ms) and the clusters a size.
 */
export function webm(seconds: number, declaredMs?: number, blockBytes = 80): Uint8Array<ArrayBuffer> {
	const info = [ebml([0x2a, 0xd7, 0xb1], uint(1_000_000, 3))]
	if (declaredMs !== undefined) {
		const d = new Uint8Array(8)
		new DataView(d.buffer).setFloat64(0, declaredMs)
		info.push(ebml([0x44, 0x89], d))
	}
	const clusters: Uint8Array[] = []
	for (let start = 0; start < seconds * 1000; start += 1000) {
		const blocks = [ebml([0xe7], uint(start, 4))]
		for (let t = 0; t < 1000 && start + t < seconds * 1000; t += 20) blocks.push(ebml([0xa3], concat([new Uint8Array([0x81]), uint(t, 2), new Uint8Array([0x80]), new Uint8Array(blockBytes)])))
		clusters.push(ebml([0x1f, 0x43, 0xb6, 0x75], blocks, declaredMs === undefined))
	}
	const tracks = ebml([0x16, 0x54, 0xae, 0x6b], new Uint8Array(30))
	return concat([ebml([0x1a, 0x45, 0xdf, 0xa3], new Uint8Array(20)), ebml([0x18, 0x53, 0x80, 0x67], [ebml([0x15, 0x49, 0xa9, 0x66], info), tracks, ...clusters], true)])
}
