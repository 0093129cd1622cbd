/**
 * QA round on the console (Chromium): every price billing uses is shown (a cache-write price on Models and /pricing,
 * a row's cached and written tokens on Usage); the Tokens page keeps its page, search and account in its address;
 * long cells wrap at 1280 px so rows keep their buttons in view; the price dialog says a GATEWAY_CONFIG price comes
 * back at the next start and refuses a model with no price; sign-up refuses a password of spaces; /docs names an icon.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { startOpenAIMock } from '../mocks'
import { ADMIN_PASSWORD, type ConsoleApp, startConsoleApp } from '../unit/console/console-app'
import { launch, newPage, shot, signIn } from './browser'

let mock: Awaited<ReturnType<typeof startOpenAIMock>>
let app: ConsoleApp
let browser: Browser

beforeAll(async () => {
	mock = await startOpenAIMock({ apiKey: 'up-key' })
	app = await startConsoleApp({
		config: {
			channels: [
				{ name: 'mock', type: 'openai', base_url: mock.url, api_key: 'up-key', models: ['gpt-4o-mini', 'claude-sonnet-5'] },
				// The vendor's 401 for a wrong key holds an unbreakable URL (https://platform.openai.com/account/api-keys).
				{ name: 'bad-key', type: 'openai', base_url: mock.url, api_key: 'wrong-key', models: ['gpt-4o-mini'] },
			],
			models: [
				{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 },
				{ name: 'claude-sonnet-5', input_per_mtok: 3.3, output_per_mtok: 16.7, cache_read_per_mtok: 0.33, cache_write_per_mtok: 4.125 },
			],
		},
	})
	browser = await launch()
	await app.admin('/api/accounts/1/credit', { body: { amount: 5 } })
}, 180_000)

afterAll(async () => {
	await browser?.close()
	await app?.close()
	await mock?.stop()
})

async function open(width = 1360): Promise<Page> {
	const { page } = await newPage(browser, { baseURL: app.url })
	await page.setViewportSize({ width, height: 900 })
	await signIn(page, 'admin', ADMIN_PASSWORD)
	await page.getByRole('heading', { name: 'Tokens' }).waitFor()
	return page
}

/** How far the row's buttons lie past the right edge of the table's box (0 or less: in view). */
const overflow = (page: Page, row: string) =>
	page.evaluate((sel) => {
		const tr = document.querySelector(sel)!
		const wrap = tr.closest('.table-wrap')!
		const right = Math.max(...[...tr.querySelectorAll('td.actions button')].map((b) => b.getBoundingClientRect().right))
		return { past: Math.max(0, Math.round(right - wrap.getBoundingClientRect().right)), scroll: wrap.scrollWidth - wrap.clientWidth }
	}, row)

describe('prices billing uses', () => {
	it('should show a cache-write price on the Models page and /pricing, only where a model has one', async () => {
		const page = await open()
		await page.goto('/console/models')
		const row = page.locator('main tbody tr', { hasText: 'claude-sonnet-5' })
		await row.waitFor()
		expect(await row.locator('td[data-label="Cache write / 1M"]').textContent()).toBe('$4.125')
		// A model without one is charged its input price for writes, as billing does.
		expect(await page.locator('main tbody tr', { hasText: 'gpt-4o-mini' }).locator('td[data-label="Cache write / 1M"]').textContent()).toBe('$1.00')
		const html = await (await fetch(`${app.url}/pricing`)).text()
		expect(html).toContain('Cache write / 1M')
		expect(html).toContain('$4.125')
		await page.context().close()
	}, 60_000)

	it("should show a usage row's cached and written tokens beside tokens in / out", async () => {
		await app.svc.db.sql.query(
			`INSERT INTO usage_logs (request_id, account_id, model, endpoint, status, cost, input_tokens, cached_tokens, cache_write_tokens, output_tokens)
			 VALUES ('cache-row', 1, 'claude-sonnet-5', '/v1/messages', 200, 100, 10, 0, 1200, 8)`,
		)
		const page = await open()
		await page.goto('/console/usage')
		const split = page.getByTestId('cache-split')
		await split.waitFor()
		expect(await split.textContent()).toBe('1,200 written')
		expect(await split.getAttribute('title')).toContain('10 uncached, 0 read from the cache, 1,200 written to it')
		await page.context().close()
	}, 60_000)
})

describe('Tokens page address', () => {
	it('should keep the page, the search and the chosen account in the address across reload and Back', async () => {
		for (let i = 1; i <= 30; i++) await app.admin('/api/tokens', { body: { account_id: 1, name: `bulk-${i}` } })
		const other = (await app.admin('/api/accounts', { body: { name: 'second', balance: 1 } })).body.id as number
		await app.admin('/api/tokens', { body: { account_id: other, name: 'second-key' } })
		const page = await open()
		await page.getByText('Page 1 of 2').waitFor()
		await page.getByRole('button', { name: /Older/ }).click()
		await page.getByText('Page 2 of 2').waitFor()
		expect(new URL(page.url()).searchParams.get('cursor')).toBeTruthy()
		await page.reload()
		await page.getByText('Page 2 of 2').waitFor()
		await page.goBack()
		await page.getByText('Page 1 of 2').waitFor()
		expect(new URL(page.url()).pathname).toBe('/console/tokens')
		expect(new URL(page.url()).search).toBe('')

		await page.getByLabel('Search keys').fill('bulk-2')
		await page.waitForURL(/search=bulk-2/)
		await page.reload()
		await page.locator('tr[data-token="bulk-20"]').waitFor()
		expect(await page.getByLabel('Search keys').inputValue()).toBe('bulk-2')

		await page.goto('/console/tokens')
		await page.getByLabel('Account', { exact: true }).selectOption(String(other))
		await page.waitForURL(new RegExp(`account_id=${other}`))
		await page.reload()
		await page.locator('tr[data-token="second-key"]').waitFor()
		expect(await page.getByLabel('Account', { exact: true }).inputValue()).toBe(String(other))
		await page.context().close()
	}, 120_000)
})

describe('long cells at 1280 px', () => {
	it("should keep a Tokens row's buttons in view beside a reached limit and a huge one", async () => {
		await app.admin('/api/tokens', { body: { account_id: 1, name: 'ci-pipeline-production-eu-west', spend_limit: 1234567.891234 } })
		const tiny = (await app.admin('/api/tokens', { body: { account_id: 1, name: 'tiny-limit', spend_limit: 0.01 } })).body
		const res = await fetch(`${app.url}/v1/chat/completions`, {
			method: 'POST',
			headers: { authorization: `Bearer ${tiny.key}`, 'content-type': 'application/json' },
			body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Write a long story about a cat please' }] }),
		})
		expect(res.status).toBe(200)
		await res.text()
		// Below what it spent: the key is shown "limit reached".
		await app.admin(`/api/tokens/${tiny.id}`, { method: 'PATCH', body: { spend_limit: 0.000001 } })
		const page = await open(1280)
		await page.goto('/console/tokens?search=i')
		const row = 'tr[data-token="tiny-limit"]'
		await page.locator(row).getByText('limit reached').waitFor()
		await page.locator('tr[data-token="ci-pipeline-production-eu-west"]').waitFor()
		await shot(page, 'tokens-limit-reached-1280')
		expect(await overflow(page, row)).toEqual({ past: 0, scroll: 0 })
		await page.context().close()
	}, 60_000)

	it("should keep the Channels rows' buttons in view after a failed Test with a long URL", async () => {
		const page = await open(1280)
		await page.goto('/console/admin/channels')
		await page.getByRole('button', { name: 'Test bad-key' }).click()
		await page.locator('tr[data-channel="bad-key"] .test-result.bad').waitFor()
		expect(await page.locator('tr[data-channel="bad-key"] .test-result').textContent()).toContain('https://platform.openai.com/account/api-keys')
		await shot(page, 'channels-test-failed-1280')
		for (const name of ['bad-key', 'mock']) expect(await overflow(page, `tr[data-channel="${name}"]`)).toEqual({ past: 0, scroll: 0 })
		await page.context().close()
	}, 60_000)
})

describe('price dialog', () => {
	it('should say that a price from GATEWAY_CONFIG is applied again at the next start', async () => {
		const page = await open()
		await page.goto('/console/admin/prices')
		await page.getByRole('button', { name: 'Edit gpt-4o-mini' }).click()
		const dialog = page.getByRole('dialog', { name: 'Edit price of gpt-4o-mini' })
		await dialog.waitFor()
		expect(await dialog.textContent()).toContain("This price comes from GATEWAY_CONFIG: the file's values are applied again at the next start.")
		await page.keyboard.press('Escape')
		await page.context().close()
	}, 60_000)

	it('should refuse to add a model with every price left empty, and add one priced 0 on purpose', async () => {
		const page = await open()
		await page.goto('/console/admin/prices')
		await page.getByRole('button', { name: 'Add price' }).click()
		const add = page.getByRole('dialog', { name: 'Add a model price' })
		await add.getByLabel('Model name').fill('no-price-model')
		await add.getByRole('button', { name: 'Add price' }).click()
		await add.getByRole('alert').waitFor()
		expect(await add.getByRole('alert').textContent()).toContain('Enter a price: Input (USD / 1M tokens) and Output (USD / 1M tokens) (0 for a model served free)')
		expect((await app.admin('/api/models')).body.data.some((m: { name: string }) => m.name === 'no-price-model')).toBe(false)
		await add.getByLabel('Input (USD / 1M tokens)').fill('0')
		await add.getByRole('button', { name: 'Add price' }).click()
		await add.waitFor({ state: 'detached' })
		expect((await app.admin('/api/models')).body.data.find((m: { name: string }) => m.name === 'no-price-model')).toMatchObject({ input_per_mtok: 0, output_per_mtok: 0 })
		await page.context().close()
	}, 60_000)
})

describe('sign-up', () => {
	it('should refuse a password of spaces, saying why in the form', async () => {
		await app.admin('/api/settings', { method: 'PATCH', body: { signup_enabled: true, signup_balance: 1 } })
		const { page, context } = await newPage(browser, { baseURL: app.url })
		await page.goto('/console')
		await page.getByRole('button', { name: 'Create an account' }).click()
		await page.getByLabel('Username').fill('dave')
		await page.getByLabel('Password').fill('        ')
		await page.getByLabel('Password').press('Enter')
		const alert = page.getByRole('alert')
		await alert.waitFor()
		expect(await alert.textContent()).toBe('Password: must hold something other than spaces')
		expect((await app.admin('/api/users')).body.data.some((u: { username: string }) => u.username === 'dave')).toBe(false)
		await context.close()
	}, 60_000)
})

describe('/docs', () => {
	it('should name an inline icon, so the browser asks for no /favicon.ico', async () => {
		const { page, context } = await newPage(browser, { baseURL: app.url })
		const failed: string[] = []
		page.on('response', (r) => {
			if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`)
		})
		await page.goto('/docs')
		await page.locator('details').first().waitFor()
		await page.waitForLoadState('networkidle')
		expect(failed).toEqual([])
		expect(await page.locator('link[rel="icon"]').getAttribute('href')).toStartWith('data:image/svg+xml,')
		await context.close()
	}, 60_000)
})
