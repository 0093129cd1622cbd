/**
 * The README's promises that a reader acts on without reading the code: the Quick start's first session, run as
 * written against a freshly started gateway (whose first start already made the console administrator's account, id 1,
 * QA: the key once landed on it and its first request got 402), and the SECRET_KEY rule in the Configuration table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import { Glob } from 'bun'
import { rmSync } from 'node:fs'
import { RUNTIME_DEFAULTS } from '../../../src/lib/runtime-settings'
import { createCipher } from '../../../src/lib/secrets'
import { bootstrapAdmin } from '../../../src/modules/console'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startOpenAIMock } from '../../mocks'

const readme = await Bun.file(new URL('../../../README.md', import.meta.url)).text()
const section = readme.slice(readme.indexOf('A first session'), readme.indexOf('## Connecting clients'))
const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((b) => b[1]!)
const session = blocks.find((b) => b.includes('/api/tokens'))!
const adminKey = /ADMIN_KEY=(\S+)/.exec(session)![1]!

let app: TestApp
let mock: Awaited<ReturnType<typeof startOpenAIMock>>

beforeAll(async () => {
	mock = await startOpenAIMock({ apiKey: 'up-key' })
	app = await startTestApp({
		env: { ADMIN_KEY: adminKey },
		config: {
			channels: [{ name: 'mock', type: 'openai', base_url: mock.url, api_key: 'up-key', models: ['gpt-4o-mini'] }],
			models: [{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 }],
		},
	})
	await bootstrapAdmin(app.svc, () => {}) // what the server does at its first start (src/server.ts)
}, 120_000)
afterAll(async () => {
	await app.close()
	await mock.stop()
})

/** The management API with the README's admin key (the test helper's own is not set here). */
const admin = async (path: string) => (await fetch(app.url + path, { headers: { authorization: `Bearer ${adminKey}` } })).json() as Promise<any>

/** The Configuration section's table of environment variables: each row's first cell names one or more. */
const envTable = readme.slice(readme.indexOf('Environment variables:'), readme.indexOf('A variable set to an empty value'))
const envRows = envTable.split('\n').filter((l) => l.startsWith('| `'))
const documented = new Set(envRows.flatMap((l) => [...l.split(' | ')[0]!.matchAll(/`([A-Za-z][A-Za-z0-9_]+)`/g)].map((m) => m[1]!)))

/** The environment variables src reads: `vars.NAME`, `env.NAME`, the quick start's `env: 'NAME'`, and the relaunch's. */
async function readBySrc(): Promise<Set<string>> {
	const root = new URL('../../../', import.meta.url).pathname
	const names = new Set(Object.keys(RUNTIME_DEFAULTS))
	for await (const f of new Glob('src/**/*.ts').scan(root)) {
		const text = await Bun.file(root + f).text()
		for (const m of text.matchAll(/\b(?:vars|env)\??\.([A-Z][A-Za-z0-9]*_[A-Za-z0-9_]+|[A-Z]{3,})\b/g)) names.add(m[1]!)
		for (const m of text.matchAll(/\b(?:env|baseEnv): '([A-Z][A-Z0-9_]+)'/g)) names.add(m[1]!)
		// The start's parser (config/env-vars.ts): r.int('NAME', …), r.url('NAME', …) and the like.
		for (const m of text.matchAll(/\br\.(?:text|secret|int|number|bool|choice|url|list|refuse)\('([A-Za-z_]+)'/g)) names.add(m[1]!)
	}
	return names
}

const tools = Boolean(Bun.which('sh') && Bun.which('curl') && Bun.which('sed'))

describe('README', () => {
	it('should start the server with the ADMIN_KEY its first session uses', () => {
		expect(blocks.some((b) => b.includes(`ADMIN_KEY=${adminKey}`) && b.includes('run server'))).toBe(true)
	})

	it.skipIf(!tools)('should give a working key on the new account when the first session is pasted as written', async () => {
		const run = Bun.spawn(['sh', '-c', session.replaceAll('localhost:3000', app.url)], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, stdout: 'pipe', stderr: 'pipe' })
		const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited])
		expect(err).toBe('')
		expect(code).toBe(0)
		const [accountId, key, subscription] = out.trim().split('\n')
		// What the README says the reader sees: account 2, beside the administrator's account 1.
		expect(accountId).toBe('2')
		expect(section).toContain('"id":2,"name":"acme","balance":10,"status":"active"')
		expect(await admin('/api/accounts/2')).toMatchObject({ id: 2, name: 'acme', balance: 10, status: 'active' })
		expect(await admin('/api/accounts/1')).toMatchObject({ name: 'admin', balance: 0 })
		expect(key).toMatch(/^sk-[A-Za-z0-9]{48}$/)
		const tokens = (await admin('/api/tokens?account_id=2')).data
		expect(tokens).toMatchObject([{ id: 1, account_id: 2, name: 'laptop', spend_limit: 5 }])
		expect(JSON.parse(subscription!)).toMatchObject({ object: 'billing_subscription', soft_limit_usd: 5, hard_limit_usd: 5 })
		// The key spends the new account's $10, not the administrator's $0 (which answered 402).
		const chat = await fetch(`${app.url}/v1/chat/completions`, {
			method: 'POST',
			headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
			body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
		})
		expect(chat.status).toBe(200)
	})

	it('should list in its Configuration table every environment variable src reads, and nothing src ignores', async () => {
		const read = await readBySrc()
		expect(envRows.length).toBeGreaterThan(20)
		// QA: DATABASE_POOL_SIZE was read (and an empty or mistyped value became a pool of 0 or NaN) but not documented.
		const inTable = (name: string) => envRows.some((l) => l.includes(`\`${name}\``))
		expect([...read].filter((n) => !inTable(n)).sort()).toEqual([])
		expect([...documented].filter((n) => !read.has(n)).sort()).toEqual([])
	})

	it('should answer the clients of "Connecting clients" built as its snippet builds them, at the base URLs its table gives', async () => {
		const part = readme.slice(readme.indexOf('## Connecting clients'), readme.indexOf('## Configuration'))
		const snippet = [...part.matchAll(/```ts\n([\s\S]*?)```/g)].map((b) => b[1]!)[0]!
		expect(snippet).toContain("baseURL: 'http://localhost:3000/v1'")
		// A key of its own, made with the README's admin key (this file's server has no other).
		const post = async (path: string, body: unknown) =>
			(await (await fetch(app.url + path, { method: 'POST', headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as any
		const { key } = await post('/api/tokens', { account_id: (await post('/api/accounts', { name: 'clients', balance: 1 })).id, name: 'clients' })
		const dir = new URL(`../../../test-output/readme-clients-${process.pid}/`, import.meta.url).pathname
		const file = `${dir}clients.ts`
		await Bun.write(
			file,
			`import OpenAI from 'openai'\nimport Anthropic from '@anthropic-ai/sdk'\n${snippet.replaceAll('http://localhost:3000', app.url).replaceAll("'sk-…'", JSON.stringify(key))}\nexport { openai, anthropic }\n`,
		)
		try {
			const { openai, anthropic } = (await import(file)) as { openai: import('openai').default; anthropic: import('@anthropic-ai/sdk').default }
			const chat = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'from the snippet' }] })
			expect(chat.choices[0]!.message.content).toBe('Hello! You said: from the snippet')
			const message = await anthropic.messages.create({ model: 'gpt-4o-mini', max_tokens: 32, messages: [{ role: 'user', content: 'from the snippet' }] })
			expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: 'Hello! You said: from the snippet' })])
			// The table's third row: @google/genai at {root}, the key as x-goog-api-key.
			expect(part).toContain('| Google `@google/genai`, Gemini CLI | `{root}` |')
			const google = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: app.url } })
			expect((await google.models.generateContent({ model: 'gpt-4o-mini', contents: 'from the table' })).text).toBe('Hello! You said: from the table')
		} finally {
			rmSync(dir, { recursive: true, force: true })
		}
	})

	it('should serve every endpoint its tables list, with the methods they list', async () => {
		const doc = JSON.parse(await Bun.file(new URL('../../../openapi/openapi.json', import.meta.url)).text()) as { paths: Record<string, Record<string, unknown>> }
		const templates = Object.entries(doc.paths).map(([path, item]) => ({ segments: path.split('/'), methods: Object.keys(item) }))
		// `GET/POST /api/channels`, `GET /api/tokens/:id/key`, `POST /v1beta/models/{model}:predict`, `GET /v1/responses/{id}…`
		const listed = [...readme.matchAll(/`((?:GET|POST|PATCH|DELETE)(?:\/(?:GET|POST|PATCH|DELETE))*) (\/[^`\s]*)`/g)].flatMap((m) =>
			m[1]!.split('/').map((method) => ({ method: method.toLowerCase(), path: m[2]!.replace(/\?.*$/, '') })),
		)
		expect(listed.length).toBeGreaterThan(70)
		const served = ({ method, path }: { method: string; path: string }) => {
			const prefix = path.endsWith('…')
			const segments = path.replace(/…$/, '').split('/')
			return templates.some((t) => {
				if (!t.methods.includes(method) || (prefix ? t.segments.length < segments.length : t.segments.length !== segments.length)) return false
				return segments.every((s, i) => s === t.segments[i] || (prefix && i === segments.length - 1 && t.segments[i]!.startsWith(s)) || /^\{.+\}$/.test(t.segments[i]!))
			})
		}
		const pages = ['/docs', '/docs/json']
		expect(listed.filter((e) => !pages.includes(e.path) && !served(e)).map((e) => `${e.method.toUpperCase()} ${e.path}`)).toEqual([])
		for (const page of [...pages, '/console', '/pricing']) expect({ page, status: (await fetch(app.url + page)).status }).toEqual({ page, status: 200 })
	})

	it('should state the SECRET_KEY minimum the start enforces', async () => {
		const row = readme.split('\n').find((l) => l.startsWith('| `SECRET_KEY` |'))!
		expect(row).toContain('at least 16 characters')
		await expect(createCipher('x'.repeat(15))).rejects.toThrow('SECRET_KEY must be at least 16 characters')
		expect(await createCipher('x'.repeat(16))).toBeDefined()
	})
})
