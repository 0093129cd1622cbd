/**
 * What an upstream's failure tells the caller, through the official SDKs: an error page of a proxy in front of a
 * vendor (HTML naming its hosts and addresses), a 5xx body naming the vendor account, a DNS name that does not
 * resolve. The caller gets its own protocol's shape, an honest status (502 failed, 503 overloaded, the vendor's 4xx,
 * 429 with the shortest wait) and the gateway's words; the vendor's are the operator's, in the channel's health and
 * the log. And a channel whose vendor lacks the model (a glob claimed it) hands the request on to the next one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import { createLogger } from '../../../src/lib/log'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startAnthropicMock, startGeminiMock, startOpenAIMock, type VendorMock } from '../../mocks'

const KEY = { openai: 'up-oa-words-0001', anthropic: 'up-an-words-0002', gemini: 'up-ge-words-0003' }
/** nginx's 502 page, as a proxy in front of a self-hosted vendor sends it. */
const PROXY_PAGE =
	'<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1><hr>nginx/1.18.0 (upstream 10.0.3.7:8080, gpu-node-3.corp.internal)</body></html>'
const ORG = 'org-Q2x9Zk4LmN8pR7tV1wY3bC5d'
const PROJECT = 'proj_Hj3kL5mN7pQ9rS1tU3vW5xY7'
/** A 5xx in the vendor's JSON shape naming the gateway's vendor account. */
const ACCOUNT_500 = { error: { message: `Internal error for organization ${ORG}, project ${PROJECT}`, type: 'server_error', param: null, code: null } }
const DEAD_HOST = 'llm-box.no-such-host.invalid'
/** Nothing of these may reach a caller. */
const SECRETS = ['nginx', '10.0.3.7', 'gpu-node-3', ORG, PROJECT, DEAD_HOST, '<html', ...Object.values(KEY)]

let app: TestApp
let oa: VendorMock
let an: VendorMock
let ge: VendorMock
/** An OpenAI-compatible vendor serving gpt-4o-mini alone, behind a channel listing `gpt-*`. */
let narrow: VendorMock
let key: string
const logs: string[] = []

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: KEY.openai })
	an = await startAnthropicMock({ apiKey: KEY.anthropic })
	ge = await startGeminiMock({ apiKey: KEY.gemini })
	narrow = await startOpenAIMock({ apiKey: KEY.openai, models: ['gpt-4o-mini'] })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'w-oa', type: 'openai', base_url: oa.url, api_key: KEY.openai, models: ['w-oa'], model_map: { 'w-oa': 'gpt-4o-mini' } },
				{ name: 'w-an', type: 'anthropic', base_url: an.url, api_key: KEY.anthropic, models: ['w-an'], model_map: { 'w-an': 'claude-sonnet-4-5' } },
				{ name: 'w-ge', type: 'gemini', base_url: ge.url, api_key: KEY.gemini, models: ['w-ge'], model_map: { 'w-ge': 'gemini-2.5-flash' } },
				{ name: 'w-dead', type: 'openai', base_url: `http://${DEAD_HOST}:9/v1`, api_key: KEY.openai, models: ['w-dead'] },
				// `w-rl`: OpenAI first, Anthropic second.
				{ name: 'w-rl-oa', type: 'openai', base_url: oa.url, api_key: KEY.openai, models: ['w-rl'], model_map: { 'w-rl': 'gpt-4o-mini' } },
				{ name: 'w-rl-an', type: 'anthropic', base_url: an.url, api_key: KEY.anthropic, models: ['w-rl'], model_map: { 'w-rl': 'claude-sonnet-4-5' }, priority: 1 },
				{ name: 'w-glob', type: 'openai', base_url: narrow.url, api_key: KEY.openai, models: ['gpt-*'] },
				{ name: 'w-glob-an', type: 'anthropic', base_url: an.url, api_key: KEY.anthropic, models: ['gpt-9-preview'], model_map: { 'gpt-9-preview': 'claude-sonnet-4-5' }, priority: 1 },
			],
			models: ['w-oa', 'w-an', 'w-ge', 'w-dead', 'w-rl', 'gpt-9-preview', 'gpt-4o-mini'].map((name) => ({ name, input_per_mtok: 1, output_per_mtok: 2 })),
		},
	})
	Object.assign(app.svc, { log: createLogger('debug', (l) => logs.push(l)) })
	key = (await app.account(10)).key
}, 60_000)
afterAll(async () => {
	await app.close()
	await Promise.all([oa, an, ge, narrow].map((m) => m.stop()))
})

/** The SDK's error: its status and everything it says (message and body). */
async function failure(p: Promise<unknown>): Promise<{ status: number; said: string }> {
	const e = await p.then(
		() => {
			throw new Error('expected an error')
		},
		(e: { status?: number; code?: number; message?: string; error?: unknown }) => e,
	)
	return { status: e.status ?? e.code ?? 0, said: `${e.message} ${JSON.stringify(e.error ?? null)}` }
}

const openai = () => new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
const chat = (model: string, stream = false) =>
	(async () => {
		const r = await openai().chat.completions.create({ model, stream, messages: [{ role: 'user', content: 'hello' }] } as never)
		if (stream) for await (const _ of r as unknown as AsyncIterable<unknown>);
	})()
const message = (model: string) => new Anthropic({ apiKey: key, baseURL: app.url, maxRetries: 0 }).messages.create({ model, max_tokens: 20, messages: [{ role: 'user', content: 'hello' }] })
const generate = (model: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: app.url, retryOptions: { attempts: 1 } } }).models.generateContent({ model, contents: 'hello' })

const expectClean = (said: string) => {
	for (const s of SECRETS) expect(said).not.toContain(s)
}

type ChannelView = { name: string; health: { last_error: string | null; consecutive_failures: number } }
const health = async (name: string) => ((await app.admin('/api/channels')).body.data as ChannelView[]).find((c) => c.name === name)!.health

describe("an upstream's error page or account in a 5xx", () => {
	it('should answer 502 in the gateway words to OpenAI, Anthropic and Gemini callers, leaving the page to the operator', async () => {
		oa.fault = { kind: 'status', status: 502, body: PROXY_PAGE }
		an.fault = { kind: 'status', status: 500, body: PROXY_PAGE }
		ge.fault = { kind: 'status', status: 500, body: ACCOUNT_500 }
		try {
			const seen = [await failure(chat('w-oa')), await failure(chat('w-oa', true)), await failure(message('w-an')), await failure(generate('w-ge')), await failure(chat('w-ge'))]
			for (const f of seen) {
				expect(f.status).toBe(502)
				expect(f.said).toContain('the upstream provider failed')
				expectClean(f.said)
			}
			expect((await health('w-oa')).last_error).toContain('nginx/1.18.0')
			expect((await health('w-ge')).last_error).toContain(ORG)
		} finally {
			oa.fault = an.fault = ge.fault = undefined
		}
	})

	it('should answer an overload behind a proxy page 503 in the gateway words', async () => {
		oa.fault = { kind: 'status', status: 503, body: PROXY_PAGE }
		try {
			const f = await failure(chat('w-oa'))
			expect(f.status).toBe(503)
			expectClean(f.said)
		} finally {
			oa.fault = undefined
		}
	})
})

describe("an upstream's 4xx", () => {
	it("should keep the vendor's JSON words about the request, with its account ids and the channel's host masked", async () => {
		const host = new URL(oa.url).host
		oa.fault = { kind: 'status', status: 400, body: { error: { message: `Unsupported value for ${ORG} at ${oa.url}/chat/completions (${host})`, type: 'invalid_request_error', param: 'temperature', code: 'unsupported_value' } } }
		try {
			const f = await failure(chat('w-oa'))
			expect(f.status).toBe(400)
			expect(f.said).toContain('Unsupported value for')
			expect(f.said).toContain('unsupported_value')
			expectClean(f.said)
			expect(f.said).not.toContain(host)
		} finally {
			oa.fault = undefined
		}
	})

	it('should not pass a proxy page as the message, whatever the status', async () => {
		an.fault = { kind: 'status', status: 400, body: PROXY_PAGE }
		try {
			const f = await failure(message('w-an'))
			expect(f.status).toBe(400)
			expectClean(f.said)
		} finally {
			an.fault = undefined
		}
	})
})

describe('an upstream host that does not resolve', () => {
	it('should answer 502 without naming the host, which the operator still reads in the log and the health view', async () => {
		const f = await failure(chat('w-dead'))
		expect(f.status).toBe(502)
		expect(f.said).toContain('cannot reach the upstream provider')
		expectClean(f.said)
		expect((await health('w-dead')).last_error).toContain(DEAD_HOST)
		// The channel's Test call (the operator's) says why.
		const id = ((await app.admin('/api/channels')).body.data as Array<{ id: number; name: string }>).find((c) => c.name === 'w-dead')!.id
		const test = await app.admin(`/api/channels/${id}/test`, { method: 'POST', body: {} })
		expect(test.body).toMatchObject({ ok: false, testable: true })
		expect(test.body.message).toContain(DEAD_HOST)
	})
})

describe('every channel rate limited', () => {
	// Was: the last channel's wait (40 s), although the first channel takes requests again after 4 s.
	it('should answer 429 with the shortest wait any channel named, to OpenAI and Anthropic callers', async () => {
		oa.fault = { kind: 'status', status: 429, retryAfter: 4 }
		an.fault = { kind: 'status', status: 429, retryAfter: 40 }
		try {
			for (const call of [() => chat('w-rl'), () => message('w-rl')]) {
				for (const c of app.svc.catalog.channelsFor('w-rl')) app.svc.health.success(c.id)
				const e = (await call().then(
					() => undefined,
					(e: unknown) => e,
				)) as { status: number; headers: Headers }
				expect(e.status).toBe(429)
				expect(e.headers.get('retry-after')).toBe('4')
			}
		} finally {
			oa.fault = an.fault = undefined
		}
	})
})

describe('a channel whose vendor lacks the model', () => {
	// Was: the vendor's 404 went to the caller, and the second channel was never tried.
	it('should hand the request to the next channel, without counting it against the channel, which serves its other models', async () => {
		const answer = await openai().chat.completions.create({ model: 'gpt-9-preview', messages: [{ role: 'user', content: 'hello glob' }] })
		expect(answer.choices[0]!.message.content).toContain('hello glob')
		const viaMessages = await new Anthropic({ apiKey: key, baseURL: app.url, maxRetries: 0 }).messages.create({ model: 'gpt-9-preview', max_tokens: 20, messages: [{ role: 'user', content: 'hello again' }] })
		expect(viaMessages.content[0]).toMatchObject({ type: 'text' })
		expect(narrow.requests.map((r) => (r.body as { model: string }).model)).toEqual(['gpt-9-preview', 'gpt-9-preview'])
		expect(await health('w-glob')).toMatchObject({ consecutive_failures: 0 })
		expect((await openai().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })).choices[0]!.message.content).toContain('hi')
	})

	it('should still answer 404 in the caller shape when no channel has it', async () => {
		an.fault = { kind: 'status', status: 404 }
		try {
			const f = await failure(openai().chat.completions.create({ model: 'gpt-9-preview', messages: [{ role: 'user', content: 'hello' }] }))
			expect(f.status).toBe(404)
		} finally {
			an.fault = undefined
		}
	})
})

describe('the log', () => {
	it("should carry the vendor's words for the operator and never a channel key", () => {
		const all = logs.join('\n')
		expect(all).toContain('gpu-node-3.corp.internal')
		for (const k of Object.values(KEY)) expect(all).not.toContain(k)
	})
})
