/**
 * An upstream refusing the gateway itself, through the official SDKs: a 401 (the channel's key is wrong or revoked)
 * disables the channel with the vendor's words, keys redacted, as its reason and fails over; a 403 (often one model
 * the vendor account may not use) fails over and counts toward the channel's breaker but leaves it enabled. The
 * caller never reads the vendor's words (a key hint, an organisation): it gets a message of the gateway's own, 502
 * when no channel answered, and 503 `model_unavailable` (not 404) once every channel of an existing model is disabled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { createLogger } from '../../../src/lib/log'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startAnthropicMock, startGeminiMock, startOpenAIMock, type VendorMock } from '../../mocks'

const KEY = { openai: 'up-oa-good-0001', anthropic: 'up-an-good-0002', gemini: 'up-ge-good-0003' }
/** Refused by the OpenAI mock, which then prints it masked as OpenAI does (`sk-*****wXyZ`). */
const WRONG_OPENAI_KEY = 'sk-proj-AbCdEfGh0123456789wXyZ'
/** What OpenAI itself answers to a wrong key: the key's first and last characters around asterisks. */
const OPENAI_401 = {
	error: {
		message: 'Incorrect API key provided: sk-proj-AbCd************************wXyZ. You can find your API key at https://platform.openai.com/account/api-keys.',
		type: 'invalid_request_error',
		param: null,
		code: 'invalid_api_key',
	},
}
const ANTHROPIC_403 = { type: 'error', error: { type: 'permission_error', message: 'Your organization org-12345 does not have access to this model' } }
/** The vendors' words, none of which may reach a caller. */
const UPSTREAM_WORDS = ['wXyZ', 'AbCd', '****', 'Incorrect API key', 'org-12345', 'does not have access', 'API key not valid', WRONG_OPENAI_KEY]

const PRICE = { input_per_mtok: 1, output_per_mtok: 2 }
const MODELS = ['fb', 'fb-other', 'fb-solo', 'ka', 'lone', 'gk', 'mk']

let app: TestApp
let openai: VendorMock
let anthropic: VendorMock
/** Behind the channels answering 403 (its faults touch no other channel). */
let forbidding: VendorMock
/** Behind channel `masked`, answering OpenAI's realistic 401. */
let refusing: VendorMock
let gemini: VendorMock
let key: string
const logs: string[] = []
/** Every body the gateway sent to the SDKs below. */
const answers: string[] = []

/** Keeps a copy of each answer's body. */
const recording: typeof fetch = Object.assign(async (input: RequestInfo | URL, init?: RequestInit) => {
	const res = await fetch(input, init)
	answers.push(await res.clone().text())
	return res
}, fetch)

const oa = () => new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0, fetch: recording })
const an = () => new Anthropic({ apiKey: key, baseURL: app.url, maxRetries: 0, fetch: recording })

beforeAll(async () => {
	openai = await startOpenAIMock({ apiKey: KEY.openai })
	anthropic = await startAnthropicMock({ apiKey: KEY.anthropic })
	forbidding = await startAnthropicMock({ apiKey: KEY.anthropic })
	refusing = await startOpenAIMock({ apiKey: KEY.openai })
	gemini = await startGeminiMock({ apiKey: KEY.gemini })
	const ch = (name: string, type: 'openai' | 'anthropic' | 'gemini', m: VendorMock, apiKey: string, models: string[], upstream: string, priority = 0) => ({
		name,
		type,
		base_url: m.url,
		api_key: apiKey,
		models,
		model_map: Object.fromEntries(models.map((x) => [x, upstream])),
		priority,
	})
	app = await startTestApp({
		env: { BREAKER_THRESHOLD: '2' },
		config: {
			channels: [
				// 403: `fb` fails over to OpenAI; `fb-other` is the same channel's other model; `fb-solo` has no fallback.
				ch('an-forbidden', 'anthropic', forbidding, KEY.anthropic, ['fb', 'fb-other'], 'claude-sonnet-5'),
				ch('oa-fb', 'openai', openai, KEY.openai, ['fb'], 'gpt-4o-mini', 1),
				ch('an-solo', 'anthropic', forbidding, KEY.anthropic, ['fb-solo'], 'claude-sonnet-5'),
				// 401: `ka` fails over to Anthropic; `lone` has no fallback; `mk` answers OpenAI's own wording.
				ch('oa-badkey', 'openai', openai, WRONG_OPENAI_KEY, ['ka'], 'gpt-4o-mini'),
				ch('an-ka', 'anthropic', anthropic, KEY.anthropic, ['ka'], 'claude-sonnet-5', 1),
				ch('oa-lone', 'openai', openai, WRONG_OPENAI_KEY, ['lone'], 'gpt-4o-mini'),
				ch('masked', 'openai', refusing, KEY.openai, ['mk'], 'gpt-4o-mini'),
				// Gemini refuses a wrong key with 400 API_KEY_INVALID: still the channel's key.
				ch('ge-badkey', 'gemini', gemini, 'wrong-gemini-key', ['gk'], 'gemini-2.5-flash'),
				ch('oa-gk', 'openai', openai, KEY.openai, ['gk'], 'gpt-4o-mini', 1),
			],
			models: MODELS.map((name) => ({ name, ...PRICE })),
		},
	})
	// The real logger (with its redaction), writing here.
	Object.assign(app.svc, { log: createLogger('debug', (l) => logs.push(l)) })
	key = (await app.account(10)).key
}, 60_000)
afterAll(async () => {
	await app.close()
	await Promise.all([openai, anthropic, forbidding, refusing, gemini].map((m) => m.stop()))
})

type ChannelView = { name: string; status: string; disabled_reason: string | null; health: { state: string; consecutive_failures: number; last_error: string | null } }

async function channel(name: string): Promise<ChannelView> {
	const c = ((await app.admin('/api/channels')).body.data as ChannelView[]).find((x) => x.name === name)
	if (!c) throw new Error(`no channel ${name}`)
	return c
}

const chat = (model: string, stream = false) => oa().chat.completions.create({ model, stream, messages: [{ role: 'user', content: `hello ${model}` }] } as never) as unknown as Promise<unknown>
const message = (model: string, stream = false) => an().messages.create({ model, stream, max_tokens: 50, messages: [{ role: 'user', content: `hello ${model}` }] } as never) as unknown as Promise<unknown>
/** The error a call fails with (a call that succeeds fails the test). */
async function failure<E>(p: Promise<unknown>): Promise<E> {
	const out = await p.then(
		() => undefined,
		(e: unknown) => ({ e }),
	)
	if (!out) throw new Error('expected an error')
	return out.e as E
}

/** Reads a whole SDK stream, returning its text. */
async function drain(s: unknown): Promise<string> {
	let out = ''
	for await (const e of s as AsyncIterable<any>) out += e.choices?.[0]?.delta?.content ?? e.delta?.text ?? ''
	return out
}

describe('an upstream 403', () => {
	it('should fail over without disabling the channel, count toward its breaker, and keep its other models served', async () => {
		forbidding.fault = { kind: 'status', status: 403, body: ANTHROPIC_403 }
		const before = openai.requests.length
		const c = (await chat('fb')) as { choices: Array<{ message: { content: string } }> }
		expect(c.choices[0]!.message.content).toBe('Hello! You said: hello fb')
		expect(await drain(await message('fb', true))).toBe('Hello! You said: hello fb')
		expect(forbidding.requests).toHaveLength(2)
		expect(openai.requests.length).toBe(before + 2)

		const ch = await channel('an-forbidden')
		expect(ch.status).toBe('enabled')
		expect(ch.disabled_reason).toBeNull()
		// Two failures at BREAKER_THRESHOLD=2: the breaker is open, and its last error is the vendor's own.
		expect(ch.health.state).toBe('open')
		expect(ch.health.last_error).toContain('does not have access')

		// The channel's other model still answers: a cooling-down channel is still tried when it is the only one.
		forbidding.reset()
		const other = (await message('fb-other')) as { content: Array<{ text: string }> }
		expect(other.content[0]!.text).toBe('Hello! You said: hello fb-other')
		const listed = (await oa().models.list()).data.map((m) => m.id)
		expect(listed).toContain('fb')
		expect(listed).toContain('fb-other')
	})

	it('should answer 502 with a message of its own, in each caller shape, when no other channel serves the model', async () => {
		forbidding.fault = { kind: 'status', status: 403, body: ANTHROPIC_403 }
		for (const stream of [false, true]) {
			const o = await failure<InstanceType<typeof OpenAI.APIError>>(chat('fb-solo', stream))
			expect(o).toBeInstanceOf(OpenAI.APIError)
			expect(o.status).toBe(502)
			expect(o.error).toMatchObject({ type: 'server_error', code: 'upstream_forbidden' })
			expect((o.error as { message: string }).message).toBe('the upstream provider refused the gateway access to this model')
			const a = await failure<InstanceType<typeof Anthropic.APIError>>(message('fb-solo', stream))
			expect(a).toBeInstanceOf(Anthropic.APIError)
			expect(a.status).toBe(502)
			expect(a.error).toMatchObject({ type: 'error', error: { type: 'api_error', message: 'the upstream provider refused the gateway access to this model' } })
		}
		forbidding.reset()
		expect((await channel('an-solo')).status).toBe('enabled')
		expect(((await message('fb-solo')) as { content: Array<{ text: string }> }).content[0]!.text).toBe('Hello! You said: hello fb-solo')
	})
})

describe('an upstream 401', () => {
	it('should disable the channel with the redacted reason, log it, and serve from the next channel', async () => {
		const c = (await chat('ka')) as { choices: Array<{ message: { content: string } }> }
		expect(c.choices[0]!.message.content).toBe('Hello! You said: hello ka')
		const ch = await channel('oa-badkey')
		expect(ch.status).toBe('disabled')
		expect(ch.disabled_reason).toContain("the upstream rejected the channel's credentials (HTTP 401): Incorrect API key provided: ***.")
		for (const secret of [WRONG_OPENAI_KEY, 'wXyZ', '*****']) expect(ch.disabled_reason).not.toContain(secret)
		const line = logs.find((l) => l.includes('channel disabled') && l.includes('oa-badkey'))
		expect(line).toContain('Incorrect API key provided')
		expect(line).not.toContain('wXyZ')

		// The next request goes straight to the fallback: the refused key is not sent again.
		const refused = () => openai.requests.filter((r) => r.headers.authorization === `Bearer ${WRONG_OPENAI_KEY}`).length
		const tried = refused()
		expect(await message('ka', true).then(drain)).toBe('Hello! You said: hello ka')
		expect(refused()).toBe(tried)
		expect((await oa().models.list()).data.map((m) => m.id)).toContain('ka')
	})

	it("should answer 502 with a message of its own when OpenAI's 401 names the masked key, and keep the key out of the reason", async () => {
		refusing.faultOnce = { kind: 'status', status: 401, body: OPENAI_401 }
		const a = await failure<InstanceType<typeof Anthropic.APIError>>(message('mk'))
		expect(a.status).toBe(502)
		expect(a.error).toMatchObject({ type: 'error', error: { type: 'api_error', message: "the upstream provider refused the gateway's credentials for this model" } })
		const ch = await channel('masked')
		expect(ch.status).toBe('disabled')
		expect(ch.disabled_reason).toContain('Incorrect API key provided: ***. You can find your API key at')
		for (const secret of ['AbCd', 'wXyZ', '****']) expect(ch.disabled_reason).not.toContain(secret)
		for (const l of logs) for (const secret of ['AbCd', 'wXyZ', '****']) expect(l).not.toContain(secret)
	})

	it("should treat Gemini's 400 API_KEY_INVALID as the channel's key: disable it and fail over", async () => {
		const c = (await chat('gk')) as { choices: Array<{ message: { content: string } }> }
		expect(c.choices[0]!.message.content).toBe('Hello! You said: hello gk')
		const ch = await channel('ge-badkey')
		expect(ch.status).toBe('disabled')
		expect(ch.disabled_reason).toContain('API key not valid')
	})
})

describe('a model whose channels are all disabled', () => {
	it('should answer 502 to the request that found the key refused, then 503 model_unavailable in every caller shape', async () => {
		const first = await failure<InstanceType<typeof OpenAI.APIError>>(chat('lone'))
		expect(first.status).toBe(502)
		expect(first.error).toMatchObject({ type: 'server_error', code: 'upstream_auth', message: "the upstream provider refused the gateway's credentials for this model" })
		expect((await channel('oa-lone')).status).toBe('disabled')
		const upstreamCalls = openai.requests.length

		const unavailable = 'No channel is available for model "lone" right now'
		for (const stream of [false, true]) {
			const o = await failure<InstanceType<typeof OpenAI.APIError>>(chat('lone', stream))
			expect(o.status).toBe(503)
			expect(o.error).toMatchObject({ type: 'service_unavailable_error', code: 'model_unavailable', message: unavailable })
			const a = await failure<InstanceType<typeof Anthropic.APIError>>(message('lone', stream))
			expect(a.status).toBe(503)
			expect(a.error).toMatchObject({ type: 'error', error: { type: 'api_error', message: unavailable } })
		}
		const r = await failure<InstanceType<typeof OpenAI.APIError>>(oa().responses.create({ model: 'lone', input: 'hello' }))
		expect(r.status).toBe(503)
		expect(r.error).toMatchObject({ code: 'model_unavailable' })
		const counted = await failure<InstanceType<typeof Anthropic.APIError>>(an().messages.countTokens({ model: 'lone', messages: [{ role: 'user', content: 'hi' }] }))
		expect(counted.status).toBe(503)

		const gem = (path: string) =>
			recording(`${app.url}/v1beta/models/lone:${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': key }, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }) })
		const g = await gem('generateContent')
		expect(g.status).toBe(503)
		expect(await g.json()).toEqual({ error: { code: 503, message: unavailable, status: 'UNAVAILABLE' } })
		const ga = await gem('streamGenerateContent')
		expect(ga.status).toBe(503)
		expect(await ga.json()).toMatchObject([{ error: { code: 503, status: 'UNAVAILABLE' } }])
		expect(openai.requests.length).toBe(upstreamCalls)

		// The list shows what can be served now; a model that never existed is still a 404.
		expect((await oa().models.list()).data.map((m) => m.id)).not.toContain('lone')
		const unknown = await failure<InstanceType<typeof OpenAI.APIError>>(chat('no-such-model'))
		expect(unknown.status).toBe(404)
		expect(unknown.error).toMatchObject({ code: 'model_not_found' })
	})
})

describe('what callers read', () => {
	it("should never carry the upstream's refusal text or a key hint in any answer", () => {
		expect(answers.length).toBeGreaterThan(20)
		for (const body of answers) for (const word of UPSTREAM_WORDS) expect(body).not.toContain(word)
	})
})
