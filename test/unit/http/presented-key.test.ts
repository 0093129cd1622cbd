import { describe, expect, it } from 'bun:test'
import { presentedKey } from '../../../src/http/model-auth'

const req = (headers: Record<string, string>, url = 'http://localhost/v1/chat/completions') => new Request(url, { headers })

describe('presentedKey', () => {
	it('should take the bearer token whatever the scheme spelling, trimmed', () => {
		expect(presentedKey(req({ authorization: 'Bearer sk-abc' }), false)).toBe('sk-abc')
		expect(presentedKey(req({ authorization: 'bearer sk-abc' }), false)).toBe('sk-abc')
		expect(presentedKey(req({ authorization: 'BEARER   sk-abc  ' }), false)).toBe('sk-abc')
	})
	it('should fall back to x-api-key, and on Gemini routes to x-goog-api-key and ?key=', () => {
		expect(presentedKey(req({ authorization: 'Basic eHl6', 'x-api-key': ' sk-x ' }), false)).toBe('sk-x')
		expect(presentedKey(req({ 'x-goog-api-key': 'sk-g' }), false)).toBeUndefined()
		expect(presentedKey(req({ 'x-goog-api-key': 'sk-g' }), true)).toBe('sk-g')
		expect(presentedKey(req({}, 'http://localhost/v1beta/models/m:generateContent?key=sk-q'), true)).toBe('sk-q')
		expect(presentedKey(req({ authorization: 'Bearer ' }), false)).toBeUndefined()
	})
})
