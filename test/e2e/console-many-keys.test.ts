/**
 * A team member with many keys, in a real browser: the Tokens page finds a key by its name, by the end of its key or
 * by the whole key pasted in, a page at a time; two keys of one name are told apart on the Usage page (calls made
 * with the `openai` and `@anthropic-ai/sdk` clients); a tab left open while another tab signs in as someone else
 * follows that sign-in instead of showing one user's console over another's session.
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
		expect(await tokenRows(page).first().getAttribute('data-token')).toBe('svc-034')
		await pager.getByRole('button', { name: 'Older →' }).click()
		expect(await rowCount(page, 10)).toBe(10)
		expect(await pager.getByRole('button', { name: 'Older →' }).isDisabled()).toBe(true)
		await shot(page, 'tokens-many-page-3')

		// A search starts again at its first page.
		const search = page.getByRole('searchbox', { name: 'Search keys' })
		await search.fill('svc-0')
		await pager.getByText('Page 1 of 3').waitFor()
		expect(await rowCount(page, 25)).toBe(25)
		await search.fill('SVC-042')
		expect(await rowCount(page, 1)).toBe(1)
		expect(await tokenRows(page).first().getAttribute('data-token')).toBe('svc-042')

		// "Which of my keys is this?": the whole key, or the last characters the list shows.
		const k17 = keys.get('svc-017')!
		await search.fill(k17.key)
		expect(await rowCount(page, 1)).toBe(1)
		expect(await tokenRows(page).first().getAttribute('data-token')).toBe('svc-017')
		await search.fill(k17.hint.slice(-4))
		expect(await tokenRows(page).locator('[data-testid="token-key"]').allTextContents()).toContain(k17.hint)

		await search.fill('no-such-key')
		expect(await rowCount(page, 0)).toBe(0)
		expect(await page.getByText('No key matches “no-such-key”.').isVisible()).toBe(true)
		expect(await pager.count()).toBe(0)
		await context.close()
	}, 90_000)
})
