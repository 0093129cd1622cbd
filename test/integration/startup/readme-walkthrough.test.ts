/**
 * The README followed as a new user follows it (QA of a fresh clone): its tables render (a delimiter row with another
 * number of cells than its header is no table on GitHub, just text), the GATEWAY_CONFIG example serves every model it
 * prices, the typed client of "OpenAPI and typed clients" is generated, type-checks and calls the server as pasted,
 * and the single executable of "Deployment", copied to a directory of its own, serves the console and a model call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { parseGatewayConfig } from '../../../src/config/gateway-file'
import { bootstrapAdmin } from '../../../src/modules/console'
import { ADMIN_KEY as TEST_ADMIN_KEY, startTestApp, type TestApp } from '../../helpers/app'
import { startOpenAIMock } from '../../mocks'
import { freePort } from '../../helpers/ports'

const root = new URL('../../../', import.meta.url).pathname
const readme = await Bun.file(`${root}README.md`).text()
const section = (from: string, to: string) => readme.slice(readme.indexOf(from), readme.indexOf(to, readme.indexOf(from)))
const blocks = (text: string, lang: string) => [...text.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((b) => b[1]!)

/** A GFM table row's cells (pipes inside code spans do not split, as on GitHub). */
const cells = (line: string) => line.trim().replace(/^\|/, '').replace(/\|$/, '').replace(/`[^`]*`/g, 'code').split('|').length

const ADMIN_KEY = 'readme-admin-key-0123'
let mock: Awaited<ReturnType<typeof startOpenAIMock>>

beforeAll(async () => {
	mock = await startOpenAIMock({ apiKey: 'up-key' })
})
afterAll(async () => {
	await mock.stop()
})

describe('README tables', () => {
	it('should give every table a delimiter row of its header’s width, so that it renders as a table', () => {
		const lines = readme.split('\n')
		const tables = lines.flatMap((l, i) => (i > 0 && /^\|[\s:|-]+\|$/.test(l) && lines[i - 1]!.startsWith('|') ? [{ header: lines[i - 1]!.slice(0, 40), head: cells(lines[i - 1]!), delimiter: cells(l) }] : []))
		expect(tables.length).toBeGreaterThanOrEqual(5)
		// QA: "Connecting clients" (3 columns, 4 delimiters) and Benchmarks (20 and 19) showed as plain text.
		for (const t of tables) expect({ table: t.header, cells: t.delimiter }).toEqual({ table: t.header, cells: t.head })
	})
})

describe('README GATEWAY_CONFIG example', () => {
	it('should be a valid file whose every priced model some channel serves', () => {
		const example = blocks(section('`GATEWAY_CONFIG` declares', '## Billing'), 'json')[0]!
		const cfg = parseGatewayConfig(JSON.parse(example), 'README')
		const glob = (p: string) => new RegExp(`^${p.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*')}$`)
		const served = (model: string) => cfg.channels.some((c) => c.models.some((p) => glob(p).test(model)))
		// QA: dall-e-3 was priced with no channel listing it, so the example answered 503 model_unavailable for it.
		expect(cfg.models.filter((m) => !served(m.name)).map((m) => m.name)).toEqual([])
	})
})

describe('README typed client', () => {
	let app: TestApp
	const dir = `${root}test-output/readme-client-${process.pid}`

	beforeAll(async () => {
		app = await startTestApp({
			config: {
				channels: [{ name: 'mock', type: 'openai', base_url: mock.url, api_key: 'up-key', models: ['gpt-4o-mini'] }],
				models: [{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 }],
			},
		})
		await bootstrapAdmin(app.svc, () => {}) // account 1, as at the server's first start
		// The first session's account 2 ("acme", $10).
		expect((await app.admin('/api/accounts', { body: { name: 'acme', balance: 10 } })).body).toMatchObject({ id: 2 })
		mkdirSync(dir, { recursive: true })
	}, 120_000)
	afterAll(async () => {
		await app.close()
		rmSync(dir, { recursive: true, force: true })
	})

	it('should generate, type-check and call the server as written', async () => {
		const text = section('## OpenAPI and typed clients', '## Deployment')
		const generate = blocks(text, 'sh')[0]!.trim()
		const client = blocks(text, 'ts')[0]!
		expect(generate).toBe('npx openapi-typescript openapi/openapi.json -o switchboard.d.ts')
		// The command as written, with the project's own openapi-typescript (what npx runs in this repository).
		const gen = Bun.spawnSync([`${root}node_modules/.bin/openapi-typescript`, 'openapi/openapi.json', '-o', `${dir}/switchboard.d.ts`], { cwd: root, stdout: 'pipe', stderr: 'pipe' })
		expect(gen.exitCode).toBe(0)
		// The server's address is written once.
		expect(client.split('http://localhost:3000').length).toBe(2)
		await Bun.write(`${dir}/client.ts`, client.replace('http://localhost:3000', app.url))
		await Bun.write(`${dir}/tsconfig.json`, JSON.stringify({ compilerOptions: { target: 'ESNext', module: 'ESNext', moduleResolution: 'bundler', strict: true, noEmit: true, skipLibCheck: true, types: ['bun'] }, files: ['client.ts'] }))
		// QA: the example used an ADMIN_KEY it never declared ("Cannot find name 'ADMIN_KEY'").
		const tsc = Bun.spawnSync([process.execPath, `${root}node_modules/typescript/bin/tsc`, '-p', dir], { cwd: dir, stdout: 'pipe', stderr: 'pipe' })
		expect(tsc.stdout.toString() + tsc.stderr.toString()).toBe('')
		expect(tsc.exitCode).toBe(0)
		// QA (fresh clone): with a `lib` list of ES and DOM, as this repository's own tsconfig has, a ReadableStream is not
		// async-iterable (that is lib DOM.AsyncIterable), so `for await` over the stream did not type-check.
		const lib = JSON.parse(await Bun.file(`${root}tsconfig.json`).text()).compilerOptions.lib as string[]
		expect(lib).not.toContain('DOM.AsyncIterable')
		await Bun.write(`${dir}/tsconfig.json`, JSON.stringify({ compilerOptions: { target: 'ESNext', lib, module: 'ESNext', moduleResolution: 'bundler', strict: true, noEmit: true, skipLibCheck: true, types: ['bun'] }, files: ['client.ts'] }))
		const withLib = Bun.spawnSync([process.execPath, `${root}node_modules/typescript/bin/tsc`, '-p', dir], { cwd: dir, stdout: 'pipe', stderr: 'pipe' })
		expect(withLib.stdout.toString() + withLib.stderr.toString()).toBe('')
		expect(withLib.exitCode).toBe(0)
		// Not spawnSync: the server it calls runs in this process.
		const run = Bun.spawn([process.execPath, 'client.ts'], { cwd: dir, env: { PATH: process.env.PATH ?? '', ADMIN_KEY: TEST_ADMIN_KEY }, stdout: 'pipe', stderr: 'pipe' })
		const [out, err] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited])
		expect(err).toBe('')
		const [key, streamed] = out.trim().split('\n')
		expect(key).toMatch(/^sk-[A-Za-z0-9]{48}$/)
		// The streamed call, its chunks typed by the document's ChatCompletionChunk.
		expect(streamed).toBe('Hello! You said: Hi')
		// QA: the example made its key on account 1, the administrator's with $0: every call with it answered 402.
		const chat = await fetch(`${app.url}/v1/chat/completions`, {
			method: 'POST',
			headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
			body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
		})
		expect(chat.status).toBe(200)
	}, 120_000)
})

describe('README single executable', () => {
	it('should serve the console and a model call when run from a directory with nothing beside it', async () => {
		expect(readme).toContain('`bun run build` writes one self-contained executable, `dist/switchboard`')
		const dir = `${tmpdir()}/switchboard-readme-${process.pid}`
		rmSync(dir, { recursive: true, force: true })
		mkdirSync(dir, { recursive: true })
		try {
			const build = Bun.spawnSync([process.execPath, 'scripts/build.ts', `${dir}/switchboard`], { cwd: root, stdout: 'pipe', stderr: 'pipe' })
			expect(build.exitCode).toBe(0)
			await Bun.write(
				`${dir}/gateway.json`,
				JSON.stringify({ channels: [{ name: 'mock', type: 'openai', base_url: mock.url, api_key: 'env:OPENAI_API_KEY', models: ['gpt-4o-mini'] }], models: [{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 }] }),
			)
			const port = freePort()
			const url = `http://127.0.0.1:${port}`
			const proc = Bun.spawn([`${dir}/switchboard`], {
				cwd: dir,
				env: { PATH: '/usr/bin:/bin', HOME: dir, PORT: String(port), HOST: '127.0.0.1', ADMIN_KEY, ADMIN_PASSWORD: 'readme-password', GATEWAY_CONFIG: 'gateway.json', OPENAI_API_KEY: 'up-key' },
				stdout: 'pipe',
				stderr: 'pipe',
			})
			try {
				let up = false
				for (let i = 0; i < 200 && !up && proc.exitCode === null; i++) {
					up = await fetch(`${url}/health`).then((r) => r.ok, () => false)
					if (!up) await Bun.sleep(200)
				}
				expect(up).toBe(true)
				// The console's page and the assets it names, all from inside the executable.
				const html = await (await fetch(`${url}/console`)).text()
				const assets = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]!)
				expect(assets.length).toBe(2)
				for (const a of assets) {
					const res = await fetch(url + a)
					expect({ a, status: res.status }).toEqual({ a, status: 200 })
					expect((await res.text()).length).toBeGreaterThan(1000)
				}
				const signIn = await fetch(`${url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'readme-password' }) })
				expect(signIn.status).toBe(200)
				// A model call through the mock vendor, with a key made through the management API.
				const admin = (path: string, body: unknown) => fetch(url + path, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<any>)
				const account = await admin('/api/accounts', { name: 'acme', balance: 10 })
				const { key } = await admin('/api/tokens', { account_id: account.id, name: 'bin' })
				const chat = await fetch(`${url}/v1/chat/completions`, {
					method: 'POST',
					headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
					body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'from the binary' }] }),
				})
				expect(chat.status).toBe(200)
				expect(((await chat.json()) as any).choices[0].message.content).toContain('from the binary')
				expect(await Bun.file(`${dir}/data/secret.key`).exists()).toBe(true)
			} finally {
				proc.kill('SIGTERM')
				expect(await proc.exited).toBe(0)
			}
		} finally {
			rmSync(dir, { recursive: true, force: true })
		}
	}, 180_000)
})
