/**
 * Refusals at the edge, in the caller's protocol (issue 3): a missing, unknown, deleted, disabled or expired key is
 * a 401; an unknown model a 404 `model_not_found`; a model the key may not use a 403; a malformed body or a field of
 * the wrong type a 400 from the gateway. None of them reaches a vendor or costs anything.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { type Protocol, PROTOCOLS } from './clients'
import { type Account, type Matrix, MODEL, SETUP_MS, startMatrix, UPSTREAMS } from './harness'
import { errorOf, postRaw, simpleBody } from './raw'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const upstreamCalls = () => UPSTREAMS.reduce((n, u) => n + m.mocks[u].requests.length, 0)

/** Sends `body` with `key` and asserts the status and error type in the protocol's shape; nothing reaches a vendor. */
async function expectRefused(proto: Protocol, key: string | undefined, body: unknown, status: number, type: { chat: string; messages: string }, code?: string) {
	const before = upstreamCalls()
	const res = await postRaw(m, proto, key === undefined ? undefined : { key }, body)
	expect(res.status).toBe(status)
	expect(res.headers.get('content-type')).toStartWith('application/json')
	const err = errorOf(proto, await res.json())
	expect(err.type).toBe(type[proto])
	if (code && proto === 'chat') expect(err.code).toBe(code)
	expect(upstreamCalls()).toBe(before)
	return err
}

// OpenAI types a wrong key and a missing model invalid_request_error (status and code tell them apart); Anthropic has its own types.
const AUTH = { chat: 'invalid_request_error', messages: 'authentication_error' }
const INVALID = { chat: 'invalid_request_error', messages: 'invalid_request_error' }

describe('keys', () => {
	for (const proto of PROTOCOLS) {
		const body = () => simpleBody(proto, MODEL.openai, 'hello', false)

		it(`should answer 401 to a missing key (${proto})`, () => expectRefused(proto, undefined, body(), 401, AUTH))

		it(`should answer 401 to an unknown key (${proto})`, () => expectRefused(proto, `sk-${'x'.repeat(48)}`, body(), 401, AUTH, 'invalid_api_key'))

		it(`should answer 401 to a deleted key (${proto})`, async () => {
			const acct = await m.account()
			expect((await m.app.admin(`/api/tokens/${acct.tokenId}`, { method: 'DELETE' })).status).toBe(200)
			await expectRefused(proto, acct.key, body(), 401, AUTH, 'invalid_api_key')
		})

		it(`should answer 401 to a disabled key (${proto})`, async () => {
			const acct = await m.account()
			expect((await m.app.admin(`/api/tokens/${acct.tokenId}`, { method: 'PATCH', body: { status: 'disabled' } })).status).toBe(200)
			await expectRefused(proto, acct.key, body(), 401, AUTH)
		})

		it(`should answer 401 to an expired key (${proto})`, async () => {
			const acct = await m.account()
			const past = new Date(Date.now() - 60_000).toISOString()
			expect((await m.app.admin(`/api/tokens/${acct.tokenId}`, { method: 'PATCH', body: { expires_at: past } })).status).toBe(200)
			const err = await expectRefused(proto, acct.key, body(), 401, AUTH, 'api_key_expired')
			expect(err.message).toContain('expired')
		})

		it(`should answer 404 model_not_found to an unknown model (${proto})`, async () => {
			const acct = await m.account()
			const err = await expectRefused(proto, acct.key, simpleBody(proto, 'no-such-model', 'hi', false), 404, { chat: 'invalid_request_error', messages: 'not_found_error' }, 'model_not_found')
			expect(err.message).toContain('no-such-model')
		})

		it(`should answer 403 to a model the key may not use (${proto})`, async () => {
			const acct = await m.account()
			expect((await m.app.admin(`/api/tokens/${acct.tokenId}`, { method: 'PATCH', body: { allowed_models: [MODEL.gemini] } })).status).toBe(200)
			await expectRefused(proto, acct.key, body(), 403, { chat: 'permission_error', messages: 'permission_error' }, 'model_not_allowed')
		})
	}

	it('should surface the refusals as the SDKs’ own error classes', async () => {
		const acct = await m.account()
		const o = new OpenAI({ apiKey: `sk-${'y'.repeat(48)}`, baseURL: `${m.app.url}/v1`, maxRetries: 0 })
		expect(await o.chat.completions.create({ model: MODEL.openai, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.AuthenticationError)
		const a = new Anthropic({ apiKey: `sk-${'y'.repeat(48)}`, baseURL: m.app.url, maxRetries: 0 })
		expect(await a.messages.create({ model: MODEL.openai, max_tokens: 9, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)).toBeInstanceOf(Anthropic.AuthenticationError)
		const nf = await acct.openai.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)
		expect(nf).toBeInstanceOf(OpenAI.NotFoundError)
		expect((nf as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found')
		expect(await acct.anthropic.messages.create({ model: 'nope', max_tokens: 9, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)).toBeInstanceOf(Anthropic.NotFoundError)
		expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
	})
})

/** Bodies the gateway must refuse itself with 400, per protocol. */
const BAD: Record<Protocol, Array<[string, unknown]>> = {
	chat: [
		['malformed JSON', '{"model": "gpt-m", "messages": ['],
		['a body that is not an object', '[1, 2]'],
		['a missing model', { messages: [{ role: 'user', content: 'hi' }] }],
		['messages that are not an array', { model: MODEL.openai, messages: 'hi' }],
		['an empty messages array', { model: MODEL.openai, messages: [] }],
		['an unknown role', { model: MODEL.openai, messages: [{ role: 'wizard', content: 'hi' }] }],
		['max_tokens of the wrong type', { model: MODEL.openai, max_tokens: 'ten', messages: [{ role: 'user', content: 'hi' }] }],
		['temperature of the wrong type', { model: MODEL.openai, temperature: 'hot', messages: [{ role: 'user', content: 'hi' }] }],
		['stream of the wrong type', { model: MODEL.openai, stream: 'yes', messages: [{ role: 'user', content: 'hi' }] }],
		['a tool without a function', { model: MODEL.openai, tools: [{ type: 'function' }], messages: [{ role: 'user', content: 'hi' }] }],
		['content of the wrong type', { model: MODEL.openai, messages: [{ role: 'user', content: 42 }] }],
	],
	messages: [
		['malformed JSON', '{"model": "claude-m", "max_tokens": 5, "messages": ['],
		['a body that is not an object', '"hello"'],
		['a missing max_tokens', { model: MODEL.anthropic, messages: [{ role: 'user', content: 'hi' }] }],
		['max_tokens of the wrong type', { model: MODEL.anthropic, max_tokens: 'ten', messages: [{ role: 'user', content: 'hi' }] }],
		['a missing model', { max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }],
		['messages that are not an array', { model: MODEL.anthropic, max_tokens: 10, messages: { role: 'user' } }],
		['a system role inside messages', { model: MODEL.anthropic, max_tokens: 10, messages: [{ role: 'system', content: 'hi' }] }],
		['content of the wrong type', { model: MODEL.anthropic, max_tokens: 10, messages: [{ role: 'user', content: 42 }] }],
		['system of the wrong type', { model: MODEL.anthropic, max_tokens: 10, system: 42, messages: [{ role: 'user', content: 'hi' }] }],
		['a tool without input_schema', { model: MODEL.anthropic, max_tokens: 10, tools: [{ name: 'x' }], messages: [{ role: 'user', content: 'hi' }] }],
		['a tool_use block without an id', { model: MODEL.anthropic, max_tokens: 10, messages: [{ role: 'assistant', content: [{ type: 'tool_use', name: 'x', input: {} }] }] }],
	],
}

describe('malformed requests', () => {
	let acct: Account
	beforeAll(async () => {
		acct = await m.account()
	})
	for (const proto of PROTOCOLS)
		for (const [what, body] of BAD[proto]) {
			it(`should answer 400 in the ${proto} shape to ${what}, before any vendor sees it`, () => expectRefused(proto, acct.key, body, 400, INVALID))
		}
})

describe('where the caller went wrong, told in its own protocol', () => {
	it('should name the header each protocol’s clients send a key in when none came', async () => {
		const wants: Array<[string, string, (b: any) => string, string]> = [
			['/v1/chat/completions', JSON.stringify(simpleBody('chat', MODEL.openai, 'hi', false)), (b) => b.error.message, 'Authorization: Bearer'],
			['/v1/messages', JSON.stringify(simpleBody('messages', MODEL.anthropic, 'hi', false)), (b) => b.error.message, 'x-api-key'],
			['/v1/messages/count_tokens', JSON.stringify(simpleBody('messages', MODEL.anthropic, 'hi', false)), (b) => b.error.message, 'x-api-key'],
			[`/v1beta/models/${MODEL.gemini}:generateContent`, JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }), (b) => b.error.message, 'x-goog-api-key'],
		]
		for (const [path, body, message, header] of wants) {
			const res = await fetch(`${m.app.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body })
			// Gemini's shape: 403 PERMISSION_DENIED, Google's status for a call without a key.
			expect(res.status).toBe(header === 'x-goog-api-key' ? 403 : 401)
			const text = message(await res.json())
			expect(text).toContain(header)
			if (header !== 'Authorization: Bearer') expect(text).not.toContain('Bearer')
		}
	})

	it('should answer an unknown path in the shape of the client that called it, still 404', async () => {
		// The Anthropic SDK given `{root}/v1` (README: Connecting clients) calls /v1/v1/messages.
		const acct = await m.account()
		const wrong = new Anthropic({ apiKey: acct.key, baseURL: `${m.app.url}/v1`, maxRetries: 0 })
		const err = await wrong.messages.create({ model: MODEL.anthropic, max_tokens: 9, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(Anthropic.NotFoundError)
		expect((err as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } })
		// The message says what to change (QA: LangChain's ChatAnthropic given `{root}/v1` got a bare "no route").
		expect((err as Error).message).toContain('the path repeats /v1; give the client the base URL without it (POST /v1/messages here')

		const get = (path: string, headers: Record<string, string> = {}) => fetch(`${m.app.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{}' })
		const anthropic = { type: 'error', error: { type: 'not_found_error' } }
		const shapes: Array<[string, Record<string, string>, unknown]> = [
			['/v1/v1/messages', { 'x-api-key': acct.key }, anthropic],
			['/v1/v1/messages/count_tokens', { 'x-api-key': acct.key }, anthropic],
			['/nope', { 'anthropic-version': '2023-06-01' }, anthropic],
			['/v1beta/nope', { 'x-goog-api-key': acct.key }, { error: { code: 404, status: 'NOT_FOUND' } }],
			['/v1/v1beta/models/x:generateContent', { 'x-goog-api-key': acct.key }, { error: { code: 404, status: 'NOT_FOUND' } }],
			['/v1/nope', { authorization: `Bearer ${acct.key}` }, { error: { type: 'invalid_request_error', code: 'not_found' } }],
		]
		for (const [path, headers, shape] of shapes) {
			const res = await get(path, headers)
			expect({ path, status: res.status }).toEqual({ path, status: 404 })
			expect(await res.json()).toMatchObject(shape as object)
		}
		// Without a key, a body to the model API is refused before it is read, whatever the path (security: a caller
		// without a key must not hold a connection while its body trickles in).
		const keyless = await get('/v1/v1/messages')
		expect(keyless.status).toBe(401)
		expect(await keyless.json()).toMatchObject({ error: { code: 'missing_api_key' } })
		expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
	})
})
