/**
 * An operator adding `vertex` and `bedrock` channels in the console: the service-account key file pasted whole into a
 * multi-line key field (stored as pasted), hints saying what each type's key and base URL look like, Region and
 * Project fields (stored under `settings`), a Bedrock guardrail's identifier and version, a malformed key (or an `ambient`
 * one sent off its cloud) refused in the form with the gateway's words, the Test
 * button working against the Vertex mock, and the key never shown back: not its private key, not the AWS secret.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { eq } from 'drizzle-orm'
import type { Browser, Page } from 'playwright-core'
import { channels } from '../../src/db/schema'
import { startVertexMock, type VertexMock } from '../mocks'
import { ADMIN_PASSWORD, type ConsoleApp, startConsoleApp } from '../unit/console/console-app'
import { launch, newPage, shot, signIn } from './browser'

const PROJECT = 'proj-console'
const REGION = 'us-east5'
const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'

let v: VertexMock
let app: ConsoleApp
let browser: Browser
let page: Page
/** The key file as Google Cloud downloads it: indented JSON over many lines. */
let keyFile: string
let pemLine: string

beforeAll(async () => {
	v = await startVertexMock({ project: PROJECT, region: REGION, expressKey: 'AQ.console-express' })
	keyFile = JSON.stringify(JSON.parse(v.key.json), null, 2)
	pemLine = (JSON.parse(keyFile).private_key as string).split('\n')[1]!
	app = await startConsoleApp({ config: { channels: [], models: [] }, env: { FETCH_ALLOW: '127.0.0.1' } })
	browser = await launch()
	;({ page } = await newPage(browser, { baseURL: app.url }))
	await signIn(page, 'admin', ADMIN_PASSWORD)
	await page.waitForURL(/\/console\/tokens/)
	await page.goto('/console/admin/channels')
}, 180_000)

afterAll(async () => {
	await browser?.close()
	await app?.close()
	await v?.stop()
})

const storedRow = async (name: string) => (await app.svc.db.orm.select().from(channels).where(eq(channels.name, name)))[0]!

describe('vertex and bedrock channels in the console', () => {
	it('should take a Vertex service-account key file as pasted, with its project and region, and test it', async () => {
		await page.getByRole('button', { name: 'New channel' }).click()
		const dialog = page.getByRole('dialog', { name: 'New channel' })
		await dialog.getByLabel('Name').fill('vx')
		await dialog.getByLabel('Type').selectOption('vertex')
		expect(await dialog.getByLabel('Base URL').getAttribute('placeholder')).toBe('https://aiplatform.googleapis.com')
		const key = dialog.getByLabel('API key')
		// Said where the key goes: what a Vertex key is.
		expect(await dialog.getByText(/service-account key file/).isVisible()).toBe(true)
		await dialog.getByLabel('Base URL').fill(v.url)
		await key.fill(keyFile)
		await dialog.getByLabel('Project').fill(PROJECT)
		await dialog.getByLabel('Region').fill(REGION)
		await dialog.getByLabel('Models').fill('claude-vx')
		await dialog.getByLabel('Model map').fill('claude-vx = claude-sonnet-4-5@20250929')
		await shot(page, 'channel-form-vertex')
		await dialog.getByRole('button', { name: 'Create channel' }).click()
		await dialog.waitFor({ state: 'detached' })
		const row = await storedRow('vx')
		expect(row.settings).toEqual({ project: PROJECT, region: REGION })
		// Line for line as pasted: a one-line field would have dropped the file's line breaks.
		expect(await app.svc.cipher.decrypt(row.apiKeyEnc)).toBe(keyFile)

		await page.getByRole('button', { name: 'Test vx' }).click()
		const result = page.locator('tr[data-channel="vx"] .test-result:not(:has(.spinner))')
		await result.waitFor()
		expect(await result.textContent()).toMatch(/^Works: HTTP 200/)
		expect(await page.content()).not.toContain(pemLine)

		// Editing shows the project and region in their fields, not the key.
		await page.getByRole('button', { name: 'Edit vx' }).click()
		const edit = page.getByRole('dialog', { name: 'Edit channel “vx”' })
		expect(await edit.getByLabel('Region').inputValue()).toBe(REGION)
		expect(await edit.getByLabel('Project').inputValue()).toBe(PROJECT)
		expect(await edit.getByLabel('Settings').inputValue()).toBe('')
		expect(await edit.getByLabel('API key').inputValue()).toBe('')
		expect(await page.content()).not.toContain(pemLine)
		await edit.getByLabel('Region').fill('europe-west1')
		await edit.getByRole('button', { name: 'Save' }).click()
		await edit.waitFor({ state: 'detached' })
		const edited = await storedRow('vx')
		expect(edited.settings).toEqual({ project: PROJECT, region: 'europe-west1' })
		expect(await app.svc.cipher.decrypt(edited.apiKeyEnc)).toBe(keyFile)
	}, 90_000)

	it("should refuse a broken key file in the form with the gateway's reason", async () => {
		await page.getByRole('button', { name: 'New channel' }).click()
		const dialog = page.getByRole('dialog', { name: 'New channel' })
		await dialog.getByLabel('Name').fill('vx-broken')
		await dialog.getByLabel('Type').selectOption('vertex')
		await dialog.getByLabel('Base URL').fill(v.url)
		await dialog.getByLabel('API key').fill(keyFile.replace(/"private_key": "[^"]*",/, ''))
		await dialog.getByLabel('Models').fill('gemini-vx')
		await dialog.getByRole('button', { name: 'Create channel' }).click()
		await dialog.getByRole('alert').filter({ hasText: 'private_key' }).waitFor()
		await dialog.press('Escape')
		await dialog.waitFor({ state: 'detached' })
	}, 60_000)

	it("should refuse an ambient channel whose base URL is off its cloud in the form, in the gateway's words", async () => {
		await page.getByRole('button', { name: 'New channel' }).click()
		const dialog = page.getByRole('dialog', { name: 'New channel' })
		await dialog.getByLabel('Name').fill('vx-ambient-foreign')
		await dialog.getByLabel('Type').selectOption('vertex')
		await dialog.getByLabel('Base URL').fill('https://collector.evil.example')
		await dialog.getByLabel('API key').fill('ambient')
		await dialog.getByLabel('Models').fill('gemini-vx')
		await dialog.getByRole('button', { name: 'Create channel' }).click()
		await dialog.getByRole('alert').filter({ hasText: 'AMBIENT_ENDPOINTS' }).filter({ hasText: 'googleapis.com' }).waitFor()
		await dialog.press('Escape')
		await dialog.waitFor({ state: 'detached' })
		expect(await app.svc.db.orm.select().from(channels).where(eq(channels.name, 'vx-ambient-foreign'))).toEqual([])
	}, 60_000)

	it('should say what a Bedrock key looks like, ask the region IAM keys are signed for, and never show the secret', async () => {
		await page.getByRole('button', { name: 'New channel' }).click()
		const dialog = page.getByRole('dialog', { name: 'New channel' })
		await dialog.getByLabel('Name').fill('br')
		await dialog.getByLabel('Type').selectOption('bedrock')
		expect(await dialog.getByLabel('Base URL').getAttribute('placeholder')).toBe('https://bedrock-runtime.us-east-1.amazonaws.com')
		expect(await dialog.getByText(/ACCESS_KEY_ID:SECRET_ACCESS_KEY/).isVisible()).toBe(true)
		await dialog.getByLabel('Base URL').fill('https://bedrock-proxy.corp.example')
		await dialog.getByLabel('API key').fill(`AKIAIOSFODNN7EXAMPLE:${SECRET}`)
		await dialog.getByLabel('Models').fill('claude-br')
		await dialog.getByRole('button', { name: 'Create channel' }).click()
		// A proxy's host names no region: the gateway asks for one.
		await dialog.getByRole('alert').filter({ hasText: 'settings.region' }).waitFor()
		await dialog.getByLabel('Region').fill('us-west-2')
		await dialog.getByRole('button', { name: 'Create channel' }).click()
		await dialog.waitFor({ state: 'detached' })
		expect((await storedRow('br')).settings).toEqual({ region: 'us-west-2' })
		await page.getByRole('button', { name: 'Edit br' }).click()
		const edit = page.getByRole('dialog', { name: 'Edit channel “br”' })
		expect(await edit.getByLabel('Region').inputValue()).toBe('us-west-2')
		expect(await edit.getByLabel('API key').inputValue()).toBe('')
		expect(await page.content()).not.toContain(SECRET)
		await edit.press('Escape')
	}, 60_000)

	it("should take a Bedrock channel's guardrail in fields of its own, refusing its identifier without its version in the gateway's words", async () => {
		await page.getByRole('button', { name: 'Edit br' }).click()
		const edit = page.getByRole('dialog', { name: 'Edit channel “br”' })
		await edit.getByLabel('Guardrail', { exact: true }).fill('gr0abc123xyz')
		await edit.getByRole('button', { name: 'Save' }).click()
		await edit.getByRole('alert').filter({ hasText: 'guardrail_version: guardrail_identifier needs guardrail_version' }).waitFor()
		await edit.getByLabel('Guardrail version').fill('DRAFT')
		await edit.getByLabel('Settings').fill('{"guardrail_trace": "enabled"}')
		await edit.getByRole('button', { name: 'Save' }).click()
		await edit.waitFor({ state: 'detached' })
		expect((await storedRow('br')).settings).toEqual({ region: 'us-west-2', guardrail_identifier: 'gr0abc123xyz', guardrail_version: 'DRAFT', guardrail_trace: 'enabled' })
		await page.getByRole('button', { name: 'Edit br' }).click()
		const again = page.getByRole('dialog', { name: 'Edit channel “br”' })
		expect(await again.getByLabel('Guardrail', { exact: true }).inputValue()).toBe('gr0abc123xyz')
		expect(await again.getByLabel('Guardrail version').inputValue()).toBe('DRAFT')
		expect(JSON.parse(await again.getByLabel('Settings').inputValue())).toEqual({ guardrail_trace: 'enabled' })
		await again.press('Escape')
	}, 60_000)
})
