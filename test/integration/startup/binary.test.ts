/**
 * The single executable of README "Deployment", as an operator runs it: built once (`scripts/build.ts`), copied alone
 * into an empty directory, started with no configuration at all (PGlite under ./data, the console administrator's
 * one-time password read from its output), set up through the console in a real browser (sign-in, then the
 * management API with the session and its CSRF token), and called with the vendors' own SDKs: OpenAI chat streamed
 * and not plus embeddings, Anthropic messages streamed and not, Gemini generateContent. Its API reference is served,
 * SIGTERM ends it with 0, and a restart on the same directory keeps the data. The same binary on PostgreSQL
 * (DATABASE_URL) when the tests run on it.
 */
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import OpenAI from 'openai'
import postgres from 'postgres'
import type { Subprocess } from 'bun'
import { version } from '../../../package.json'
import { randomString } from '../../../src/lib/ids'
import { launch, newPage, signIn } from '../../e2e/browser'
import { adminPost, callWithSdks, setUpGateway } from '../../helpers/deployed'
import { freePort } from '../../helpers/ports'
import { startAnthropicMock, startGeminiMock, startOpenAIMock } from '../../mocks'

const root = new URL('../../../', import.meta.url).pathname
const dir = `${tmpdir()}/switchboard-binary-${process.pid}`
const bin = `${dir}/switchboard`

let openaiUp: Awaited<ReturnType<typeof startOpenAIMock>>
let anthropicUp: Awaited<ReturnType<typeof startAnthropicMock>>
let geminiUp: Awaited<ReturnType<typeof startGeminiMock>>

beforeAll(async () => {
	rmSync(dir, { recursive: true, force: true })
	mkdirSync(dir, { recursive: true })
	const build = Bun.spawnSync([process.execPath, 'scripts/build.ts', bin], { cwd: root, stdout: 'pipe', stderr: 'pipe' })
	if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}`)
	// Only the executable: the .map files the build writes beside it stay out of the operator's directory.
	rmSync(`${dir}/switchboard.map`, { force: true })
	rmSync(`${dir}/pglite-worker.js.map`, { force: true })
	openaiUp = await startOpenAIMock({ apiKey: 'up-openai' })
	anthropicUp = await startAnthropicMock({ apiKey: 'up-anthropic' })
	geminiUp = await startGeminiMock({ apiKey: 'up-gemini' })
}, 120_000)

afterAll(async () => {
	await Promise.all([openaiUp?.stop(), anthropicUp?.stop(), geminiUp?.stop()])
	rmSync(dir, { recursive: true, force: true })
})

type Running = { proc: Subprocess<'ignore', 'pipe', 'pipe'>; url: string; output: () => string }

/** Starts the executable in `dir` with only `env` (and PATH, HOME, the port) until /health answers. */
async function start(env: Record<string, string>): Promise<Running> {
	const port = freePort()
	const proc = Bun.spawn([bin], { cwd: dir, env: { PATH: '/usr/bin:/bin', HOME: dir, PORT: String(port), HOST: '127.0.0.1', ...env }, stdout: 'pipe', stderr: 'pipe' })
	let out = ''
	const collect = async (s: ReadableStream<Uint8Array>) => {
		const reader = s.getReader()
		const text = new TextDecoder()
		for (let r = await reader.read(); !r.done; r = await reader.read()) out += text.decode(r.value, { stream: true })
	}
	void collect(proc.stdout)
	void collect(proc.stderr)
	const url = `http://127.0.0.1:${port}`
	for (let i = 0; i < 300 && proc.exitCode === null; i++) {
		if (await fetch(`${url}/health`).then((r) => r.ok, () => false)) return { proc, url, output: () => out }
		await Bun.sleep(100)
	}
	proc.kill('SIGKILL')
	throw new Error(`the executable did not start: ${out}`)
}

/** SIGTERM, as a service manager stops it: the exit code. */
async function stop(r: Running): Promise<number> {
	r.proc.kill('SIGTERM')
	return r.proc.exited
}

const upstreams = () => ({ openai: openaiUp.url, anthropic: anthropicUp.url, gemini: geminiUp.url })

describe('the compiled executable', () => {
	it('should answer version, help and healthcheck as commands, and refuse an unknown one rather than start', () => {
		const run = (...args: string[]) => Bun.spawnSync([bin, ...args], { cwd: dir, env: { PATH: '/usr/bin:/bin', HOME: dir, PORT: String(freePort()) }, stdout: 'pipe', stderr: 'pipe' })
		const v = run('--version')
		expect(v.exitCode).toBe(0)
		expect(v.stdout.toString()).toBe(`switchboard ${version} (bun ${Bun.version})\n`)
		expect(run('help').stdout.toString()).toContain('healthcheck ')
		// Nothing listens on that port: the probe says so with 1.
		expect(run('healthcheck').exitCode).toBe(1)
		const unknown = run('--port=8080')
		expect(unknown.exitCode).toBe(2)
		expect(unknown.stderr.toString()).toContain('switchboard: unknown command "--port=8080"')
		expect(existsSync(`${dir}/data`)).toBe(false)
	})

	it('should run alone on PGlite: console sign-in in a browser, the SDKs, its API reference, SIGTERM 0, data kept across a restart', async () => {
		const first = await start({})
		let key: string
		try {
			expect(await (await fetch(`${first.url}/health`)).json()).toMatchObject({ status: 'ok', database: { kind: 'pglite', ok: true } })
			const password = /One-time password: (\S+)/.exec(first.output())?.[1]
			expect(password).toBeDefined()
			const browser = await launch()
			try {
				const { page } = await newPage(browser, { baseURL: first.url })
				await signIn(page, 'admin', password!)
				await page.getByRole('heading', { name: 'Tokens' }).waitFor()
				// The management API with the browser's session, as the console calls it.
				const { csrf_token: csrf } = (await (await page.request.get('/api/session')).json()) as { csrf_token: string }
				key = await setUpGateway(async (path, body) => {
					const res = await page.request.post(path, { data: body, headers: { 'x-csrf-token': csrf } })
					return { status: res.status(), body: await res.json() }
				}, upstreams(), 'binary')
				// The API reference: the page from inside the executable, and the document it reads.
				expect((await page.goto('/docs'))!.status()).toBe(200)
				expect(await page.title()).toContain('Switchboard')
				const doc = (await (await page.request.get('/docs/json')).json()) as { openapi: string; paths: Record<string, unknown> }
				expect(doc.openapi).toMatch(/^3\./)
				expect(Object.keys(doc.paths)).toContain('/v1/chat/completions')
			} finally {
				await browser.close()
			}
			await callWithSdks(first.url, key)
		} finally {
			expect(await stop(first)).toBe(0)
		}
		expect(first.output()).toContain('"msg":"shutting down"')
		expect(await Bun.file(`${dir}/data/secret.key`).exists()).toBe(true)
		// Restarted on the same directory: the database is resumed (no new administrator), the key made before works.
		const again = await start({})
		try {
			const openai = new OpenAI({ baseURL: `${again.url}/v1`, apiKey: key, maxRetries: 0 })
			const chat = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'after the restart' }] })
			expect(chat.choices[0]!.message.content).toBe('Hello! You said: after the restart')
			// A deferred route (src/app-deferred.ts): the executable loads its modules at this first request.
			const batches = await openai.batches.list()
			expect(batches.data).toEqual([])
		} finally {
			expect(await stop(again)).toBe(0)
		}
		expect(again.output()).not.toContain('One-time password')
	}, 120_000)

	it.skipIf(!process.env.DATABASE_URL)('should run on PostgreSQL with DATABASE_URL: the SDKs, SIGTERM 0, data kept across a restart', async () => {
		const name = `sbt_bin_${randomString(8).toLowerCase()}`
		const admin = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} })
		await admin.unsafe(`CREATE DATABASE ${name}`)
		const u = new URL(process.env.DATABASE_URL!)
		u.pathname = `/${name}`
		const env = { DATABASE_URL: u.toString(), SECRET_KEY: 'binary-test-secret-0123', ADMIN_KEY: 'binary-admin-key-0123' }
		try {
			const first = await start(env)
			let key: string
			try {
				expect(await (await fetch(`${first.url}/health`)).json()).toMatchObject({ status: 'ok', database: { kind: 'postgres', ok: true } })
				key = await setUpGateway(adminPost(first.url, env.ADMIN_KEY), upstreams(), 'binary')
				await callWithSdks(first.url, key)
			} finally {
				expect(await stop(first)).toBe(0)
			}
			const again = await start(env)
			try {
				const anthropic = new Anthropic({ baseURL: again.url, apiKey: key, maxRetries: 0 })
				const message = await anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'after the restart' }] })
				expect(message.content).toEqual([expect.objectContaining({ text: 'Hello! You said: after the restart' })])
			} finally {
				expect(await stop(again)).toBe(0)
			}
		} finally {
			await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
			await admin.end()
		}
	}, 120_000)
})
