import { describe, expect, it } from 'bun:test'
import type { FilePart } from '../../../src/core/ir'
import { audioTokens, fileTokens, PAGE_TOKENS, pdfPages, REFERENCED_FILE_TOKENS } from '../../../src/relay/file-tokens'

const b64 = (s: string) => Buffer.from(s).toString('base64')
const words = (t: string) => (t ? t.split(/\s+/).length : 0)
/** Every image 100 tokens, every PDF page PAGE_TOKENS. */
const media = { image: () => 100, page: () => PAGE_TOKENS }
const file = (source: FilePart['source'], more: Partial<FilePart> = {}): FilePart => ({ type: 'file', source, ...more })

describe('file-tokens', () => {
	it('should count PDF pages by their page objects, not the page tree nodes', () => {
		expect(pdfPages(b64('%PDF-1.7 <</Type /Pages /Count 2>> <</Type /Page>> <</Type/Page>>'))).toBe(2)
	})

	it('should count a PDF whose page objects are compressed by its size, at least one page', () => {
		expect(pdfPages(b64('%PDF-1.7 stream'))).toBe(1)
		expect(pdfPages(b64(`%PDF-1.7 ${'x'.repeat(120_000)}`))).toBe(3)
	})

	it('should count text documents as text, with their title and context', () => {
		expect(fileTokens(file({ kind: 'text', text: 'one two three' }, { title: 'T', context: 'c d' }), words, media)).toBe(6)
		expect(fileTokens(file({ kind: 'base64', mediaType: 'text/plain', data: b64('a b') }), words, media)).toBe(2)
		expect(fileTokens(file({ kind: 'content', content: [{ type: 'text', text: 'a b' }, { type: 'image', source: { kind: 'url', url: 'https://x/y.png' } }] }), words, media)).toBe(102)
	})

	it('should count a PDF per page and a file the gateway cannot see as a short document', () => {
		expect(fileTokens(file({ kind: 'base64', mediaType: 'application/pdf', data: b64('<</Type /Page>>') }), words, media)).toBe(PAGE_TOKENS)
		for (const source of [
			{ kind: 'file_id', id: 'file-1', store: 'openai' },
			{ kind: 'url', url: 'https://x/a.pdf' },
			{ kind: 'uri', uri: 'gs://b/a.pdf' },
		] as const)
			expect(fileTokens(file(source), words, media)).toBe(REFERENCED_FILE_TOKENS)
	})

	it('should count audio by its length (32 tokens a second of 128 kbit/s audio)', () => {
		expect(audioTokens({ type: 'audio', mediaType: 'audio/mp3', data: Buffer.alloc(160_000).toString('base64') })).toBe(320)
	})
})
