import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import openapiTS, { astToString } from 'openapi-typescript'
import { buildOpenApiDocument } from '../../../scripts/openapi-doc'
import { ADMIN_KEY, startTestApp, type TestApp } from '../../helpers/app'

const OUT = new URL('../../../test-output/openapi-client/', import.meta.url).pathname

let doc: string
let app: TestApp

beforeAll(async () => {
	doc = await buildOpenApiDocument()
	app = await startTestApp()
}, 120_000)
afterAll(() => app.close())

describe('OpenAPI document', () => {
	it('should match the committed openapi/openapi.json (run `bun run openapi` after changing routes)', async () => {
		const committed = await Bun.file(new URL('../../../openapi/openapi.json', import.meta.url)).text()
		expect(committed === doc).toBe(true)
	})

	it('should be served at /docs/json and list every route with schemas', async () => {
		const served = (await (await fetch(`${app.url}/docs/json`)).json()) as { paths: Record<string, Record<string, { responses?: unknown }>> }
		expect(JSON.stringify(served, null, '\t') + '\n').toBe(doc)
		for (const p of ['/api/accounts', '/api/tokens', '/api/tokens/{id}/key', '/api/usage', '/v1/chat/completions', '/v1/messages']) expect(served.paths[p]).toBeDefined()
		expect(served.paths['/api/tokens']!.post!.responses).toHaveProperty('201')
	})

	it('should generate a typed client that type-checks and works against the management API', async () => {
		const types = astToString(await openapiTS(JSON.parse(doc)))
		await Bun.write(`${OUT}schema.d.ts`, types)
		await Bun.write(
			`${OUT}client.ts`,
			`import createClient from 'openapi-fetch'
import type { paths } from './schema'

export async function run(baseUrl: string, adminKey: string) {
	const api = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${adminKey}\` } })
	const acct = await api.POST('/api/accounts', { body: { name: 'typed', balance: 3 } })
	if (!acct.data) throw new Error('no account')
	const id: number = acct.data.id
	const tok = await api.POST('/api/tokens', { body: { account_id: id, name: 'typed-key', spend_limit: 1 } })
	if (!tok.data) throw new Error('no token')
	const key: string = tok.data.key
	const revealed = await api.GET('/api/tokens/{id}/key', { params: { path: { id: tok.data.id } } })
	const usage = await api.GET('/api/usage', { params: { query: { account_id: id, limit: 10 } } })
	return { id, key, revealed: revealed.data?.key, rows: usage.data?.data.length }
}
`,
		)
		await Bun.write(`${OUT}tsconfig.json`, JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module: 'Preserve', moduleResolution: 'bundler', target: 'ESNext', skipLibCheck: true, types: [] }, files: ['client.ts'] }))
		const tsc = Bun.spawnSync([new URL('../../../node_modules/.bin/tsc', import.meta.url).pathname, '-p', OUT], { stdout: 'pipe', stderr: 'pipe' })
		expect(tsc.stdout.toString() + tsc.stderr.toString()).toBe('')
		expect(tsc.exitCode).toBe(0)
		const { run } = await import(`${OUT}client.ts`)
		const out = await run(app.url, ADMIN_KEY)
		expect(out.key).toMatch(/^sk-/)
		expect(out.revealed).toBe(out.key)
		expect(out.rows).toBe(0)
	})
})
