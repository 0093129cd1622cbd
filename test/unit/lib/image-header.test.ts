/** lib/image-header.ts: the format and size of an image read from its first bytes. */
import { describe, expect, it } from 'bun:test'
import { imageHeader } from '../../../src/lib/image-header'
import { imageInputTokens } from '../../../src/modules/images/google-edits'
import { pngOf } from '../../helpers/png'

/** A JPEG's start: SOI, an APP0 segment, then SOF0 with height 480 and width 640. */
const JPEG = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x4a, 0x46, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x01, 0xe0, 0x02, 0x80, 0x03, 0x01, 0x22, 0x00])
const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0))

describe('imageHeader', () => {
	it('should read the size of a PNG, a JPEG (past its APP segments), a GIF and each kind of WebP', () => {
		expect(imageHeader(pngOf(300, 200))).toEqual({ mimeType: 'image/png', width: 300, height: 200 })
		expect(imageHeader(JPEG)).toEqual({ mimeType: 'image/jpeg', width: 640, height: 480 })
		expect(imageHeader(new Uint8Array([...ascii('GIF89a'), 0x20, 0x03, 0x58, 0x02]))).toEqual({ mimeType: 'image/gif', width: 800, height: 600 })
		const riff = (chunk: string, body: number[]) => new Uint8Array([...ascii('RIFF'), 0, 0, 0, 0, ...ascii('WEBP'), ...ascii(chunk), 0, 0, 0, 0, ...body])
		// VP8X: flags and 3 reserved bytes, then canvas width-1 and height-1 as 24-bit little-endian.
		expect(imageHeader(riff('VP8X', [0, 0, 0, 0, 0xff, 0x03, 0x00, 0x7f, 0x02, 0x00]))).toEqual({ mimeType: 'image/webp', width: 1024, height: 640 })
		// VP8L: after the 0x2f signature, 14 bits of width-1 and 14 of height-1.
		const bits = 99 | (49 << 14)
		expect(imageHeader(riff('VP8L', [0x2f, bits & 255, (bits >> 8) & 255, (bits >> 16) & 255, (bits >> 24) & 255]))).toEqual({ mimeType: 'image/webp', width: 100, height: 50 })
		// VP8: a key frame's start code, then 14-bit width and height.
		expect(imageHeader(riff('VP8 ', [0, 0, 0, 0x9d, 0x01, 0x2a, 0x40, 0x01, 0xf0, 0x00]))).toEqual({ mimeType: 'image/webp', width: 320, height: 240 })
	})

	it('should name HEIC without a size and answer undefined for bytes that are no image', () => {
		expect(imageHeader(new Uint8Array([0, 0, 0, 24, ...ascii('ftypheic')]))).toEqual({ mimeType: 'image/heic' })
		expect(imageHeader(new TextEncoder().encode('just some text here'))).toBeUndefined()
		expect(imageHeader(new Uint8Array())).toBeUndefined()
	})
})

describe('imageInputTokens (the hold for a Gemini edit input image)', () => {
	it("should bound Google's count: 258 a 768x768 tile above 384 px a side, never under Gemini 3's 1120, unknown sizes as 16 tiles", () => {
		expect(imageInputTokens(300, 200)).toBe(1120)
		expect(imageInputTokens(3000, 3000)).toBe(16 * 258)
		expect(imageInputTokens(1536, 1537)).toBe(6 * 258)
		expect(imageInputTokens()).toBe(16 * 258)
	})
})
