/**
 * HTTPS served by the gateway itself (TLS_CERT_FILE, TLS_KEY_FILE): the server started as an operator starts it with
 * a certificate for localhost and 127.0.0.1, called over https by the OpenAI and Anthropic SDKs trusting only that
 * certificate (streamed and not), its console cookie marked Secure, its health probe (`healthcheck`) answering over
 * https; and the starts it refuses, each in words naming the variable, before a database is opened.
 */
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import OpenAI from 'openai'
import { healthcheck } from '../../../src/healthcheck'
import { freePort } from '../../helpers/ports'
import { startUntilExit } from '../../helpers/start-process'
import { type TestCertificate, testCertificate } from '../../helpers/x509'
import { startAnthropicMock, startOpenAIMock } from '../../mocks'

const root = new URL('../../../', import.meta.url).pathname
const dir = `${tmpdir()}/switchboard-tls-${process.pid}`
const files = { cert: `${dir}/server.crt`, key: `${dir}/server.key`, otherKey: `${dir}/other.key`, notPem: `${dir}/notes.txt` }
const ADMIN_KEY = 'tls-admin-key-0123'
const ADMIN_PASSWORD = 'tls-console-password-0123'

let cert: TestCertificate
let openaiUp: Awaited<ReturnType<typeof startOpenAIMock>>
let anthropicUp: Awaited<ReturnType<typeof startAnthropicMock>>
let server: { url: string; proc: ReturnType<typeof Bun.spawn>; output: () => string }

/** fetch trusting only the test certificate, as an operator's clients trust the certificate they were given. */
const trusting = (input: string | URL | Request, init?: RequestInit) => fetch(input, { ...init, tls: { ca: cert.certPem } })

beforeAll(async () => {
	rmSync(dir, { recursive: true, force: true })
	mkdirSync(dir, { recursive: true })
	cert = await testCertificate({ cn: 'switchboard-tls-test', altNames: { dns: ['localhost'], ip: ['127.0.0.1'] } })
	writeFileSync(files.cert, cert.certPem)
	writeFileSync(files.key, cert.keyPem)
	chmodSync(files.key, 0o600)
	writeFileSync(files.otherKey, (await testCertificate({ cn: 'another' })).keyPem)
	writeFileSync(files.notPem, 'not a certificate')
	openaiUp = await startOpenAIMock({ apiKey: 'up-openai' })
	anthropicUp = await startAnthropicMock({ apiKey: 'up-anthropic' })
	const port = freePort()
	const proc = Bun.spawn([process.execPath, 'src/index.ts'], {
		cwd: root,
		env: {
			PATH: process.env.PATH ?? '',
			HOME: dir,
			PORT: String(port),
			HOST: '127.0.0.1',
			DATA_DIR: `${dir}/data`,
			TLS_CERT_FILE: files.cert,
			TLS_KEY_FILE: files.key,
			ADMIN_KEY,
			ADMIN_PASSWORD,
		},
		stdout: 'pipe',
		stderr: 'pipe',
	})
	let out = ''
	for (const s of [proc.stdout, proc.stderr])
		void (async () => {
			const reader = (s as ReadableStream<Uint8Array>).getReader()
			const text = new TextDecoder()
			for (let r = await reader.read(); !r.done; r = await reader.read()) out += text.decode(r.value, { stream: true })
		})()
	server = { url: `https://localhost:${port}`, proc, output: () => out }
	for (const deadline = Date.now() + 30_000; Date.now() < deadline && proc.exitCode === null; await Bun.sleep(200))
		if (await trusting(`${server.url}/health`).then((r) => r.ok, () => false)) return
	throw new Error(`the server did not start over https: ${out}`)
}, 60_000)

afterAll(async () => {
	server?.proc.kill('SIGTERM')
	await server?.proc.exited
	await Promise.all([openaiUp?.stop(), anthropicUp?.stop()])
	rmSync(dir, { recursive: true, force: true })
})

async function admin(path: string, body: unknown) {
	const res = await trusting(server.url + path, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
	expect(res.status).toBe(201)
	return (await res.json()) as any
}

describe('HTTPS with TLS_CERT_FILE and TLS_KEY_FILE', () => {
	it('should serve the SDKs over https, say so at start, and refuse plain http on that port', async () => {
		expect(server.output()).toContain(`"url":"https://127.0.0.1:${new URL(server.url).port}"`)
		await admin('/api/channels', { name: 'oa', type: 'openai', base_url: openaiUp.url, api_key: 'up-openai', models: ['gpt-4o-mini'] })
		await admin('/api/channels', { name: 'an', type: 'anthropic', base_url: anthropicUp.url, api_key: 'up-anthropic', models: ['claude-haiku-4-5'] })
		for (const name of ['gpt-4o-mini', 'claude-haiku-4-5']) await admin('/api/models', { name, input_per_mtok: 1, output_per_mtok: 2 })
		const account = await admin('/api/accounts', { name: 'tls', balance: 10 })
		const { key } = await admin('/api/tokens', { account_id: account.id, name: 'tls' })

		const openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0, fetch: trusting })
		const chat = await openai.chat.completions.create({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'over tls' }] })
		expect(chat.choices[0]!.message.content).toBe('Hello! You said: over tls')
		let streamed = ''
		for await (const c of await openai.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'streamed over tls' }] }))
			streamed += c.choices[0]?.delta?.content ?? ''
		expect(streamed).toBe('Hello! You said: streamed over tls')
		const anthropic = new Anthropic({ baseURL: server.url, apiKey: key, maxRetries: 0, fetch: trusting })
		expect(await anthropic.messages.stream({ model: 'gpt-4o-mini', max_tokens: 64, messages: [{ role: 'user', content: 'messages over tls' }] }).finalText()).toBe('Hello! You said: messages over tls')

		// A client that does not trust the certificate is not served; plain http on the port gets no answer.
		expect(await fetch(`${server.url}/health`).then(() => 'answered', (e) => String(e))).toContain('self signed certificate')
		expect(await fetch(`http://127.0.0.1:${new URL(server.url).port}/health`).then((r) => r.status, () => 'no http answer')).not.toBe(200)
	})

	it('should mark the console session cookie Secure', async () => {
		const res = await trusting(`${server.url}/api/session`, {
			method: 'POST',
			headers: { 'content-type': 'application/json', origin: server.url },
			body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }),
		})
		expect(res.status).toBe(200)
		expect(res.headers.get('set-cookie')).toMatch(/sb_session=[^;]+;.*Secure/)
	})

	it('should answer the health probe over https', async () => {
		const port = new URL(server.url).port
		expect(await healthcheck({ PORT: port, HOST: '127.0.0.1', TLS_CERT_FILE: files.cert, TLS_KEY_FILE: files.key })).toBe(0)
		// Probed over plain http, the same server is not healthy: the probe follows the TLS variables as the server does.
		expect(await healthcheck({ PORT: port, HOST: '127.0.0.1' })).toBe(1)
	})

	it('should refuse to start, naming the variable, on a certificate without its key, a key of another, or a file that is no PEM', async () => {
		const refused = async (env: Record<string, string>) => {
			const { code, stderr } = await startUntilExit('tls-refused', env)
			expect(code).toBe(1)
			return stderr
		}
		expect(await refused({ TLS_CERT_FILE: files.cert })).toContain('TLS_KEY_FILE must be set with TLS_CERT_FILE')
		expect(await refused({ TLS_KEY_FILE: files.key })).toContain('TLS_CERT_FILE must be set with TLS_KEY_FILE')
		expect(await refused({ TLS_CERT_FILE: files.cert, TLS_KEY_FILE: files.otherKey })).toContain(`TLS_KEY_FILE (${files.otherKey}) is not the key of the certificate in TLS_CERT_FILE (${files.cert})`)
		expect(await refused({ TLS_CERT_FILE: files.notPem, TLS_KEY_FILE: files.key })).toContain(`TLS_CERT_FILE (${files.notPem}) holds no certificate in PEM form`)
		expect(await refused({ TLS_CERT_FILE: files.cert, TLS_KEY_FILE: `${dir}/missing.key` })).toContain(`TLS_KEY_FILE (${dir}/missing.key) cannot be read: ENOENT`)
	}, 60_000)
})
