/**
 * What an image file's first bytes say: its format (PNG, JPEG, GIF, WebP, HEIC/HEIF) and its width and height, read
 * from the header without decoding the picture. Used where the bytes must be labelled for an upstream that wants a
 * MIME type, or an image's size bounds what it costs (Gemini counts input images by their pixels).
 * @module
 */

export type ImageHeader = { mimeType: string; width?: number; height?: number }

const u16be = (b: Uint8Array, i: number) => (b[i]! << 8) | b[i + 1]!
const u16le = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8)
const u24le = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16)
const u32be = (b: Uint8Array, i: number) => ((b[i]! << 24) >>> 0) + (b[i + 1]! << 16) + (b[i + 2]! << 8) + b[i + 3]!
const ascii = (b: Uint8Array, from: number, to: number) => String.fromCharCode(...b.subarray(from, to))

/** A JPEG's size: the first start-of-frame marker (SOF0–SOF15 less DHT, JPG and DAC). */
function jpegSize(b: Uint8Array): { width: number; height: number } | undefined {
	let i = 2
	while (i + 9 < b.length) {
		if (b[i] !== 0xff) return undefined
		const marker = b[i + 1]!
		if (marker === 0xff) {
			i++
			continue
		}
		if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) return { height: u16be(b, i + 5), width: u16be(b, i + 7) }
		i += 2 + u16be(b, i + 2)
	}
	return undefined
}

/** A WebP's size: lossy (VP8), lossless (VP8L) or extended (VP8X) bitstream headers. */
function webpSize(b: Uint8Array): { width: number; height: number } | undefined {
	const chunk = ascii(b, 12, 16)
	if (chunk === 'VP8 ' && b.length >= 30) return { width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff }
	if (chunk === 'VP8L' && b.length >= 25) {
		const bits = b[21]! | (b[22]! << 8) | (b[23]! << 16) | (b[24]! << 24)
		return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 }
	}
	if (chunk === 'VP8X' && b.length >= 30) return { width: u24le(b, 24) + 1, height: u24le(b, 27) + 1 }
	return undefined
}

/**
 * The format and, where the header has it, the size of an image; undefined for bytes that are none of these formats.
 * @example imageHeader(pngBytes) // { mimeType: 'image/png', width: 1024, height: 768 }
 */
export function imageHeader(b: Uint8Array): ImageHeader | undefined {
	if (b.length >= 24 && b[0] === 0x89 && ascii(b, 1, 4) === 'PNG') return { mimeType: 'image/png', width: u32be(b, 16), height: u32be(b, 20) }
	if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return { mimeType: 'image/jpeg', ...jpegSize(b) }
	if (b.length >= 10 && ascii(b, 0, 4) === 'GIF8') return { mimeType: 'image/gif', width: u16le(b, 6), height: u16le(b, 8) }
	if (b.length >= 16 && ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WEBP') return { mimeType: 'image/webp', ...webpSize(b) }
	if (b.length >= 12 && ascii(b, 4, 8) === 'ftyp') {
		const brand = ascii(b, 8, 12)
		if (['heic', 'heix', 'heim', 'heis'].includes(brand)) return { mimeType: 'image/heic' }
		if (['mif1', 'msf1', 'hevc', 'hevx'].includes(brand)) return { mimeType: 'image/heif' }
	}
	return undefined
}
