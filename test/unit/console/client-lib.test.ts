import { describe, expect, it } from 'bun:test'
import { errorMessage, query } from '../../../src/console/api'
import { axisUsd, fillDays, niceCeil, niceScale } from '../../../src/console/lib/chart'
import { expiryToIso, localDate } from '../../../src/console/lib/expiry'
import { latency, relative, usd } from '../../../src/console/lib/format'
import { parseLimit, parseList, parseModelList, parsePairs, parsePerMinute, parseUsd } from '../../../src/console/lib/input'
import { otherPrices, unitLabel } from '../../../src/console/lib/prices'

describe('console formatting', () => {
	it('should show USD with the decimals a price needs, at least two', () => {
		expect(usd(0.075)).toBe('$0.075')
		expect(usd(12)).toBe('$12.00')
		expect(usd(1234.5)).toBe('$1,234.50')
		expect(usd(-1.5)).toBe('-$1.50')
		expect(usd(0.000001)).toBe('$0.000001')
		expect(usd(null)).toBe('—')
	})

	it('should describe times relative to now', () => {
		const now = Date.parse('2025-01-01T12:00:00Z')
		expect(relative('2025-01-01T11:55:00Z', now)).toBe('5 min ago')
		expect(relative('2025-01-03T12:00:00Z', now)).toBe('in 2 days')
		expect(relative('2025-01-01T12:00:10Z', now)).toBe('just now')
		expect(relative(null, now)).toBe('never')
	})

	it('should format latency in ms or seconds', () => {
		expect(latency(87)).toBe('87 ms')
		expect(latency(1530)).toBe('1.53 s')
	})
})

describe('token expiry choices', () => {
	const now = new Date('2025-03-10T08:00:00Z')

	it('should turn Never into null and the spans into future instants', () => {
		expect(expiryToIso('never', '', now)).toBeNull()
		expect(expiryToIso('1h', '', now)).toBe('2025-03-10T09:00:00.000Z')
		expect(expiryToIso('1d', '', now)).toBe('2025-03-11T08:00:00.000Z')
		expect(expiryToIso('7d', '', now)).toBe('2025-03-17T08:00:00.000Z')
		expect(expiryToIso('30d', '', now)).toBe('2025-04-09T08:00:00.000Z')
	})

	it('should make a date last until the end of that day in the local zone', () => {
		const iso = expiryToIso('date', '2025-04-01', now)!
		const d = new Date(iso)
		expect(localDate(d)).toBe('2025-04-01')
		expect(d.getHours()).toBe(23)
		expect(d.getMinutes()).toBe(59)
	})

	it('should refuse a missing or past date in words', () => {
		expect(() => expiryToIso('date', '', now)).toThrow('Choose the date')
		expect(() => expiryToIso('date', '2020-01-01', now)).toThrow('in the future')
	})
})

describe('form input parsing', () => {
	it('should read spend limits and USD amounts, refusing anything else in words', () => {
		expect(parseLimit('')).toBeNull()
		expect(parseLimit(' 5.5 ')).toBe(5.5)
		expect(() => parseLimit('-1')).toThrow('spend limit')
		expect(() => parseLimit('1.1234567')).toThrow()
		expect(parseUsd('-5', true)).toBe(-5)
		expect(() => parseUsd('-5')).toThrow('amount in USD')
		expect(() => parseUsd('abc')).toThrow()
	})

	it('should take money as people type it: $, USD, spaces and thousands separators, one parser for every field', () => {
		expect(parseLimit(' $5 ')).toBe(5)
		expect(parseLimit('5.00 USD')).toBe(5)
		expect(parseLimit('1,000')).toBe(1000)
		expect(parseUsd('$1,234,567.891234 usd')).toBe(1234567.891234)
		expect(parseUsd('-$2.50', true)).toBe(-2.5)
		for (const bad of ['$-5', '-$5', '1,00', '10,0000', ',100', '$', 'USD', '5 $', '$5.1234567', '1e3', '--5']) expect(() => parseLimit(bad)).toThrow('spend limit')
		expect(() => parseUsd('5.1234567')).toThrow('at most 6 decimals')
		expect(() => parseUsd('$99,999,999,999')).toThrow('up to 9,007,199,254: $99,999,999,999 is out of range')
		expect(() => parseUsd('-$5')).toThrow('amount in USD')
	})

	it('should read name = value lines and name lists', () => {
		expect(parsePairs('a = b\n\n c=d ', 'Map')).toEqual({ a: 'b', c: 'd' })
		expect(() => parsePairs('oops', 'Model map')).toThrow('Model map, line 1')
		expect(parseList('a, b\nc\n\n')).toEqual(['a', 'b', 'c'])
	})

	it("should read a key's per-minute limits as whole numbers from 1, empty as none", () => {
		expect(parsePerMinute(' ', 'Requests per minute')).toBeNull()
		expect(parsePerMinute(' 60 ', 'Requests per minute')).toBe(60)
		expect(parsePerMinute('10,000', 'Tokens per minute')).toBe(10_000)
		expect(parsePerMinute('2147483647', 'Tokens per minute')).toBe(2_147_483_647)
		for (const bad of ['0', '-1', '1.5', '1e3', '10,00', 'ten']) expect(() => parsePerMinute(bad, 'Requests per minute')).toThrow('Requests per minute must be a whole number above 0')
		expect(() => parsePerMinute('2147483648', 'Tokens per minute')).toThrow('at most 2,147,483,647')
	})

	it("should read a key's allowed models as a list, empty as every model", () => {
		expect(parseModelList(' , ')).toBeNull()
		expect(parseModelList('gpt-4o, gpt-4o*\ngpt-4o')).toEqual(['gpt-4o', 'gpt-4o*'])
		expect(() => parseModelList('gpt-4o gpt-4o-mini')).toThrow('separate the names with commas')
	})
})

describe('spend chart data', () => {
	it('should fill every day of the range with zeros where there was no spend', () => {
		const days = fillDays(new Date(2025, 0, 30), new Date(2025, 1, 2), [{ day: '2025-01-31', cost: 1.5, requests: 3 }])
		expect(days.map((d) => d.day)).toEqual(['2025-01-30', '2025-01-31', '2025-02-01', '2025-02-02'])
		expect(days.map((d) => d.cost)).toEqual([0, 1.5, 0, 0])
	})

	it('should pick round axis maxima', () => {
		expect(niceCeil(0.0132)).toBe(0.02)
		expect(niceCeil(7)).toBe(10)
		expect(niceCeil(2.2)).toBe(2.5)
		expect(niceCeil(0)).toBe(1)
	})

	it('should label a tiny axis with enough decimals that no two ticks read alike', () => {
		const s = niceScale(0.000021)
		expect(s.ticks).toEqual([0, 0.00001, 0.00002, 0.00003, 0.00004])
		const labels = s.ticks.map((v) => axisUsd(v, s.decimals))
		expect(labels).toEqual(['$0.00000', '$0.00001', '$0.00002', '$0.00003', '$0.00004'])
		const q = niceScale(0.009)
		expect(q.ticks.map((v) => axisUsd(v, q.decimals))).toEqual(['$0.0000', '$0.0025', '$0.0050', '$0.0075', '$0.0100'])
		expect(niceScale(7)).toEqual({ max: 8, ticks: [0, 2, 4, 6, 8], decimals: 2 })
		expect(niceScale(0).max).toBe(1)
	})
})

describe('price presentation', () => {
	it('should name units readably', () => {
		expect(unitLabel('per_image')).toBe('image')
		expect(unitLabel('per_image_1024x1024')).toBe('image (1024x1024)')
		expect(unitLabel('per_mchar')).toBe('1M characters')
		expect(unitLabel('per_action_upscale')).toBe('action upscale')
	})

	it('should list non-token prices', () => {
		const m = { input_per_mtok: null, output_per_mtok: null, cache_read_per_mtok: null, cache_write_per_mtok: null, per_request: 0.01, prices: { per_minute: 0.006, per_image: 0.04 } }
		expect(otherPrices(m)).toEqual(['$0.01 / request', '$0.04 / image', '$0.006 / minute'])
	})
})

describe('console API client', () => {
	it('should prefer the server’s message and fall back to words per status', () => {
		expect(errorMessage(400, { error: { message: 'spend_limit: not a USD amount', param: 'spend_limit' } })).toBe('Spend limit: not a USD amount')
		// The schema's own phrases, as a form says them.
		const refused = (message: string, param: string) => errorMessage(400, { error: { message, param } })
		expect(refused('Invalid body: "username" Expected string length greater or equal to 3', 'username')).toBe('Username: at least 3 characters')
		expect(refused('Invalid body: "name" Expected string length greater or equal to 1', 'name')).toBe('Name: required')
		expect(refused('Invalid body: "name" Expected string length less or equal to 200', 'name')).toBe('Name: at most 200 characters')
		expect(refused('Invalid body: "priority" Expected integer to be less or equal to 2147483647', 'priority')).toBe('Priority: at most 2,147,483,647')
		expect(refused('Invalid body: "weight" Expected integer', 'weight')).toBe('Weight: a whole number')
		expect(refused('Invalid body: "username" does not fit: Letters, digits and . _ @ - (stored lower-case)', 'username')).toBe('Username: Letters, digits and . _ @ - (stored lower-case)')
		expect(refused('signup_balance: USD amount out of range: 100000000000000000', 'signup_balance')).toBe('Signup balance: USD amount out of range: 100000000000000000')
		expect(refused('Invalid body: "settings.timeoutz" Unexpected property', 'settings.timeoutz')).toBe('Settings: timeoutz: not a known name')
		expect(refused('Invalid body: "settings.timeoutz" Unexpected property: did you mean "timeouts"?', 'settings.timeoutz')).toBe('Settings: timeoutz: not a known name (did you mean "timeouts"?)')
		// A message that does not start with its field is the server's sentence as it is.
		expect(refused('The username "carol" is taken', 'username')).toBe('The username "carol" is taken')
		expect(errorMessage(401, null)).toBe('Your session has ended. Sign in again.')
		expect(errorMessage(502, 'Bad gateway')).toContain('HTTP 502')
		expect(errorMessage(418, null)).toBe('The request failed (HTTP 418).')
	})

	it('should build query strings from the set values only', () => {
		expect(query({ a: 1, b: undefined, c: '', d: 'x y' })).toBe('?a=1&d=x+y')
		expect(query({})).toBe('')
	})
})
