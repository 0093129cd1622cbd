/**
 * Request bodies sent compressed (`Content-Encoding`): Codex compresses its Responses turns with zstd for OpenAI's
 * backend, which takes them, as other agents and HTTP clients do their uploads. Each is decoded before anything reads
 * it, on every route and for every vendor: the upstream gets the plain JSON (and no `content-encoding`), the call is
 * billed as any other. A coding not taken is 415, bytes that do not decode 400, a body that decodes past the size
 * limit 413 as soon as it does, each in the caller's shape and before any upstream call or charge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { brotliCompressSync, deflateSync } from 'node:zlib'
import { lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, type Upstream, usageRows } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({ env: { MAX_JSON_BYTES: String(1024 * 1024) } })
}, SETUP_MS)
afterAll(() => m.close())

const ENCODE: Record<string, (b: Uint8Array) => Uint8Array> = {
	gzip: (b) => Bun.gzipSync(b as Uint8Array<ArrayBuffer>),
	zstd: (b) => Bun.zstdCompressSync(b),
	br: (b) => brotliCompressSync(b),
	// HTTP's deflate is zlib-wrapped; Bun's deflateSync makes the bare stream some clients send instead.
	deflate: (b) => deflateSync(b),
	'deflate (bare)': (b) => Bun.deflateSync(b as Uint8Array<ArrayBuffer>),
}

function post(path: string, headers: Record<string, string>, body: Uint8Array | string) {
	return fetch(`${m.app.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: body as Uint8Array<ArrayBuffer> | string })
}

const bytes = (v: unknown) => new TextEncoder().encode(JSON.stringify(v))
const sent = () => (['openai', 'anthropic', 'gemini'] as Upstream[]).map((u) => m.mocks[u].requests.length)

describe('a compressed request body', () => {
	it('should be decoded for a Responses turn (as Codex sends it), to OpenAI as it came and converted for Claude', async () => {
		const acct = await m.account()
		for (const up of ['openai', 'anthropic'] as const) {
			const body = { model: MODEL[up], input: [{ role: 'user', content: [{ type: 'input_text', text: 'Hello from a compressed turn' }] }], stream: true }
			const res = await post('/v1/responses', { authorization: `Bearer ${acct.key}`, 'content-encoding': 'zstd' }, ENCODE.zstd!(bytes(body)))
			expect(res.status).toBe(200)
			const text = await res.text()
			expect(text).toContain('event: response.completed')
			const seen = lastRequest(m.mocks[up])
			expect(seen.headers['content-encoding']).toBeUndefined()
			if (up === 'openai') expect(seen.body.input).toEqual(body.input)
			else expect(JSON.stringify(seen.body.messages)).toContain('Hello from a compressed turn')
		}
		const rows = await usageRows(m, acct.accountId)
		expect(rows.map((r) => r.model)).toEqual([MODEL.openai, MODEL.anthropic])
		expect(rows.every((r) => r.input_tokens > 0 && r.cost > 0)).toBe(true)
	})

	for (const [name, encode] of Object.entries(ENCODE))
		it(`should be decoded on chat, messages and Gemini alike (${name})`, async () => {
			const acct = await m.account()
			const coding = name.split(' ')[0]!
			const chat = await post('/v1/chat/completions', { authorization: `Bearer ${acct.key}`, 'content-encoding': coding }, encode(bytes({ model: MODEL.anthropic, messages: [{ role: 'user', content: 'chat, compressed' }] })))
			expect(chat.status).toBe(200)
			expect((await chat.json()).choices[0].message.content.length).toBeGreaterThan(0)
			expect(JSON.stringify(lastRequest(m.mocks.anthropic).body.messages)).toContain('chat, compressed')
			const messages = await post('/v1/messages', { 'x-api-key': acct.key, 'anthropic-version': '2023-06-01', 'content-encoding': coding }, encode(bytes({ model: MODEL.openai, max_tokens: 64, messages: [{ role: 'user', content: 'messages, compressed' }] })))
			expect(messages.status).toBe(200)
			expect((await messages.json()).type).toBe('message')
			expect(JSON.stringify(lastRequest(m.mocks.openai).body.messages)).toContain('messages, compressed')
			const gemini = await post(`/v1beta/models/${MODEL.gemini}:generateContent`, { 'x-goog-api-key': acct.key, 'content-encoding': coding }, encode(bytes({ contents: [{ role: 'user', parts: [{ text: 'gemini, compressed' }] }] })))
			expect(gemini.status).toBe(200)
			expect(lastRequest(m.mocks.gemini).body.contents).toEqual([{ role: 'user', parts: [{ text: 'gemini, compressed' }] }])
			expect(lastRequest(m.mocks.gemini).headers['content-encoding']).toBeUndefined()
		})

	it('should undo several codings in the reverse of the order listed, and take identity as none', async () => {
		const acct = await m.account()
		const plain = bytes({ model: MODEL.openai, messages: [{ role: 'user', content: 'twice compressed' }] })
		const twice = await post('/v1/chat/completions', { authorization: `Bearer ${acct.key}`, 'content-encoding': 'gzip, zstd' }, ENCODE.zstd!(ENCODE.gzip!(plain)))
		expect(twice.status).toBe(200)
		expect(lastRequest(m.mocks.openai).body.messages).toEqual([{ role: 'user', content: 'twice compressed' }])
		const identity = await post('/v1/chat/completions', { authorization: `Bearer ${acct.key}`, 'content-encoding': 'identity' }, plain)
		expect(identity.status).toBe(200)
	})
})

describe('a compressed body the gateway cannot take', () => {
	it("should be refused in the caller's shape, before any upstream call or charge", async () => {
		const acct = await m.account()
		const before = sent()
		const chatBody = bytes({ model: MODEL.openai, messages: [{ role: 'user', content: 'x' }] })
		const unsupported = await post('/v1/chat/completions', { authorization: `Bearer ${acct.key}`, 'content-encoding': 'compress' }, chatBody)
		expect(unsupported.status).toBe(415)
		expect((await unsupported.json()).error).toMatchObject({ code: 'unsupported_content_encoding', message: expect.stringContaining('gzip, deflate, br or zstd') })
		const corrupt = await post('/v1/messages', { 'x-api-key': acct.key, 'content-encoding': 'gzip' }, chatBody)
		expect(corrupt.status).toBe(400)
		expect(await corrupt.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('does not decode as its content-encoding says (gzip)') } })
		// 40 KB of gzip that decodes to 40 MB, past the 1 MB limit: cut off once past it.
		const bomb = ENCODE.gzip!(new Uint8Array(40 * 1024 * 1024).fill(32))
		expect(bomb.byteLength).toBeLessThan(100 * 1024)
		const big = await post(`/v1beta/models/${MODEL.gemini}:generateContent`, { 'x-goog-api-key': acct.key, 'content-encoding': 'gzip' }, bomb)
		expect(big.status).toBe(413)
		expect((await big.json()).error).toMatchObject({ code: 413, message: expect.stringContaining('once decoded') })
		expect(sent()).toEqual(before)
		expect(await usageRows(m, acct.accountId)).toEqual([])
		await m.app.svc.ledger.flush()
		expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
	})
})
