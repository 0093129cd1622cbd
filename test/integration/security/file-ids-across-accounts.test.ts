/**
 * Every account shares a channel's vendor key, so the vendor would serve any account's uploaded file to anyone naming
 * its id. Account B names account A's files in model requests, as raw HTTP: plainly, and with the key spelt with a
 * JSON escape (`"file\u005fid"`, which parses to `file_id`), which a check reading only the body's text would miss.
 * Each is 404 before any upstream call or charge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic, { toFile as anthropicFile } from '@anthropic-ai/sdk'
import OpenAI, { toFile } from 'openai'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startAnthropicMock, startOpenAIMock, type VendorMock } from '../../mocks'

let oa: VendorMock
let an: VendorMock
let app: TestApp
let owner: { openai: string; anthropic: string }

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	an = await startAnthropicMock({ apiKey: 'up-an' })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['gpt-4o-mini'] },
				{ name: 'an', type: 'anthropic', base_url: an.url, api_key: 'up-an', models: ['claude-haiku-4-5'] },
			],
			models: [
				{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 },
				{ name: 'claude-haiku-4-5', input_per_mtok: 1, output_per_mtok: 5 },
			],
		},
	})
	const a = await app.account(1)
	const openai = new OpenAI({ apiKey: a.key, baseURL: `${app.url}/v1`, maxRetries: 0 })
	const line = { custom_id: 'x', method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'private' }] } }
	const batchFile = await openai.files.create({ file: await toFile(Buffer.from(JSON.stringify(line) + '\n'), 'batch.jsonl'), purpose: 'batch' })
	const anthropic = new Anthropic({ apiKey: a.key, baseURL: app.url, maxRetries: 0 })
	const pdf = await anthropic.beta.files.upload({ file: await anthropicFile(Buffer.from('%PDF-1.4 private'), 'secret.pdf', { type: 'application/pdf' }) })
	owner = { openai: batchFile.id, anthropic: pdf.id }
}, 60_000)

afterAll(async () => {
	await app.close()
	await oa.stop()
	await an.stop()
})

/** The body as text, its `file_id` keys spelt `key`. */
const spelt = (body: unknown, key: string) => JSON.stringify(body).replaceAll('"file_id"', `"${key}"`)

const post = (key: string, path: string, body: string) =>
	fetch(`${app.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'anthropic-beta': 'files-api-2025-04-14' }, body })

describe("another account's file ids in model requests", () => {
	const requests = () => [
		['/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: owner.openai } }] }] }],
		['/v1/chat/completions', { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: owner.openai } }] }] }],
		['/v1/responses', { model: 'gpt-4o-mini', input: [{ role: 'user', content: [{ type: 'input_file', file_id: owner.openai }] }] }],
		['/v1/responses', { model: 'gpt-4o-mini', stream: true, input: [{ role: 'user', content: [{ type: 'input_file', file_id: owner.openai }] }] }],
		['/v1/messages', { model: 'claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: owner.anthropic } }] }] }],
	] as const

	for (const key of ['file_id', 'file\\u005fid', '\\u0066ile_id'])
		it(`should answer 404 before any upstream call or charge, the key spelt ${key}`, async () => {
			const b = await app.account(1)
			const before = oa.requests.length + an.requests.length
			for (const [path, body] of requests()) {
				const res = await post(b.key, path, spelt(body, key))
				expect(res.status).toBe(404)
				expect(await res.text()).toContain(path === '/v1/messages' ? owner.anthropic : owner.openai)
			}
			expect(oa.requests.length + an.requests.length).toBe(before)
			expect(await app.balance(b.accountId)).toBe(1)
		})
})
