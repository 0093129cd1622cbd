import { describe, expect, it } from 'bun:test'
import { bodyText } from '../../../src/relay/fast-path'
import { joinedWhenShort, PIECES_MIN, piecesStream, TextPieces } from '../../../src/relay/text-pieces'

const utf8 = new TextEncoder()
const bytesOf = async (s: ReadableStream<Uint8Array>) => new Uint8Array(await new Response(s).arrayBuffer())

describe('TextPieces', () => {
	it('should stream the pieces as the UTF-8 of their text, with its length, never splitting a surrogate pair', async () => {
		// An emoji (a surrogate pair) straddling each 256 Ki-unit stretch, CJK and Latin-1 around it.
		const stretch = 256 * 1024
		const long = `${'a'.repeat(stretch - 1)}😀${'é'.repeat(stretch - 2)}😀漢${'z'.repeat(1000)}`
		const pieces = new TextPieces(['{"model":', '"m"', `,"text":"${long}"}`])
		const { body, length } = piecesStream(pieces)
		const want = utf8.encode(String(pieces))
		expect(length).toBe(want.length)
		const got = await bytesOf(body)
		expect(got.length).toBe(want.length)
		expect(Buffer.compare(got, want)).toBe(0)
		expect(new TextDecoder('utf-8', { fatal: true }).decode(got)).toBe(String(pieces))
	})

	it('should join short bodies and keep long ones apart', () => {
		expect(joinedWhenShort(['{"a":', '1}'], 7)).toBe('{"a":1}')
		const kept = joinedWhenShort(['{"a":', '1}'], PIECES_MIN)
		expect(kept).toBeInstanceOf(TextPieces)
		expect(String(kept)).toBe('{"a":1}')
		expect(joinedWhenShort(['x'.repeat(PIECES_MIN)], PIECES_MIN)).toBe('x'.repeat(PIECES_MIN))
	})
})

describe('bodyText of a large body', () => {
	it('should give the same text in pieces: members replaced where they stand, added ones at the end', () => {
		const image = 'A'.repeat(PIECES_MIN)
		const raw = `{"model":"gpt-x","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,${image}"}}]}],"max_tokens":9000}`
		const body = JSON.parse(raw) as Record<string, unknown>
		const out = { ...body, model: 'gpt-y', max_tokens: 1024, stream_options: { include_usage: true } }
		const spliced = bodyText(raw, body, out)
		expect(spliced).toBeInstanceOf(TextPieces)
		expect(String(spliced)).toBe(raw.replace('"gpt-x"', '"gpt-y"').replace('"max_tokens":9000}', '"max_tokens":1024,"stream_options":{"include_usage":true}}'))
		// Only the members changed are new strings; the image stays a stretch of the client's text.
		expect((spliced as TextPieces).parts.some((p) => p.length > PIECES_MIN)).toBe(true)
		// Nothing to change: the text itself.
		expect(bodyText(raw, body, body)).toBe(raw)
	})

	it('should add to an empty large object without a leading comma (whitespace only)', () => {
		const raw = `{${' '.repeat(PIECES_MIN)}}`
		const spliced = bodyText(raw, {}, { stream_options: { include_usage: true } })
		expect(JSON.parse(String(spliced))).toEqual({ stream_options: { include_usage: true } })
	})
})
