/**
 * An upstream that repeats the call's credentials in its answer (a vendor's "bad request for key=…", a proxy echoing
 * the request's headers, midjourney-proxy refusing with HTTP 200 and its own words) must not hand them to the caller,
 * on the routes that call the upstream outside the attempt loop too: token counts, stored responses, the task
 * services' submits, fetches and catch-all passthroughs. The keys here are in no vendor's format, so no pattern-based
 * redaction can be what hides them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startAnthropicMock, startGeminiMock, startOpenAIMock, type VendorMock } from '../../mocks'
import { credentialScrubber } from '../../../src/relay/sent-credentials'

const KEYS = {
	openai: 'vllm-UPSTREAMopenai-0123456789',
	anthropic: 'relay-UPSTREAManthropic-0123456789',
	gemini: 'proxy-UPSTREAMgemini-0123456789',
	mj: 'mjsecret-UPSTREAM-0123456789',
	suno: 'sunosecret-UPSTREAM-0123456789',
}
const MODELS = { openai: 'ec-gpt', anthropic: 'ec-claude', gemini: 'ec-gemini' } as const
type Vendor = keyof typeof MODELS

let app: TestApp
let mocks: Record<Vendor, VendorMock>
let tasks: ReturnType<typeof Bun.serve>
let key: string

beforeAll(async () => {
	mocks = {
		openai: await startOpenAIMock({ apiKey: KEYS.openai }),
		anthropic: await startAnthropicMock({ apiKey: KEYS.anthropic }),
		gemini: await startGeminiMock({ apiKey: KEYS.gemini }),
	}
	// A task service that accepts an imagine whose prompt is "ok" and answers everything else with the request's
	// headers, as a refusal (HTTP 200 code 4 for a submit, 401 otherwise).
	tasks = Bun.serve({
		hostname: '127.0.0.1',
		port: 0,
		async fetch(req) {
			const path = new URL(req.url).pathname
			const headers = Object.fromEntries(req.headers)
			const body = req.method === 'POST' ? ((await req.json().catch(() => ({}))) as { prompt?: string }) : {}
			if (path === '/mj/submit/imagine' && body.prompt === 'ok') return Response.json({ code: 1, description: 'Submitted', result: 'task-1' })
			if (path.includes('/submit/')) return Response.json({ code: 4, description: `refused: ${headers['mj-api-secret'] ?? headers.authorization}`, headers })
			if (path === '/mj/task/task-1/fetch') return Response.json({ id: 'task-1', status: 'FAILURE', failReason: `secret ${headers['mj-api-secret']}`, headers })
			return Response.json({ error: 'denied', headers }, { status: 401 })
		},
	})
	const tasksUrl = `http://127.0.0.1:${tasks.port}`
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'o', type: 'openai', base_url: mocks.openai.url, api_key: KEYS.openai, models: [MODELS.openai], model_map: { [MODELS.openai]: 'gpt-4o-mini' } },
				{ name: 'a', type: 'anthropic', base_url: mocks.anthropic.url, api_key: KEYS.anthropic, models: [MODELS.anthropic], model_map: { [MODELS.anthropic]: 'claude-sonnet-5' } },
				{ name: 'g', type: 'gemini', base_url: mocks.gemini.url, api_key: KEYS.gemini, models: [MODELS.gemini], model_map: { [MODELS.gemini]: 'gemini-2.5-flash' } },
				// The catch-alls forward only what the operator added to the allow list (passthrough/task-routes.ts).
				{ name: 'mj', type: 'imgsvc', base_url: tasksUrl, api_key: KEYS.mj, models: ['mj_*'], settings: { extra_task_paths: ['GET /mj/other/list'] } },
				{ name: 'suno', type: 'musicsvc', base_url: tasksUrl, api_key: KEYS.suno, models: ['suno_*'], settings: { extra_task_paths: ['GET /suno/feed/abc'] } },
			],
			models: [
				...Object.values(MODELS).map((name) => ({ name, input_per_mtok: 1, output_per_mtok: 1 })),
				{ name: 'mj_imagine', per_request: 0.01 },
				{ name: 'suno_music', per_request: 0.01 },
			] as never,
		},
		env: { BREAKER_THRESHOLD: '100000', RETRIES: '0' },
	})
	key = (await app.account(10)).key
}, 60_000)
afterAll(async () => {
	await app?.close()
	for (const m of Object.values(mocks ?? {})) await m.stop()
	tasks?.stop(true)
})

const leaked = (text: string) => Object.entries(KEYS).filter(([, k]) => text.includes(k) || text.includes(k.slice(0, 16))).map(([name]) => name)

async function call(path: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) {
	const res = await fetch(`${app.url}${path}`, {
		method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
		headers: { 'content-type': 'application/json', ...(init.headers ?? { authorization: `Bearer ${key}` }) },
		body: init.body === undefined ? undefined : JSON.stringify(init.body),
	})
	return { status: res.status, text: `${await res.text()}\n${JSON.stringify([...res.headers])}` }
}

describe('a vendor error that repeats the key, outside the attempt loop', () => {
	const echo = (v: Vendor) => ({ kind: 'status' as const, status: 400, body: { error: { message: `bad request for key=${KEYS[v]}`, type: 'invalid_request_error' } } })
	const cases: Array<[string, Vendor, () => Promise<{ status: number; text: string }>]> = [
		['Anthropic count_tokens', 'anthropic', () => call('/v1/messages/count_tokens', { headers: { 'x-api-key': key }, body: { model: MODELS.anthropic, messages: [{ role: 'user', content: 'hi' }] } })],
		['Gemini countTokens', 'gemini', () => call(`/v1beta/models/${MODELS.gemini}:countTokens`, { headers: { 'x-goog-api-key': key }, body: { contents: [{ parts: [{ text: 'hi' }] }] } })],
		['Responses input_tokens', 'openai', () => call('/v1/responses/input_tokens', { body: { model: MODELS.openai, input: 'hi' } })],
		[
			'a stored response read',
			'openai',
			async () => {
				mocks.openai.fault = undefined
				const made = await call('/v1/responses', { body: { model: MODELS.openai, input: 'hi', store: true } })
				const id = JSON.parse(made.text.split('\n')[0]!).id as string
				mocks.openai.fault = echo('openai')
				return call(`/v1/responses/${id}`)
			},
		],
	]
	for (const [name, vendor, run] of cases)
		it(`should not show the channel's key (${name})`, async () => {
			mocks[vendor].fault = echo(vendor)
			const r = await run().finally(() => (mocks[vendor].fault = undefined))
			expect({ name, status: r.status, leaked: leaked(r.text) }).toEqual({ name, status: 400, leaked: [] })
			expect(mocks[vendor].requests.length).toBeGreaterThan(0)
		})
})

describe('task services that repeat their credentials', () => {
	const cases: Array<[string, () => Promise<{ status: number; text: string }>]> = [
		['a Midjourney submit refused with HTTP 200', () => call('/mj/submit/imagine', { body: { prompt: 'refuse me' } })],
		['a Midjourney passthrough route', () => call('/mj/submit/upload-discord-images', { body: { base64Array: [] } })],
		['a Midjourney catch-all error', () => call('/mj/other/list')],
		[
			"a fetch of the caller's own Midjourney task",
			async () => {
				expect((await call('/mj/submit/imagine', { body: { prompt: 'ok' } })).status).toBe(200)
				return call('/mj/task/task-1/fetch')
			},
		],
		['a Suno submit refused', () => call('/suno/submit/music', { body: { prompt: 'refuse me' } })],
		['a Suno catch-all error', () => call('/suno/feed/abc')],
	]
	for (const [name, run] of cases)
		it(`should not show the channel's secret (${name})`, async () => {
			const r = await run()
			expect(r.text).toContain('***') // the echo came back, without the secret
			expect({ name, leaked: leaked(r.text) }).toEqual({ name, leaked: [] })
		})
})

describe('credentialScrubber', () => {
	it('should cut a secret split across chunks, and leave other bytes alone', async () => {
		const secret = 'abcdefghij-SECRET'
		const text = `x${secret}y${secret}`
		// Every split point of the text into three chunks.
		for (let i = 0; i <= text.length; i++)
			for (let j = i; j <= text.length; j++) {
				const chunks = [text.slice(0, i), text.slice(i, j), text.slice(j)].map((s) => new TextEncoder().encode(s))
				const out = await new Response(new ReadableStream({ start: (c) => (chunks.forEach((x) => c.enqueue(x)), c.close()) }).pipeThrough(credentialScrubber([secret]))).text()
				if (out !== 'x***y***') throw new Error(`split at ${i},${j}: ${out}`)
			}
		const bytes = new Uint8Array(4096).map((_, i) => i % 256)
		expect(new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(credentialScrubber([secret]))).arrayBuffer())).toEqual(bytes)
	})
})
