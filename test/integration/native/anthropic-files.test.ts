/**
 * Anthropic's Files API (beta) through the gateway, with the official `@anthropic-ai/sdk` against the Anthropic mock
 * (test/mocks/anthropic/files.ts): upload (streamed to one Anthropic channel), list, retrieve, download, delete, each
 * file its account's; messages naming a file go to the channel holding it, with the Files API beta; another vendor's
 * model is told it cannot read it; OpenAI's Files API still answers OpenAI's clients on the same path.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic, { toFile } from '@anthropic-ai/sdk'
import OpenAI, { toFile as openaiFile } from 'openai'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startAnthropicMock, startOpenAIMock, type VendorMock } from '../../mocks'

let holding: VendorMock
let other: VendorMock
let oa: VendorMock
let app: TestApp

// `holding` (priority 1) serves haiku and opus; `other` (priority 0) opus, so opus is routed to `other` first unless a
// file pins it. An upload by a key limited to haiku can only go to `holding`.
const config = (a: string, b: string, openai: string): GatewayConfig => ({
	channels: [
		{ name: 'holding', type: 'anthropic', base_url: a, api_key: 'up-a', models: ['claude-haiku-4-5', 'claude-opus-5'], priority: 1 },
		{ name: 'other', type: 'anthropic', base_url: b, api_key: 'up-b', models: ['claude-opus-5'], priority: 0 },
		{ name: 'oa', type: 'openai', base_url: openai, api_key: 'up-oa', models: ['gpt-4o-mini'] },
	],
	models: [
		{ name: 'claude-haiku-4-5', input_per_mtok: 1, output_per_mtok: 5 },
		{ name: 'claude-opus-5', input_per_mtok: 5, output_per_mtok: 25 },
		{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 },
	],
})

beforeAll(async () => {
	holding = await startAnthropicMock({ apiKey: 'up-a' })
	other = await startAnthropicMock({ apiKey: 'up-b' })
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	app = await startTestApp({ config: config(holding.url, other.url, oa.url), env: { MAX_UPLOAD_BYTES: String(64 * 1024) } })
}, 60_000)

afterAll(async () => {
	await app.close()
	await holding.stop()
	await other.stop()
	await oa.stop()
})

const claude = (key: string) => new Anthropic({ apiKey: key, baseURL: app.url, maxRetries: 0 })
const failure = (p: Promise<unknown>) =>
	p.then(
		() => undefined,
		(e) => e as InstanceType<typeof Anthropic.APIError>,
	)

/** An account with an unrestricted key and one limited to haiku (whose uploads can only go to `holding`). */
async function account() {
	const a = await app.account(5)
	const k = await app.admin('/api/tokens', { body: { account_id: a.accountId, name: 'haiku', allowed_models: ['claude-haiku-4-5'] } })
	return { ...a, any: claude(a.key), haiku: claude(k.body.key as string) }
}

const PDF = Buffer.from('%PDF-1.4 a small document')
const fileDoc = (file_id: string): Anthropic.Beta.BetaContentBlockParam => ({ type: 'document', source: { type: 'file', file_id } })

describe('Anthropic Files API', () => {
	it('should upload, list, retrieve and delete through the SDK, on the channel the upload went to, with the beta header', async () => {
		const { haiku, any } = await account()
		const meta = await haiku.beta.files.upload({ file: await toFile(PDF, 'report.pdf', { type: 'application/pdf' }) })
		expect(meta).toMatchObject({ type: 'file', filename: 'report.pdf', mime_type: 'application/pdf', size_bytes: PDF.length, downloadable: false })
		expect(meta.id).toStartWith('file_')
		expect(typeof meta.created_at).toBe('string')
		// Streamed to the holding channel with its key and the beta the SDK did not send.
		const up = holding.requests.find((r) => r.method === 'POST' && r.path === '/v1/files')!
		expect(up.headers['x-api-key']).toBe('up-a')
		expect(up.headers['anthropic-beta']).toBe('files-api-2025-04-14')
		expect(Buffer.from(await (up.form!.get('file') as File).arrayBuffer()).equals(PDF)).toBe(true)
		expect(other.requests.some((r) => r.path.startsWith('/v1/files'))).toBe(false)

		expect(await any.beta.files.retrieveMetadata(meta.id)).toEqual(meta)
		const second = await any.beta.files.upload({ file: await toFile(Buffer.from('notes'), 'notes.txt', { type: 'text/plain' }), betas: ['files-api-2025-04-14'] })
		const page = await any.beta.files.list({ limit: 1 })
		expect(page.data.map((f) => f.id)).toEqual([second.id])
		const all: string[] = []
		for await (const f of any.beta.files.list({ limit: 1 })) all.push(f.id)
		expect(all).toEqual([second.id, meta.id])

		expect(await any.beta.files.delete(meta.id)).toEqual({ id: meta.id, type: 'file_deleted' })
		expect((await failure(any.beta.files.retrieveMetadata(meta.id)))?.status).toBe(404)
		expect((await any.beta.files.list()).data.map((f) => f.id)).toEqual([second.id])
	})

	it("should give another account Anthropic's 404 for a file, in messages too, and list none of them", async () => {
		const owner = await account()
		const meta = await owner.haiku.beta.files.upload({ file: await toFile(PDF, 'secret.pdf', { type: 'application/pdf' }) })
		const stranger = await account()
		const refused = await Promise.all([stranger.any.beta.files.retrieveMetadata(meta.id), stranger.any.beta.files.delete(meta.id), stranger.any.beta.files.download(meta.id)].map(failure))
		for (const e of refused) {
			expect(e?.status).toBe(404)
			expect(e?.error).toMatchObject({ type: 'error', error: { type: 'not_found_error', message: `File not found: ${meta.id}` } })
		}
		expect((await stranger.any.beta.files.list()).data).toEqual([])
		holding.reset()
		const e = await failure(stranger.any.beta.messages.create({ model: 'claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user', content: [fileDoc(meta.id), { type: 'text', text: 'summarise' }] }] }))
		expect(e?.status).toBe(404)
		expect(e?.error).toMatchObject({ error: { type: 'not_found_error', message: `File not found: ${meta.id}` } })
		expect(holding.requests.some((r) => r.path === '/v1/messages')).toBe(false)
		// Still the owner's.
		expect((await owner.any.beta.files.retrieveMetadata(meta.id)).id).toBe(meta.id)
	})

	it('should route a message naming a file to the channel holding it, with the beta, streamed or not', async () => {
		const { haiku, any } = await account()
		const meta = await haiku.beta.files.upload({ file: await toFile(PDF, 'doc.pdf', { type: 'application/pdf' }) })
		holding.reset()
		other.reset()
		// Opus goes to `other` first (priority 0); the file is on `holding`.
		const msg = await any.beta.messages.create({ model: 'claude-opus-5', max_tokens: 50, messages: [{ role: 'user', content: [fileDoc(meta.id), { type: 'text', text: 'summarise it' }] }] })
		expect(msg.content[0]).toMatchObject({ type: 'text', text: 'Hello! You said: summarise it' })
		const sent = holding.requests.filter((r) => r.path === '/v1/messages')
		expect(sent.length).toBe(1)
		expect(sent[0]!.headers['anthropic-beta']).toBe('files-api-2025-04-14')
		expect(JSON.stringify(sent[0]!.body)).toContain(meta.id)
		expect(other.requests.some((r) => r.path === '/v1/messages')).toBe(false)

		const stream = any.beta.messages.stream(
			{ model: 'claude-opus-5', max_tokens: 50, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: meta.id } }, { type: 'text', text: 'again' }] }] },
			{ headers: { 'anthropic-beta': 'prompt-caching-2024-07-31' } },
		)
		expect((await stream.finalMessage()).stop_reason).toBe('end_turn')
		expect(holding.requests.filter((r) => r.path === '/v1/messages').at(-1)!.headers['anthropic-beta']).toBe('prompt-caching-2024-07-31,files-api-2025-04-14')
		expect(other.requests.some((r) => r.path === '/v1/messages')).toBe(false)
		// A request naming no file routes as before.
		await any.messages.create({ model: 'claude-opus-5', max_tokens: 20, messages: [{ role: 'user', content: 'file_id' }] })
		expect(other.requests.filter((r) => r.path === '/v1/messages').length).toBe(1)
	})

	it("should refuse a file for another vendor's model with a 400 saying why", async () => {
		const { haiku, any } = await account()
		const meta = await haiku.beta.files.upload({ file: await toFile(PDF, 'doc.pdf', { type: 'application/pdf' }) })
		const e = await failure(any.beta.messages.create({ model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: [fileDoc(meta.id), { type: 'text', text: 'hi' }] }] }))
		expect(e?.status).toBe(400)
		expect(e?.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
		expect((e?.error as { error: { message: string } }).error.message).toContain(`the file ${meta.id} uploaded with Anthropic's Files API can be read only by the Anthropic models of the channel it was uploaded to, and model "gpt-4o-mini" is not served there`)
	})

	it('should count tokens of a message naming a file on the channel holding it, with the beta, and 404 another account', async () => {
		const owner = await account()
		const meta = await owner.haiku.beta.files.upload({ file: await toFile(PDF, 'count.pdf', { type: 'application/pdf' }) })
		const counts = (m: VendorMock) => m.requests.filter((r) => r.path === '/v1/messages/count_tokens')
		holding.reset()
		other.reset()
		// Opus goes to `other` first; only `holding` can read the file. The non-beta SDK call sends no beta header.
		const messages = [{ role: 'user', content: [fileDoc(meta.id), { type: 'text', text: 'how long is it' }] }] as Anthropic.MessageParam[]
		const counted = await owner.any.messages.countTokens({ model: 'claude-opus-5', messages })
		expect(counted.input_tokens).toBeGreaterThan(0)
		expect(counts(other).length).toBe(0)
		expect(counts(holding).length).toBe(1)
		expect(counts(holding)[0]!.headers['anthropic-beta']).toBe('files-api-2025-04-14')
		expect(JSON.stringify(counts(holding)[0]!.body)).toContain(meta.id)

		const stranger = await account()
		const e = await failure(stranger.haiku.messages.countTokens({ model: 'claude-haiku-4-5', messages }))
		expect(e?.status).toBe(404)
		expect(e?.error).toMatchObject({ type: 'error', error: { type: 'not_found_error', message: `File not found: ${meta.id}` } })
		expect(counts(holding).length + counts(other).length).toBe(1)
	})

	it("should run a message batch naming a file on the channel holding it, with the beta, and refuse files not the account's or of two channels", async () => {
		const owner = await account()
		const meta = await owner.haiku.beta.files.upload({ file: await toFile(PDF, 'batch.pdf', { type: 'application/pdf' }) })
		const created = (m: VendorMock) => m.requests.filter((r) => r.method === 'POST' && r.path === '/v1/messages/batches')
		holding.reset()
		other.reset()
		const requests = [
			{ custom_id: 'doc', params: { model: 'claude-opus-5', max_tokens: 50, messages: [{ role: 'user' as const, content: [fileDoc(meta.id), { type: 'text' as const, text: 'summarise the doc' }] }] } },
			{ custom_id: 'plain', params: { model: 'claude-opus-5', max_tokens: 50, messages: [{ role: 'user' as const, content: 'no file here' }] } },
		] as Anthropic.Messages.BatchCreateParams.Request[]
		const batch = await owner.any.messages.batches.create({ requests })
		expect(created(other).length).toBe(0)
		expect(created(holding).length).toBe(1)
		expect(created(holding)[0]!.headers['anthropic-beta']).toBe('files-api-2025-04-14')
		expect(JSON.stringify(created(holding)[0]!.body)).toContain(meta.id)
		expect((await owner.any.messages.batches.retrieve(batch.id)).processing_status).toBe('ended')
		const lines: Array<{ custom_id: string; result: { type: string } }> = []
		for await (const line of await owner.any.messages.batches.results(batch.id)) lines.push(line)
		expect(lines.map((l) => [l.custom_id, l.result.type]).sort()).toEqual([
			['doc', 'succeeded'],
			['plain', 'succeeded'],
		])

		// Another account's file: Anthropic's 404, nothing sent and nothing held.
		const stranger = await account()
		const e = await failure(stranger.any.messages.batches.create({ requests }))
		expect(e?.status).toBe(404)
		expect(e?.error).toMatchObject({ type: 'error', error: { type: 'not_found_error', message: `File not found: ${meta.id}` } })
		expect(await app.balance(stranger.accountId)).toBe(5)

		// Files on two channels: an upload by the unrestricted key goes to `other`, first in routing order.
		const second = await owner.any.beta.files.upload({ file: await toFile(PDF, 'elsewhere.pdf', { type: 'application/pdf' }) })
		expect(other.requests.some((r) => r.method === 'POST' && r.path === '/v1/files')).toBe(true)
		const both = await failure(
			owner.any.messages.batches.create({
				requests: [requests[0]!, { custom_id: 'second', params: { model: 'claude-opus-5', max_tokens: 50, messages: [{ role: 'user', content: [fileDoc(second.id), { type: 'text', text: 'and this' }] }] } }] as Anthropic.Messages.BatchCreateParams.Request[],
			}),
		)
		expect(both?.status).toBe(400)
		expect((both?.error as { error: { message: string } }).error.message).toContain('uploaded through different vendor keys; one batch can name the files of one only')
		expect(created(holding).length + created(other).length).toBe(1)
	})

	it("should download a downloadable file's bytes and relay Anthropic's refusal for an upload", async () => {
		const { haiku } = await account()
		const bytes = Buffer.from('col\n1\n2\n')
		const made = await haiku.beta.files.upload({ file: await toFile(bytes, 'out #downloadable.csv', { type: 'text/csv' }) })
		const res = await haiku.beta.files.download(made.id)
		expect(res.headers.get('content-type')).toBe('text/csv')
		expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true)
		const up = await haiku.beta.files.upload({ file: await toFile(PDF, 'doc.pdf', { type: 'application/pdf' }) })
		const e = await failure(haiku.beta.files.download(up.id))
		expect(e?.status).toBe(400)
		expect((e?.error as { error: { message: string } }).error.message).toContain('is not downloadable')
	})

	it('should relay an upload sent without a length (chunked) as it arrives', async () => {
		const { key, any } = await account()
		const form = new FormData()
		form.append('file', new File([PDF], 'chunked.pdf', { type: 'application/pdf' }))
		const whole = new Response(form)
		const type = whole.headers.get('content-type')!
		const bytes = new Uint8Array(await whole.arrayBuffer())
		const body = new ReadableStream<Uint8Array>({
			start(c) {
				for (let i = 0; i < bytes.length; i += 16) c.enqueue(bytes.slice(i, i + 16))
				c.close()
			},
		})
		const res = await fetch(`${app.url}/v1/files`, {
			method: 'POST',
			headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': type },
			body,
			duplex: 'half',
		} as RequestInit)
		expect(res.status).toBe(200)
		const meta = (await res.json()) as Anthropic.Beta.BetaFileMetadata
		expect(meta).toMatchObject({ type: 'file', filename: 'chunked.pdf', size_bytes: PDF.length })
		expect(res.headers.get('request-id')).toBe(res.headers.get('x-request-id'))
		expect((await any.beta.files.retrieveMetadata(meta.id)).filename).toBe('chunked.pdf')
	})

	it("should refuse an upload over MAX_UPLOAD_BYTES with Anthropic's 413 before sending it", async () => {
		const { haiku } = await account()
		holding.reset()
		const e = await failure(haiku.beta.files.upload({ file: await toFile(Buffer.alloc(70 * 1024, 1), 'big.bin') }))
		expect(e?.status).toBe(413)
		expect(e?.error).toMatchObject({ type: 'error', error: { type: 'request_too_large' } })
		expect(holding.requests.length).toBe(0)
	})

	it("should still serve OpenAI's Files API to the openai SDK on the same path", async () => {
		const { key } = await account()
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		const line = JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } })
		const file = await openai.files.create({ file: await openaiFile(Buffer.from(`${line}\n`), 'batch.jsonl'), purpose: 'batch' })
		expect(file).toMatchObject({ object: 'file', purpose: 'batch' })
		expect((await openai.files.retrieve(file.id)).id).toBe(file.id)
		expect((await openai.files.list()).data.map((f) => f.id)).toEqual([file.id])
		// Each API lists only its own files.
		expect((await claude(key).beta.files.list()).data).toEqual([])
	})
})
