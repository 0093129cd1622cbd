/** Origin tags on thinking signatures (src/core/signatures.ts). */
import { describe, expect, it } from 'bun:test'
import { isForeignSignature, isGeminiOrigin, tagSignature, untagSignature } from '../../../src/core/signatures'

describe('signature origin tags', () => {
	it('should tag a Gemini signature by the kind of part it came on, and take the tag off again', () => {
		const text = tagSignature('gemini-text', 'R0VNX1NJR18y')
		const thought = tagSignature('gemini-thought', 'R0VNX1NJR18y')
		expect(text).not.toBe(thought)
		expect(untagSignature(text)).toEqual({ origin: 'gemini-text', signature: 'R0VNX1NJR18y' })
		expect(untagSignature(thought)).toEqual({ origin: 'gemini-thought', signature: 'R0VNX1NJR18y' })
		expect([isForeignSignature(text), isForeignSignature(thought)]).toEqual([true, true])
	})

	it('should keep a tagged base64 signature valid base64 that decodes to sbsig: plus the vendor bytes', () => {
		const raw = Buffer.from('gemini signature bytes \u0001\u00ff').toString('base64')
		const tagged = tagSignature('gemini-text', raw)
		expect(tagged).toMatch(/^[A-Za-z0-9+/]+=*$/)
		expect(Buffer.from(tagged, 'base64').toString('latin1')).toBe(`sbsig:gm-txt${Buffer.from(raw, 'base64').toString('latin1')}`)
	})

	it("should leave Anthropic's signatures (and the unsigned) untagged", () => {
		for (const sig of ['EqQBCkgIARABGAIiQL5ZtMmXqy', 'sig_bW9jaw==', ''])
			expect([isForeignSignature(sig), untagSignature(sig)]).toEqual([false, undefined])
	})

	it("should tag Anthropic's signatures for Gemini clients (sbsig:an-sig) and tell the tag apart from Gemini's", () => {
		const tagged = tagSignature('anthropic', 'EqQBCkgI')
		expect(tagged).toBe(`${Buffer.from('sbsig:an-sig').toString('base64')}EqQBCkgI`)
		expect(untagSignature(tagged)).toEqual({ origin: 'anthropic', signature: 'EqQBCkgI' })
		expect(isForeignSignature(tagged)).toBe(true)
		expect(['gemini-text', 'gemini-thought', 'anthropic', undefined].map((o) => isGeminiOrigin(o as never))).toEqual([true, true, false, false])
	})

	it('should count a tag of an origin it does not know as foreign, with nothing to take off', () => {
		const unknown = Buffer.from('sbsig:xx-yyy').toString('base64') + 'QUJD'
		expect([isForeignSignature(unknown), untagSignature(unknown)]).toEqual([true, undefined])
	})
})
