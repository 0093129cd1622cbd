import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN_PASSWORD, type Browser, type ConsoleApp, startConsoleApp } from './console-app'

let app: ConsoleApp
let admin: Browser

const row = (at: string, cost: number, model = 'm1', token: number | null = null) =>
	app.svc.db.sql.query(
		`INSERT INTO usage_logs (created_at, request_id, account_id, token_id, model, endpoint, status, cost, input_tokens, cached_tokens, output_tokens) VALUES ($1, $2, 1, $3, $4, '/v1/chat/completions', 200, $5, 10, 2, 5)`,
		[at, `r-${at}-${model}`, token, model, cost],
	)

beforeAll(async () => {
	app = await startConsoleApp()
	admin = await app.signIn('admin', ADMIN_PASSWORD)
	await row('2025-01-01T23:30:00Z', 1_000_000)
	await row('2025-01-02T00:30:00Z', 2_500_000)
	await row('2025-01-02T10:00:00Z', 500_000, 'm2', 7)
}, 120_000)
afterAll(() => app.close())

const spend = async (q: string) => (await admin.call(`/api/console/spend?${q}`)).body

describe('GET /api/console/spend', () => {
	it('should sum cost, requests and tokens per UTC day', async () => {
		const r = await spend('from=2025-01-01T00:00:00Z&to=2025-01-03T00:00:00Z')
		expect(r.data).toEqual([
			{ day: '2025-01-01', cost: 1, requests: 1, input_tokens: 12, output_tokens: 5 },
			{ day: '2025-01-02', cost: 3, requests: 2, input_tokens: 24, output_tokens: 10 },
		])
	})

	it('should count days in the caller’s offset', async () => {
		const r = await spend('from=2025-01-01T00:00:00Z&to=2025-01-03T00:00:00Z&offset_minutes=60')
		expect(r.data.map((d: { day: string; requests: number }) => [d.day, d.requests])).toEqual([['2025-01-02', 3]])
		const west = await spend('from=2025-01-01T00:00:00Z&to=2025-01-03T00:00:00Z&offset_minutes=-60')
		expect(west.data.map((d: { day: string; requests: number }) => [d.day, d.requests])).toEqual([
			['2025-01-01', 2],
			['2025-01-02', 1],
		])
	})

	it('should count days in the caller’s time zone, each day at its own offset', async () => {
		// Los Angeles left daylight saving time on 2024-11-03 (UTC−7 before, UTC−8 after): both were made on November 3rd.
		await row('2024-11-03T07:30:00Z', 1_000_000, 'm-dst')
		await row('2024-11-04T07:30:00Z', 2_000_000, 'm-dst')
		const q = 'from=2024-11-02T00:00:00Z&to=2024-11-05T00:00:00Z&model=m-dst'
		const days = (r: { data: Array<{ day: string; requests: number }> }) => r.data.map((d) => [d.day, d.requests])
		expect(days(await spend(`${q}&time_zone=America/Los_Angeles`))).toEqual([['2024-11-03', 2]])
		// The zone wins over an offset; a zone the database does not know falls back to the offset given with it.
		expect(days(await spend(`${q}&time_zone=America/Los_Angeles&offset_minutes=-480`))).toEqual([['2024-11-03', 2]])
		expect(days(await spend(`${q}&time_zone=Etc/Unknown&offset_minutes=-480`))).toEqual([
			['2024-11-02', 1],
			['2024-11-03', 1],
		])
		const bad = await admin.call(`/api/console/spend?${q}&time_zone=Mars/Olympus_Mons`)
		expect(bad.status).toBe(400)
		expect(bad.body.error).toMatchObject({ param: 'time_zone', message: 'time_zone: not a time zone the database knows: Mars/Olympus_Mons' })
	})

	it('should filter by key and model', async () => {
		expect((await spend('from=2025-01-01T00:00:00Z&to=2025-01-03T00:00:00Z&token_id=7')).data).toEqual([
			{ day: '2025-01-02', cost: 0.5, requests: 1, input_tokens: 12, output_tokens: 5 },
		])
		expect((await spend('from=2025-01-01T00:00:00Z&to=2025-01-03T00:00:00Z&model=m1')).data.length).toBe(2)
	})

	it('should count a refund or a background settlement as part of its request, not as another request', async () => {
		const log = (requestId: string, cost: number, endReason: string, endpoint: string, tokens = 0) =>
			app.svc.db.sql.query(
				`INSERT INTO usage_logs (created_at, request_id, account_id, model, endpoint, status, cost, input_tokens, output_tokens, end_reason) VALUES ('2025-02-01T12:00:00Z', $1, 1, 'm3', $2, 200, $3, $4, $4, $5)`,
				[requestId, endpoint, cost, tokens, endReason],
			)
		// A failed video refunded (tasks/refund.ts) and a background response settled (responses/background.ts).
		await log('vid-1', 2_000_000, 'ok', '/v1/videos')
		await log('vid-1:refund', -2_000_000, 'refund', '/v1/videos')
		await log('bg-1', 1_000_000, 'background', '/v1/responses')
		await log('bg-1:settle', -250_000, 'ok', '/v1/responses', 100)
		const r = await spend('from=2025-02-01T00:00:00Z&to=2025-02-02T00:00:00Z')
		expect(r.data).toEqual([{ day: '2025-02-01', cost: 0.75, requests: 2, input_tokens: 100, output_tokens: 100 }])
	})

	it('should refuse bad dates and huge ranges in words', async () => {
		const bad = await admin.call('/api/console/spend?from=yesterday')
		expect(bad.status).toBe(400)
		expect(bad.body.error.message).toContain('from')
		const huge = await admin.call('/api/console/spend?from=2020-01-01T00:00:00Z&to=2025-01-01T00:00:00Z')
		expect(huge.status).toBe(400)
		expect(huge.body.error.message).toContain('400 days')
	})
})
