import { describe, expect, it } from 'bun:test'
import { GEMINI_NAMES, portableNames } from '../../../src/relay/tool-names'

describe('portableNames', () => {
	it('should leave portable names alone and map the others once, without clashes', () => {
		expect(portableNames(new Set(['get_weather', 'web-search']))).toBeUndefined()
		const to = portableNames(new Set(['weather.get', 'weather_get', 'weather:get', 'ns.a']))!
		expect([...to]).toEqual([
			['weather.get', 'weather_get_2'],
			['weather:get', 'weather_get_3'],
			['ns.a', 'ns_a'],
		])
	})

	it('should keep a mapped name within 64 characters, suffix included', () => {
		const long = `${'a'.repeat(70)}.x`
		const to = portableNames(new Set([long, 'a'.repeat(64)]))!
		expect(to.get(long)).toBe(`${'a'.repeat(62)}_2`)
	})

	it("should start a name Gemini's way (a letter or `_`) and keep dots and colons for it", () => {
		expect(portableNames(new Set(['weather.get', 'docs:search', '_x']), GEMINI_NAMES)).toBeUndefined()
		expect([...portableNames(new Set(['7zip_extract', '-x', 'a b']), GEMINI_NAMES)!]).toEqual([
			['7zip_extract', '_7zip_extract'],
			['-x', '_-x'],
			['a b', 'a_b'],
		])
		// Other vendors take a leading digit or dash.
		expect(portableNames(new Set(['7zip_extract', '-x']))).toBeUndefined()
	})
})
