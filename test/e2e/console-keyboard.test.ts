/**
 * The console for keyboard and small-screen users in a real browser (Chromium): focus goes back to what opened a
 * dialog, and to the page after sign-in or to the list after a deleted row (never to <body>); a focus ring that can be
 * seen, sign-out that leaves the page, dates that do not break inside, and the current page visible in the phone's
 * navigation strip.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { ADMIN_PASSWORD, type ConsoleApp, startConsoleApp } from '../unit/console/console-app'
import { launch, newPage, shot, signIn } from './browser'

let app: ConsoleApp
let browser: Browser

beforeAll(async () => {
	app = await startConsoleApp()
	browser = await launch()
	const me = (await app.admin('/api/users')).body.data.find((u: { username: string }) => u.username === 'admin')
	const expires = new Date(Date.now() + 30 * 86_400_000).toISOString()
	for (const name of ['laptop', 'a token with a long name for the continuous integration of the billing service', 'another long token name used by the nightly export of usage to the warehouse'])
		await app.admin('/api/tokens', { body: { account_id: me.account_id, name, expires_at: expires } })
	await app.admin('/api/users', { body: { username: 'carol', password: 'carol-password' } })
}, 180_000)

afterAll(async () => {
	await browser?.close()
	await app?.close()
})

async function signedIn(opts: { phone?: boolean; width?: number } = {}): Promise<Page> {
	const { page } = await newPage(browser, { baseURL: app.url, phone: opts.phone })
	if (opts.width) await page.setViewportSize({ width: opts.width, height: 900 })
	await signIn(page, 'admin', ADMIN_PASSWORD)
	await page.getByRole('heading', { name: 'Tokens' }).waitFor()
	return page
}

const focused = (page: Page) => page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent?.trim() ?? '')

describe('dialogs and focus', () => {
	it('should give focus back to the button that opened a dialog when it closes', async () => {
		const page = await signedIn()
		const edit = page.getByRole('button', { name: 'Edit laptop' })
		await edit.focus()
		await page.keyboard.press('Enter')
		const dialog = page.getByRole('dialog', { name: 'Edit “laptop”' })
		await dialog.waitFor()
		await page.keyboard.press('Escape')
		await dialog.waitFor({ state: 'detached' })
		expect(await focused(page)).toBe('Edit laptop')
		await page.context().close()
	}, 60_000)

	it('should focus the new key in "Token created", then give focus back to Create token', async () => {
		const page = await signedIn()
		await page.getByRole('button', { name: 'Create token' }).focus()
		await page.keyboard.press('Enter')
		const create = page.getByRole('dialog', { name: 'Create token' })
		await create.getByLabel('Name').fill('focus-key')
		await page.keyboard.press('Enter')
		const created = page.getByRole('dialog', { name: 'Token created' })
		await created.waitFor()
		expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('new-key')
		await created.getByRole('button', { name: 'Done' }).click()
		await created.waitFor({ state: 'detached' })
		expect(await focused(page)).toBe('Create token')
		await page.context().close()
	}, 60_000)

	it('should put focus on the page once signed in, not leave it on <body> where the sign-in form was', async () => {
		const { page } = await newPage(browser, { baseURL: app.url })
		await signIn(page, 'carol', 'carol-password')
		await page.getByRole('heading', { name: 'Tokens' }).waitFor()
		expect(await page.evaluate(() => document.activeElement?.id)).toBe('main')
		// Without a ring drawn around the whole page.
		expect(await page.evaluate(() => getComputedStyle(document.activeElement!).boxShadow)).toBe('none')
		// The next Tab reaches the page's own first control, not the skip link and the whole top bar again.
		await page.keyboard.press('Tab')
		expect(await focused(page)).toBe('Create token')
		await page.context().close()
	}, 60_000)

	it('should keep focus in the list when the row whose Delete was pressed goes away', async () => {
		const me = (await app.admin('/api/users')).body.data.find((u: { username: string }) => u.username === 'admin')
		await app.admin('/api/tokens', { body: { account_id: me.account_id, name: 'short-lived' } })
		const page = await signedIn()
		await page.getByRole('button', { name: 'Delete short-lived' }).focus()
		await page.keyboard.press('Enter')
		const dialog = page.getByRole('dialog', { name: 'Delete token?' })
		await dialog.getByRole('button', { name: 'Delete token' }).focus()
		await page.keyboard.press('Enter')
		await dialog.waitFor({ state: 'detached' })
		await page.locator('tr[data-token="short-lived"]').waitFor({ state: 'detached' })
		// Not dropped to <body>, where the next Tab starts again at the skip link.
		expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Tokens')
		// Seen: the ring is drawn inside the table, which its scrolling wrapper would clip outside.
		expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineOffset)).toBe('-2px')
		await shot(page, 'focus-after-delete')
		await page.keyboard.press('Tab')
		expect(await page.evaluate(() => Boolean(document.activeElement?.closest('table[aria-label="Tokens"]')))).toBe(true)
		await page.context().close()
	}, 60_000)
})

/** WCAG relative luminance of an sRGB colour. */
const luminance = ([r, g, b]: number[]) => {
	const c = [r, g, b].map((v) => {
		const s = v! / 255
		return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4
	})
	return 0.2126 * c[0]! + 0.7152 * c[1]! + 0.0722 * c[2]!
}
const contrast = (a: number[], b: number[]) => {
	const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x)
	return (hi! + 0.05) / (lo! + 0.05)
}
const rgba = (css: string) => (css.match(/[\d.]+/g) ?? []).map(Number)
/** `fg` with its alpha laid over the opaque `bg`. */
const over = (fg: number[], bg: number[]) => [0, 1, 2].map((i) => fg[i]! * (fg[3] ?? 1) + bg[i]! * (1 - (fg[3] ?? 1)))

describe('focus ring', () => {
	for (const scheme of ['light', 'dark'] as const) {
		it(`should contrast at least 3:1 with the page and the cards (${scheme})`, async () => {
			const page = await signedIn()
			await page.emulateMedia({ colorScheme: scheme })
			await page.keyboard.press('Tab')
			for (const name of ['Sign out', 'Create token']) {
				await page.getByRole('button', { name }).focus()
				const seen = await page.evaluate(() => {
					const el = document.activeElement!
					const root = getComputedStyle(document.documentElement)
					return { visible: el.matches(':focus-visible'), shadow: getComputedStyle(el).boxShadow, bg: getComputedStyle(document.body).backgroundColor, surface: root.getPropertyValue('--surface').trim() }
				})
				expect(seen.visible).toBe(true)
				// The ring is the widest shadow: "<colour> 0px 0px 0px <spread>", drawn outside the others.
				const shadows = seen.shadow.split(/,(?![^(]*\))/).map((s) => ({ color: s.match(/rgba?\([^)]*\)/)?.[0] ?? '', spread: Number(s.trim().split(/\s+/).at(-1)!.replace('px', '')) }))
				const ring = shadows.sort((a, b) => b.spread - a.spread)[0]!
				const surface = await page.evaluate((c) => {
					const probe = document.createElement('div')
					probe.style.color = c
					document.body.append(probe)
					const out = getComputedStyle(probe).color
					probe.remove()
					return out
				}, seen.surface)
				for (const bg of [rgba(seen.bg), rgba(surface)]) expect(contrast(over(rgba(ring.color), bg), bg)).toBeGreaterThanOrEqual(3)
			}
			await shot(page, `focus-ring-${scheme}`)
			await page.context().close()
		}, 60_000)
	}
})

describe('signing out', () => {
	it('should leave the page it was on, so the next user signs in to their own Tokens page', async () => {
		const page = await signedIn()
		await page.getByRole('link', { name: 'Users' }).click()
		await page.locator('main h1', { hasText: 'Users' }).waitFor()
		await page.getByRole('button', { name: 'Sign out' }).click()
		await page.getByLabel('Username').waitFor()
		expect(new URL(page.url()).pathname).toBe('/console')
		await page.getByLabel('Username').fill('carol')
		await page.getByLabel('Password').fill('carol-password')
		await page.getByLabel('Password').press('Enter')
		await page.getByRole('heading', { name: 'Tokens' }).waitFor()
		expect(new URL(page.url()).pathname).toBe('/console/tokens')
		expect(await page.getByText('This page is for administrators.').count()).toBe(0)
		await page.context().close()
	}, 60_000)
})

describe('tables', () => {
	it('should never break a date inside itself, only between date and time', async () => {
		const page = await signedIn({ width: 900 })
		const cells = page.locator('td[data-label="Created"], td[data-label="Expires"]')
		await cells.first().waitFor()
		// The lines the first 10 characters (YYYY-MM-DD) of each dated cell are laid out on ("Never" has none).
		const lines = await cells.evaluateAll((tds) =>
			tds.map((td) => {
				if (!/^\d{4}-\d\d-\d\d /.test(td.textContent ?? '')) return 1
				const text = document.createTreeWalker(td, NodeFilter.SHOW_TEXT).nextNode()!
				const range = document.createRange()
				range.setStart(text, 0)
				range.setEnd(text, 10)
				return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size
			}),
		)
		expect(lines.length).toBeGreaterThanOrEqual(6)
		expect(lines).toEqual(lines.map(() => 1))
		await shot(page, 'tokens-narrow-dates')
		await page.context().close()
	}, 60_000)
})

describe('phone navigation', () => {
	it('should scroll the current page into the navigation strip', async () => {
		const page = await signedIn({ phone: true })
		await page.goto('/console/admin/settings')
		await page.locator('main h1', { hasText: 'Settings' }).waitFor()
		const inView = () => {
			const nav = document.querySelector('nav.sidenav')!.getBoundingClientRect()
			const item = document.querySelector('nav.sidenav [aria-current="page"]')!.getBoundingClientRect()
			return item.left >= Math.max(0, nav.left) && item.right <= Math.min(innerWidth, nav.right)
		}
		// The strip scrolls in an effect after the first paint.
		await page.waitForFunction(inView, null, { timeout: 5_000 }).catch(() => {})
		const box = await page.evaluate(() => {
			const nav = document.querySelector('nav.sidenav')!.getBoundingClientRect()
			const item = document.querySelector('nav.sidenav [aria-current="page"]')!.getBoundingClientRect()
			return { left: item.left, right: item.right, navLeft: nav.left, navRight: nav.right, width: innerWidth }
		})
		expect(box.left).toBeGreaterThanOrEqual(Math.max(0, box.navLeft))
		expect(box.right).toBeLessThanOrEqual(Math.min(box.width, box.navRight))
		await shot(page, 'phone-nav-settings')
		await page.context().close()
	}, 60_000)
})
