/**
 * Issue 3 matrix, image input: a `data:` URI and a web URL, in both protocols over every vendor, streamed and not.
 * OpenAI and Anthropic take URLs, so URLs pass through as URLs (BerriAI/litellm#12899, WIRE-NOTES #22); Gemini takes
 * only inline data, so the gateway fetches the URL under its SSRF guard (WIRE-NOTES #16). The image is served by a
 * local Bun.serve, allowed with FETCH_ALLOW=127.0.0.1; other private addresses stay refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { countWords } from '../../mocks'
import { chat, messages, type Protocol, PROTOCOLS } from './clients'
import { type Account, expectCharges, label, lastRequest, type Matrix, MODEL, PAIRS, SETUP_MS, startMatrix, type Upstream } from './harness'

/** A 1×1 PNG. */
const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
const PNG = Buffer.from(PNG_B64, 'base64')
const DATA_URI = `data:image/png;base64,${PNG_B64}`

let m: Matrix
let images: ReturnType<typeof Bun.serve>
let root: string
beforeAll(async () => {
	images = Bun.serve({
		hostname: '127.0.0.1',
		port: 0,
		fetch(req) {
			const path = new URL(req.url).pathname
			if (path === '/cat.png') return new Response(PNG, { headers: { 'content-type': 'image/png' } })
			if (path === '/page') return new Response('<html></html>', { headers: { 'content-type': 'text/html' } })
			if (path === '/huge.png') return new Response(new Uint8Array(21 * 1024 * 1024), { headers: { 'content-type': 'image/png' } })
			if (path === '/to-metadata') return Response.redirect('http://169.254.169.254/latest/meta-data/', 302)
			return new Response('not found', { status: 404 })
		},
	})
	root = `http://127.0.0.1:${images.port}`
	m = await startMatrix({ env: { FETCH_ALLOW: '127.0.0.1' } })
}, SETUP_MS)
afterAll(async () => {
	await m.close()
	await images.stop(true)
})

const QUESTION = 'what is this'
const ANSWER = `I see 1 image. Hello! You said: ${QUESTION}`

type Source = 'data' | 'url'

function ask(proto: Protocol, acct: Account, up: Upstream, stream: boolean, url: string) {
	const model = MODEL[up]
	if (proto === 'chat') {
		return chat(acct.openai, { model, messages: [{ role: 'user', content: [{ type: 'text', text: QUESTION }, { type: 'image_url', image_url: { url } }] }] }, stream)
	}
	const source = url.startsWith('data:') ? { type: 'base64' as const, media_type: 'image/png' as const, data: PNG_B64 } : { type: 'url' as const, url }
	return messages(acct.anthropic, { model, max_tokens: 256, messages: [{ role: 'user', content: [{ type: 'image', source }, { type: 'text', text: QUESTION }] }] }, stream)
}

/** The image as the vendor received it. */
function upstreamImage(up: Upstream, body: Record<string, any>): unknown {
	const parts = up === 'gemini' ? body.contents.flatMap((c: any) => c.parts) : body.messages.flatMap((x: any) => (Array.isArray(x.content) ? x.content : []))
	if (up === 'openai') return parts.find((p: any) => p.type === 'image_url')?.image_url.url
	if (up === 'anthropic') return parts.find((p: any) => p.type === 'image')?.source
	return parts.find((p: any) => p.inlineData ?? p.inline_data)?.inlineData
}

function expectedUpstream(up: Upstream, src: Source, url: string): unknown {
	if (up === 'openai') return url
	if (up === 'anthropic') return src === 'data' ? { type: 'base64', media_type: 'image/png', data: PNG_B64 } : { type: 'url', url }
	return { mimeType: 'image/png', data: PNG_B64 }
}

for (const proto of PROTOCOLS) {
	describe(`${proto} images`, () => {
		for (const [up, stream] of PAIRS)
			for (const src of ['data', 'url'] as Source[]) {
				it(`should describe an image given as ${src === 'data' ? 'a data: URI' : 'a web URL'} (${label(up, stream)})`, async () => {
					const acct = await m.account()
					const url = src === 'data' ? DATA_URI : `${root}/cat.png`
					const a = await ask(proto, acct, up, stream, url)
					expect(a.text).toBe(ANSWER)
					const input = countWords(QUESTION) + 85
					expect(a.usage).toMatchObject({ input, output: countWords(ANSWER) })
					expect(upstreamImage(up, lastRequest(m.mocks[up]).body)).toEqual(expectedUpstream(up, src, url))
					await expectCharges(m, acct, [{ model: MODEL[up], input, output: countWords(ANSWER), stream }])
				})
			}
	})
}

describe('image URL guard (Gemini upstream, where the gateway fetches)', () => {
	const cases: Array<[string, () => string, string]> = [
		['the cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/', 'url_blocked'],
		['a private network address', () => 'http://10.1.2.3/cat.png', 'url_blocked'],
		['loopback that is not allow-listed', () => `http://[::1]:${images.port}/cat.png`, 'url_blocked'],
		['a redirect to the metadata address', () => `${root}/to-metadata`, 'url_blocked'],
		['a URL that is not an image', () => `${root}/page`, 'url_bad_type'],
		['an image over the 20 MB cap', () => `${root}/huge.png`, 'url_too_large'],
	]
	for (const [what, url, code] of cases) {
		it(`should refuse ${what} with 400 in the caller's shape and charge nothing`, async () => {
			const acct = await m.account()
			const before = m.mocks.gemini.requests.length
			const chatRes = await fetch(`${m.app.url}/v1/chat/completions`, {
				method: 'POST',
				headers: { authorization: `Bearer ${acct.key}`, 'content-type': 'application/json' },
				body: JSON.stringify({ model: MODEL.gemini, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: url() } }] }] }),
			})
			expect(chatRes.status).toBe(400)
			const chatErr = (await chatRes.json()) as { error: { type: string; code: string } }
			expect(chatErr.error).toMatchObject({ type: 'invalid_request_error', code })
			const msgRes = await fetch(`${m.app.url}/v1/messages`, {
				method: 'POST',
				headers: { 'x-api-key': acct.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
				body: JSON.stringify({ model: MODEL.gemini, max_tokens: 64, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: url() } }] }] }),
			})
			expect(msgRes.status).toBe(400)
			expect(await msgRes.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
			expect(m.mocks.gemini.requests.length).toBe(before)
			expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
		})
	}
})
