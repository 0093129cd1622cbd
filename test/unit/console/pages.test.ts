import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { consoleCssHash, consoleJs, consoleJsHash } from '../../../src/console/assets.gen'
import { type ConsoleApp, startConsoleApp } from './console-app'

let app: ConsoleApp

beforeAll(async () => {
	app = await startConsoleApp({
		config: {
			channels: [
				{ name: 'oa', type: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'k', models: ['gpt-4o-mini', 'text-embedding-3-small', '<script>x</script>', 'gpt-price-disabled', 'gpt-never-priced'] },
				{ name: 'rr', type: 'rerank', base_url: 'http://127.0.0.1:9', api_key: 'k', models: ['rerank-v1'] },
			],
			models: [
				{ name: 'gpt-4o-mini', input_per_mtok: 0.15, output_per_mtok: 0.6, cache_read_per_mtok: 0.075 },
				{ name: 'text-embedding-3-small', input_per_mtok: 0.02 },
				{ name: '<script>x</script>', input_per_mtok: 1 },
				{ name: 'gpt-price-disabled', input_per_mtok: 2, output_per_mtok: 8, enabled: false },
				{ name: 'rerank-v1', per_request: 0.002 },
				{ name: 'unserved-model', input_per_mtok: 9 },
			],
		},
	})
}, 120_000)
afterAll(() => app.close())

const get = (path: string, headers: Record<string, string> = {}) => fetch(app.url + path, { headers, redirect: 'manual' })

describe('console pages', () => {
	it('should redirect / to /console', async () => {
		const r = await get('/')
		expect(r.status).toBe(302)
		expect(r.headers.get('location')).toBe('/console')
	})

	it('should serve the shell for /console and any path below, with hashed assets and a strict CSP', async () => {
		for (const path of ['/console', '/console/tokens', '/console/admin/users']) {
			const r = await get(path)
			expect(r.status).toBe(200)
			expect(r.headers.get('content-type')).toStartWith('text/html')
			expect(r.headers.get('content-security-policy')).toContain("script-src 'self'")
			const html = await r.text()
			expect(html).toContain(`/console/assets/app-${consoleJsHash}.js`)
			expect(html).toContain(`/console/assets/app-${consoleCssHash}.css`)
			expect(html).not.toMatch(/<script>(?!<\/)|\sstyle=/)
		}
	})

	it('should serve the bundle with a one-year immutable cache', async () => {
		const r = await get(`/console/assets/app-${consoleJsHash}.js`)
		expect(r.status).toBe(200)
		expect(r.headers.get('content-type')).toStartWith('text/javascript')
		expect(r.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
		expect(await r.text()).toBe(consoleJs)
		const css = await get(`/console/assets/app-${consoleCssHash}.css`)
		expect(css.headers.get('content-type')).toStartWith('text/css')
	})

	it('should gzip the bundle for clients that accept it', async () => {
		const r = await fetch(`${app.url}/console/assets/app-${consoleJsHash}.js`, { headers: { 'accept-encoding': 'gzip' }, decompress: false } as RequestInit)
		expect(r.headers.get('content-encoding')).toBe('gzip')
		expect(new TextDecoder().decode(Bun.gunzipSync(new Uint8Array(await r.arrayBuffer())))).toBe(consoleJs)
	})

	it('should answer an old hash with the current file but without long caching, and 404 for anything else', async () => {
		const old = await get('/console/assets/app-000000000000.js')
		expect(old.status).toBe(200)
		expect(old.headers.get('cache-control')).toBe('no-cache')
		expect((await get('/console/assets/secrets.txt')).status).toBe(404)
		expect((await get('/console/assets/..%2F..%2Fpackage.json')).status).toBe(404)
	})
})

describe('public pricing', () => {
	it('should render /pricing on the server without signing in, readable without JavaScript', async () => {
		const r = await get('/pricing')
		expect(r.status).toBe(200)
		const html = await r.text()
		expect(html).not.toContain('<script')
		expect(html).toContain('<code>gpt-4o-mini</code>')
		expect(html).toContain('$0.15')
		expect(html).toContain('$0.60')
		expect(html).toContain('$0.075')
		expect(html).toContain('POST /v1/chat/completions')
		expect(html).toContain('$0.002 / request')
		expect(html).not.toContain('unserved-model')
	})

	it('should escape model names', async () => {
		const html = await (await get('/pricing')).text()
		expect(html).not.toContain('<script>x</script>')
		expect(html).toContain('&lt;script&gt;x&lt;/script&gt;')
	})

	it('should list the same models as JSON at /api/pricing with endpoints and protocols', async () => {
		const r = await get('/api/pricing')
		const body = (await r.json()) as { data: Array<{ name: string; endpoints: string[]; protocols: string[]; input_per_mtok: number | null }> }
		const by = Object.fromEntries(body.data.map((m) => [m.name, m]))
		expect(Object.keys(by).sort()).toEqual(['<script>x</script>', 'gpt-4o-mini', 'rerank-v1', 'text-embedding-3-small'])
		expect(by['gpt-4o-mini']!.protocols).toContain('Anthropic Messages')
		expect(by['gpt-4o-mini']!.endpoints).toContain('POST /v1/messages')
		expect(by['text-embedding-3-small']!.endpoints).toEqual(['POST /v1/embeddings', 'POST /v1beta/models/{model}:embedContent', 'POST /v1beta/models/{model}:batchEmbedContents'])
		expect(by['text-embedding-3-small']!.input_per_mtok).toBe(0.02)
		expect(by['rerank-v1']!.endpoints).toEqual(['POST /v1/rerank'])
	})

	it('should leave out a model whose price is disabled or missing: calls to it are refused (403 model_not_priced)', async () => {
		const html = await (await get('/pricing')).text()
		const names = ((await (await get('/api/pricing')).json()) as { data: Array<{ name: string }> }).data.map((m) => m.name)
		for (const name of ['gpt-price-disabled', 'gpt-never-priced']) {
			expect(html).not.toContain(name)
			expect(names).not.toContain(name)
		}
		expect(names).toContain('gpt-4o-mini')
	})

	it('should list the console routes in the OpenAPI document', async () => {
		const doc = (await (await get('/docs/json')).json()) as { paths: Record<string, unknown> }
		for (const p of ['/api/session', '/api/signup', '/api/users', '/api/users/{id}', '/api/users/me/password', '/api/settings', '/api/pricing', '/api/console/spend'])
			expect(Object.keys(doc.paths)).toContain(p)
		expect(Object.keys(doc.paths)).not.toContain('/console/*')
	})
})
