/**
 * Leftovers a console user noticed (audit): a rerank channel's Test reported as a failed call although none can be
 * made; a Usage range whose "From" is after its "To" shown as "No requests match"; paging through Usage adding no
 * history entry, so Back left the page; a channel of weight 0 shown as a bare 0 with no word of what it does; the
 * Usage pager naming the next page over the rows of the last one; a list that failed to load shown as an empty one,
 * and spend that failed to load shown as $0.00.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { ADMIN_PASSWORD, type ConsoleApp, startConsoleApp, usageRows } from '../unit/console/console-app'
import { launch, newPage, shot, signIn } from './browser'

let app: ConsoleApp
let browser: Browser
let token: number

beforeAll(async () => {
	app = await startConsoleApp({
		config: {
			channels: [
				{ name: 'ranker', type: 'rerank', base_url: 'http://127.0.0.1:9/v1', api_key: 'k', models: ['rerank-v3'] },
				{ name: 'main', type: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'k', models: ['m-polish'], weight: 3 },
				{ name: 'spare', type: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'k', models: ['m-polish'], weight: 0 },
			],
			models: [{ name: 'm-polish', input_per_mtok: 1, output_per_mtok: 2 }],
		},
	})
	browser = await launch()
	token = (await app.admin('/api/tokens', { body: { account_id: 1, name: 'polish-key' } })).body.id
	// 30 rows today, newest first by id: r-30 … r-1.
	await usageRows(app, { token, model: 'm-polish', count: 30 })
}, 180_000)

afterAll(async () => {
	await browser?.close()
	await app?.close()
})

async function signedIn(): Promise<Page> {
	const { page } = await newPage(browser, { baseURL: app.url })
	await signIn(page, 'admin', ADMIN_PASSWORD)
	await page.getByRole('heading', { name: 'Tokens' }).waitFor()
	return page
}

describe('Channels', () => {
	it('should say a channel with no chat endpoint is not testable by chat, not that its test failed', async () => {
		const page = await signedIn()
		await page.getByRole('link', { name: 'Channels' }).click()
		const row = page.locator('tr[data-channel="ranker"]')
		await row.getByRole('button', { name: 'Test ranker' }).click()
		const result = row.locator('.test-result:not(:has(.spinner))')
		await result.waitFor()
		const text = (await result.textContent()) ?? ''
		expect(text).toStartWith('Not testable by chat')
		expect(text).not.toContain('Failed')
		expect(text).not.toContain('no answer after')
		expect(await result.getAttribute('class')).not.toContain('bad')
		await page.context().close()
	}, 60_000)

	it('should say what weight 0 means where the weight is shown and set', async () => {
		const page = await signedIn()
		await page.getByRole('link', { name: 'Channels' }).click()
		const spare = page.locator('tr[data-channel="spare"] td[data-label="Priority / weight"]')
		expect(await spare.textContent()).toContain('standby')
		expect(await page.locator('tr[data-channel="main"] td[data-label="Priority / weight"]').textContent()).not.toContain('standby')
		await page.locator('tr[data-channel="spare"]').getByRole('button', { name: /Edit/ }).click()
		const dialog = page.getByRole('dialog')
		expect(await dialog.textContent()).toContain('0: standby')
		await page.context().close()
	}, 60_000)
})

describe('Usage', () => {
	it('should say a range whose From is after its To is empty for that reason', async () => {
		const page = await signedIn()
		await page.goto('/console/usage?from=2026-03-10&to=2026-03-01')
		const alert = page.getByRole('alert').filter({ hasText: 'after' })
		await alert.waitFor()
		expect(await alert.textContent()).toContain('“From” (2026-03-10) is after “To” (2026-03-01)')
		expect(await page.getByText('No requests match these filters.').count()).toBe(0)
		await page.context().close()
	}, 60_000)

	it('should keep the page in the address, so Back goes to the newer page and a reload stays put', async () => {
		const page = await signedIn()
		await page.getByRole('link', { name: 'Usage' }).click()
		const rows = page.locator('table[aria-label="Requests"] tbody tr')
		const first = async () => (await rows.first().getAttribute('title')) ?? ''
		await rows.first().waitFor()
		expect(await first()).toBe('Request r-30')
		await page.getByRole('button', { name: 'Older →' }).click()
		await page.getByText('Page 2').waitFor()
		await page.waitForFunction(() => document.querySelector('table[aria-label="Requests"] tbody tr')?.getAttribute('title') === 'Request r-5')
		expect(page.url()).toContain('cursor=')
		await page.reload()
		await page.waitForFunction(() => document.querySelector('table[aria-label="Requests"] tbody tr')?.getAttribute('title') === 'Request r-5')
		await page.goBack()
		await page.waitForFunction(() => document.querySelector('table[aria-label="Requests"] tbody tr')?.getAttribute('title') === 'Request r-30')
		expect(new URL(page.url()).pathname).toBe('/console/usage')
		expect(page.url()).not.toContain('cursor=')
		expect(await page.getByText('Page 1').count()).toBe(1)
		await page.goForward()
		await page.waitForFunction(() => document.querySelector('table[aria-label="Requests"] tbody tr')?.getAttribute('title') === 'Request r-5')
		await page.context().close()
	}, 60_000)
	it('should name the page whose rows are shown while the next one loads', async () => {
		const page = await signedIn()
		await page.getByRole('link', { name: 'Usage' }).click()
		const rows = page.locator('table[aria-label="Requests"] tbody tr')
		await rows.first().waitFor()
		const pager = page.getByRole('navigation', { name: 'Pages' })
		let release = () => {}
		const older = (u: URL) => u.pathname === '/api/usage' && u.searchParams.has('cursor')
		await page.route(older, async (route) => {
			await new Promise<void>((r) => (release = r))
			await route.continue()
		})
		const asked = page.waitForRequest((r) => older(new URL(r.url())))
		await pager.getByRole('button', { name: 'Older →' }).click()
		await asked
		expect(await pager.getByText(/^Page \d+$/).textContent()).toBe('Page 1')
		expect(await rows.first().getAttribute('title')).toBe('Request r-30')
		await pager.getByRole('status').filter({ hasText: 'Loading' }).waitFor()
		// Pressed again meanwhile: still the page after the one shown, not the one after that under page 1's cursor.
		await pager.getByRole('button', { name: 'Older →' }).click()
		const answered = page.waitForResponse((r) => older(new URL(r.url())))
		release()
		await answered
		await page.waitForFunction(() => document.querySelector('table[aria-label="Requests"] tbody tr')?.getAttribute('title') === 'Request r-5')
		expect(await pager.getByText(/^Page \d+$/).textContent()).toBe('Page 2')
		await Bun.sleep(300)
		expect(await pager.getByText(/^Page \d+$/).textContent()).toBe('Page 2')
		// The last page: "Older →", pressed, is disabled now, and its focus went to "← Newer", not to <body>.
		expect(await page.evaluate(() => document.activeElement?.textContent?.trim())).toBe('← Newer')
		await page.goBack()
		await page.waitForFunction(() => document.querySelector('table[aria-label="Requests"] tbody tr')?.getAttribute('title') === 'Request r-30')
		expect(await pager.getByText(/^Page \d+$/).textContent()).toBe('Page 1')
		await page.context().close()
	}, 60_000)
})

describe('a list or a figure that failed to load', () => {
	it('should say it failed, not that there is nothing, nor show zeros for what it never read', async () => {
		const page = await signedIn()
		const failing = (u: URL) => ['/api/usage', '/api/console/spend', '/api/pricing'].includes(u.pathname)
		await page.route(failing, (r) => r.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ error: { message: 'Database unavailable' } }) }))
		await page.getByRole('link', { name: 'Usage' }).click()
		const requests = page.getByRole('region', { name: 'Requests' })
		await requests.getByRole('alert').filter({ hasText: 'Database unavailable' }).waitFor()
		await page.getByRole('region', { name: 'Spend over time' }).getByRole('alert').waitFor()
		expect(await requests.getByText('No requests match these filters.').count()).toBe(0)
		expect(await page.getByTestId('range-spend').textContent()).toBe('—')
		expect(await page.locator('.stats dd').allTextContents()).toEqual(['—', '—', '—'])
		// Said once, above the list: the pager has no page to say it of.
		expect(await page.getByText(/Not loaded/).count()).toBe(0)
		await shot(page, 'usage-failed')

		await page.getByRole('link', { name: 'Models' }).click()
		await page.getByRole('alert').filter({ hasText: 'Database unavailable' }).waitFor()
		expect(await page.getByText('No models are available yet.').count()).toBe(0)
		await page.context().close()
	}, 60_000)
})
