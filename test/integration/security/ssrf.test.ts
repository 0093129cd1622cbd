/**
 * SSRF through the one place the gateway downloads what a caller names: image and document URLs bound for a Gemini
 * upstream (relay/images.ts → lib/safe-fetch.ts). Private, loopback, link-local and metadata targets are refused in
 * every spelling (decimal, octal, hex, IPv6, IPv4-mapped, a hosts-file name, a redirect), with a 400 in the caller's
 * shape; downloads are capped in size and time, and a download that fails any way is a 400, never a 500, and no charge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { MODELS, post, type SecApp, startSecApp } from './setup'

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')

let guarded: SecApp // FETCH_ALLOW empty: nothing private may be reached
let allowed: SecApp // FETCH_ALLOW=127.0.0.1: the local image server is reachable, to test caps and failures
let images: ReturnType<typeof Bun.serve>
let root: string
let hits: string[]
let cut: Bun.TCPSocketListener // promises 1000 bytes, sends 16, then closes the connection

beforeAll(async () => {
	hits = []
	cut = Bun.listen({
		hostname: '127.0.0.1',
		port: 0,
		socket: {
			data(s) {
				s.write('HTTP/1.1 200 OK\r\ncontent-type: image/png\r\ncontent-length: 1000\r\n\r\n' + 'x'.repeat(16))
				setTimeout(() => s.end(), 20)
			},
		},
	})
	images = Bun.serve({
		hostname: '127.0.0.1',
		port: 0,
		fetch(req) {
			const path = new URL(req.url).pathname
			hits.push(path)
			if (path === '/cat.png') return new Response(PNG, { headers: { 'content-type': 'image/png' } })
			if (path === '/page') return new Response('<html></html>', { headers: { 'content-type': 'text/html' } })
			if (path === '/no-type') return new Response(PNG)
			// A body sent chunked, without a length, growing past the cap.
			if (path === '/endless.png')
				return new Response(new ReadableStream({ pull: (c) => c.enqueue(new Uint8Array(1 << 20)) }), { headers: { 'content-type': 'image/png' } })
			if (path === '/slow.png')
				return new Response(new ReadableStream({ async pull(c) { await Bun.sleep(1000); c.enqueue(new Uint8Array(16)) } }), { headers: { 'content-type': 'image/png' } })
			if (path === '/reset.png') return Response.redirect(`http://127.0.0.1:${cut.port}/cut.png`, 302)
			if (path === '/bad-location') return new Response(null, { status: 302, headers: { location: 'http://[::1' } })
			if (path === '/to-file') return new Response(null, { status: 302, headers: { location: 'file:///etc/passwd' } })
			if (path === '/loop') return new Response(null, { status: 302, headers: { location: '/loop' } })
			const to = /^\/to\/(.+)$/.exec(path)
			if (to) return new Response(null, { status: 302, headers: { location: decodeURIComponent(to[1]!) } })
			return new Response('not found', { status: 404 })
		},
	})
	root = `http://127.0.0.1:${images.port}`
	guarded = await startSecApp()
	allowed = await startSecApp({ FETCH_ALLOW: '127.0.0.1' })
}, 60_000)
afterAll(async () => {
	await guarded?.close()
	await allowed?.close()
	images?.stop(true)
	cut?.stop(true)
})

/** Asks the Gemini-served model about an image at `url` through OpenAI chat. */
async function askChat(app: SecApp, key: string, url: string) {
	return post(`${app.url}/v1/chat/completions`, { authorization: `Bearer ${key}` }, {
		model: MODELS.gemini,
		max_tokens: 20,
		messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this' }, { type: 'image_url', image_url: { url } }] }],
	})
}

/** The same through Anthropic messages (an image `url` source, and a `url` document). */
async function askMessages(app: SecApp, key: string, url: string, kind: 'image' | 'document' = 'image') {
	return post(`${app.url}/v1/messages`, { 'x-api-key': key, 'anthropic-version': '2023-06-01' }, {
		model: MODELS.gemini,
		max_tokens: 20,
		messages: [{ role: 'user', content: [{ type: kind, source: { type: 'url', url } }, { type: 'text', text: 'what is this' }] }],
	})
}

async function expectRefusedUncharged(app: SecApp, acct: { accountId: number }, r: { status: number; json: any; text: string }, code: string, before: number) {
	expect({ status: r.status, code: r.json?.error?.code ?? r.json?.error?.type, body: r.text }).toMatchObject({ status: 400 })
	if (r.json?.error?.code !== undefined) expect(r.json.error.code).toBe(code)
	await app.svc.ledger.flush()
	expect(await app.balance(acct.accountId)).toBe(before)
}

describe('SSRF guard on image URLs', () => {
	const privateTargets = [
		'http://127.0.0.1/x.png',
		'http://localhost/x.png', // a name the hosts file points at 127.0.0.1
		'http://2130706433/x.png', // 127.0.0.1 in decimal
		'http://0177.0.0.1/x.png', // octal
		'http://0x7f.0.0.1/x.png', // hex
		'http://127.1/x.png',
		'http://0/x.png',
		'http://[::1]/x.png',
		'http://[::ffff:127.0.0.1]/x.png',
		'http://[0:0:0:0:0:ffff:7f00:1]/x.png',
		'http://[::127.0.0.1]/x.png', // IPv4-compatible (deprecated) form of 127.0.0.1
		'http://[::ffff:0:7f00:1]/x.png', // IPv4-translated form
		'http://[64:ff9b::a9fe:a9fe]/x.png', // NAT64 of 169.254.169.254
		'http://[2002:a9fe:a9fe::1]/x.png', // 6to4 of 169.254.169.254
		'http://[fec0::1]/x.png', // site-local
		'http://169.254.169.254/latest/meta-data/',
		'http://[fd00:ec2::254]/latest/meta-data/', // AWS IMDS over IPv6
		'http://10.0.0.1/x.png',
		'http://192.168.1.1/x.png',
		'http://100.100.100.200/x.png', // Alibaba metadata (CGNAT range)
	]
	for (const url of privateTargets)
		it(`should refuse ${url} with 400 url_blocked and no charge`, async () => {
			const acct = await guarded.account(5)
			const before = await guarded.balance(acct.accountId)
			const r = await askChat(guarded, acct.key, url)
			await expectRefusedUncharged(guarded, acct, r, 'url_blocked', before)
		})

	it("should name the caller's own host in the refusal, even where it is the channel's host too", async () => {
		// The Gemini mock serves at 127.0.0.1: the upstream's host is hidden from callers, but hiding it in the words
		// about the caller's own URL told a caller guessing internal names which one was the channel's.
		const acct = await guarded.account(5)
		const r = await askChat(guarded, acct.key, 'http://127.0.0.1/x.png')
		expect(r.status).toBe(400)
		expect(r.json.error.message).toStartWith('refusing to fetch 127.0.0.1:')
	})

	it('should refuse a redirect from an allowed server to a private address (each hop is checked)', async () => {
		const acct = await allowed.account(5)
		const before = await allowed.balance(acct.accountId)
		for (const target of ['http://169.254.169.254/latest/meta-data/', 'http://[::1]:1/x.png', 'http://10.1.2.3/x.png']) {
			const r = await askChat(allowed, acct.key, `${root}/to/${encodeURIComponent(target)}`)
			await expectRefusedUncharged(allowed, acct, r, 'url_blocked', before)
		}
	})

	it('should refuse the Anthropic image and document forms alike, in Anthropic shape', async () => {
		const acct = await guarded.account(5)
		for (const kind of ['image', 'document'] as const) {
			const r = await askMessages(guarded, acct.key, 'http://169.254.169.254/latest/meta-data/', kind)
			expect(r.status).toBe(400)
			expect(r.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
			expect(r.json.error.message).toContain('private')
		}
	})

	it('should never contact the upstream when an image is refused', async () => {
		const acct = await guarded.account(5)
		guarded.mocks.gemini.reset()
		await askChat(guarded, acct.key, 'http://127.0.0.1/x.png')
		expect(guarded.mocks.gemini.requests.length).toBe(0)
	})
})

describe('downloads that go wrong', () => {
	const cases: Array<[string, string, string]> = [
		['a non-image content type', '/page', 'url_bad_type'],
		['no content type', '/no-type', 'url_bad_type'],
		['a chunked body past the 20 MiB cap', '/endless.png', 'url_too_large'],
		['a connection reset mid-body', '/reset.png', 'url_fetch_failed'],
		['a redirect to an unparsable location', '/bad-location', 'url_fetch_failed'],
		['a redirect to file:', '/to-file', 'invalid_url'],
		['a redirect loop', '/loop', 'url_fetch_failed'],
		['a 404', '/missing.png', 'url_fetch_failed'],
	]
	for (const [what, path, code] of cases)
		it(`should answer ${what} with 400 ${code} and no charge`, async () => {
			const acct = await allowed.account(5)
			const before = await allowed.balance(acct.accountId)
			const r = await askChat(allowed, acct.key, root + path)
			await expectRefusedUncharged(allowed, acct, r, code, before)
		}, 30_000)

	it('should give up on a body that trickles slower than the time cap, with 400 and no charge', async () => {
		const acct = await allowed.account(5)
		const before = await allowed.balance(acct.accountId)
		const t0 = Date.now()
		const r = await askChat(allowed, acct.key, `${root}/slow.png`)
		expect(Date.now() - t0).toBeLessThan(25_000)
		await expectRefusedUncharged(allowed, acct, r, 'url_fetch_failed', before)
	}, 40_000)

	it('should still inline a good image (the guard is not a blanket refusal)', async () => {
		const acct = await allowed.account(5)
		const r = await askChat(allowed, acct.key, `${root}/cat.png`)
		expect(r.status).toBe(200)
		expect(r.json.choices[0].message.content).toContain('I see 1 image.')
	})
})
