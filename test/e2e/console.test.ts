/**
 * The web console in a real browser (Chromium): sign-in, tokens (create with a limit, reveal, copy, delete), a
 * chat call with the copied key against a mock vendor, usage and balance, administration, account isolation and
 * the public pricing page. Saves screenshots of the main pages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { startOpenAIMock } from '../mocks'
import { ADMIN_PASSWORD, type ConsoleApp, startConsoleApp } from '../unit/console/console-app'
import { launch, newPage, shot, shownBalance, signIn } from './browser'

type Mock = Awaited<ReturnType<typeof startOpenAIMock>>

let mock: Mock
let app: ConsoleApp
let browser: Browser
let bobToken: number
let bobAccount: number

const chat = (key: string) =>
	fetch(`${app.url}/v1/chat/completions`, {
		method: 'POST',
		headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
		body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello from the console test' }] }),
	})

beforeAll(async () => {
	mock = await startOpenAIMock({ apiKey: 'up-key' })
	app = await startConsoleApp({
		config: {
			channels: [{ name: 'mock', type: 'openai', base_url: mock.url, api_key: 'up-key', models: ['gpt-4o-mini'] }],
			models: [{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 }],
		},
	})
	browser = await launch()
	// Bob is another customer; his key must stay invisible to Alice.
	const bob = await app.admin('/api/users', { body: { username: 'bob', password: 'bob-password' } })
	bobAccount = bob.body.account_id
	bobToken = (await app.admin('/api/tokens', { body: { account_id: bobAccount, name: 'bob-secret' } })).body.id
}, 180_000)

afterAll(async () => {
	await browser?.close()
	await app?.close()
	await mock?.stop()
})

describe('public pricing page', () => {
	it('should render without signing in and without JavaScript', async () => {
		const { context, page } = await newPage(browser, { baseURL: app.url, javaScript: false })
		await page.goto('/pricing')
		await expect(page.getByRole('heading', { name: 'Models and prices' }).isVisible()).resolves.toBe(true)
		const row = page.locator('tr', { hasText: 'gpt-4o-mini' })
		expect(await row.textContent()).toContain('$1.00')
		expect(await row.textContent()).toContain('$2.00')
		expect(await row.textContent()).toContain('POST /v1/chat/completions')
		await shot(page, 'pricing')
		await context.close()
	}, 60_000)
})

describe('sign-in', () => {
	it('should refuse a wrong password and say so', async () => {
		const { context, page } = await newPage(browser, { baseURL: app.url })
		// The answer first, then what the page makes of it: a run that stalls says at which of the two.
		const answered = page.waitForResponse((r) => r.url().endsWith('/api/session') && r.request().method() === 'POST')
		await signIn(page, 'admin', 'not-the-password')
		expect((await answered).status()).toBe(401)
		const alert = page.getByRole('alert')
		await alert.waitFor()
		expect(await alert.textContent()).toContain('Wrong username or password')
		expect(await page.getByTestId('balance').count()).toBe(0)
		await shot(page, 'sign-in-error')
		await context.close()
	}, 60_000)
})

describe('administration', () => {
	let page: Page

	beforeAll(async () => {
		page = (await newPage(browser, { baseURL: app.url })).page
		await signIn(page, 'admin', ADMIN_PASSWORD)
		await page.getByRole('heading', { name: 'Tokens' }).waitFor()
	}, 60_000)
	afterAll(() => page.context().close())

	it('should create a user in a new account', async () => {
		await page.getByRole('link', { name: 'Users' }).click()
		await page.getByRole('button', { name: 'New user' }).click()
		const dialog = page.getByRole('dialog', { name: 'New user' })
		await dialog.getByLabel('Username').fill('alice')
		await dialog.getByLabel('Password').fill('alice-password')
		await dialog.getByLabel('Account name').fill('Alice Labs')
		await dialog.getByRole('button', { name: 'Create user' }).click()
		await page.locator('tr[data-user="alice"]').waitFor()
		expect(await page.locator('tr[data-user="alice"]').textContent()).toContain('Alice Labs')
		await shot(page, 'admin-users')
	}, 60_000)

	it('should credit the new account', async () => {
		await page.getByRole('link', { name: 'Accounts' }).click()
		await page.getByRole('button', { name: 'Credit Alice Labs' }).click()
		const dialog = page.getByRole('dialog', { name: 'Credit “Alice Labs”' })
		await dialog.getByLabel('Amount (USD)').fill('5')
		await dialog.getByLabel('Note').fill('welcome credit')
		await dialog.getByRole('button', { name: 'Credit account' }).click()
		await dialog.waitFor({ state: 'detached' })
		await page.locator('tr[data-account="Alice Labs"]', { hasText: '$5.00' }).waitFor()
		await shot(page, 'admin-accounts')
	}, 60_000)

	it('should show an error in words when a credit is invalid', async () => {
		await page.getByRole('button', { name: 'Credit Alice Labs' }).click()
		const dialog = page.getByRole('dialog', { name: 'Credit “Alice Labs”' })
		await dialog.waitFor()
		await dialog.getByLabel('Amount (USD)').fill('-500')
		await dialog.getByRole('button', { name: 'Credit account' }).click()
		const alert = dialog.getByRole('alert')
		await alert.waitFor()
		expect(await alert.textContent()).toContain('below zero')
		await dialog.press('Escape')
		await dialog.waitFor({ state: 'detached' })
	}, 60_000)

	it('should test a channel and show the result', async () => {
		await page.getByRole('link', { name: 'Channels' }).click()
		await page.getByRole('button', { name: 'Test mock' }).click()
		const result = page.locator('tr[data-channel="mock"] .test-result:not(:has(.spinner))')
		await result.waitFor()
		// A real one-token call through POST /api/channels/:id/test to the mock vendor.
		expect(await result.textContent()).toMatch(/^Works: HTTP 200 in \d+ ms with gpt-4o-mini/)
		expect(await page.locator('tr[data-channel="mock"]').textContent()).toContain('healthy')
		await shot(page, 'admin-channels')
	}, 60_000)

	it('should show a failing channel test in words', async () => {
		mock.faultOnce = { kind: 'status', status: 401 }
		await page.getByRole('button', { name: 'Test mock' }).click()
		const result = page.locator('tr[data-channel="mock"] .test-result.bad')
		await result.waitFor()
		expect(await result.textContent()).toMatch(/^(Failed|Test failed): .*401/)
	}, 60_000)

	it("should show the chosen vendor's base URL form, and keep password managers out of the upstream key", async () => {
		await page.getByRole('button', { name: 'New channel' }).click()
		const dialog = page.getByRole('dialog', { name: 'New channel' })
		const url = dialog.getByLabel('Base URL')
		expect(await url.getAttribute('placeholder')).toBe('https://api.openai.com/v1')
		await dialog.getByLabel('Type').selectOption('anthropic')
		expect(await url.getAttribute('placeholder')).toBe('https://api.anthropic.com')
		expect(await dialog.getByText('Without /v1.').isVisible()).toBe(true)
		expect(await dialog.getByLabel('API key').getAttribute('autocomplete')).toBe('new-password')
		await dialog.press('Escape')
		await dialog.waitFor({ state: 'detached' })
	}, 60_000)

	it("should edit a channel's settings as JSON, saying in words what the gateway refuses", async () => {
		await page.getByRole('button', { name: 'Edit mock' }).click()
		const dialog = page.getByRole('dialog', { name: 'Edit channel “mock”' })
		const field = dialog.getByLabel('Settings')
		const save = async (text: string) => {
			await field.fill(text)
			await dialog.getByRole('button', { name: 'Save' }).click()
		}
		await save('{"timeouts": 5')
		await dialog.getByRole('alert').filter({ hasText: 'Settings must be JSON' }).waitFor()
		// The management API's check (config/channel-settings.ts) names the misspelt key.
		await save('{"timeoutz": {"first_byte_ms": 5000}}')
		await dialog.getByRole('alert').filter({ hasText: 'timeoutz' }).waitFor()
		await save('{"timeouts": {"first_byte_ms": 60000}, "responses_api": false}')
		await dialog.waitFor({ state: 'detached' })
		const stored = (await app.admin('/api/channels')).body.data.find((c: { name: string }) => c.name === 'mock')
		expect(stored.settings).toEqual({ timeouts: { first_byte_ms: 60000 }, responses_api: false })
		// Shown again as it was saved, and cleared by emptying the field.
		await page.getByRole('button', { name: 'Edit mock' }).click()
		expect(JSON.parse(await field.inputValue())).toEqual(stored.settings)
		await save('')
		await dialog.waitFor({ state: 'detached' })
		expect((await app.admin('/api/channels')).body.data.find((c: { name: string }) => c.name === 'mock').settings).toEqual({})
	}, 60_000)

	it('should list the model prices', async () => {
		await page.getByRole('link', { name: 'Prices' }).click()
		await page.locator('tr[data-model="gpt-4o-mini"]').waitFor()
		await shot(page, 'admin-prices')
	}, 60_000)
})

describe('a user’s tokens, calls and usage', () => {
	let page: Page
	let key = ''

	beforeAll(async () => {
		page = (await newPage(browser, { baseURL: app.url, clipboard: true })).page
		await signIn(page, 'alice', 'alice-password')
		await page.getByRole('heading', { name: 'Tokens' }).waitFor()
	}, 60_000)
	afterAll(() => page.context().close())

	it('should show the balance credited by the administrator', async () => {
		expect(await shownBalance(page)).toBe(5)
		await shot(page, 'tokens-empty')
	})

	it('should create a token with a spend limit and show the full key once created', async () => {
		await page.getByRole('button', { name: 'Create token' }).first().click()
		const dialog = page.getByRole('dialog', { name: 'Create token' })
		await dialog.getByLabel('Name').fill('ci-key')
		expect(await dialog.getByLabel('Expires').inputValue()).toBe('never')
		await dialog.getByLabel('Spend limit (USD)').fill('1')
		await dialog.getByRole('button', { name: 'Create token' }).click()
		const created = page.getByRole('dialog', { name: 'Token created' })
		key = await created.getByTestId('new-key').inputValue()
		expect(key).toMatch(/^sk-[A-Za-z0-9]{48}$/)
		await shot(page, 'token-created')
		await created.getByRole('button', { name: 'Done' }).click()
		const row = page.locator('tr[data-token="ci-key"]')
		await row.waitFor()
		expect(await row.textContent()).toContain('$1.00')
		expect(await row.getByTestId('token-key').textContent()).not.toBe(key)
	}, 60_000)

	it('should reveal the key with the eye icon and copy it to the clipboard', async () => {
		const row = page.locator('tr[data-token="ci-key"]')
		await row.getByRole('button', { name: 'Show key of ci-key' }).click()
		await row.locator('.key-full').waitFor()
		expect(await row.getByTestId('token-key').textContent()).toBe(key)
		await row.getByRole('button', { name: 'Copy key of ci-key' }).click()
		expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key)
		await shot(page, 'tokens')
	}, 60_000)

	it('should not show another account’s tokens, nor let the session reach them', async () => {
		expect(await page.locator('tr[data-token="bob-secret"]').count()).toBe(0)
		const probe = await page.evaluate(
			async ([id, acc]) => {
				const one = await fetch(`/api/tokens/${id}`)
				const list = (await (await fetch(`/api/tokens?account_id=${acc}`)).json()) as { data: Array<{ name: string }> }
				return { one: one.status, names: list.data.map((t) => t.name) }
			},
			[bobToken, bobAccount],
		)
		expect(probe).toEqual({ one: 404, names: ['ci-key'] })
	}, 60_000)

	it('should serve a chat call made with the copied key, then show it in Usage with the balance lower', async () => {
		const copied = await page.evaluate(() => navigator.clipboard.readText())
		const res = await chat(copied)
		expect(res.status).toBe(200)
		const body = (await res.json()) as { choices: Array<{ message: { content: string } }> }
		expect(body.choices[0]!.message.content).toContain('hello from the console test')

		await page.getByRole('link', { name: 'Usage' }).click()
		const row = page.locator('table[aria-label="Requests"] tbody tr', { hasText: 'gpt-4o-mini' })
		for (let i = 0; i < 20 && (await row.count()) === 0; i++) {
			await page.getByRole('button', { name: 'Refresh' }).click()
			await page.waitForTimeout(250)
		}
		await row.first().waitFor()
		const text = (await row.first().textContent()) ?? ''
		expect(text).toContain('ci-key')
		expect(text).toContain('/v1/chat/completions')
		expect(text).toContain('200')
		await page.locator('svg[role="img"] rect.chart-bar').first().waitFor()
		const balance = await shownBalance(page)
		expect(balance).toBeLessThan(5)
		expect(balance).toBeGreaterThan(4.99)
		await shot(page, 'usage')
	}, 60_000)

	it('should filter usage by key and page through it', async () => {
		await page.getByLabel('Key').selectOption({ label: 'ci-key' })
		await page.locator('table[aria-label="Requests"] tbody tr').first().waitFor()
		// One request: one page, so no pager buttons (as on the Tokens page).
		expect(await page.getByRole('button', { name: '← Newer' }).count()).toBe(0)
		expect(await page.getByRole('button', { name: 'Older →' }).count()).toBe(0)
		await page.getByLabel('Model').fill('no-such-model')
		await page.getByText('No requests match these filters.').waitFor()
		await page.getByLabel('Model').fill('')
	}, 60_000)

	it('should list the models with prices and endpoints', async () => {
		await page.getByRole('link', { name: 'Models' }).click()
		const row = page.locator('tr', { hasText: 'gpt-4o-mini' })
		await row.waitFor()
		expect(await row.textContent()).toContain('Anthropic Messages')
		await shot(page, 'models')
	}, 60_000)

	it('should delete the token after confirmation, and the same call is then refused', async () => {
		await page.getByRole('link', { name: 'Tokens' }).click()
		const row = page.locator('tr[data-token="ci-key"]')
		await row.getByRole('button', { name: 'Delete ci-key' }).click()
		const confirm = page.getByRole('dialog', { name: 'Delete token?' })
		expect(await confirm.textContent()).toContain('cannot be undone')
		await shot(page, 'token-delete-confirm')
		await confirm.getByRole('button', { name: 'Delete token' }).click()
		await row.waitFor({ state: 'detached' })
		const res = await chat(key)
		expect(res.status).toBe(401)
	}, 60_000)

	it('should close a dialog with Escape (keyboard use)', async () => {
		await page.getByRole('button', { name: 'Create token' }).first().click()
		const dialog = page.getByRole('dialog', { name: 'Create token' })
		await dialog.waitFor()
		await page.keyboard.press('Escape')
		await dialog.waitFor({ state: 'detached' })
	}, 60_000)
})

describe('phone-width screen', () => {
	it('should fit the pages to 390 px without sideways scrolling', async () => {
		const users = await app.admin('/api/users')
		const alice = users.body.data.find((u: { username: string }) => u.username === 'alice')
		await app.admin('/api/tokens', { body: { account_id: alice.account_id, name: 'phone-key', spend_limit: 2, expires_at: new Date(Date.now() + 7 * 86_400_000).toISOString() } })
		const { context, page } = await newPage(browser, { baseURL: app.url, phone: true })
		await signIn(page, 'alice', 'alice-password')
		await page.getByRole('heading', { name: 'Tokens' }).waitFor()
		for (const [route, name] of [
			['/console/tokens', 'phone-tokens'],
			['/console/usage', 'phone-usage'],
			['/console/models', 'phone-models'],
		] as const) {
			await page.goto(route)
			await page.locator('main h1').waitFor()
			await page.waitForLoadState('networkidle')
			const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
			expect(overflow).toBeLessThanOrEqual(0)
			await shot(page, name)
		}
		await page.goto('/console')
		await context.close()
	}, 90_000)

	it('should render the sign-in page on a phone', async () => {
		const { context, page } = await newPage(browser, { baseURL: app.url, phone: true })
		await page.goto('/console')
		await page.getByLabel('Username').waitFor()
		await shot(page, 'phone-sign-in')
		await context.close()
	}, 60_000)
})
