/**
 * One request naming many image URLs for a Gemini upstream (each fetched and inlined, relay/images.ts): the gateway
 * must not become an amplifier. Downloads run a few at a time, all of them together stay within what Gemini takes
 * inline in one request, and once one fails the rest stop, with a 400 and no charge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { MODELS, post, type SecApp, startSecApp } from './setup'

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')
/** Just under the 20 MiB cap of one image: six of them are far past Gemini's inline total. */
const BIG = new Uint8Array(19 * 1024 * 1024)

let app: SecApp
let images: ReturnType<typeof Bun.serve>
let root: string
let open = 0
let peak = 0
let started = 0
let bytesSent = 0

beforeAll(async () => {
	images = Bun.serve({
		hostname: '127.0.0.1',
		port: 0,
		idleTimeout: 0,
		async fetch(req) {
			const path = new URL(req.url).pathname
			started++
			open++
			peak = Math.max(peak, open)
			try {
				await Bun.sleep(150)
				if (path === '/slow-cat.png') return new Response(PNG, { headers: { 'content-type': 'image/png' } })
				if (path === '/missing.png') return new Response('not found', { status: 404 })
				if (path === '/big.png') {
					bytesSent += BIG.length
					return new Response(BIG, { headers: { 'content-type': 'image/png' } })
				}
				return new Response('not found', { status: 404 })
			} finally {
				open--
			}
		},
	})
	root = `http://127.0.0.1:${images.port}`
	// Above FETCH_MAX_URLS' default (20): these tests send 21 URLs to watch the downloads themselves (fetch-max-urls.test.ts covers the cap).
	app = await startSecApp({ FETCH_ALLOW: '127.0.0.1', FETCH_MAX_URLS: '50' })
}, 60_000)
afterAll(async () => {
	await app?.close()
	images?.stop(true)
})

const reset = () => {
	peak = 0
	started = 0
	bytesSent = 0
	app.mocks.gemini.reset()
}

function ask(key: string, urls: string[]) {
	return post(`${app.url}/v1/chat/completions`, { authorization: `Bearer ${key}` }, {
		model: MODELS.gemini,
		max_tokens: 20,
		messages: [{ role: 'user', content: [{ type: 'text', text: 'what are these' }, ...urls.map((url) => ({ type: 'image_url', image_url: { url } }))] }],
	})
}

describe('many image URLs in one request', () => {
	it('should fetch them a few at a time and still inline them all', async () => {
		reset()
		const acct = await app.account(5)
		const r = await ask(
			acct.key,
			Array.from({ length: 12 }, (_, i) => `${root}/slow-cat.png?i=${i}`),
		)
		expect(r.status).toBe(200)
		expect(r.json.choices[0].message.content).toContain('I see 12 images.')
		expect(started).toBe(12)
		expect(peak).toBeLessThanOrEqual(4)
	}, 30_000)

	it("should refuse images past Gemini's inline total with 400, without sending anything upstream or charging", async () => {
		reset()
		const acct = await app.account(5)
		const before = await app.balance(acct.accountId)
		const r = await ask(
			acct.key,
			Array.from({ length: 6 }, (_, i) => `${root}/big.png?i=${i}`),
		)
		expect(r.status).toBe(400)
		expect(r.json.error.code).toBe('url_too_large')
		expect(app.mocks.gemini.requests.length).toBe(0)
		// Stopped at the budget: not every image was downloaded.
		expect(bytesSent).toBeLessThan(6 * BIG.length)
		await app.svc.ledger.flush()
		expect(await app.balance(acct.accountId)).toBe(before)
	}, 60_000)

	it('should stop starting downloads once one has failed', async () => {
		reset()
		const acct = await app.account(5)
		const r = await ask(acct.key, [`${root}/missing.png`, ...Array.from({ length: 20 }, (_, i) => `${root}/slow-cat.png?i=${i}`)])
		expect(r.status).toBe(400)
		expect(r.json.error.code).toBe('url_fetch_failed')
		expect(started).toBeLessThan(21)
	}, 30_000)
})
