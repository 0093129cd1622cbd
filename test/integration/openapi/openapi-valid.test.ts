/**
 * The committed OpenAPI document (what /docs/json serves and client generators read) is valid OpenAPI, as a real
 * validator says: Redocly's (the one openapi-typescript uses), its structural checks and recommended rules. The
 * document is 3.1 (scripts/openapi-31.ts); openapi.test.ts checks that it is not stale.
 */
import { describe, expect, it } from 'bun:test'
import { createConfig, lintFromString } from '@redocly/openapi-core'

const FILE = new URL('../../../openapi/openapi.json', import.meta.url).pathname

describe('openapi/openapi.json', () => {
	it('should be valid OpenAPI 3.1, with no error from a validator', async () => {
		// QA: it said 3.0.3 but held 3.1's JSON Schema (`const`, `type: 'null'`) and 3.0's `nullable`, valid as neither:
		// 4,727 structural errors from Redocly, and @apidevtools/swagger-parser rejected it.
		const source = await Bun.file(FILE).text()
		const config = await createConfig({ extends: ['recommended'] })
		const problems = await lintFromString({ source, absoluteRef: FILE, config })
		const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`)
		// The first few, not thousands, when it fails.
		expect({ errors: errors.length, first: errors.slice(0, 10) }).toEqual({ errors: 0, first: [] })
		expect((JSON.parse(source) as { openapi: string }).openapi).toBe('3.1.0')
	})
})
