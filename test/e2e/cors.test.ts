/**
 * The model APIs called from a web page on another origin, as a chat UI running in the user's browser calls them: the
 * official SDKs (bundled for the browser, `browser-sdks.ts`) in Chromium, whose preflights and response checks are the
 * real ones. By default any origin is let in (the vendors' APIs answer browsers too); CORS_ORIGINS narrows it to a
 * list, and the management API is never let in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { type Matrix, MODEL, SETUP_MS, startMatrix } from '../integration/protocols/harness'
import { ADMIN_KEY } from '../helpers/app'
import { launch } from './browser'

/** A page server on a port of its own (another origin than the gateway's): an empty page with the SDKs loaded. */
async function startPageServer(bundle: string) {
	const server = Bun.serve({
		port: 0,
		hostname: '127.0.0.1',
		fetch: (req) =>
			new URL(req.url).pathname === '/sdks.js'
				? new Response(bundle, { headers: { 'content-type': 'text/javascript' } })
				: new Response('<!doctype html><title>chat</title><script src="/sdks.js"></script>', { headers: { 'content-type': 'text/html' } }),
	})
	return { url: `http://localhost:${server.port}`, stop: () => server.stop(true) }
}

let m: Matrix
let narrowed: Matrix
let browser: Browser
let bundle: string
let pages: Array<{ url: string; stop: () => unknown }>
beforeAll(async () => {
	const built = await Bun.build({ entrypoints: [new URL('./browser-sdks.ts', import.meta.url).pathname], target: 'browser', minify: true })
	if (!built.success) throw new Error(built.logs.join('\n'))
	bundle = await built.outputs[0]!.text()
	pages = [await startPageServer(bundle), await startPageServer(bundle)]
	m = await startMatrix()
	// Only the first page's origin is listed (with a trailing slash and in capitals, as an operator may write it).
	narrowed = await startMatrix({ env: { CORS_ORIGINS: `${pages[0]!.url.toUpperCase()}/, https://chat.example.com` } })
	browser = await launch()
}, SETUP_MS)
afterAll(async () => {
	await browser?.close()
	await Promise.all([m?.close(), narrowed?.close(), ...(pages ?? []).map((p) => p.stop())])
})

async function pageAt(url: string): Promise<Page> {
	const page = await (await browser.newContext()).newPage()
	await page.goto(url)
	await page.waitForFunction(() => 'sdks' in globalThis)
	return page
}

/** What the page's SDK calls give, run in the page (the SDKs' own fetches, preflights and all). */
function callAll(page: Page, gateway: string, key: string) {
	return page.evaluate(
		async ({ gateway, key, model }) => {
			const { OpenAI, Anthropic, GoogleGenAI } = (globalThis as any).sdks
			const openai = new OpenAI({ baseURL: `${gateway}/v1`, apiKey: key, dangerouslyAllowBrowser: true, maxRetries: 0 })
			let streamed = ''
			let usage: unknown
			const stream = await openai.chat.completions.create({ model: model.anthropic, messages: [{ role: 'user', content: 'Say hi' }], stream: true, stream_options: { include_usage: true } })
			for await (const chunk of stream) {
				streamed += chunk.choices[0]?.delta?.content ?? ''
				usage ??= chunk.usage ?? undefined
			}
			const anthropic = new Anthropic({ baseURL: gateway, apiKey: key, dangerouslyAllowBrowser: true, maxRetries: 0 })
			const message = await anthropic.messages.create({ model: model.openai, max_tokens: 64, messages: [{ role: 'user', content: 'Say hi' }] })
			const genai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gateway, apiVersion: 'v1beta' } })
			const generated = await genai.models.generateContent({ model: model.gemini, contents: 'Say hi', config: { serviceTier: 'priority' } })
			// Streams served by the other routes (Elysia's, and the deferred modules'): their answers get the headers too.
			let anthropicStreamed = ''
			for await (const e of await anthropic.messages.create({ model: model.gemini, max_tokens: 64, messages: [{ role: 'user', content: 'Say hi' }], stream: true }))
				if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') anthropicStreamed += e.delta.text
			let responsesStreamed = ''
			for await (const e of await openai.responses.create({ model: model.anthropic, input: 'Say hi', stream: true })) if (e.type === 'response.output_text.delta') responsesStreamed += e.delta
			let geminiStreamed = ''
			for await (const c of await genai.models.generateContentStream({ model: model.anthropic, contents: 'Say hi' })) geminiStreamed += c.text ?? ''
			const missing = await openai.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }).catch((e: any) => e)
			const models = await openai.models.list()
			return {
				streamed,
				usage,
				message: { text: message.content[0]?.text, requestId: message._request_id },
				generated: generated.text,
				servedTier: generated.sdkHttpResponse?.headers?.['x-gemini-service-tier'],
				anthropicStreamed,
				responsesStreamed,
				geminiStreamed,
				missing: { status: missing.status, code: missing.code, requestId: missing.requestID ?? missing.request_id },
				models: models.data.map((x: { id: string }) => x.id),
			}
		},
		{ gateway, key, model: MODEL },
	)
}

describe('a page on another origin', () => {
	it('should reach every protocol through the official SDKs, and read errors and request ids', async () => {
		const acct = await m.account()
		const page = await pageAt(pages[1]!.url)
		const got = await callAll(page, m.app.url, acct.key)
		expect(got.streamed.length).toBeGreaterThan(0)
		expect(got.usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) })
		expect(got.message.text?.length).toBeGreaterThan(0)
		// The Anthropic SDK reads `request-id`, the OpenAI SDK `x-request-id`: hidden from the page unless exposed.
		expect(got.message.requestId).toMatch(/^req_/)
		expect(got.generated?.length).toBeGreaterThan(0)
		// Gemini's docs check it for a Priority request run as standard: hidden from the page unless exposed.
		expect(got.servedTier).toBe('priority')
		expect(got.anthropicStreamed.length).toBeGreaterThan(0)
		expect(got.responsesStreamed.length).toBeGreaterThan(0)
		expect(got.geminiStreamed.length).toBeGreaterThan(0)
		expect(got.missing).toMatchObject({ status: 404, code: 'model_not_found', requestId: expect.stringMatching(/^req_/) })
		expect(got.models).toContain(MODEL.anthropic)
		await page.context().close()
	})

	it('should answer a preflight with what it asked for, and keep the management API closed', async () => {
		const asked = { origin: 'http://localhost:1234', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type,x-stainless-os' }
		const res = await fetch(`${m.app.url}/v1/chat/completions`, { method: 'OPTIONS', headers: asked })
		expect(res.status).toBe(204)
		expect(res.headers.get('access-control-allow-origin')).toBe('*')
		expect(res.headers.get('access-control-allow-headers')).toBe('authorization,content-type,x-stainless-os')
		expect(res.headers.get('access-control-allow-methods')).toContain('POST')
		expect(res.headers.get('access-control-allow-credentials')).toBeNull()
		expect(res.headers.get('vary')).toBe('Origin, Access-Control-Request-Headers')
		const admin = await fetch(`${m.app.url}/api/tokens`, { method: 'OPTIONS', headers: asked })
		expect(admin.headers.get('access-control-allow-origin')).toBeNull()
		const listed = await fetch(`${m.app.url}/api/tokens`, { headers: { origin: 'http://localhost:1234', authorization: `Bearer ${ADMIN_KEY}` } })
		expect(listed.status).toBe(200)
		expect(listed.headers.get('access-control-allow-origin')).toBeNull()
		// A server-side client sends no Origin: its answers carry nothing more.
		const acct = await m.account()
		const plain = await fetch(`${m.app.url}/v1/models`, { headers: { authorization: `Bearer ${acct.key}` } })
		expect(plain.status).toBe(200)
		expect(plain.headers.get('access-control-allow-origin')).toBeNull()
		// A page's answer says it depends on the Origin, so a shared cache does not hand it to anyone else, nor theirs to it.
		const fromPage = await fetch(`${m.app.url}/v1/models`, { headers: { authorization: `Bearer ${acct.key}`, origin: 'http://localhost:1234' } })
		expect(fromPage.headers.get('access-control-allow-origin')).toBe('*')
		expect(fromPage.headers.get('vary')).toBe('Origin')
	})
})

describe('CORS_ORIGINS', () => {
	it('should let in the origins it lists and no other', async () => {
		const acct = await narrowed.account()
		const listed = await pageAt(pages[0]!.url)
		const got = await callAll(listed, narrowed.app.url, acct.key)
		expect(got.message.requestId).toMatch(/^req_/)
		const other = await pageAt(pages[1]!.url)
		const refused = await other.evaluate(
			async ({ gateway, key, model }) => {
				const { OpenAI } = (globalThis as any).sdks
				const openai = new OpenAI({ baseURL: `${gateway}/v1`, apiKey: key, dangerouslyAllowBrowser: true, maxRetries: 0 })
				return openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }] }).then(
					() => 'answered',
					(e: Error) => (e instanceof OpenAI.APIConnectionError ? 'connection error' : String(e)),
				)
			},
			{ gateway: narrowed.app.url, key: acct.key, model: MODEL.openai },
		)
		// The browser refuses the call itself (the preflight lacks the origin): the SDK sees a connection error.
		expect(refused).toBe('connection error')
		const res = await fetch(`${narrowed.app.url}/v1/models`, { headers: { origin: pages[0]!.url, authorization: `Bearer ${acct.key}` } })
		expect(res.headers.get('access-control-allow-origin')).toBe(pages[0]!.url)
		expect(res.headers.get('vary')).toContain('Origin')
		await listed.context().close()
		await other.context().close()
	})
})
