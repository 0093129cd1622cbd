/**
 * Real PNG files of a chosen size (8-bit greyscale, one flat shade), for tests where an image's pixels matter: Gemini
 * counts an input image's tokens by its width and height.
 */
import { deflateSync } from 'node:zlib'

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
	let c = n
	for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
	return c >>> 0
})

function crc32(bytes: Uint8Array): number {
	let c = 0xffffffff
	for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8)
	return (c ^ 0xffffffff) >>> 0
}

function chunk(type: string, data: Uint8Array): Buffer {
	const head = Buffer.alloc(8)
	head.writeUInt32BE(data.length, 0)
	head.write(type, 4, 'latin1')
	const crc = Buffer.alloc(4)
	crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0)
	return Buffer.concat([head, data, crc])
}

/**
 * A `width`x`height` PNG of one grey `shade` (a different shade makes a different file of the same size).
 * @example pngOf(300, 200).length // a few hundred bytes
 */
export function pngOf(width: number, height: number, shade = 128): Uint8Array<ArrayBuffer> {
	const ihdr = Buffer.alloc(13)
	ihdr.writeUInt32BE(width, 0)
	ihdr.writeUInt32BE(height, 4)
	ihdr.set([8, 0, 0, 0, 0], 8)
	// Each row: filter type 0, then one byte a pixel.
	const row = Buffer.alloc(width + 1, shade)
	row[0] = 0
	const raw = Buffer.concat(Array.from({ length: height }, () => row))
	const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
	return new Uint8Array(Buffer.concat([signature, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', new Uint8Array())]))
}
