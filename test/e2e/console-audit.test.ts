/**
 * What a user of the console ran into (a browser audit): the Usage page keeping another account's key as its filter,
 * a blank key name refused in the schema's words, a long key name widening the tables and dialogs, a key past its
 * spend limit shown as "active", the spend chart counting days with today's UTC offset across a change of
 * daylight saving time, and the schema's wording of a refused field ("Invalid body: "username" Expected string
 * length greater or equal to 3") shown as it came; a key's spend left stale on the Tokens page while the balance
 * above it moved.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { startOpenAIMock } from '../mocks'
import { usd } from '../../src/console/lib/format'
import { ADMIN_PASSWORD, type ConsoleApp, startConsoleApp } from '../unit/console/console-app'
import { launch, newPage, settled, shot, signIn } from './browser'

let app: ConsoleApp
let browser: Browser
let mock: Awaited<ReturnType<typeof startOpenAIMock>>
let bob: { account: number; token: number }
let adminToken: number

/** A usage row written as the ledger writes them: `createdAt` is when the request was made. */
const log = (r: { requestId: string; account: number; token: number; cost: number; createdAt?: string }) =>
	app.svc.db.sql.query(
		`INSERT INTO usage_logs (request_id, account_id, token_id, model, endpoint, status, cost, input_tokens, output_tokens, created_at)
		 VALUES ($1, $2, $3, 'm-audit', '/v1/chat/completions', 200, $4, 10, 5, coalesce($5::timestamptz, now()))`,
		[r.requestId, r.account, r.token, r.cost, r.createdAt ?? null],
	)

beforeAll(async () => {
	mock = await startOpenAIMock({ apiKey: 'up-key' })
	app = await startConsoleApp({
		config: {
			channels: [
				// Never called: it makes m-audit reachable through every protocol, as the Models page lists them.
				{ name: 'audit', type: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'up-key', models: ['m-audit'] },
				{ name: 'live', type: 'openai', base_url: mock.url, api_key: 'up-key', models: ['gpt-4o-mini'] },
			],
			models: [
				{ name: 'm-audit', input_per_mtok: 1, output_per_mtok: 2 },
				{ name: 'gpt-4o-mini', input_per_mtok: 0.15, output_per_mtok: 0.6 },
			],
		},
	})
	browser = await launch()
	adminToken = (await app.admin('/api/tokens', { body: { account_id: 1, name: 'admin-key' } })).body.id
	const user = (await app.admin('/api/users', { body: { username: 'bob', password: 'bob-password' } })).body
	bob = { account: user.account_id, token: (await app.admin('/api/tokens', { body: { account_id: user.account_id, name: 'bob-key' } })).body.id }
	await log({ requestId: 'admin-1', account: 1, token: adminToken, cost: 1_000 })
	await log({ requestId: 'bob-1', account: bob.account, token: bob.token, cost: 2_000 })
}, 180_000)

afterAll(async () => {
	await browser?.close()
	await app?.close()
	await mock?.stop()
})

async function signedIn(opts: { timezoneId?: string; width?: number } = {}): Promise<Page> {
	const { page } = await newPage(browser, { baseURL: app.url, timezoneId: opts.timezoneId })
	if (opts.width) await page.setViewportSize({ width: opts.width, height: 900 })
	await signIn(page, 'admin', ADMIN_PASSWORD)
	await page.getByRole('heading', { name: 'Tokens' }).waitFor()
	return page
}

const requests = (page: Page) => page.getByRole('table', { name: 'Requests' }).locator('tbody tr')

describe('Usage, for an administrator', () => {
	it("should show the chosen account's requests after switching accounts with a key chosen", async () => {
		const page = await signedIn()
		await page.getByRole('link', { name: 'Usage' }).click()
		await page.getByLabel('Account').selectOption(String(bob.account))
		await page.getByLabel('Key').selectOption({ label: 'bob-key' })
		await requests(page).filter({ hasText: 'bob-key' }).waitFor()
		// Back to the administrator's own account: bob's key must not stay the (invisible) filter of its list.
		await page.getByLabel('Account').selectOption('1')
		await requests(page).filter({ hasText: 'admin-key' }).waitFor()
		expect(await page.getByLabel('Key').evaluate((s: HTMLSelectElement) => s.selectedOptions[0]?.text)).toBe('All keys')
		expect(await page.getByTestId('range-spend').textContent()).toBe('$0.001')
		await page.context().close()
	}, 60_000)
})

describe('Usage filters in the address', () => {
	it('should keep the filters through a reload and Back, and open a link with them', async () => {
		const page = await signedIn()
		await page.getByRole('link', { name: 'Usage' }).click()
		await page.getByLabel('Account').selectOption(String(bob.account))
		await page.getByLabel('Key').selectOption({ label: 'bob-key' })
		await page.getByLabel('Model').fill('m-audit')
		await page.getByLabel('Per page').selectOption('50')
		await requests(page).filter({ hasText: 'bob-key' }).waitFor()
		const shown = async () => ({
			account: await page.getByLabel('Account').inputValue(),
			key: await page.getByLabel('Key').evaluate((s: HTMLSelectElement) => s.selectedOptions[0]?.text),
			model: await page.getByLabel('Model').inputValue(),
			perPage: await page.getByLabel('Per page').inputValue(),
		})
		const expected = { account: String(bob.account), key: 'bob-key', model: 'm-audit', perPage: '50' }
		expect(await shown()).toEqual(expected)
		// A reload used to open the administrator's own account, all keys and models again.
		await page.reload()
		await requests(page).filter({ hasText: 'bob-key' }).waitFor()
		expect(await shown()).toEqual(expected)
		// Away and Back again.
		await page.getByRole('link', { name: 'Tokens' }).click()
		await page.getByRole('heading', { name: 'Tokens' }).waitFor()
		await page.goBack()
		await requests(page).filter({ hasText: 'bob-key' }).waitFor()
		expect(await shown()).toEqual(expected)
		// The address, opened elsewhere, shows the same.
		const link = page.url()
		expect(new URL(link).search).toBe(`?account_id=${bob.account}&token_id=${bob.token}&model=m-audit&limit=50`)
		const other = await signedIn()
		await other.goto(link)
		await requests(other).filter({ hasText: 'bob-key' }).waitFor()
		expect(await other.getByLabel('Model').inputValue()).toBe('m-audit')
		await other.context().close()
		await page.context().close()
	}, 60_000)
})

describe('Tokens', () => {
	it('should say in words that a key needs a name when only spaces were typed', async () => {
		const page = await signedIn()
		await page.getByRole('button', { name: 'Create token' }).first().click()
		const dialog = page.getByRole('dialog', { name: 'Create token' })
		await dialog.getByLabel('Name').fill('   ')
		await dialog.getByRole('button', { name: 'Create token' }).click()
		const alert = dialog.getByRole('alert')
		await alert.waitFor()
		// Not the schema's "Invalid body: "name" Expected string length greater or equal to 1".
		expect(await alert.textContent()).toBe('Enter a name for the key')
		await page.context().close()
	}, 60_000)

	it('should wrap a long key name rather than widen the table and its dialogs', async () => {
		const name = `ci-${'x'.repeat(150)}`
		await app.admin('/api/tokens', { body: { account_id: 1, name } })
		const page = await signedIn({ width: 1440 })
		const row = page.locator(`tr[data-token="${name}"]`)
		await row.waitFor()
		const sideways = () => page.evaluate(() => [...document.querySelectorAll('.table-wrap, dialog')].map((e) => e.scrollWidth - e.clientWidth))
		// Every column in view: no sideways scrolling in the table's box.
		expect(await sideways()).toEqual([0])
		expect(await row.getByRole('button', { name: `Delete ${name}` }).isVisible()).toBe(true)
		await row.getByRole('button', { name: `Delete ${name}` }).click()
		await page.getByRole('dialog', { name: 'Delete token?' }).waitFor()
		expect(await sideways()).toEqual([0, 0])
		await shot(page, 'token-long-name-delete')
		await page.context().close()
	}, 60_000)

	it("should bring a key's spend up to date when the balance above it is", async () => {
		await app.admin(`/api/accounts/${bob.account}/credit`, { body: { amount: 1 } })
		const live = (await app.admin('/api/tokens', { body: { account_id: bob.account, name: 'bob-live', spend_limit: 1 } })).body
		const { context, page } = await newPage(browser, { baseURL: app.url })
		// The console re-reads the balance every 20 s; the page's clock is moved on instead of waiting for it.
		await page.clock.install()
		await signIn(page, 'bob', 'bob-password')
		const row = page.locator('tr[data-token="bob-live"]')
		await row.waitFor()
		expect(await row.locator('[data-label="Spent / limit"]').textContent()).toBe('$0.00 / $1.00')
		const before = await page.getByTestId('balance').textContent()
		const res = await fetch(`${app.url}/v1/chat/completions`, {
			method: 'POST',
			headers: { authorization: `Bearer ${live.key}`, 'content-type': 'application/json' },
			body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one two three four five' }] }),
		})
		expect(res.status).toBe(200)
		await res.text()
		let spent = 0
		for (let i = 0; i < 50 && spent === 0; i++, await Bun.sleep(100)) spent = (await app.admin(`/api/tokens/${live.id}`)).body.spent
		expect(spent).toBeGreaterThan(0)
		await page.clock.fastForward(21_000)
		await page.getByTestId('balance').filter({ hasNotText: before! }).waitFor()
		// The header says the money went; the key that spent it must say so too, not $0.00 until a reload.
		await row.locator('[data-label="Spent / limit"]').filter({ hasText: `${usd(spent)} / $1.00` }).waitFor({ timeout: 5_000 })
		await context.close()
	}, 60_000)

	it('should show a key that has spent its limit as such, not as active', async () => {
		const id = (await app.admin('/api/tokens', { body: { account_id: 1, name: 'spent-key', spend_limit: 1 } })).body.id
		await app.svc.db.sql.query('UPDATE api_tokens SET spent = 1000000 WHERE id = $1', [id])
		const page = await signedIn()
		const status = page.locator('tr[data-token="spent-key"] [data-label="Status"]')
		await status.waitFor()
		expect((await status.textContent())?.trim()).toBe('limit reached')
		expect(await status.locator('.badge-warning').count()).toBe(1)
		// A key with money left under its limit stays active.
		expect((await page.locator('tr[data-token="admin-key"] [data-label="Status"]').textContent())?.trim()).toBe('active')
		await page.context().close()
	}, 60_000)
})

describe('the spend chart across a change of daylight saving time', () => {
	it("should count each request on the viewer's calendar day, as the table shows its time", async () => {
		// Los Angeles left daylight saving time on 2026-11-01 at 02:00 (UTC−7 before, UTC−8 after): both requests were
		// made on November 1st there, at 00:30 and at 23:30. A single offset (today's) puts one of them on another day.
		await log({ requestId: 'dst-1', account: 1, token: adminToken, cost: 3_000, createdAt: '2026-11-01T07:30:00Z' })
		await log({ requestId: 'dst-2', account: 1, token: adminToken, cost: 4_000, createdAt: '2026-11-02T07:30:00Z' })
		const page = await signedIn({ timezoneId: 'America/Los_Angeles' })
		await page.getByRole('link', { name: 'Usage' }).click()
		await page.getByRole('textbox', { name: 'From' }).fill('2026-10-31')
		await page.getByRole('textbox', { name: 'To' }).fill('2026-11-02')
		await requests(page).nth(1).waitFor()
		// Filling From alone reloads the table for From..today first: read it once the whole range has answered.
		const times = ['2026-11-01 23:30', '2026-11-01 00:30']
		expect(await settled(() => requests(page).locator('[data-label="Time"]').allTextContents(), times)).toEqual(times)
		const days = page.locator('svg[role="img"] rect.chart-hit title')
		await page.getByTestId('range-spend').filter({ hasText: '$0.007' }).waitFor()
		// The chart's days come from a request of their own, which may answer after the table's and the total's.
		const expected = ['2026-10-31: $0.00, 0 requests', '2026-11-01: $0.007, 2 requests', '2026-11-02: $0.00, 0 requests']
		expect(await settled(() => days.allTextContents(), expected)).toEqual(expected)
		await page.context().close()
	}, 60_000)
})

describe("a refused field, in the form's words", () => {
	it('should tell someone signing up what is wrong with the username, not the schema', async () => {
		await app.admin('/api/settings', { method: 'PATCH', body: { signup_enabled: true } })
		const { context, page } = await newPage(browser, { baseURL: app.url })
		await page.goto('/console')
		await page.getByRole('button', { name: 'Create an account' }).click()
		await page.getByLabel('Username').fill('ab')
		await page.getByLabel('Password').fill('long-enough-password')
		await page.getByRole('button', { name: 'Create account' }).click()
		const alert = page.getByRole('alert')
		await alert.waitFor()
		expect(await alert.textContent()).toBe('Username: at least 3 characters')
		await context.close()
	}, 60_000)

	it("should name a channel's priority beyond the largest the gateway stores", async () => {
		const page = await signedIn()
		await page.getByRole('link', { name: 'Channels' }).click()
		await page.getByRole('button', { name: 'New channel' }).click()
		const dialog = page.getByRole('dialog', { name: 'New channel' })
		await dialog.getByLabel('Name').fill('extra')
		await dialog.getByLabel('Base URL').fill('http://127.0.0.1:9/v1')
		await dialog.getByLabel('API key').fill('up-key')
		await dialog.getByLabel('Models').fill('m-audit')
		await dialog.getByLabel('Priority').fill('99999999999')
		await dialog.getByRole('button', { name: 'Create channel' }).click()
		const alert = dialog.getByRole('alert')
		await alert.waitFor()
		expect(await alert.textContent()).toBe('Priority: at most 2,147,483,647')
		await page.context().close()
	}, 60_000)
})

describe('self sign-up, opened or closed while an administrator is signed in', () => {
	// The sign-in page showed "Create an account" by what the session said when the console loaded, so after opening
	// sign-up in Settings and signing out it was missing until a reload (and, closed meanwhile, offered a refusal).
	it('should show the sign-in page as sign-up is now, once signed out', async () => {
		await app.admin('/api/settings', { method: 'PATCH', body: { signup_enabled: false } })
		const page = await signedIn()
		const offer = page.getByRole('button', { name: 'Create an account' })
		await page.getByRole('link', { name: 'Settings' }).click()
		await page.getByLabel('Allow self sign-up').check()
		await page.getByRole('button', { name: 'Save settings' }).click()
		await page.getByText('Settings saved').waitFor()
		await page.getByRole('button', { name: 'Sign out' }).click()
		await page.getByLabel('Username').waitFor()
		expect(await settled(() => offer.isVisible(), true)).toBe(true)

		await signIn(page, 'admin', ADMIN_PASSWORD)
		await page.getByRole('heading', { name: 'Tokens' }).waitFor()
		await app.admin('/api/settings', { method: 'PATCH', body: { signup_enabled: false } })
		await page.getByRole('button', { name: 'Sign out' }).click()
		await page.getByLabel('Username').waitFor()
		expect(await settled(() => offer.isVisible(), false)).toBe(false)
		await page.context().close()
	}, 60_000)
})

describe('a 375 px phone', () => {
	it("should keep the Models page's protocol chips inside their card", async () => {
		const { context, page } = await newPage(browser, { baseURL: app.url, phone: true })
		await page.setViewportSize({ width: 375, height: 812 })
		await signIn(page, 'admin', ADMIN_PASSWORD)
		await page.getByRole('heading', { name: 'Tokens' }).waitFor()
		await page.getByRole('link', { name: 'Models' }).click()
		await page.locator('tr', { hasText: 'm-audit' }).getByText('OpenAI Chat Completions').waitFor()
		// At 375 px (an iPhone SE or mini) "OpenAI Chat Completions" ran 14 px past the card's edge, cut off.
		const out = await page.evaluate(() => {
			const wrap = document.querySelector('.table-wrap')!
			const edge = wrap.getBoundingClientRect().right
			return { sideways: wrap.scrollWidth - wrap.clientWidth, chipsPastEdge: [...wrap.querySelectorAll('.chip')].filter((c) => c.getBoundingClientRect().right > edge + 0.5).length }
		})
		expect(out).toEqual({ sideways: 0, chipsPastEdge: 0 })
		await shot(page, 'phone-375-models')
		await context.close()
	}, 60_000)
})

describe('Channels', () => {
	it('should say a channel test got no answer, not "HTTP 0"', async () => {
		const page = await signedIn()
		await page.getByRole('link', { name: 'Channels' }).click()
		const row = page.locator('tr[data-channel="audit"]')
		await row.getByRole('button', { name: 'Test audit' }).click()
		const result = row.locator('.test-result.bad')
		await result.waitFor()
		// Nothing listens on port 9: the connection is refused, there is no HTTP status to show.
		const text = (await result.textContent()) ?? ''
		expect(text).not.toContain('HTTP 0')
		expect(text).toMatch(/^Failed: no answer after \d+ ms with m-audit — cannot reach upstream/)
		await page.context().close()
	}, 60_000)
})
