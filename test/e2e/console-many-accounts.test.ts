/**
 * An administrator with more accounts than one answer of the API holds (1,000), in a real browser: the Accounts page
 * shows them a page at a time and finds the oldest by name or id; the Account picker of the Tokens and Usage pages
 * shows the account the address names however old, and finds any by a search, as does Users → New user. When the
 * account list fails to load, the picker says so (rather than vanish) and comes back with Refresh or Try again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { ADMIN_PASSWORD, type ConsoleApp, startConsoleApp } from '../unit/console/console-app'
import { launch, newPage, settled, shot, signIn } from './browser'

let app: ConsoleApp
let browser: Browser
/** Carol's account: #2, older than the 1,000 newest. */
let carol: number
const BULK = 1_100

beforeAll(async () => {
	app = await startConsoleApp()
	carol = (await app.admin('/api/users', { body: { username: 'carol', password: 'carol-password', account_name: 'Carol Co', balance: 2 } })).body.account_id
	await app.admin('/api/tokens', { body: { account_id: carol, name: 'carol-key' } })
	// One insert: 1,100 HTTP calls would take long.
	await app.svc.db.sql.query(`INSERT INTO accounts (name) SELECT 'bulk-' || lpad(i::text, 5, '0') FROM generate_series(1, ${BULK}) i`)
	browser = await launch()
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

const accountRows = (page: Page) => page.getByRole('table', { name: 'Accounts' }).locator('tbody tr')
/** The Account picker's select (not its search box, whose label holds the word too). */
const picker = (page: Page) => page.getByLabel('Account', { exact: true })
const selected = (page: Page) => picker(page).evaluate((s: HTMLSelectElement) => s.options[s.selectedIndex]?.text)
const options = (page: Page) => picker(page).evaluate((s: HTMLSelectElement) => [...s.options].map((o) => o.text))

describe('more than 1,000 accounts', () => {
	it('should page the Accounts page and find the oldest accounts by name or id', async () => {
		const page = await signedIn()
		await page.goto('/console/admin/accounts')
		await accountRows(page).first().waitFor()
		expect(await settled(() => accountRows(page).count(), 50)).toBe(50)
		expect(await accountRows(page).first().getAttribute('data-account')).toBe(`bulk-0${BULK}`)
		const pager = page.getByRole('navigation', { name: 'Pages' })
		await pager.getByText('Page 1 of 23').waitFor()
		await pager.getByRole('button', { name: 'Older →' }).click()
		await pager.getByText('Page 2 of 23').waitFor()
		expect(await accountRows(page).first().getAttribute('data-account')).toBe(`bulk-0${BULK - 50}`)

		const search = page.getByRole('searchbox', { name: 'Search accounts' })
		await search.fill('carol')
		await page.locator('tr[data-account="Carol Co"]').waitFor()
		expect(await settled(() => accountRows(page).count(), 1)).toBe(1)
		expect(new URL(page.url()).searchParams.get('search')).toBe('carol')
		await search.fill('#1')
		await page.locator('tr[data-account="admin"]').waitFor()
		expect(await settled(() => accountRows(page).count(), 1)).toBe(1)
		// Found, it is managed as any other: credited from its row.
		await page.getByRole('button', { name: 'Credit admin' }).click()
		await page.getByRole('dialog').getByLabel('Amount (USD)').fill('3')
		await page.getByRole('dialog').getByRole('button', { name: 'Credit account' }).click()
		await page.getByRole('dialog').waitFor({ state: 'detached' })
		expect((await app.admin('/api/accounts/1')).body.balance).toBe(3)
		await search.fill('no such account')
		await page.getByText('No account matches “no such account”.').waitFor()
		await shot(page, 'many-accounts-search')
		await page.context().close()
	}, 90_000)

	it('should show the account the address names in the picker, and find any by a search', async () => {
		const page = await signedIn()
		// The administrator's own account (#1) is the oldest of all.
		await picker(page).waitFor()
		expect(await settled(() => selected(page), 'admin (#1)')).toBe('admin (#1)')
		await page.goto(`/console/tokens?account_id=${carol}`)
		await page.locator('tr[data-token="carol-key"]').waitFor()
		expect(await settled(() => selected(page), `Carol Co (#${carol})`)).toBe(`Carol Co (#${carol})`)

		await page.goto('/console/usage')
		await picker(page).waitFor()
		expect(await options(page)).not.toContain(`Carol Co (#${carol})`)
		const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/accounts' && new URL(r.url()).searchParams.get('search') === 'Carol')
		await page.getByRole('searchbox', { name: 'Search accounts' }).fill('Carol')
		await answered
		expect(await settled(() => options(page), ['admin (#1)', `Carol Co (#${carol})`])).toEqual(['admin (#1)', `Carol Co (#${carol})`])
		await picker(page).selectOption(String(carol))
		await page.waitForURL((u) => u.searchParams.get('account_id') === String(carol))
		expect(await selected(page)).toBe(`Carol Co (#${carol})`)
		await shot(page, 'many-accounts-picker')
		await page.context().close()
	}, 90_000)

	it('should find an old account for a new user', async () => {
		const page = await signedIn()
		await page.goto('/console/admin/users')
		await page.getByRole('button', { name: 'New user' }).click()
		const dialog = page.getByRole('dialog', { name: 'New user' })
		await dialog.getByLabel('Username').fill('dave')
		await dialog.getByLabel('Password').fill('dave-password')
		const search = dialog.getByRole('searchbox', { name: 'Search accounts' })
		await search.fill('carol co')
		// Enter in the search box searches: it must not submit the form with the account selected so far.
		await search.press('Enter')
		await Bun.sleep(300)
		expect(await dialog.isVisible()).toBe(true)
		expect(((await app.admin('/api/users')).body.data as Array<{ username: string }>).some((u) => u.username === 'dave')).toBe(false)
		const account = dialog.getByLabel('Account', { exact: true })
		await account.locator(`option[value="${carol}"]`).waitFor({ state: 'attached' })
		await account.selectOption(String(carol))
		await dialog.getByRole('button', { name: 'Create user' }).click()
		await dialog.waitFor({ state: 'detached' })
		const users = (await app.admin('/api/users')).body.data as Array<{ username: string; account_id: number }>
		expect(users.find((u) => u.username === 'dave')?.account_id).toBe(carol)
		await page.context().close()
	}, 90_000)

	it('should say when the account list failed to load, and show the picker again after Refresh or Try again', async () => {
		const page = await signedIn()
		let fail = true
		await page.route((u) => u.pathname === '/api/accounts', (r) => (fail ? r.abort('connectionrefused') : r.continue()))
		await page.goto(`/console/usage?account_id=${carol}`)
		const alert = page.getByRole('alert').filter({ hasText: 'The accounts did not load' })
		await alert.waitFor()
		expect(await picker(page).count()).toBe(0)
		await shot(page, 'many-accounts-picker-failed')
		fail = false
		await page.getByRole('button', { name: 'Refresh' }).click()
		await picker(page).waitFor()
		expect(await settled(() => selected(page), `Carol Co (#${carol})`)).toBe(`Carol Co (#${carol})`)
		expect(await alert.count()).toBe(0)

		// The Tokens page has no Refresh: the alert's own button asks again.
		fail = true
		await page.goto(`/console/tokens?account_id=${carol}`)
		await alert.waitFor()
		fail = false
		await alert.getByRole('button', { name: 'Try again' }).click()
		await picker(page).waitFor()
		expect(await settled(() => selected(page), `Carol Co (#${carol})`)).toBe(`Carol Co (#${carol})`)
		await page.context().close()
	}, 90_000)
})
