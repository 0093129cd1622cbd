/**
 * What leaves the gateway, pinned (README "Endpoints", the "Headers:" paragraph). Each vendor mock sits behind a
 * recording proxy that keeps every upstream request's headers and query and adds the vendor's account headers
 * (set-cookie, organisation, project, rate limits) to every answer. Real SDKs then call through the gateway with a
 * careless client's extra headers (its cookies, forwarding headers, `OpenAI-Organization`, `OpenAI-Project` and
 * `OpenAI-Beta`): upstream must see the channel's key only and none of those headers, and the
 * client's raw answers must carry none of the vendor's account headers.
 */
import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startAnthropicMock, startGeminiMock, startOpenAIMock, type VendorMock } from '../../mocks'

type Vendor = 'openai' | 'anthropic' | 'gemini'
type Seen = { vendor: Vendor; method: string; path: string; query: URLSearchParams; headers: Headers }

const UPSTREAM = { openai: 'sk-proj-HDRopenai0123456789', anthropic: 'sk-ant-api03-HDRanthropic0123', gemini: 'AIzaSyHDRgemini0123456789abcdefghijk' }
const MODELS = { openai: 'hdr-gpt', anthropic: 'hdr-claude', gemini: 'hdr-gemini', embed: 'hdr-embed' } as const
/** What a vendor says about the operator's account: none of it may reach a client. */
const VENDOR_HEADERS: Record<string, string> = {
	'set-cookie': '__cf_bm=vendor-session; Path=/; HttpOnly',
	'openai-organization': 'org-operator123',
	'openai-project': 'proj_operator123',
	'anthropic-organization-id': 'operator-org-uuid',
	'x-ratelimit-limit-requests': '5000',
}
/** What a careless client adds: none of it may reach a vendor. */
const CLIENT_HEADERS: Record<string, string> = {
	'OpenAI-Organization': 'org-client999',
	'OpenAI-Project': 'proj_client999',
	// Sent by the openai SDK's assistants and realtime helpers; it goes upstream only on the realtime WebSocket.
	'OpenAI-Beta': 'assistants=v2',
	'X-Forwarded-For': '10.9.8.7',
	Cookie: 'sb_session=client-cookie; other=1',
	Via: '1.1 client-proxy',
	Forwarded: 'for=10.9.8.7;proto=https',
}

let app: TestApp
let key: string
const mocks: VendorMock[] = []
const proxies: Array<ReturnType<typeof Bun.serve>> = []
const seen: Seen[] = []

/** A proxy in front of `mock` that records each request and adds VENDOR_HEADERS to each answer (streams pass through). */
function recordingProxy(vendor: Vendor, mock: VendorMock): string {
	const target = new URL(mock.url)
	const server = Bun.serve({
		port: 0,
		hostname: '127.0.0.1',
		idleTimeout: 30,
		async fetch(req) {
			const u = new URL(req.url)
			seen.push({ vendor, method: req.method, path: u.pathname, query: u.searchParams, headers: new Headers(req.headers) })
			const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : await req.arrayBuffer()
			const res = await fetch(`${target.origin}${u.pathname}${u.search}`, { method: req.method, headers: req.headers, body, decompress: false } as RequestInit)
			const headers = new Headers(res.headers)
			for (const [k, v] of Object.entries(VENDOR_HEADERS)) headers.append(k, v)
			return new Response(res.body, { status: res.status, headers })
		},
	})
	proxies.push(server)
	return `http://127.0.0.1:${server.port}${target.pathname === '/' ? '' : target.pathname}`
}

beforeAll(async () => {
	const openai = await startOpenAIMock({ apiKey: UPSTREAM.openai })
	const anthropic = await startAnthropicMock({ apiKey: UPSTREAM.anthropic })
	const gemini = await startGeminiMock({ apiKey: UPSTREAM.gemini })
	mocks.push(openai, anthropic, gemini)
	app = await startTestApp({
		config: {
			channels: [
				{
					name: 'o',
					type: 'openai',
					base_url: recordingProxy('openai', openai),
					api_key: UPSTREAM.openai,
					models: [MODELS.openai, MODELS.embed],
					model_map: { [MODELS.openai]: 'gpt-4o-mini', [MODELS.embed]: 'text-embedding-3-small' },
				},
				{ name: 'a', type: 'anthropic', base_url: recordingProxy('anthropic', anthropic), api_key: UPSTREAM.anthropic, models: [MODELS.anthropic], model_map: { [MODELS.anthropic]: 'claude-sonnet-5' } },
				{ name: 'g', type: 'gemini', base_url: recordingProxy('gemini', gemini), api_key: UPSTREAM.gemini, models: [MODELS.gemini], model_map: { [MODELS.gemini]: 'gemini-2.5-flash' } },
			],
			models: Object.values(MODELS).map((name) => ({ name, input_per_mtok: 10, output_per_mtok: 30 })),
		},
		env: { RETRIES: '0' },
	})
	key = (await app.account(50)).key
}, 60_000)
afterAll(async () => {
	await app?.close()
	for (const p of proxies) p.stop(true)
	for (const m of mocks) await m.stop()
})

const clients = () => ({
	openai: new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, defaultHeaders: CLIENT_HEADERS, maxRetries: 0 }),
	anthropic: new Anthropic({ apiKey: key, baseURL: app.url, defaultHeaders: CLIENT_HEADERS, maxRetries: 0 }),
	// @google/genai has no ?key= option: it sends x-goog-api-key; ?key= is covered by plain fetch below.
	gemini: new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: app.url, apiVersion: 'v1beta', headers: CLIENT_HEADERS } }),
})

/** The header that carries each vendor's key, and its expected value. */
const AUTH: Record<Vendor, [string, string]> = {
	openai: ['authorization', `Bearer ${UPSTREAM.openai}`],
	anthropic: ['x-api-key', UPSTREAM.anthropic],
	gemini: ['x-goog-api-key', UPSTREAM.gemini],
}

/** Every upstream request made while `run` ran: at least one to `vendor`, each with the channel's key only and no client header. */
async function upstreamOf(vendor: Vendor, run: () => Promise<void>): Promise<Seen[]> {
	const from = seen.length
	await run()
	const got = seen.slice(from)
	expect(got.length).toBeGreaterThan(0)
	for (const r of got) {
		expect(r.vendor).toBe(vendor)
		const [name, value] = AUTH[vendor]
		expect(r.headers.get(name)).toBe(value)
		for (const [other] of Object.values(AUTH)) if (other !== name) expect(r.headers.get(other)).toBeNull()
		for (const [k, v] of r.headers) {
			expect(v).not.toContain(key)
			for (const u of Object.values(UPSTREAM)) if (u !== UPSTREAM[vendor]) expect(v).not.toContain(u)
			expect(Object.values(CLIENT_HEADERS)).not.toContain(v)
		}
		for (const h of Object.keys(CLIENT_HEADERS)) expect({ [h]: r.headers.get(h) }).toEqual({ [h]: null })
		expect(r.headers.get('proxy-authorization')).toBeNull()
		for (const [k, v] of r.query) {
			expect(v).not.toContain(key)
			expect(k).not.toBe('key')
		}
	}
	return got
}

/** The client's raw answer carries none of the vendor's account headers. */
function noVendorHeaders(headers: Headers | Record<string, string> | undefined) {
	expect(headers).toBeDefined()
	const h = headers instanceof Headers ? headers : new Headers(headers)
	for (const name of Object.keys(VENDOR_HEADERS)) expect({ [name]: h.get(name) }).toEqual({ [name]: null })
	for (const [k] of h) expect(k).not.toStartWith('x-ratelimit-')
}

const text = 'one two three'

describe('what goes upstream and what comes back', () => {
	it('the recording proxy really adds the vendor headers (so the assertions below can fail)', async () => {
		const res = await fetch(`${recordingProxyUrl('openai')}/models`, { headers: { authorization: `Bearer ${UPSTREAM.openai}` } })
		for (const [k, v] of Object.entries(VENDOR_HEADERS)) expect(res.headers.get(k)).toBe(v)
		await res.arrayBuffer()
	})

	for (const [model, vendor] of [
		[MODELS.openai, 'openai'],
		[MODELS.anthropic, 'anthropic'],
		[MODELS.gemini, 'gemini'],
	] as const) {
		it(`OpenAI chat → ${vendor}`, async () => {
			const { openai } = clients()
			await upstreamOf(vendor, async () => {
				const { data, response } = await openai.chat.completions.create({ model, max_tokens: 20, messages: [{ role: 'user', content: text }] }).withResponse()
				expect(data.choices[0]!.message.content).toContain(text)
				noVendorHeaders(response.headers)
			})
		})

		it(`OpenAI chat stream → ${vendor}`, async () => {
			const { openai } = clients()
			await upstreamOf(vendor, async () => {
				const { data, response } = await openai.chat.completions.create({ model, max_tokens: 20, stream: true, messages: [{ role: 'user', content: text }] }).withResponse()
				let out = ''
				for await (const c of data) out += c.choices[0]?.delta?.content ?? ''
				expect(out).toContain(text)
				noVendorHeaders(response.headers)
			})
		})
	}

	for (const [model, vendor, how] of [
		[MODELS.anthropic, 'anthropic', 'same-protocol'],
		[MODELS.openai, 'openai', 'converted'],
	] as const) {
		it(`Anthropic messages → ${vendor} (${how})`, async () => {
			const { anthropic } = clients()
			await upstreamOf(vendor, async () => {
				const { data, response } = await anthropic.messages.create({ model, max_tokens: 20, messages: [{ role: 'user', content: text }] }).withResponse()
				expect(data.content[0]!.type === 'text' && data.content[0].text).toContain(text)
				noVendorHeaders(response.headers)
			})
		})

		it(`Anthropic messages stream → ${vendor} (${how})`, async () => {
			const { anthropic } = clients()
			await upstreamOf(vendor, async () => {
				const { data, response } = await anthropic.messages.create({ model, max_tokens: 20, stream: true, messages: [{ role: 'user', content: text }] }).withResponse()
				let out = ''
				for await (const e of data) if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') out += e.delta.text
				expect(out).toContain(text)
				noVendorHeaders(response.headers)
			})
		})
	}

	it('OpenAI responses → openai', async () => {
		const { openai } = clients()
		await upstreamOf('openai', async () => {
			const { data, response } = await openai.responses.create({ model: MODELS.openai, max_output_tokens: 20, input: text }).withResponse()
			expect(data.output_text).toContain(text)
			noVendorHeaders(response.headers)
		})
	})

	it('OpenAI embeddings → openai', async () => {
		const { openai } = clients()
		await upstreamOf('openai', async () => {
			const { data, response } = await openai.embeddings.create({ model: MODELS.embed, input: text }).withResponse()
			expect(data.data[0]!.embedding.length).toBeGreaterThan(0)
			noVendorHeaders(response.headers)
		})
	})

	it('Gemini generateContent (SDK, x-goog-api-key) → gemini', async () => {
		const { gemini } = clients()
		await upstreamOf('gemini', async () => {
			const r = await gemini.models.generateContent({ model: MODELS.gemini, contents: text })
			expect(r.text).toContain(text)
			noVendorHeaders(r.sdkHttpResponse?.headers)
		})
	})

	it('Gemini generateContentStream (SDK) → gemini', async () => {
		const { gemini } = clients()
		await upstreamOf('gemini', async () => {
			let out = ''
			let headers: Record<string, string> | undefined
			for await (const c of await gemini.models.generateContentStream({ model: MODELS.gemini, contents: text })) {
				out += c.text ?? ''
				headers ??= c.sdkHttpResponse?.headers
			}
			expect(out).toContain(text)
			noVendorHeaders(headers)
		})
	})

	for (const stream of [false, true])
		it(`Gemini ${stream ? 'streamGenerateContent' : 'generateContent'} with ?key= (plain fetch) → gemini`, async () => {
			await upstreamOf('gemini', async () => {
				const path = stream ? `:streamGenerateContent?alt=sse&key=${key}` : `:generateContent?key=${key}`
				const res = await fetch(`${app.url}/v1beta/models/${MODELS.gemini}${path}`, {
					method: 'POST',
					headers: { 'content-type': 'application/json', ...CLIENT_HEADERS },
					body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text }] }] }),
				})
				expect(res.status).toBe(200)
				expect(await res.text()).toContain(stream ? '"text":" three"' : text)
				noVendorHeaders(res.headers)
			})
		})
})

/** The proxy URL the channel of `vendor` points at (the first proxy is OpenAI's, then Anthropic's, then Gemini's). */
function recordingProxyUrl(vendor: Vendor): string {
	const i = (['openai', 'anthropic', 'gemini'] as const).indexOf(vendor)
	return `http://127.0.0.1:${proxies[i]!.port}${new URL(mocks[i]!.url).pathname.replace(/\/$/, '')}`
}
