/**
 * Chromium for the console's browser tests: Debian's /usr/bin/chromium driven by playwright-core (no browser
 * download). Screenshots go to test-output/screenshots/ (git-ignored).
 */
import { mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { type Browser, type BrowserContext, type Page, chromium } from 'playwright-core'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

export const SCREENSHOTS = fileURLToPath(new URL('../../test-output/screenshots/', import.meta.url))

export async function launch(): Promise<Browser> {
	if (!(await Bun.file(CHROMIUM).exists())) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium), as .ci/run does`)
	mkdirSync(SCREENSHOTS, { recursive: true })
	return chromium.launch({
		executablePath: CHROMIUM,
		headless: true,
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
	})
}

export async function newPage(browser: Browser, opts: { baseURL: string; phone?: boolean; javaScript?: boolean; clipboard?: boolean; timezoneId?: string }): Promise<{ context: BrowserContext; page: Page }> {
	const context = await browser.newContext({
		baseURL: opts.baseURL,
		viewport: opts.phone ? { width: 390, height: 844 } : { width: 1360, height: 900 },
		deviceScaleFactor: 1,
		isMobile: opts.phone ?? false,
		hasTouch: opts.phone ?? false,
		javaScriptEnabled: opts.javaScript ?? true,
		colorScheme: 'light',
		locale: 'en-US',
		timezoneId: opts.timezoneId ?? 'UTC',
	})
	if (opts.clipboard) await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: opts.baseURL })
	// Generous: on a loaded 2-core CI machine a page action can take several seconds.
	context.setDefaultTimeout(30_000)
	const page = await context.newPage()
	return { context, page }
}

export const shot = (page: Page, name: string) => page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true })

/** Signs in through the form, pressing Enter in the password field (keyboard use). */
export async function signIn(page: Page, username: string, password: string) {
	await page.goto('/console')
	await page.getByLabel('Username').fill(username)
	await page.getByLabel('Password').fill(password)
	await page.getByLabel('Password').press('Enter')
}

/** The balance shown in the top bar, as a number of USD. */
export async function shownBalance(page: Page): Promise<number> {
	const text = (await page.getByTestId('balance').textContent()) ?? ''
	return Number(text.replace(/[$,]/g, ''))
}

/**
 * What `read` gives once it equals `expected`, or its last reading after `timeoutMs`: for a figure the page fills from
 * a request of its own, after whatever the test waited for (the caller still asserts, so a wrong value fails).
 */
export async function settled<T>(read: () => Promise<T>, expected: T, timeoutMs = 10_000): Promise<T> {
	const until = Date.now() + timeoutMs
	for (;;) {
		const got = await read()
		if (Bun.deepEquals(got, expected) || Date.now() > until) return got
		await Bun.sleep(50)
	}
}
