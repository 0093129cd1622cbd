/**
 * Body limits hold whether or not the client says how long its body is: one sent chunked (no content-length) is
 * measured as it arrives and refused with 413 in the caller's shape once it passes MAX_JSON_BYTES or
 * MAX_UPLOAD_BYTES, before any upstream call or charge; one within the limit is served as usual. The gateway listens
 * as the server does (src/server.ts), so a declared length however far past the limit gets that 413 too, not Bun's
 * bare one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { usageOf } from '../surface/helpers'

const JSON_LIMIT = 8 * 1024
const UPLOAD_LIMIT = 16 * 1024

let app: TestApp
let oa: VendorMock
let key: string
let accountId: number

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	app = await startTestApp({
		serverOptions: true,
		env: { MAX_JSON_BYTES: String(JSON_LIMIT), MAX_UPLOAD_BYTES: String(UPLOAD_LIMIT) },
		config: {
			channels: [{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['gpt-4o-mini', 'whisper-1'] }],
			models: [
				{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 },
				{ name: 'whisper-1', per_minute: 0.006 },
			],
		},
	})
	;({ key, accountId } = await app.account(1))
}, 60_000)
afterAll(async () => {
	await app.close()
	await oa.stop()
})

/** The bytes as a stream of small pieces: fetch then sends them chunked, with no content-length. */
const chunked = (bytes: Uint8Array) =>
	new ReadableStream<Uint8Array>({
		start(c) {
			for (let at = 0; at < bytes.length; at += 1000) c.enqueue(bytes.subarray(at, at + 1000))
			c.close()
		},
	})

async function send(path: string, body: Uint8Array, headers: Record<string, string>) {
	const res = await fetch(app.url + path, { method: 'POST', headers: { authorization: `Bearer ${key}`, ...headers }, body: chunked(body), duplex: 'half' } as RequestInit)
	return { status: res.status, body: (await res.json()) as any }
}

const chatBody = (padding: number) =>
	new TextEncoder().encode(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], metadata: { pad: 'x'.repeat(padding) } }))

describe('a body sent without a length', () => {
	it('should be refused with 413 in the caller’s shape once it passes the JSON limit, reaching no upstream', async () => {
		oa.reset()
		const chat = await send('/v1/chat/completions', chatBody(JSON_LIMIT), { 'content-type': 'application/json' })
		expect(chat.status).toBe(413)
		expect(chat.body.error).toMatchObject({ code: 'request_too_large' })
		const messages = await send('/v1/messages', chatBody(JSON_LIMIT), { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' })
		expect(messages.status).toBe(413)
		expect(messages.body).toMatchObject({ type: 'error', error: { type: 'request_too_large' } })
		expect(oa.requests).toHaveLength(0)
		expect(await usageOf(app, accountId)).toEqual([])
	})

	it('should be served as usual within the limit', async () => {
		const r = await send('/v1/chat/completions', chatBody(JSON_LIMIT / 2), { 'content-type': 'application/json' })
		expect(r.status).toBe(200)
		expect(r.body.choices[0].message.content).toBeString()
	})

	it('should be refused with 413 past the upload limit when it is a multipart upload', async () => {
		oa.reset()
		const form = new FormData()
		form.append('model', 'whisper-1')
		form.append('file', new Blob([new Uint8Array(UPLOAD_LIMIT + 1000)], { type: 'audio/wav' }), 'a.wav')
		const encoded = new Response(form)
		const bytes = new Uint8Array(await encoded.arrayBuffer())
		const r = await send('/v1/audio/transcriptions', bytes, { 'content-type': encoded.headers.get('content-type')! })
		expect(r.status).toBe(413)
		expect(oa.requests).toHaveLength(0)
	})
})

describe('a body of a declared length', () => {
	// Past what Bun itself once took (the larger limit and 1 MiB), which it refused with a bare 413 before the gateway.
	const FAR = 2 * 1024 * 1024

	it("should be refused with 413 in the caller's shape and its request id, however far past the limit (SDKs send a length)", async () => {
		oa.reset()
		const before = await usageOf(app, accountId)
		const anthropic = new Anthropic({ apiKey: key, baseURL: app.url, maxRetries: 0 })
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		for (const size of [JSON_LIMIT, FAR]) {
			const text = 'a '.repeat(size / 2)
			const e = (await anthropic.messages.create({ model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: text }] }).catch((x: unknown) => x)) as InstanceType<typeof Anthropic.APIError>
			expect(e).toBeInstanceOf(Anthropic.APIError)
			expect(e.status).toBe(413)
			expect(e.error).toMatchObject({ type: 'error', error: { type: 'request_too_large' }, request_id: e.requestID })
			expect(e.requestID).toBeTruthy()
			const o = (await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] }).catch((x: unknown) => x)) as InstanceType<typeof OpenAI.APIError>
			expect(o).toBeInstanceOf(OpenAI.APIError)
			expect(o.status).toBe(413)
			expect(o.error).toMatchObject({ code: 'request_too_large' })
			expect(o.headers?.get('x-request-id')).toBeTruthy()
		}
		expect(oa.requests).toHaveLength(0)
		expect(await usageOf(app, accountId)).toEqual(before)
	})
})

describe('a body without a length far past the limit', () => {
	const HUGE = 256 * 1024 * 1024

	/** HUGE bytes of spaces in pieces of 64 KiB, each made as it is read; `sent()` the bytes handed over so far. */
	function huge() {
		let sent = 0
		const piece = new Uint8Array(64 * 1024).fill(0x20)
		const body = new ReadableStream<Uint8Array>({
			pull(c) {
				if (sent >= HUGE) return c.close()
				sent += piece.length
				c.enqueue(piece)
			},
		})
		return { body, sent: () => sent }
	}

	const cases: Array<[string, string, Record<string, string>]> = [
		['/v1/messages', '/v1/messages', { 'x-api-key': '', 'anthropic-version': '2023-06-01' }],
		// A dialect's rewrite reads the body whole to put the deployment in it: measured before it.
		['an Azure deployment', '/openai/deployments/gpt-4o-mini/chat/completions?api-version=2024-10-21', { 'api-key': '' }],
	]
	for (const [name, path, auth] of cases)
		it(`should be refused with 413 once past the limit, not read to its end (${name})`, async () => {
			const headers = Object.fromEntries(Object.entries(auth).map(([k, v]) => [k, v || key]))
			const { body, sent } = huge()
			const res = await fetch(app.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, duplex: 'half' } as RequestInit)
			expect(res.status).toBe(413)
			expect(((await res.json()) as any).error).toMatchObject(name === '/v1/messages' ? { type: 'request_too_large' } : { code: 'request_too_large' })
			expect(res.headers.get('x-request-id')).toBeTruthy()
			await body.cancel().catch(() => {})
			// What the client had handed over when the answer came: the limit, and what the sockets' buffers took.
			expect(sent()).toBeLessThan(HUGE / 4)
		})
})
