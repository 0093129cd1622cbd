/**
 * A team member with many keys, in a real browser: the Tokens page finds a key by its name, by the end of its key or
 * by the whole key pasted in, a page at a time; two keys of one name are told apart on the Usage page (calls made
 * with the `openai` and `@anthropic-ai/sdk` clients); a tab left open while another tab signs in as someone else
 * follows that sign-in instead of showing one user's console over another's session. A user with more keys than one
 * answer of the API holds (5,000) finds the oldest on the Tokens page and filters the Usage page by it. The pager names
 * the page whose rows are shown while the next loads (held back here), says when it failed, and keeps keyboard focus.
 */
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import type { Browser, Page } from 'playwright-core'
import { startAnthropicMock, startOpenAIMock } from '../mocks'
import { usd } from '../../src/console/lib/format'
import { ADMIN_PASSWORD, type ConsoleApp, startConsoleApp } from '../unit/console/console-app'
import { launch, newPage, settled, shot, signIn } from './browser'

let openaiMock: Awaited<ReturnType<typeof startOpenAIMock>>
let anthropicMock: Awaited<ReturnType<typeof startAnthropicMock>>
let app: ConsoleApp
let browser: Browser
let dave: number
const keys = new Map<string, { id: number; key: string; hint: string }>()

beforeAll(async () => {
	openaiMock = await startOpenAIMock({ apiKey: 'oa-key' })
	anthropicMock = await startAnthropicMock({ apiKey: 'an-key' })
	app = await startConsoleApp({
		config: {
			channels: [
				{ name: 'oa', type: 'openai', base_url: openaiMock.url, api_key: 'oa-key', models: ['gpt-4o-mini'] },
				{ name: 'an', type: 'anthropic', base_url: anthropicMock.url, api_key: 'an-key', models: ['claude-sonnet-4-5'] },
			],
			models: [
				{ name: 'gpt-4o-mini', input_per_mtok: 0.15, output_per_mtok: 0.6 },
				{ name: 'claude-sonnet-4-5', input_per_mtok: 3, output_per_mtok: 15 },
			],
		},
	})
	dave = (await app.admin('/api/users', { body: { username: 'dave', password: 'dave-password', balance: 1 } })).body.account_id
	for (let i = 0; i < 60; i++) {
		const name = `svc-${String(i).padStart(3, '0')}`
		const t = (await app.admin('/api/tokens', { body: { account_id: dave, name } })).body
		keys.set(name, { id: t.id, key: t.key, hint: t.key_hint })
	}
	browser = await launch()
}, 180_000)

afterAll(async () => {
	await browser?.close()
	await app?.close()
	await openaiMock?.stop()
	await anthropicMock?.stop()
})

const tokenRows = (page: Page) => page.getByRole('table', { name: 'Tokens' }).locator('tbody tr')
/** The rows shown once they are `n` (a search re-renders after its input event), or the count after 10 s. */
const rowCount = (page: Page, n: number) => settled(() => tokenRows(page).count(), n)
/** Types `text` into the search box and waits for the server's answer to it (the rows shown until then are the last search's). */
async function searchKeys(page: Page, text: string) {
	const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/tokens' && new URL(r.url()).searchParams.get('search') === text.trim())
	await page.getByRole('searchbox', { name: 'Search keys' }).fill(text)
	await answered
}

describe('many keys on the Tokens page', () => {
	it('should show them a page at a time and find one by name, by its key hint or by the whole key', async () => {
		const { context, page } = await newPage(browser, { baseURL: app.url })
		await signIn(page, 'dave', 'dave-password')
		await page.getByRole('heading', { name: 'Tokens' }).waitFor()
		await tokenRows(page).first().waitFor()
		expect(await rowCount(page, 25)).toBe(25)
		const pager = page.getByRole('navigation', { name: 'Pages' })
		await pager.getByText('Page 1 of 3').waitFor()
		// Newest first: svc-059 … svc-035, then svc-034 … svc-010, then svc-009 … svc-000.
		await pager.getByRole('button', { name: 'Older →' }).click()
		await pager.getByText('Page 2 of 3').waitFor()
		// The pager and the rows change together.
		expect(await tokenRows(page).first().getAttribute('data-token')).toBe('svc-034')
		await pager.getByRole('button', { name: 'Older →' }).click()
		expect(await rowCount(page, 10)).toBe(10)
		expect(await pager.getByRole('button', { name: 'Older →' }).isDisabled()).toBe(true)
		await shot(page, 'tokens-many-page-3')

		// A search starts again at its first page.
		await searchKeys(page, 'svc-0')
		await pager.getByText('Page 1 of 3').waitFor()
		expect(await rowCount(page, 25)).toBe(25)
		await searchKeys(page, 'SVC-042')
		expect(await rowCount(page, 1)).toBe(1)
		expect(await tokenRows(page).first().getAttribute('data-token')).toBe('svc-042')

		// "Which of my keys is this?": the whole key, or the last characters the list shows.
		const k17 = keys.get('svc-017')!
		await searchKeys(page, k17.key)
		expect(await rowCount(page, 1)).toBe(1)
		expect(await tokenRows(page).first().getAttribute('data-token')).toBe('svc-017')
		await searchKeys(page, k17.hint.slice(-4))
		expect(await tokenRows(page).locator('[data-testid="token-key"]').allTextContents()).toContain(k17.hint)

		await searchKeys(page, 'no-such-key')
		expect(await rowCount(page, 0)).toBe(0)
		expect(await page.getByText('No key matches “no-such-key”.').isVisible()).toBe(true)
		expect(await pager.count()).toBe(0)
		await context.close()
	}, 90_000)
})

describe('turning pages: while the rows load slowly or fail to, and by keyboard', () => {
	it('should keep the pager on the page whose rows are shown, say it is loading, and say when it failed', async () => {
		const { context, page } = await newPage(browser, { baseURL: app.url })
		await signIn(page, 'dave', 'dave-password')
		await tokenRows(page).first().waitFor()
		const pager = page.getByRole('navigation', { name: 'Pages' })
		await pager.getByText('Page 1 of 3').waitFor()
		// The next page's answer is held until the test lets it go, or refused as a server failure.
		let release = () => {}
		let fail = false
		const nextPages = (u: URL) => u.pathname === '/api/tokens' && u.searchParams.has('cursor')
		await page.route(nextPages, async (route) => {
			if (fail) return route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ error: { message: 'Service unavailable' } }) })
			await new Promise<void>((r) => (release = r))
			await route.continue()
		})
		const asked = page.waitForRequest((r) => new URL(r.url()).searchParams.has('cursor'))
		await pager.getByRole('button', { name: 'Older →' }).click()
		await asked
		expect(await pager.getByText(/^Page \d+ of \d+$/).textContent()).toBe('Page 1 of 3')
		await pager.getByRole('status').filter({ hasText: 'Loading' }).waitFor()
		expect(await tokenRows(page).first().getAttribute('data-token')).toBe('svc-059')
		expect(await page.getByRole('table', { name: 'Tokens' }).getAttribute('aria-busy')).toBe('true')
		// A second click while the page loads asks for that same page, not the one after it under page 1's cursor.
		await pager.getByRole('button', { name: 'Older →' }).click()
		await shot(page, 'tokens-page-loading')
		const answered = page.waitForResponse((r) => new URL(r.url()).searchParams.has('cursor'))
		release()
		await answered
		await pager.getByText('Page 2 of 3').waitFor()
		expect(await tokenRows(page).first().getAttribute('data-token')).toBe('svc-034')
		expect(await pager.getByRole('status').filter({ hasText: 'Loading' }).count()).toBe(0)
		expect(await page.getByRole('table', { name: 'Tokens' }).getAttribute('aria-busy')).toBe(null)
		await Bun.sleep(300)
		expect(await pager.getByText(/^Page \d+ of \d+$/).textContent()).toBe('Page 2 of 3')

		// A failed page: said in words, the pager and rows stay on page 2, and Older tries again.
		fail = true
		await pager.getByRole('button', { name: 'Older →' }).click()
		await page.getByRole('alert').filter({ hasText: 'Service unavailable' }).waitFor()
		expect(await pager.getByRole('status').textContent()).toBe('Not loaded: Service unavailable')
		expect(await pager.getByText(/^Page \d+ of \d+$/).textContent()).toBe('Page 2 of 3')
		expect(await tokenRows(page).first().getAttribute('data-token')).toBe('svc-034')
		await shot(page, 'tokens-page-failed')
		fail = false
		await page.unroute(nextPages)
		await pager.getByRole('button', { name: 'Older →' }).click()
		await pager.getByText('Page 3 of 3').waitFor()
		expect(await tokenRows(page).first().getAttribute('data-token')).toBe('svc-009')
		expect(await page.getByRole('alert').count()).toBe(0)
		expect(await pager.getByText(/Not loaded/).count()).toBe(0)
		await context.close()
	}, 90_000)

	it('should keep focus in the pager when the key pressed reaches the last or the first page', async () => {
		const { context, page } = await newPage(browser, { baseURL: app.url })
		await signIn(page, 'dave', 'dave-password')
		const pager = page.getByRole('navigation', { name: 'Pages' })
		await pager.getByText('Page 1 of 3').waitFor()
		const focused = () => page.evaluate(() => document.activeElement?.textContent?.trim())
		await pager.getByRole('button', { name: 'Older →' }).focus()
		await page.keyboard.press('Enter')
		await pager.getByText('Page 2 of 3').waitFor()
		await page.keyboard.press('Enter')
		await pager.getByText('Page 3 of 3').waitFor()
		// "Older →" is disabled on the last page: focus moves to "← Newer" rather than dropping to <body>.
		expect(await focused()).toBe('← Newer')
		await page.keyboard.press('Enter')
		await pager.getByText('Page 2 of 3').waitFor()
		await page.keyboard.press('Enter')
		await pager.getByText('Page 1 of 3').waitFor()
		expect(await focused()).toBe('Older →')
		await context.close()
	}, 90_000)
})

describe('more keys than one answer of the API holds', () => {
	it('should find the oldest key on the Tokens page and filter the Usage page by it', async () => {
		const erin = (await app.admin('/api/users', { body: { username: 'erin', password: 'erin-password', balance: 1 } })).body.account_id
		const oldest = (await app.admin('/api/tokens', { body: { account_id: erin, name: 'oldest-key' } })).body as { id: number; key: string; key_hint: string }
		await new OpenAI({ apiKey: oldest.key, baseURL: `${app.url}/v1` }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello from the oldest key' }] })
		// Inserted directly: 5,000 keys through the API would take minutes.
		await app.svc.db.sql.query(
			`INSERT INTO api_tokens (account_id, name, key_hash, key_enc, key_hint)
			 SELECT $1, 'bulk-' || lpad(i::text, 5, '0'), md5(i::text), 'x', 'sk-bulk…' || lpad(i::text, 5, '0') FROM generate_series(1, 5010) i`,
			[erin],
		)
		const { context, page } = await newPage(browser, { baseURL: app.url })
		await signIn(page, 'erin', 'erin-password')
		await page.getByRole('heading', { name: 'Tokens' }).waitFor()
		const pager = page.getByRole('navigation', { name: 'Pages' })
		await pager.getByText('Page 1 of 201').waitFor()
		expect(await tokenRows(page).first().getAttribute('data-token')).toBe('bulk-05010')
		await searchKeys(page, 'oldest')
		expect(await rowCount(page, 1)).toBe(1)
		expect(await tokenRows(page).first().getAttribute('data-token')).toBe('oldest-key')
		await searchKeys(page, oldest.key)
		expect(await tokenRows(page).first().getAttribute('data-token')).toBe('oldest-key')
		await searchKeys(page, 'bulk-0000')
		expect(await rowCount(page, 9)).toBe(9)
		expect(await pager.count()).toBe(0)

		await page.getByRole('link', { name: 'Usage' }).click()
		const table = page.getByRole('table', { name: 'Requests' })
		await table.locator('tbody tr').first().waitFor()
		expect(await table.locator('tbody tr td[data-label="Key"]').first().textContent()).toBe('oldest-key')
		await page.getByRole('searchbox', { name: 'Search keys' }).fill('oldest')
		const keyFilter = page.getByLabel('Key', { exact: true })
		await keyFilter.locator('option', { hasText: 'oldest-key' }).waitFor({ state: 'attached' })
		await keyFilter.selectOption({ label: 'oldest-key' })
		await page.waitForURL((u) => u.searchParams.get('token_id') === String(oldest.id))
		expect(await table.locator('tbody tr').count()).toBe(1)
		await shot(page, 'usage-oldest-of-many-keys')
		await context.close()
	}, 120_000)
})

describe('two keys of one name on the Usage page', () => {
	it('should tell them apart by their masked keys in the key filter and in the rows', async () => {
		const made = async () => (await app.admin('/api/tokens', { body: { account_id: dave, name: 'laptop' } })).body as { id: number; key: string; key_hint: string }
		const first = await made()
		const second = await made()
		await new OpenAI({ apiKey: first.key, baseURL: `${app.url}/v1` }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello from the first laptop key' }] })
		await new Anthropic({ apiKey: second.key, baseURL: app.url }).messages.create({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hello from the second' }] })
		const rows = (await app.admin(`/api/usage?account_id=${dave}`)).body.data as Array<{ token_id: number; model: string; cost: number }>
		const claudeRow = rows.find((r) => r.token_id === second.id)!
		expect(claudeRow.model).toBe('claude-sonnet-4-5')

		const { context, page } = await newPage(browser, { baseURL: app.url })
		await signIn(page, 'dave', 'dave-password')
		await page.getByRole('link', { name: 'Usage' }).click()
		const table = page.getByRole('table', { name: 'Requests' })
		await table.locator('tbody tr').nth(1).waitFor()
		const firstLabel = `laptop · ${first.key_hint}`
		const secondLabel = `laptop · ${second.key_hint}`
		expect(await table.locator('tbody tr', { hasText: 'gpt-4o-mini' }).locator('td[data-label="Key"]').textContent()).toBe(firstLabel)
		expect(await table.locator('tbody tr', { hasText: 'claude-sonnet-4-5' }).locator('td[data-label="Key"]').textContent()).toBe(secondLabel)
		const options = await page.getByLabel('Key').locator('option').allTextContents()
		expect(options).toContain(firstLabel)
		expect(options).toContain(secondLabel)
		// A key with a name of its own keeps just its name.
		expect(options).toContain('svc-000')

		await page.getByLabel('Key').selectOption({ label: secondLabel })
		await table.locator('tbody tr', { hasText: 'gpt-4o-mini' }).waitFor({ state: 'detached' })
		expect(await table.locator('tbody tr').count()).toBe(1)
		expect(await settled(() => page.getByTestId('range-spend').textContent(), usd(claudeRow.cost))).toBe(usd(claudeRow.cost))
		await shot(page, 'usage-same-name-keys')
		await context.close()
	}, 90_000)
})

/**
 * The tab the user turns to, in front: Chromium draws a tab behind another at a throttled rate, and each click
 * waits for its frames (seconds a click). Headless, both tabs stay `visible`, so this fires no visibilitychange: the
 * tab still learns of the other tab's sign-in only from its next change, or from the event the test dispatches.
 */
const inFront = (tab: Page) => tab.bringToFront()

describe('a tab left open while another tab signs in as someone else', () => {
	it('should follow the new sign-in, say so, and create nothing for either user', async () => {
		const { context, page: stale } = await newPage(browser, { baseURL: app.url })
		await signIn(stale, 'admin', ADMIN_PASSWORD)
		await stale.getByRole('link', { name: 'Accounts' }).waitFor()
		const other = await context.newPage()
		await other.goto('/console/tokens')
		await other.getByRole('button', { name: 'Sign out' }).click()
		await signIn(other, 'dave', 'dave-password')
		await other.getByRole('heading', { name: 'Tokens' }).waitFor()

		// The stale tab still shows the administrator; its next change meets dave's session.
		await inFront(stale)
		await stale.getByRole('button', { name: 'Create token' }).first().click()
		await stale.getByLabel('Name').fill('from-the-stale-tab')
		await stale.getByRole('dialog').getByRole('button', { name: 'Create token' }).click()
		await stale.locator('.user-name', { hasText: 'dave' }).waitFor()
		expect(await stale.getByRole('status').filter({ hasText: 'another tab' }).textContent()).toContain('Signed in as dave in another tab')
		expect(await stale.getByRole('link', { name: 'Accounts' }).count()).toBe(0)
		expect(await stale.getByTestId('balance').textContent()).toBe(usd((await app.admin(`/api/accounts/${dave}`)).body.balance))
		await shot(stale, 'tab-follows-other-sign-in')
		const all = (await app.admin('/api/tokens')).body.data as Array<{ name: string }>
		expect(all.some((t) => t.name === 'from-the-stale-tab')).toBe(false)

		// Signed out in the other tab: this one says so as soon as it is looked at again, before any click.
		await inFront(other)
		await other.getByRole('button', { name: 'Sign out' }).click()
		await other.getByLabel('Username').waitFor()
		await inFront(stale)
		await stale.evaluate(() => document.dispatchEvent(new Event('visibilitychange')))
		await stale.getByLabel('Username').waitFor()
		expect(await stale.getByRole('status').filter({ hasText: 'session' }).textContent()).toContain('Your session has ended')
		await context.close()
	}, 90_000)
})

describe('a tab left open while another tab signs out and in again as the same user', () => {
	it('should say the sign-in changed, and the same change then goes through', async () => {
		const { context, page: stale } = await newPage(browser, { baseURL: app.url })
		await signIn(stale, 'dave', 'dave-password')
		await stale.getByRole('heading', { name: 'Tokens' }).waitFor()
		const other = await context.newPage()
		await other.goto('/console/tokens')
		await other.getByRole('button', { name: 'Sign out' }).click()
		await signIn(other, 'dave', 'dave-password')
		await other.getByRole('heading', { name: 'Tokens' }).waitFor()

		await inFront(stale)
		await stale.getByRole('button', { name: 'Create token' }).first().click()
		const dialog = stale.getByRole('dialog')
		await dialog.getByLabel('Name').fill('after-the-other-tab')
		// The page re-reads the session when a change is refused for its token; the retry follows that answer.
		const reread = stale.waitForResponse((r) => r.url().endsWith('/api/session') && r.request().method() === 'GET')
		await dialog.getByRole('button', { name: 'Create token' }).click()
		await dialog.getByRole('alert').waitFor()
		await reread
		// In words, not "Missing or invalid CSRF token: send the x-csrf-token header returned by GET /api/session".
		expect(await dialog.getByRole('alert').textContent()).toBe('The sign-in changed in another tab, and this page has caught up with it. Try again.')
		await dialog.getByRole('button', { name: 'Create token' }).click()
		await stale.getByTestId('new-key').waitFor()
		expect(await stale.getByTestId('new-key').inputValue()).toStartWith('sk-')
		const mine = (await app.admin(`/api/tokens?account_id=${dave}`)).body.data as Array<{ name: string }>
		expect(mine.filter((t) => t.name === 'after-the-other-tab').length).toBe(1)
		await context.close()
	}, 90_000)
})
