/**
 * A usage range whose `from` is after its `to` matches nothing. The console says so itself, but an API caller got an
 * empty list, as if there had been no usage: it is a 400 in the management API's shape that names both parameters,
 * on `GET /api/usage` and on the console's `GET /api/console/spend` alike.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startTestApp, type TestApp } from '../../helpers/app'

let app: TestApp

beforeAll(async () => {
	app = await startTestApp()
}, 60_000)
afterAll(() => app.close())

describe('an inverted usage range', () => {
	it('should answer 400 naming from and to on GET /api/usage', async () => {
		const r = await app.admin('/api/usage?from=2026-03-02T00:00:00Z&to=2026-03-01T23:59:59Z')
		expect(r.status).toBe(400)
		expect(r.body.error).toMatchObject({ type: 'invalid_request_error', param: 'from' })
		expect(r.body.error.message).toBe('from (2026-03-02T00:00:00.000Z) is after to (2026-03-01T23:59:59.000Z): the range is empty; give a from on or before the to')
	})

	it('should answer 400 naming from and to on GET /api/console/spend, also against its default to (now)', async () => {
		const r = await app.admin('/api/console/spend?from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z')
		expect([r.status, r.body.error?.param]).toEqual([400, 'from'])
		expect(r.body.error.message).toStartWith('from (2026-03-02T00:00:00.000Z) is after to (2026-03-01T00:00:00.000Z)')
		const future = new Date(Date.now() + 86_400_000).toISOString()
		const f = await app.admin(`/api/console/spend?from=${future}`)
		expect([f.status, f.body.error?.param]).toEqual([400, 'from'])
		expect(f.body.error.message).toContain(', its default: now)')
	})

	it('should still take a range of one instant, a half-open range and an ordered one', async () => {
		const at = '2026-03-01T12:00:00.000Z'
		for (const path of [`/api/usage?from=${at}&to=${at}`, `/api/usage?from=${at}`, `/api/usage?to=${at}`, `/api/console/spend?from=${at}&to=${at}`, '/api/console/spend?from=2026-02-01T00:00:00Z&to=2026-03-01T00:00:00Z']) {
			const r = await app.admin(path)
			expect({ path, status: r.status }).toEqual({ path, status: 200 })
		}
	})

	it('should refuse a day that does not exist on the spend route as on the usage route', async () => {
		const r = await app.admin('/api/console/spend?from=2026-02-29T00:00:00Z&to=2026-03-05T00:00:00Z')
		expect([r.status, r.body.error?.param]).toEqual([400, 'from'])
	})
})

describe('dates that are not ISO-8601', () => {
	it('should refuse them with 400 naming the field, where a lenient parser read 12/01/2026 as 1 December', async () => {
		for (const bad of ['12/01/2026', 'Dec 1 2026', '1', 'Tue, 01 Dec 2026 00:00:00 GMT', "2026-01-01'", '2026-12-01 garbage'])
			for (const route of ['/api/usage', '/api/console/spend']) {
				const r = await app.admin(`${route}?from=${encodeURIComponent(bad)}`)
				expect({ bad, route, status: r.status, param: r.body.error?.param }).toEqual({ bad, route, status: 400, param: 'from' })
			}
	})

	it('should take a day, an instant in UTC or with an offset, with or without seconds and fractions', async () => {
		for (const ok of ['2026-03-01', '2026-03-01T12:00Z', '2026-03-01T12:00:00Z', '2026-03-01T12:00:00.123456Z', '2026-03-01T12:00:00+02:00', '2026-03-01T12:00:00-0530'])
			expect({ ok, status: (await app.admin(`/api/usage?from=${encodeURIComponent(ok)}`)).status }).toEqual({ ok, status: 200 })
	})
})
