/**
 * Rough edges a console user meets: a spend limit or a credit typed as a dollar amount ("$5", "1,000 USD") refused;
 * the Usage page showing two disabled pager buttons when every row fits on one page, where the Tokens page shows no
 * pager; a toast covering the Usage page's "Per page" select. A key name with a right-to-left override reversing the
 * sentence around it (the masked key of the key about to be deleted among it); an alert about a field already fixed
 * left in place when the browser's own check stopped the next submit.
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
			channels: [{ name: 'main', type: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'k', models: ['m-money'] }],
			models: [{ name: 'm-money', input_per_mtok: 1, output_per_mtok: 2 }],
		},
	})
	browser = await launch()
	token = (await app.admin('/api/tokens', { body: { account_id: 1, name: 'few-rows' } })).body.id
	// 3 rows: all on the Usage page's first page.
	await usageRows(app, { token, model: 'm-money', count: 3 })
}, 180_000)

afterAll(async () => {
	await browser?.close()
	await app?.close()
})

async function signedIn(phone = false): Promise<Page> {
	const { page } = await newPage(browser, { baseURL: app.url, phone })
	await signIn(page, 'admin', ADMIN_PASSWORD)
	await page.getByRole('heading', { name: 'Tokens' }).waitFor()
	return page
}

const storedLimit = async (name: string) => {
	const list = (await app.admin('/api/tokens?account_id=1&limit=100')).body.data as Array<{ name: string; spend_limit: number | null }>
	return list.find((t) => t.name === name)?.spend_limit
}

describe('money typed as a dollar amount', () => {
	it('should take "$5" as a new key\'s spend limit, and "1,000.50 USD" when editing it', async () => {
		const page = await signedIn()
		await page.getByRole('button', { name: 'Create token' }).first().click()
		const dialog = page.getByRole('dialog', { name: 'Create token' })
		await dialog.getByLabel('Name').fill('dollar-key')
		await dialog.getByLabel('Spend limit (USD)').fill(' $5 ')
		await dialog.getByRole('button', { name: 'Create token' }).click()
		const created = page.getByRole('dialog', { name: 'Token created' })
		await created.waitFor()
		await created.getByRole('button', { name: 'Done' }).click()
		expect(await storedLimit('dollar-key')).toBe(5)

		await page.locator('tr[data-token="dollar-key"]').getByRole('button', { name: /Edit/ }).click()
		const edit = page.getByRole('dialog', { name: 'Edit “dollar-key”' })
		await edit.getByLabel('Spend limit (USD)').fill('1,000.50 USD')
		await edit.getByRole('button', { name: 'Save' }).click()
		await edit.waitFor({ state: 'detached' })
		expect(await storedLimit('dollar-key')).toBe(1000.5)
		await page.context().close()
	}, 60_000)

	it('should still refuse a negative limit, a word, a misplaced comma and more than 6 decimals, saying what to type', async () => {
		const page = await signedIn()
		await page.getByRole('button', { name: 'Create token' }).first().click()
		const dialog = page.getByRole('dialog', { name: 'Create token' })
		await dialog.getByLabel('Name').fill('refused-key')
		for (const typed of ['-5', '$-5', 'five', '1,00', '$5.1234567', '$', 'USD']) {
			await dialog.getByLabel('Spend limit (USD)').fill(typed)
			await dialog.getByRole('button', { name: 'Create token' }).click()
			const alert = dialog.getByRole('alert')
			await alert.waitFor()
			expect(await alert.textContent()).toContain('The spend limit must be an amount in USD')
		}
		await shot(page, 'money-refused')
		expect(await storedLimit('refused-key')).toBeUndefined()
		await page.context().close()
	}, 60_000)

	it('should credit an account "$1,000" and take a removal typed "-$2.50"', async () => {
		const page = await signedIn()
		await page.goto('/console/admin/accounts')
		const balance = async () => (await app.admin('/api/accounts')).body.data.find((a: { id: number }) => a.id === 1).balance as number
		const before = await balance()
		const credit = async (typed: string) => {
			await page.locator('tr[data-account]').first().getByRole('button', { name: /^Credit / }).click()
			const dialog = page.getByRole('dialog')
			await dialog.getByLabel('Amount (USD)').fill(typed)
			await dialog.getByRole('button', { name: 'Credit account' }).click()
			await dialog.waitFor({ state: 'detached' })
		}
		await credit('$1,000')
		expect(await balance()).toBe(before + 1000)
		await credit('-$2.50')
		expect(await balance()).toBe(before + 997.5)
		await page.context().close()
	}, 60_000)
})

describe('the pager', () => {
	it('should not show buttons on the Usage page when every row fits on one page, as on the Tokens page', async () => {
		const page = await signedIn()
		// The Tokens page: one key, no pager.
		await page.locator('tr[data-token="few-rows"]').waitFor()
		expect(await page.getByRole('navigation', { name: 'Pages' }).getByRole('button').count()).toBe(0)
		await page.getByRole('link', { name: 'Usage' }).click()
		const rows = page.locator('table[aria-label="Requests"] tbody tr')
		await rows.nth(2).waitFor()
		expect(await rows.count()).toBe(3)
		await shot(page, 'usage-one-page')
		expect(await page.getByRole('button', { name: '← Newer' }).count()).toBe(0)
		expect(await page.getByRole('button', { name: 'Older →' }).count()).toBe(0)
		// The page size stays choosable.
		await page.getByLabel('Per page').selectOption('50')
		expect(await page.getByLabel('Per page').inputValue()).toBe('50')
		await page.context().close()
	}, 60_000)
})

/** The visible controls whose box meets a shown toast's box, by their accessible name or tag. */
const coveredControls = (page: Page) =>
	page.evaluate(() => {
		const boxes = [...document.querySelectorAll('.toast')].map((t) => t.getBoundingClientRect())
		const meets = (a: DOMRect, b: DOMRect) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom
		return [...document.querySelectorAll('a, button, input, select, textarea, [tabindex]:not([tabindex="-1"])')]
			.filter((el) => {
				const r = el.getBoundingClientRect()
				return r.width > 0 && r.height > 0 && !el.closest('.toasts') && boxes.some((b) => meets(r, b))
			})
			.map((el) => el.getAttribute('aria-label') || el.id || el.textContent?.trim() || el.tagName)
	})

describe('toasts', () => {
	for (const [width, phone] of [
		[390, true],
		[1280, false],
	] as const)
		it(`should cover no control at ${width} px, such as the Usage page's Per page select`, async () => {
			const { page } = await newPage(browser, { baseURL: app.url, phone, clipboard: true })
			if (!phone) await page.setViewportSize({ width, height: 800 })
			await signIn(page, 'admin', ADMIN_PASSWORD)
			await page.getByRole('button', { name: 'Copy key of few-rows' }).click()
			const toast = page.locator('.toast', { hasText: 'Copied' })
			await toast.waitFor()
			expect(await coveredControls(page)).toEqual([])
			// Shown for 3.5 s, across a move to another page: the Usage page, scrolled to its pager at the bottom.
			await page.getByRole('link', { name: 'Usage' }).click()
			await page.locator('table[aria-label="Requests"] tbody tr').first().waitFor()
			await page.getByLabel('Per page').scrollIntoViewIfNeeded()
			await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight))
			expect(await toast.isVisible()).toBe(true)
			await shot(page, `toast-${width}`)
			expect(await coveredControls(page)).toEqual([])
			await page.context().close()
		}, 60_000)
})

describe('names and alerts in dialogs', () => {
	it("should isolate a key name's right-to-left override from the sentence around it, in the dialogs and the toast", async () => {
		const name = 'prod \u202Edaer-ton'
		await app.admin('/api/tokens', { body: { account_id: 1, name } })
		const page = await signedIn()
		const row = page.locator('tr[data-token]').filter({ hasText: 'daer-ton' })
		await row.getByRole('button', { name: /^Delete / }).click()
		const dialog = page.getByRole('dialog', { name: 'Delete token?' })
		await dialog.waitFor()
		// The text node holding the name sits in an element that isolates it (<bdi>): the words after it keep their order.
		const holder = await dialog.evaluate((el) => {
			const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT)
			for (let t = walker.nextNode(); t; t = walker.nextNode()) if (t.textContent!.includes('\u202E')) return t.parentElement!.tagName
			return null
		})
		expect(holder).toBe('BDI')
		await dialog.getByRole('button', { name: 'Delete token' }).click()
		const toast = page.locator('.toast').filter({ hasText: 'Deleted' })
		await toast.waitFor()
		expect(await toast.textContent()).toContain('\u2068prod \u202Edaer-ton\u2069')
		await page.context().close()
	}, 60_000)

	it('should take away an alert about a field once the browser itself stops the next submit for another', async () => {
		const page = await signedIn()
		await page.getByRole('button', { name: 'Create token' }).first().click()
		const dialog = page.getByRole('dialog', { name: 'Create token' })
		await dialog.getByLabel('Name').fill('stale-alert')
		await dialog.getByLabel('Spend limit (USD)').fill('-5')
		await dialog.getByRole('button', { name: 'Create token' }).click()
		await dialog.getByRole('alert').waitFor()
		await dialog.getByLabel('Spend limit (USD)').fill('5')
		await dialog.getByLabel('Expires').selectOption({ label: 'On a date…' })
		await dialog.getByLabel('Expiry date').fill('2020-01-01')
		await dialog.getByRole('button', { name: 'Create token' }).click()
		await dialog.getByRole('alert').waitFor({ state: 'detached' })
		expect(await dialog.locator('input:invalid').count()).toBe(1)
		expect(await storedLimit('stale-alert')).toBeUndefined()
		await page.context().close()
	}, 60_000)
})
