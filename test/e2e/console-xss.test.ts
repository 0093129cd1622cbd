/**
 * Stored XSS: every name a user or a request controls (key, account, user and channel names, model names and the
 * usage rows' model and endpoint) carries a script payload, and every console page that shows it is opened in
 * Chromium. Nothing may run: the payload must show as text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Browser } from 'playwright-core'
import { startOpenAIMock } from '../mocks'
import { ADMIN_PASSWORD, type ConsoleApp, startConsoleApp } from '../unit/console/console-app'
import { launch, newPage, signIn } from './browser'

const PAYLOAD = `<img src=x onerror="window.__xss=(window.__xss||0)+1"><script>window.__xss=(window.__xss||0)+1</script>"'><svg onload="window.__xss=1">`
/** Model names are plainer (the price list takes letters, digits and some punctuation): the nastiest it accepts. */
const MODEL = `m<b>"'&x`

type Mock = Awaited<ReturnType<typeof startOpenAIMock>>
let mock: Mock
let app: ConsoleApp
let browser: Browser

beforeAll(async () => {
	mock = await startOpenAIMock({ apiKey: 'up-key' })
	app = await startConsoleApp({ config: { channels: [], models: [] } })
	browser = await launch()
	const ch = await app.admin('/api/channels', { body: { name: PAYLOAD.slice(0, 100), type: 'openai', base_url: mock.url, api_key: 'up-key', models: ['gpt-4o-mini', MODEL] } })
	if (ch.status !== 201) console.warn('channel with a payload name refused:', ch.status, JSON.stringify(ch.body).slice(0, 200))
	const model = await app.admin('/api/models', { body: { name: MODEL, input_per_mtok: 1, output_per_mtok: 2 } })
	if (model.status !== 201) console.warn('model with markup refused:', model.status, JSON.stringify(model.body).slice(0, 200))
	await app.admin('/api/models', { body: { name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 } })
	const acct = await app.admin('/api/accounts', { body: { name: PAYLOAD, balance: 5 } })
	const tok = await app.admin('/api/tokens', { body: { account_id: acct.body.id, name: PAYLOAD } })
	await app.admin('/api/users', { body: { username: 'xss-user', password: 'xss-password-1', account_id: acct.body.id } })
	// A usage row whose model came from the request.
	await fetch(`${app.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${tok.body.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: PAYLOAD }] }) })
	await app.svc.ledger.flush()
}, 180_000)

afterAll(async () => {
	await browser?.close()
	await app?.close()
	await mock?.stop()
})

describe('stored names in the console', () => {
	for (const [who, user, password, pages] of [
		['the administrator', 'admin', ADMIN_PASSWORD, ['/console/tokens', '/console/usage', '/console/models', '/console/account', '/console/admin/accounts', '/console/admin/users', '/console/admin/channels', '/console/admin/prices', '/console/admin/settings']],
		['the account holder', 'xss-user', 'xss-password-1', ['/console/tokens', '/console/usage', '/console/models', '/console/account']],
	] as const)
		// The two users at once, each in a browser context of its own (nothing shared but what beforeAll stored): each
		// page waits for the network to stay idle 500 ms, and those waits need not add up.
		it.concurrent(`should show every payload as text to ${who}`, async () => {
			const { context, page } = await newPage(browser, { baseURL: app.url })
			const dialogs: string[] = []
			page.on('dialog', (d) => {
				dialogs.push(d.message())
				void d.dismiss()
			})
			await signIn(page, user, password)
			await page.waitForURL(/\/console\/tokens/)
			for (const path of pages) {
				await page.goto(path)
				await page.waitForLoadState('networkidle')
				expect({ path, xss: await page.evaluate(() => (window as unknown as { __xss?: number }).__xss ?? 0) }).toEqual({ path, xss: 0 })
				expect({ path, injected: await page.locator('main img[src="x"], main svg[onload], main script').count() }).toEqual({ path, injected: 0 })
			}
			// The payload is there as text where it was stored (the admin's account list, the holder's account page).
			await page.goto(user === 'admin' ? '/console/admin/accounts' : '/console/tokens')
			await page.waitForLoadState('networkidle')
			expect(await page.locator('main').innerText()).toContain('<img src=x onerror=')
			expect(dialogs).toEqual([])
			await context.close()
		}, 120_000)

	it('should escape model names on the public pricing page', async () => {
		const { context, page } = await newPage(browser, { baseURL: app.url })
		await page.goto('/pricing')
		expect(await page.locator('main b').count()).toBe(0)
		expect(await page.locator('main').innerText()).toContain(MODEL)
		await context.close()
	}, 60_000)
})
