/**
 * `vertex` channels keyed with executable-sourced workload identity federation (an `external_account` whose
 * `credential_source` is `{"executable": {"command", "timeout_millis", "output_file"}}`), from GATEWAY_CONFIG with
 * GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1, through the official `openai` and `@google/genai` clients: the command
 * runs (no shell: its quoted argument arrives whole) with GOOGLE_EXTERNAL_ACCOUNT_AUDIENCE, _TOKEN_TYPE, _INTERACTIVE,
 * _IMPERSONATED_EMAIL and _OUTPUT_FILE, prints Google's executable response, whose token STS exchanges; a response left
 * in `output_file` and not expired is used without running it; a failure the command reports, or a command past its
 * time, fails the call without the token said anywhere.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import { createLogger } from '../../../src/lib/log'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startVertexMock, type VertexMock } from '../../mocks'
import { externalAccountKey } from '../../mocks/vertex/sts'
import { chat } from './clients'
import { SETUP_MS } from './harness'

const PROJECT = 'proj-exe'
const REGION = 'us-east5'
const GEMINI_ID = 'gemini-2.5-flash'
const ALLOW = 'GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES'
const JWT = 'urn:ietf:params:oauth:token-type:jwt'

const dir = `${tmpdir()}/vertex-executable-${process.pid}`
const file = (name: string) => `${dir}/${name}`

let app: TestApp
let v: VertexMock
let allowed: string | undefined
const logs: string[] = []

/** A response as Google's executable contract has it, good for `ttl` seconds (negative: expired). */
const response = (token: string, ttl: number) => JSON.stringify({ version: 1, success: true, token_type: JWT, id_token: token, expiration_time: Math.floor(Date.now() / 1000) + ttl })

/** A script that logs what it was given (its variables and arguments, one line a run), then prints `body`. */
function script(name: string, body: string): string {
	writeFileSync(
		file(name),
		`#!/bin/sh\necho "$GOOGLE_EXTERNAL_ACCOUNT_AUDIENCE|$GOOGLE_EXTERNAL_ACCOUNT_TOKEN_TYPE|$GOOGLE_EXTERNAL_ACCOUNT_INTERACTIVE|$GOOGLE_EXTERNAL_ACCOUNT_IMPERSONATED_EMAIL|$GOOGLE_EXTERNAL_ACCOUNT_OUTPUT_FILE|$#|$1" >> ${file(`${name}.runs`)}\n${body}\n`,
	)
	chmodSync(file(name), 0o755)
	return file(name)
}
const runs = (name: string) => (existsSync(file(`${name}.runs`)) ? readFileSync(file(`${name}.runs`), 'utf8').trim().split('\n') : [])

beforeAll(async () => {
	allowed = process.env[ALLOW]
	process.env[ALLOW] = '1'
	mkdirSync(dir, { recursive: true })
	v = await startVertexMock({ project: PROJECT, region: REGION, expressKey: 'AQ.not-used' })
	const w = v.workload
	const good = script('token.sh', `printf '%s' '${response(w.subjectToken, 3600)}'`)
	// Prints a response and leaves it in its output file, as the contract asks of a command given one.
	const caching = script('caching.sh', `printf '%s' '${response(w.subjectToken, 3600)}' | tee "$GOOGLE_EXTERNAL_ACCOUNT_OUTPUT_FILE"`)
	writeFileSync(file('fresh.json'), response(w.subjectToken, 3600))
	writeFileSync(file('stale.json'), response('stale-token-never-sent', -60))
	const failing = script('failing.sh', `printf '%s' '{"version":1,"success":false,"code":"401","message":"Caller not authorized."}'`)
	const slow = script('slow.sh', `sleep 30\necho finished >> ${file('slow.finished')}`)
	const exe = (executable: Record<string, unknown>, impersonate = true) => externalAccountKey(v.url, w, { executable }, { impersonate, quotaProject: PROJECT })
	const channels: Array<[string, string]> = [
		['exe', exe({ command: `${good} "one argument with spaces"`, timeout_millis: 10_000 })],
		['exe-fresh', exe({ command: good, output_file: file('fresh.json') }, false)],
		['exe-stale', exe({ command: caching, output_file: file('stale.json') }, false)],
		['exe-failing', exe({ command: failing })],
		['exe-slow', exe({ command: slow, timeout_millis: 5_000 })],
	]
	app = await startTestApp({
		config: {
			channels: channels.map(([name, key]) => ({ name, type: 'vertex', base_url: v.url, api_key: key, models: [name], model_map: { [name]: GEMINI_ID }, settings: { region: REGION } })),
			models: channels.map(([name]) => ({ name, input_per_mtok: 1, output_per_mtok: 4 })),
		},
	})
	Object.assign(app.svc, { log: createLogger('debug', (l) => logs.push(l)) })
}, SETUP_MS)

afterAll(async () => {
	if (allowed === undefined) delete process.env[ALLOW]
	else process.env[ALLOW] = allowed
	await app?.close()
	await v?.stop()
	rmSync(dir, { recursive: true, force: true })
})

async function client() {
	const a = await app.account(10)
	return { openai: new OpenAI({ apiKey: a.key, baseURL: `${app.url}/v1`, maxRetries: 0 }), genai: new GoogleGenAI({ apiKey: a.key, httpOptions: { baseUrl: app.url, apiVersion: 'v1beta' } }) }
}

const last = () => v.requests[v.requests.length - 1]!
const exchanges = (since: number) => v.tokenRequests.slice(since).filter((r) => r.path === '/v1/token')

describe('vertex channel with an executable-sourced external_account', () => {
	it("should run the command with Google's variables, exchange the token it prints, impersonate, and keep the token", async () => {
		const since = v.tokenRequests.length
		expect((await chat((await client()).openai, { model: 'exe', messages: [{ role: 'user', content: 'hello command' }] }, false)).text).toBe('Hello! You said: hello command')
		// Run once, not through a shell: the quoted argument arrived as one.
		expect(runs('token.sh')).toEqual([`${v.workload.audience}|${JWT}|0|${v.workload.serviceAccount}||1|one argument with spaces`])
		expect(exchanges(since)[0]!.form).toMatchObject({ subject_token: v.workload.subjectToken, subject_token_type: JWT, audience: v.workload.audience })
		expect(last().headers.authorization).toMatch(/^Bearer ya29\.imp-\d+$/)
		expect((await chat((await client()).openai, { model: 'exe', messages: [{ role: 'user', content: 'again' }] }, true)).text).toBe('Hello! You said: again')
		expect(runs('token.sh')).toHaveLength(1)
	})

	it('should take a response left in output_file while it has not expired, running nothing', async () => {
		const since = v.tokenRequests.length
		const before = runs('token.sh').length
		const r = await (await client()).genai.models.generateContent({ model: 'exe-fresh', contents: 'hello cached' })
		expect(r.text).toBe('Hello! You said: hello cached')
		expect(runs('token.sh')).toHaveLength(before)
		expect(exchanges(since)[0]!.form!.subject_token).toBe(v.workload.subjectToken)
		expect(last().headers.authorization).toMatch(/^Bearer ya29\.sts-\d+$/)
	})

	it('should run the command over an expired response in output_file, which it then holds', async () => {
		const since = v.tokenRequests.length
		expect((await chat((await client()).openai, { model: 'exe-stale', messages: [{ role: 'user', content: 'hello stale' }] }, false)).text).toBe('Hello! You said: hello stale')
		expect(runs('caching.sh')).toEqual([`${v.workload.audience}|${JWT}|0||${file('stale.json')}|0|`])
		expect(exchanges(since).map((r) => r.form!.subject_token)).toEqual([v.workload.subjectToken])
		expect(JSON.parse(readFileSync(file('stale.json'), 'utf8')).id_token).toBe(v.workload.subjectToken)
	})

	it("should refuse a command reporting failure as the channel's credentials, saying its code and message", async () => {
		const since = v.tokenRequests.length
		const err = await (await client()).openai.chat.completions.create({ model: 'exe-failing', messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e)
		expect(err).toBeInstanceOf(OpenAI.APIError)
		expect(err.status).toBe(502)
		expect(exchanges(since)).toHaveLength(0)
		const list = (await app.admin('/api/channels')).body.data as Array<{ name: string; status: string; disabled_reason: string | null }>
		const ch = list.find((c) => c.name === 'exe-failing')!
		expect(ch.status).toBe('disabled')
		expect(ch.disabled_reason).toContain(`executable ${file('failing.sh')}: failed: 401: Caller not authorized.`)
	})

	it('should kill a command past timeout_millis and fail the call, the channel left to cool down', async () => {
		const started = Date.now()
		const err = await (await client()).openai.chat.completions.create({ model: 'exe-slow', messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e)
		expect(err).toBeInstanceOf(OpenAI.APIError)
		expect(Date.now() - started).toBeLessThan(15_000)
		expect(runs('slow.sh')).toHaveLength(1)
		const list = (await app.admin('/api/channels')).body.data as Array<{ name: string; status: string }>
		expect(list.find((c) => c.name === 'exe-slow')!.status).not.toBe('disabled')
		expect(logs.join('\n')).toContain('did not finish within 5000 ms')
		await Bun.sleep(200)
		expect(existsSync(file('slow.finished'))).toBe(false)
		for (const l of logs) expect(l).not.toContain(v.workload.subjectToken)
	}, 20_000)
})
