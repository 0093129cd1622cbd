/**
 * The SSRF guard on the other protocol that takes images and documents as bytes only: Bedrock's Converse (Amazon Nova
 * on a bedrock channel), whose image and document URLs the gateway downloads (relay/images.ts → lib/safe-fetch.ts).
 * A key holder naming a loopback, metadata or private URL, directly or by a redirect from an allowed host, in chat,
 * messages or Responses bodies, gets a 400 in the caller's shape; Bedrock is never called, nothing is charged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startTestApp, type TestApp } from '../../helpers/app'
import { type BedrockMock, startBedrockMock } from '../../mocks'

const KEY = 'ABSKY29udmVyc2Utc3NyZi1rZXk='
const NOVA_ID = 'us.amazon.nova-pro-v1:0'
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')

let br: BedrockMock
let guarded: TestApp // FETCH_ALLOW empty
let allowed: TestApp // FETCH_ALLOW=127.0.0.1: the local server may be reached, and redirects from it are checked
let server: ReturnType<typeof Bun.serve>
let hits = 0

const config = () => ({
	channels: [{ name: 'br', type: 'bedrock' as const, base_url: br.url, api_key: KEY, models: ['nova'], model_map: { nova: NOVA_ID } }],
	models: [{ name: 'nova', input_per_mtok: 1, output_per_mtok: 4 }],
})

beforeAll(async () => {
	br = await startBedrockMock({ apiKey: KEY, iam: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'secret' }, region: 'us-east-1', models: [NOVA_ID] })
	server = Bun.serve({
		hostname: '127.0.0.1',
		port: 0,
		fetch(req) {
			hits++
			const path = new URL(req.url).pathname
			if (path.startsWith('/to/')) return new Response(null, { status: 302, headers: { location: decodeURIComponent(path.slice(4)) } })
			return new Response(PNG, { headers: { 'content-type': 'image/png' } })
		},
	})
	guarded = await startTestApp({ config: config(), env: { FETCH_ALLOW: '' } })
	allowed = await startTestApp({ config: config(), env: { FETCH_ALLOW: '127.0.0.1' } })
}, 60_000)
afterAll(async () => {
	await guarded.close()
	await allowed.close()
	await br.stop()
	server.stop(true)
})

const post = async (app: TestApp, key: string, path: string, body: unknown) => {
	const r = await fetch(`${app.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, body: JSON.stringify(body) })
	return { status: r.status, json: (await r.json()) as any }
}

/** The three client protocols naming `url` as an image (chat, Responses) or a document (messages). */
const bodies = (url: string): Array<[string, unknown]> => [
	['/v1/chat/completions', { model: 'nova', messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this' }, { type: 'image_url', image_url: { url } }] }] }],
	['/v1/messages', { model: 'nova', max_tokens: 20, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url } }, { type: 'text', text: 'sum up' }] }] }],
	['/v1/responses', { model: 'nova', input: [{ role: 'user', content: [{ type: 'input_image', image_url: url }, { type: 'input_text', text: 'what is this' }] }] }],
]

async function expectRefused(app: TestApp, url: string) {
	const acct = await app.account(5)
	const calls = br.requests.length
	for (const [path, body] of bodies(url)) {
		const r = await post(app, acct.key, path, body)
		expect({ path, status: r.status }).toEqual({ path, status: 400 })
		expect(JSON.stringify(r.json)).toContain('private or loopback')
	}
	expect(br.requests.length).toBe(calls)
	expect(await app.balance(acct.accountId)).toBe(5)
}

describe('Converse image and document URLs under the SSRF guard', () => {
	for (const url of ['http://127.0.0.1/x.png', 'http://localhost/x.png', 'http://169.254.169.254/latest/meta-data/', 'http://[::ffff:127.0.0.1]/x.png', 'http://[fd00:ec2::254]/latest/meta-data/', 'http://10.0.0.1/x.png'])
		it(`should refuse ${url} in chat, messages and Responses bodies, never calling Bedrock, uncharged`, () => expectRefused(guarded, url))

	it('should refuse a redirect from an allowed host to a private address', async () => {
		const before = hits
		await expectRefused(allowed, `http://127.0.0.1:${server.port}/to/${encodeURIComponent('http://169.254.169.254/latest/meta-data/')}`)
		expect(hits).toBeGreaterThan(before)
	})

	it('should still send an allowed image as bytes', async () => {
		const acct = await allowed.account(5)
		const r = await post(allowed, acct.key, ...bodies(`http://127.0.0.1:${server.port}/cat.png`)[0]!)
		expect(r.status).toBe(200)
		expect((br.requests.at(-1)!.body as any).messages[0].content[1]).toEqual({ image: { format: 'png', source: { bytes: PNG.toString('base64') } } })
	})
})
