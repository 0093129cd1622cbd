/**
 * The Channels page's Test of a channel that lists only patterns (QA of a fresh clone): with no priced model they
 * match, the server asks for the model to test as `{"model": "…"}`, which the console had no way to send, so the
 * administrator was told to do what the page could not. Now the page asks for the model and tests with it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Browser, Locator } from 'playwright-core'
import { startAnthropicMock, type VendorMock } from '../mocks'
import { ADMIN_PASSWORD, type ConsoleApp, startConsoleApp } from '../unit/console/console-app'
import { launch, newPage, shot, signIn } from './browser'

let mock: VendorMock
let app: ConsoleApp
let browser: Browser

beforeAll(async () => {
	mock = await startAnthropicMock({ apiKey: 'up-anthropic' })
	app = await startConsoleApp({
		config: { channels: [{ name: 'opus', type: 'anthropic', base_url: mock.url, api_key: 'up-anthropic', models: ['claude-opus-*'] }], models: [] },
	})
	browser = await launch()
}, 180_000)

afterAll(async () => {
	await browser?.close()
	await app?.close()
	await mock?.stop()
})

describe('Channels: Test of a channel of patterns', () => {
	it('should ask for the model to test when no priced model matches, then test with the one typed', async () => {
		const { page } = await newPage(browser, { baseURL: app.url })
		await signIn(page, 'admin', ADMIN_PASSWORD)
		await page.getByRole('heading', { name: 'Tokens' }).waitFor()
		await page.getByRole('link', { name: 'Channels' }).click()
		const row = page.locator('tr[data-channel="opus"]')
		await row.getByRole('button', { name: 'Test opus' }).click()
		const asked = row.getByLabel('Model to test')
		await asked.waitFor()
		expect(mock.requests.length).toBe(0)
		// In the page's words: nothing failed, and there is no request body to write `{"model": "…"}` in.
		expect(await row.locator('.test-result').textContent()).toBe('No priced model matches this channel’s patterns: name the model to test.')
		await shot(page, 'channel-test-ask-model')
		await asked.fill('claude-opus-5')
		await row.getByRole('button', { name: 'Test with this model' }).click()
		const result = row.locator('.test-result.good')
		await result.waitFor()
		expect(await result.textContent()).toStartWith('Works: HTTP 200')
		expect(await result.textContent()).toContain('claude-opus-5')
		expect(mock.requests.at(-1)!).toMatchObject({ path: '/v1/messages', body: { model: 'claude-opus-5', max_tokens: 1 } })
		await shot(page, 'channel-test-model')
		// QA (fresh clone): beside that result the row's origin read "from GATEWAY_CONFI" over "G". Each word of it
		// stays on one line (a variable's name may break after its underscores).
		const origin = row.locator('th .muted.small', { hasText: 'GATEWAY' })
		expect(await origin.textContent()).toBe('from GATEWAY_CONFIG')
		expect(await brokenWords(origin)).toEqual([])
		await page.context().close()
	}, 60_000)
})

/** The parts of an element's words (split at spaces and after underscores) that the browser broke over two lines. */
const brokenWords = (el: Locator) =>
	el.evaluate((root) => {
		const broken: string[] = []
		const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT)
		for (let n = walker.nextNode(); n; n = walker.nextNode()) {
			const text = n.textContent!
			for (const m of text.matchAll(/[^\s_]+_?/g)) {
				const range = document.createRange()
				range.setStart(n, m.index!)
				range.setEnd(n, m.index! + m[0].length)
				if (new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1) broken.push(m[0])
			}
		}
		return broken
	})
