import { describe, expect, it } from 'bun:test'
import { GENERATED, buildConsole, renderAssetsModule } from '../../../scripts/build-console'
import { consoleCss, consoleJs } from '../../../src/console/assets.gen'

describe('console bundle', () => {
	it('should match the sources: run `bun scripts/build-console.ts` after editing src/console', async () => {
		const fresh = renderAssetsModule(await buildConsole())
		const committed = await Bun.file(GENERATED).text()
		// Compared as a boolean so a failure does not print 80 kB of minified code.
		expect(committed === fresh).toBe(true)
	}, 60_000)

	it('should load nothing from the internet (no CDN, no web fonts)', () => {
		expect(consoleCss.includes('http')).toBe(false)
		expect(consoleCss.includes('@font-face')).toBe(false)
		expect(consoleCss.includes('@import')).toBe(false)
		// The only absolute URLs in the script are XML namespaces and the channel form's base URL examples.
		const urls = [...new Set(consoleJs.match(/https?:\/\/[A-Za-z0-9./_-]+/g) ?? [])].filter((u) => !u.startsWith('http://www.w3.org/'))
		expect(urls.sort()).toEqual([
			'https://RESOURCE.openai.azure.com',
			'https://aiplatform.googleapis.com',
			'https://api.anthropic.com',
			'https://api.openai.com/v1',
			'https://bedrock-runtime.us-east-1.amazonaws.com',
			'https://generativelanguage.googleapis.com',
		])
		expect(/\bimport\s*\(|\bfrom\s*["']https?:/.test(consoleJs)).toBe(false)
	})
})
