/**
 * The Usage page in a real browser for the rows the newer routes write beside a request's own: a task's refund (a
 * negative row, tasks/refund.ts), a background response's charge and its settlement (responses/background.ts), and a
 * realtime response billed from an estimate (modules/realtime). Each must read as what it is, and the totals above
 * must count requests, not rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Browser } from 'playwright-core'
import { ADMIN_PASSWORD, type ConsoleApp, startConsoleApp } from '../unit/console/console-app'
import { launch, newPage, settled, shot, signIn } from './browser'

let app: ConsoleApp
let browser: Browser

const log = (r: { requestId: string; endpoint: string; cost: number; endReason: string; status?: number; input?: number; output?: number; estimated?: boolean }) =>
	app.svc.db.sql.query(
		`INSERT INTO usage_logs (request_id, account_id, model, endpoint, status, cost, input_tokens, output_tokens, estimated, end_reason)
		 VALUES ($1, $2, 'm-new', $3, $4, $5, $6, $7, $8, $9)`,
		[r.requestId, 1, r.endpoint, r.status ?? 200, r.cost, r.input ?? 0, r.output ?? 0, r.estimated ?? false, r.endReason],
	)

beforeAll(async () => {
	app = await startConsoleApp({ config: { channels: [], models: [{ name: 'm-new', input_per_mtok: 1, output_per_mtok: 2 }] } })
	browser = await launch()
	// A video charged then refunded, a background response charged then settled lower, a realtime response cut upstream.
	await log({ requestId: 'vid-1', endpoint: '/v1/videos', cost: 2_000_000, endReason: 'ok' })
	await log({ requestId: 'vid-1:refund', endpoint: '/v1/videos', cost: -2_000_000, endReason: 'refund' })
	await log({ requestId: 'bg-1', endpoint: '/v1/responses', cost: 1_000_000, endReason: 'background' })
	await log({ requestId: 'bg-1:settle', endpoint: '/v1/responses', cost: -250_000, endReason: 'ok', input: 300, output: 200 })
	await log({ requestId: 'rt-1', endpoint: '/v1/realtime', cost: 40_000, endReason: 'upstream_cut', status: 502, input: 1_000, output: 500, estimated: true })
}, 180_000)

afterAll(async () => {
	await browser?.close()
	await app?.close()
})

describe('usage rows of refunds, background responses and estimates', () => {
	it('should label each row for what it is and count requests, not rows', async () => {
		const { context, page } = await newPage(browser, { baseURL: app.url })
		await signIn(page, 'admin', ADMIN_PASSWORD)
		await page.getByRole('link', { name: 'Usage' }).click()
		const table = page.getByRole('table', { name: 'Requests' })
		await table.locator('tbody tr').nth(4).waitFor()
		const row = (requestId: string) => table.locator(`tr[title="Request ${requestId}"]`)
		const cell = (requestId: string, label: string) => row(requestId).locator(`[data-label="${label}"]`)

		// The refund: money given back, not a failure.
		expect(await cell('vid-1:refund', 'Cost').textContent()).toBe('-$2.00')
		expect((await cell('vid-1:refund', 'Status').textContent())?.trim()).toBe('refund')
		expect(await cell('vid-1:refund', 'Status').locator('.badge-warning, .badge-danger').count()).toBe(0)
		// The background charge: the reservation taken while the response runs, not a warning.
		expect((await cell('bg-1', 'Status').textContent())?.trim()).toBe('background')
		expect(await cell('bg-1', 'Status').locator('.badge-warning, .badge-danger').count()).toBe(0)
		// The settlement says it is one, beside the request it settles.
		expect(await cell('bg-1:settle', 'Endpoint').textContent()).toContain('settlement')
		expect(await cell('bg-1', 'Endpoint').textContent()).not.toContain('settlement')
		// Estimated tokens are marked as such; counted ones are not.
		expect(await cell('rt-1', 'Tokens in / out').textContent()).toContain('estimated')
		expect(await cell('bg-1:settle', 'Tokens in / out').textContent()).not.toContain('estimated')

		// Three requests (video, background response, realtime response), $2 − $2 + $1 − $0.25 + $0.04 spent.
		const stats = page.locator('.stats')
		// The totals come from a request of their own, which may answer after the table's.
		expect(await settled(() => stats.getByText('Requests').locator('..').locator('dd').textContent(), '3')).toBe('3')
		expect(await settled(() => page.getByTestId('range-spend').textContent(), '$0.79')).toBe('$0.79')
		await shot(page, 'usage-new-rows')
		await context.close()
	}, 90_000)
})

describe('usage rows of a key since deleted', () => {
	it('should name the key, marked deleted, rather than by an id the user never saw, and filter by it', async () => {
		const gone = (await app.admin('/api/tokens', { body: { account_id: 1, name: 'old-laptop' } })).body as { id: number }
		await app.svc.db.sql.query(
			`INSERT INTO usage_logs (request_id, account_id, token_id, model, endpoint, status, cost, input_tokens, output_tokens)
			 VALUES ('by-old-laptop', 1, $1, 'm-new', '/v1/chat/completions', 200, 1000, 10, 5)`,
			[gone.id],
		)
		expect((await app.admin(`/api/tokens/${gone.id}`, { method: 'DELETE' })).status).toBe(200)
		const { context, page } = await newPage(browser, { baseURL: app.url })
		await signIn(page, 'admin', ADMIN_PASSWORD)
		await page.getByRole('link', { name: 'Usage' }).click()
		const key = page.getByRole('table', { name: 'Requests' }).locator('tr[title="Request by-old-laptop"] [data-label="Key"]')
		await key.waitFor()
		expect(await key.textContent()).toBe('old-laptop (deleted)')
		// Offered to filter by, marked (QA: its usage could not be narrowed to once it was deleted), and the filter works.
		const select = page.getByLabel('Key')
		expect(await settled(async () => (await select.locator('option').allTextContents()).includes('old-laptop (deleted)'), true)).toBe(true)
		await select.selectOption({ label: 'old-laptop (deleted)' })
		const rows = page.getByRole('table', { name: 'Requests' }).locator('tbody tr')
		expect(await settled(() => rows.count(), 1)).toBe(1)
		expect(await rows.first().getAttribute('title')).toBe('Request by-old-laptop')
		await shot(page, 'usage-deleted-key')
		await context.close()
	}, 90_000)
})
