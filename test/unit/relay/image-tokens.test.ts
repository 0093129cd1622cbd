import { describe, expect, it } from 'bun:test'
import type { ChatRequest, ImagePart } from '../../../src/core/ir'
import { imageDims, mediaRuleFor } from '../../../src/relay/image-tokens'
import { PAGE_TOKENS } from '../../../src/relay/file-tokens'
import { pngOf } from '../../helpers/png'

const png = (w: number, h: number): ImagePart['source'] => ({ kind: 'base64', mediaType: 'image/png', data: Buffer.from(pngOf(w, h)).toString('base64') })
const URL_IMAGE: ImagePart['source'] = { kind: 'url', url: 'https://example.com/a.png' }
const on = (model: string, type: 'openai' | 'anthropic' | 'gemini' = 'openai', req?: ChatRequest) => mediaRuleFor([{ type, model }], req)

describe('image-tokens', () => {
	it("should count OpenAI's detail low as the model's base tokens, and each tile model's prices", () => {
		const big = png(1024, 1024) // 768x768 after scaling: 2×2 tiles
		expect(on('gpt-4o').image({ source: big, detail: 'low' })).toBe(85)
		expect(on('gpt-4o-mini').image({ source: big, detail: 'low' })).toBe(2833)
		// gpt-4o-mini 2833 + 5667×4; o3 75 + 150×4; gpt-5 70 + 140×4; computer-use 65 + 129×4.
		expect(on('gpt-4o-mini-2024-07-18').image({ source: big })).toBe(2833 + 5667 * 4)
		expect(on('o3').image({ source: big })).toBe(75 + 150 * 4)
		expect(on('gpt-5').image({ source: big })).toBe(70 + 140 * 4)
		expect(on('computer-use-preview').image({ source: big })).toBe(65 + 129 * 4)
		// 500x500: one tile, no scaling up: 85 + 170.
		expect(on('gpt-4.1').image({ source: png(500, 500) })).toBe(255)
	})

	it('should count patch models by 32-pixel patches times their multiplier, whatever the detail', () => {
		// 512x512: 16×16 = 256 patches; o4-mini × 1.72 = 440.32 → 441; gpt-5-nano × 2.46 = 629.76 → 630.
		expect(on('o4-mini').image({ source: png(512, 512), detail: 'low' })).toBe(441)
		expect(on('openai/gpt-5-nano').image({ source: png(512, 512) })).toBe(630)
		// Unknown size: 1536 patches × 1.62 = 2488.32 → 2489.
		expect(on('gpt-4.1-mini').image({ source: URL_IMAGE })).toBe(2489)
	})

	it('should read larger images on Claude Opus 4.7 and later', () => {
		// 2000x2000: on Claude Sonnet 4.5, 1568x1568 = 3278 tokens, above ~1,600: 1600. On Opus 4.7 (long edge 2576):
		// 4,000,000 / 750 = 5334, above its 4,784: 4784. 200x150 = 40 on both.
		expect(on('claude-sonnet-4-5-20250929', 'anthropic').image({ source: png(2000, 2000) })).toBe(1600)
		expect(on('claude-opus-4-7', 'anthropic').image({ source: png(2000, 2000) })).toBe(4784)
		expect(on('claude-opus-4-7', 'anthropic').image({ source: png(200, 150) })).toBe(40)
	})

	it("should count Gemini 3 by the request's media resolution, and its PDF pages", () => {
		const low: ChatRequest = { model: 'g', messages: [], stream: false, extra: { __protocol: 'gemini', generationConfig: { mediaResolution: 'MEDIA_RESOLUTION_LOW' } } }
		expect(on('gemini-3-pro-preview', 'gemini').image({ source: png(300, 200) })).toBe(1120)
		expect(on('gemini-3-pro-preview', 'gemini', low).image({ source: png(300, 200) })).toBe(280)
		expect(on('gemini-3-pro-preview', 'gemini').page()).toBe(560)
		expect(on('gemini-2.5-pro', 'gemini').page()).toBe(258)
		expect(on('claude-sonnet-4-5', 'anthropic').page()).toBe(PAGE_TOKENS)
	})

	it('should hold the most any channel that may serve counts', () => {
		const rule = mediaRuleFor([
			{ type: 'openai', model: 'gpt-4o' },
			{ type: 'gemini', model: 'gemini-2.5-flash' },
		])
		// 1024x1024: gpt-4o 765, Gemini 4 tiles × 258 = 1032.
		expect(rule.image({ source: png(1024, 1024) })).toBe(1032)
	})

	it("should find a JPEG's size past a large metadata segment, and none for a URL", () => {
		// SOI, an APP1 segment of 60,000 bytes (as EXIF with a thumbnail), then the frame header of 640x480.
		const app1 = Buffer.alloc(60_002)
		app1.set([0xff, 0xe1, 60_000 >> 8, 60_000 & 0xff])
		const sof = Buffer.from([0xff, 0xc0, 0, 17, 8, 480 >> 8, 480 & 0xff, 640 >> 8, 640 & 0xff, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1, 0xff, 0xd9])
		const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8]), app1, sof]).toString('base64')
		expect(imageDims({ kind: 'base64', mediaType: 'image/jpeg', data: jpeg })).toEqual({ width: 640, height: 480 })
		expect(imageDims(URL_IMAGE)).toBeUndefined()
	})
})
