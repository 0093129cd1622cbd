/**
 * The API documentation page (/docs) in a real browser: it renders every operation of the served OpenAPI document,
 * filters them, and loads nothing from another origin (the machine running it may have no internet).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Browser } from 'playwright-core'
import { startTestApp, type TestApp } from '../helpers/app'
import { launch, newPage } from './browser'

let app: TestApp
let browser: Browser

beforeAll(async () => {
	app = await startTestApp()
	browser = await launch()
}, 120_000)
afterAll(async () => {
	await browser?.close()
	await app?.close()
})

describe('/docs', () => {
	it('should list every operation of /docs/json, filter them, and request nothing from other origins', async () => {
		const doc = (await (await fetch(`${app.url}/docs/json`)).json()) as { paths: Record<string, Record<string, unknown>> }
		const count = (items: Record<string, unknown>[]) => items.reduce((n, item) => n + Object.keys(item).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m)).length, 0)
		const operations = count(Object.values(doc.paths))
		expect(operations).toBeGreaterThan(40)
		const { context, page } = await newPage(browser, { baseURL: app.url })
		const foreign: string[] = []
		page.on('request', (r) => {
			if (!r.url().startsWith(app.url)) foreign.push(r.url())
		})
		await page.goto('/docs')
		await page.locator('details').first().waitFor()
		expect(await page.locator('details').count()).toBe(operations)
		expect(await page.locator('#title').textContent()).toContain('Switchboard')

		await page.fill('#filter', '/v1/chat/completions')
		const visible = page.locator('details:not([hidden])')
		// Every operation under that path and below it (the stored completions' routes), and nothing else.
		const matching = Object.entries(doc.paths).filter(([path]) => path.includes('/v1/chat/completions'))
		expect(matching.length).toBeGreaterThan(1)
		expect(await visible.count()).toBe(count(matching.map(([, item]) => item)))
		const create = visible.filter({ hasText: 'Create a chat completion' })
		await create.locator('summary').click()
		const shown = await create.locator('.body').textContent()
		expect(shown).toContain('Request body · application/json')
		// The streamed answer's events are shown, not only the name of their schema.
		expect(shown).toContain('text/event-stream')
		expect(shown).toContain('"title": "ChatCompletionChunk"')
		expect(shown).toContain('"const": "chat.completion.chunk"')
		expect(foreign).toEqual([])
		await context.close()
	}, 60_000)

	it('should serve the committed OpenAPI document as it is', async () => {
		const res = await fetch(`${app.url}/docs/json`)
		expect(res.headers.get('content-type')).toContain('application/json')
		expect(await res.text()).toBe(await Bun.file(new URL('../../openapi/openapi.json', import.meta.url)).text())
	})
})
