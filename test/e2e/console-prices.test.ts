/**
 * The console's price dialog in a real browser (Chromium): removing prices by emptying a field or deleting a unit-price
 * line, errors that name the field or line, and a disabled price leaving the Models list.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Browser, Locator, Page } from 'playwright-core'
import { ADMIN_PASSWORD, type ConsoleApp, startConsoleApp } from '../unit/console/console-app'
import { launch, newPage, shot, signIn } from './browser'

let app: ConsoleApp
let browser: Browser
let page: Page

beforeAll(async () => {
	app = await startConsoleApp({
		config: {
			channels: [{ name: 'oa', type: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'k', models: ['gpt-4o-mini', 'gpt-4.1', 'gpt-realtime'] }],
			models: [
				{ name: 'gpt-4o-mini', input_per_mtok: 0.15, output_per_mtok: 0.6 },
				{ name: 'gpt-4.1', input_per_mtok: 2, output_per_mtok: 8 },
			],
		},
	})
	browser = await launch()
	page = (await newPage(browser, { baseURL: app.url })).page
	await signIn(page, 'admin', ADMIN_PASSWORD)
	await page.getByRole('heading', { name: 'Tokens' }).waitFor()
	await page.getByRole('link', { name: 'Prices' }).click()
	await page.locator('tr[data-model="gpt-4o-mini"]').waitFor()
}, 180_000)

afterAll(async () => {
	await browser?.close()
	await app?.close()
})

const stored = async (name: string) => (await app.admin('/api/models')).body.data.find((m: { name: string }) => m.name === name)

/** Submits the dialog and returns the alert it shows. */
async function refusal(dialog: Locator, submit: string): Promise<string> {
	await dialog.getByRole('button', { name: submit }).click()
	const alert = dialog.getByRole('alert')
	await alert.waitFor()
	return (await alert.textContent()) ?? ''
}

describe('price dialog', () => {
	it('should remove an emptied price and a deleted unit-price line on Save', async () => {
		await page.getByRole('button', { name: 'Add price' }).click()
		const add = page.getByRole('dialog', { name: 'Add a model price' })
		await add.getByLabel('Model name').fill('gpt-image-1')
		await add.getByLabel('Per request (USD)').fill('0.01')
		await add.getByLabel('Unit prices').fill('per_image = 0.04\nper_image_hd = 0.06\nper_image_1024x1024_hd = 0.08')
		await add.getByRole('button', { name: 'Add price' }).click()
		await add.waitFor({ state: 'detached' })
		await page.locator('tr[data-model="gpt-image-1"]').waitFor()

		await page.getByRole('button', { name: 'Edit gpt-image-1' }).click()
		const edit = page.getByRole('dialog', { name: 'Edit price of gpt-image-1' })
		await edit.getByLabel('Per request (USD)').fill('')
		await edit.getByLabel('Unit prices').fill('per_image = 0.05')
		await edit.getByRole('button', { name: 'Save' }).click()
		await edit.waitFor({ state: 'detached' })
		const row = page.locator('tr[data-model="gpt-image-1"]')
		await row.locator('td[data-label="Other"]', { hasText: '$0.05 / image' }).waitFor()
		expect(await row.locator('td[data-label="Other"]').textContent()).toBe('$0.05 / image')
		expect(await stored('gpt-image-1')).toMatchObject({ per_request: null, prices: { per_image: 0.05 } })
		expect(Object.keys((await stored('gpt-image-1')).prices)).toEqual(['per_image'])
		await shot(page, 'price-removed')
	}, 60_000)

	it('should say which field or unit-price line is wrong, in words', async () => {
		await page.getByRole('button', { name: 'Add price' }).click()
		const add = page.getByRole('dialog', { name: 'Add a model price' })
		await add.getByLabel('Model name').fill('typo-model')
		await add.getByLabel('Unit prices').fill('per_image = 0.04\nper_imgae = 0.04')
		const unknown = await refusal(add, 'Add price')
		expect(unknown).toContain('Unit prices, line 2: "per_imgae" is not a unit price')
		expect(unknown).toContain('per_image_<size>')

		await add.getByLabel('Unit prices').fill('per_image = 0.04\n\nper_image_hd = abc')
		expect(await refusal(add, 'Add price')).toContain('Unit prices, line 3: enter an amount in USD')

		// Refused (more than micro-USD can hold), named by the field's label.
		await add.getByLabel('Unit prices').fill('')
		await add.getByLabel('Input (USD / 1M tokens)').fill('99999999999')
		const range = await refusal(add, 'Add price')
		expect(range).toStartWith('Input (USD / 1M tokens): ')
		expect(range).toContain('out of range')
		expect(range).not.toContain('input_per_mtok')
		await shot(page, 'price-errors')
		await page.keyboard.press('Escape')
		await add.waitFor({ state: 'detached' })
	}, 60_000)

	it('should leave a model whose price is disabled off the Models page', async () => {
		await page.getByRole('button', { name: 'Disable gpt-4.1' }).click()
		await page.locator('tr[data-model="gpt-4.1"]', { hasText: 'disabled' }).waitFor()
		await page.getByRole('link', { name: 'Models' }).click()
		await page.locator('tr', { hasText: 'gpt-4o-mini' }).waitFor()
		expect(await page.locator('tr', { hasText: 'gpt-4.1' }).count()).toBe(0)
	}, 60_000)

	it('should set, show and clear the token-kind and tier prices, and list a realtime model on its WebSocket route', async () => {
		await page.getByRole('link', { name: 'Prices' }).click()
		await page.getByRole('button', { name: 'Add price' }).click()
		const add = page.getByRole('dialog', { name: 'Add a model price' })
		expect(await add.getByText('audio_input_per_mtok').count()).toBe(1)
		await add.getByLabel('Model name').fill('gpt-realtime')
		await add.getByLabel('Input (USD / 1M tokens)').fill('4')
		await add.getByLabel('Output (USD / 1M tokens)').fill('16')
		await add.getByLabel('Unit prices').fill('audio_input_per_mtok = 32\naudio_output_per_mtok = 64\npriority_input_per_mtok = 8\ninput_above_200k_per_mtok = 6')
		await add.getByRole('button', { name: 'Add price' }).click()
		await add.waitFor({ state: 'detached' })
		const other = page.locator('tr[data-model="gpt-realtime"] td[data-label="Other"]')
		await other.waitFor()
		expect(await other.textContent()).toBe(
			'$32.00 / 1M audio input tokens, $64.00 / 1M audio output tokens, $6.00 / 1M input tokens (prompts over 200k), $8.00 / 1M input tokens (priority tier, OpenAI Fast mode)',
		)

		// The Models page shows the same prices, and the realtime model's one endpoint.
		await page.getByRole('link', { name: 'Models' }).click()
		const row = page.getByRole('table', { name: 'Models and prices' }).locator('tr', { hasText: 'gpt-realtime' })
		await row.waitFor()
		expect(await row.locator('td[data-label="Other"]').textContent()).toContain('$64.00 / 1M audio output tokens')
		expect(await row.locator('details.endpoints').textContent()).toBe('1 endpointGET /v1/realtime?model={model}')
		expect(await row.locator('.chip').allTextContents()).toEqual(['OpenAI Realtime'])

		// Deleting a line clears that price alone.
		await page.getByRole('link', { name: 'Prices' }).click()
		await page.getByRole('button', { name: 'Edit gpt-realtime' }).click()
		const edit = page.getByRole('dialog', { name: 'Edit price of gpt-realtime' })
		expect((await edit.getByLabel('Unit prices').inputValue()).split('\n').sort()).toEqual([
			'audio_input_per_mtok = 32',
			'audio_output_per_mtok = 64',
			'input_above_200k_per_mtok = 6',
			'priority_input_per_mtok = 8',
		])
		await edit.getByLabel('Unit prices').fill('audio_input_per_mtok = 32')
		await edit.getByRole('button', { name: 'Save' }).click()
		await edit.waitFor({ state: 'detached' })
		await page.locator('tr[data-model="gpt-realtime"] td[data-label="Other"]', { hasText: /^\$32\.00 \/ 1M audio input tokens$/ }).waitFor()
		expect((await stored('gpt-realtime')).prices).toEqual({ audio_input_per_mtok: 32 })
		await shot(page, 'price-token-kinds')
	}, 60_000)
})
