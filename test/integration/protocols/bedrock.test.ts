/**
 * Claude on Amazon Bedrock (`bedrock` channels) through the official SDKs: Anthropic clients on the same-protocol
 * fast path (Anthropic SSE re-framed from Bedrock's event stream), OpenAI clients converted; both auth forms (a
 * Bedrock API key as bearer, IAM keys signed with SigV4, checked for real by the mock); Bedrock's envelope (no
 * `model`/`stream` in the body, `anthropic_version`, betas in `anthropic_beta`, the model id in the path); tools,
 * thinking with signatures, images, errors whole and mid-stream, failover, and the charges.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { type BedrockMock, countWords, startBedrockMock, thinkingSignature } from '../../mocks'
import { chat, messages, type Protocol, PROTOCOLS } from './clients'
import { type Account, expectCharges, lastRequest, type Matrix, PRICE, SETUP_MS, startMatrix, usageRows } from './harness'

const REGION = 'us-west-2'
const API_KEY = 'ABSKQmVkcm9ja0FQSUtleS1tb2NrLWtleQ=='
const IAM = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', sessionToken: 'FwoGZXIvYXdzEMOCKSESSIONTOKEN' }
/** An inference profile id: its `:` is `%3A` in the path and `%253A` in the signed canonical request. */
const PROFILE = 'us.anthropic.claude-sonnet-4-6-v1:0'

/** Served by the Bedrock API key channel, and by the IAM one. */
const BEARER = 'claude-br'
const SIGNED = 'claude-br-iam'
/** Bedrock first (priority 0), Anthropic second, for failover. */
const FAILOVER = 'claude-br-fo'
/** IAM keys with a wrong secret: every call is refused by the signature check. */
const BAD_SECRET = 'claude-br-bad'

let m: Matrix
let br: BedrockMock
beforeAll(async () => {
	br = await startBedrockMock({ apiKey: API_KEY, iam: IAM, region: REGION, models: [PROFILE] })
	for (const name of [BEARER, SIGNED, FAILOVER, BAD_SECRET]) PRICE[name] = { input: 3, output: 15, cacheRead: 0.3 }
	m = await startMatrix({
		models: [BEARER, SIGNED, FAILOVER, BAD_SECRET].map((name) => ({ name, input_per_mtok: 3, output_per_mtok: 15, cache_read_per_mtok: 0.3 })),
		channels: (mocks): GatewayConfig['channels'] => [
			{ name: 'br-key', type: 'bedrock', base_url: br.url, api_key: API_KEY, models: [BEARER, FAILOVER], model_map: { [BEARER]: PROFILE, [FAILOVER]: PROFILE }, priority: 0 },
			{ name: 'br-iam', type: 'bedrock', base_url: br.url, api_key: `${IAM.accessKeyId}:${IAM.secretAccessKey}:${IAM.sessionToken}`, models: [SIGNED], model_map: { [SIGNED]: PROFILE }, settings: { region: REGION } },
			{ name: 'br-bad', type: 'bedrock', base_url: br.url, api_key: `${IAM.accessKeyId}:not-the-secret:${IAM.sessionToken}`, models: [BAD_SECRET], model_map: { [BAD_SECRET]: PROFILE }, settings: { region: REGION } },
			{ name: 'fo-anthropic', type: 'anthropic', base_url: mocks.anthropic.url, api_key: 'up-anthropic', models: [FAILOVER], model_map: { [FAILOVER]: 'claude-sonnet-4-6' }, priority: 1 },
		],
	})
}, SETUP_MS)
afterAll(async () => {
	await m.close()
	await br.stop()
})

const last = () => lastRequest(br)

const ask = (proto: Protocol, acct: Account, model: string, text: string, stream: boolean, extra: Record<string, unknown> = {}) =>
	proto === 'chat'
		? chat(acct.openai, { model, messages: [{ role: 'user', content: text }], ...extra }, stream)
		: messages(acct.anthropic, { model, max_tokens: 256, messages: [{ role: 'user', content: text }], ...extra } as never, stream)

describe('bedrock channel', () => {
	for (const proto of PROTOCOLS)
		for (const stream of [false, true])
			for (const model of [BEARER, SIGNED])
				it(`should answer ${proto} clients (${stream ? 'stream' : 'non-stream'}, ${model === BEARER ? 'API key' : 'SigV4'}) in Bedrock's envelope, and bill it`, async () => {
					const acct = await m.account()
					const a = await ask(proto, acct, model, 'hello from aws', stream)
					expect(a.text).toBe('Hello! You said: hello from aws')
					expect(a.stop).toBe(proto === 'chat' ? 'stop' : 'end_turn')
					const input = countWords('hello from aws')
					const output = countWords(a.text)
					expect(a.usage).toMatchObject({ input, output, cached: 0 })
					const r = last()
					expect(r.path).toBe(`/model/us.anthropic.claude-sonnet-4-6-v1%3A0/${stream ? 'invoke-with-response-stream' : 'invoke'}`)
					expect(r.body.model).toBeUndefined()
					expect(r.body.stream).toBeUndefined()
					expect(r.body.anthropic_version).toBe('bedrock-2023-05-31')
					expect(r.body.messages).toEqual([{ role: 'user', content: proto === 'chat' ? [{ type: 'text', text: 'hello from aws' }] : 'hello from aws' }])
					// An OpenAI client named no cap: the model's maximum, known from the Bedrock id (Sonnet 4.6: 64,000), not a 4,096 default.
					expect(r.body.max_tokens).toBe(proto === 'chat' ? 64_000 : 256)
					if (model === BEARER) expect(r.headers.authorization).toBe(`Bearer ${API_KEY}`)
					else {
						expect(r.headers.authorization).toStartWith(`AWS4-HMAC-SHA256 Credential=${IAM.accessKeyId}/`)
						expect(r.headers['x-amz-security-token']).toBe(IAM.sessionToken)
					}
					expect(r.headers['x-api-key']).toBeUndefined()
					await expectCharges(m, acct, [{ model, input, output, stream }])
				})

	it('should relay Anthropic SSE to Anthropic clients as Bedrock sent each event', async () => {
		const acct = await m.account()
		const res = await fetch(`${m.app.url}/v1/messages`, {
			method: 'POST',
			headers: { 'content-type': 'application/json', 'x-api-key': acct.key, 'anthropic-version': '2023-06-01' },
			body: JSON.stringify({ model: BEARER, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'two words' }] }),
		})
		expect(res.status).toBe(200)
		expect(res.headers.get('content-type')).toStartWith('text/event-stream')
		const text = await res.text()
		const events = [...text.matchAll(/^event: (.*)$/gm)].map((x) => x[1])
		expect(events[0]).toBe('message_start')
		expect(events.slice(-2)).toEqual(['message_delta', 'message_stop'])
		// Bedrock's own member of message_stop is still there: the event's bytes went through untouched.
		expect(text).toMatch(/event: message_stop\ndata: \{"type":"message_stop","amazon-bedrock-invocationMetrics":\{"inputTokenCount":2,/)
		// The model_map alias is what the client sees.
		expect(text).toContain(`"model":"${BEARER}"`)
	})

	it('should answer Responses clients, streamed, with usage', async () => {
		const acct = await m.account()
		const s = await acct.openai.responses.create({ model: SIGNED, input: 'responses over bedrock', stream: true })
		let text = ''
		let usage: { input_tokens: number; output_tokens: number } | undefined
		for await (const ev of s) {
			if (ev.type === 'response.output_text.delta') text += ev.delta
			if (ev.type === 'response.completed') usage = ev.response.usage ?? undefined
		}
		expect(text).toBe('Hello! You said: responses over bedrock')
		expect(usage).toMatchObject({ input_tokens: countWords('responses over bedrock'), output_tokens: countWords(text) })
		expect(last().path).toEndWith('/invoke-with-response-stream')
	})

	it('should answer Gemini clients (generateContentStream), with usage', async () => {
		const acct = await m.account()
		const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
		let text = ''
		let usage: { promptTokenCount?: number; candidatesTokenCount?: number } | undefined
		for await (const c of await ai.models.generateContentStream({ model: BEARER, contents: 'gemini over bedrock' })) {
			text += c.text ?? ''
			usage = c.usageMetadata ?? usage
		}
		expect(text).toBe('Hello! You said: gemini over bedrock')
		expect(usage).toMatchObject({ promptTokenCount: countWords('gemini over bedrock'), candidatesTokenCount: countWords(text) })
		await expectCharges(m, acct, [{ model: BEARER, input: countWords('gemini over bedrock'), output: countWords(text), stream: true }])
	})

	it("should pass the console's Test call with SigV4, and report a wrong secret as the vendor words it", async () => {
		const list = (await m.app.admin('/api/channels')).body.data as { id: number; name: string }[]
		const id = (name: string) => list.find((c) => c.name === name)!.id
		const ok = await m.app.admin(`/api/channels/${id('br-iam')}/test`, { method: 'POST', body: { model: SIGNED } })
		expect(ok.body).toMatchObject({ ok: true, testable: true, status: 200 })
		expect(last().body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 1 })
		const bad = await m.app.admin(`/api/channels/${id('br-bad')}/test`, { method: 'POST', body: { model: BAD_SECRET } })
		expect(bad.body).toMatchObject({ ok: false, testable: true, status: 401 })
		expect(bad.body.message).toContain('The request signature we calculated does not match')
	})

	for (const stream of [false, true])
		it(`should give several choices (n: 2, ${stream ? 'stream' : 'non-stream'}), each a signed call to Bedrock`, async () => {
			const acct = await m.account()
			const before = br.requests.length
			const texts = ['', '']
			if (stream) {
				const s = await acct.openai.chat.completions.create({ model: SIGNED, n: 2, stream: true, messages: [{ role: 'user', content: 'two of them' }] })
				for await (const c of s) for (const ch of c.choices) texts[ch.index] += ch.delta.content ?? ''
			} else {
				const r = await acct.openai.chat.completions.create({ model: SIGNED, n: 2, messages: [{ role: 'user', content: 'two of them' }] })
				for (const ch of r.choices) texts[ch.index] = ch.message.content ?? ''
			}
			expect(texts).toEqual(['Hello! You said: two of them', 'Hello! You said: two of them'])
			const calls = br.requests.slice(before)
			expect(calls.length).toBe(2)
			for (const c of calls) expect(c.headers.authorization).toStartWith('AWS4-HMAC-SHA256 ')
		})

	for (const model of [BEARER, SIGNED])
		it(`should count tokens with Bedrock's CountTokens for the profile's foundation model, InvokeModel's body as base64 (${model === BEARER ? 'API key' : 'SigV4'})`, async () => {
			const acct = await m.account()
			const before = br.requests.length
			const client = new Anthropic({ apiKey: acct.key, baseURL: m.app.url, maxRetries: 0, defaultHeaders: { 'anthropic-beta': 'context-1m-2025-08-07' } })
			const { data, response } = await client.messages.countTokens({ model, system: 'you count', messages: [{ role: 'user', content: 'how many tokens is this' }] }).withResponse()
			expect(data.input_tokens).toBe(countWords('you count') + countWords('how many tokens is this'))
			expect(response.headers.get('x-switchboard-counted-by')).toBe('bedrock')
			const [call, ...more] = br.requests.slice(before) as Array<{ path: string; headers: Record<string, string>; body: any }>
			expect(more).toHaveLength(0)
			// CountTokens refuses inference profiles: the foundation model's id, without the `us.` geography.
			expect(call!.path).toBe('/model/anthropic.claude-sonnet-4-6-v1%3A0/count-tokens')
			expect(Object.keys(call!.body.input)).toEqual(['invokeModel'])
			const invoke = JSON.parse(Buffer.from(call!.body.input.invokeModel.body, 'base64').toString('utf8'))
			expect(invoke).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', system: 'you count', messages: [{ role: 'user', content: 'how many tokens is this' }], anthropic_beta: ['context-1m-2025-08-07'] })
			expect(invoke.model).toBeUndefined()
			expect(invoke.max_tokens).toBeGreaterThan(0)
			if (model === SIGNED) expect(call!.headers.authorization).toStartWith(`AWS4-HMAC-SHA256 Credential=${IAM.accessKeyId}/`)
			else expect(call!.headers.authorization).toBe(`Bearer ${API_KEY}`)
		})

	it("should count a Gemini client's tokens for a Bedrock Claude model with CountTokens, answered as Gemini's totalTokens", async () => {
		const acct = await m.account()
		const before = br.requests.length
		const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
		const r = await ai.models.countTokens({ model: BEARER, contents: 'gemini counts on bedrock' })
		expect(r.totalTokens).toBe(countWords('gemini counts on bedrock'))
		const calls = br.requests.slice(before)
		expect(calls.map((c) => c.path)).toEqual(['/model/anthropic.claude-sonnet-4-6-v1%3A0/count-tokens'])
	})

	it('should fall back to the local estimate when Bedrock refuses to count', async () => {
		const acct = await m.account()
		const before = br.requests.length
		br.faultOnce = { kind: 'status', status: 400, type: 'ValidationException', message: "The provided model doesn't support counting tokens." }
		const { data, response } = await acct.anthropic.messages.countTokens({ model: BEARER, messages: [{ role: 'user', content: 'estimate me please' }] }).withResponse()
		expect(data.input_tokens).toBeGreaterThan(0)
		expect(response.headers.get('x-switchboard-counted-by')).toBe('estimate')
		expect(br.requests.length).toBe(before + 1)
	})

	it('should move anthropic-beta into the body as anthropic_beta', async () => {
		const acct = await m.account()
		const client = new Anthropic({ apiKey: acct.key, baseURL: m.app.url, maxRetries: 0, defaultHeaders: { 'anthropic-beta': 'context-1m-2025-08-07, interleaved-thinking-2025-05-14' } })
		const r = await client.messages.create({ model: SIGNED, max_tokens: 64, messages: [{ role: 'user', content: 'beta' }] })
		expect(r.content.map((b) => (b.type === 'text' ? b.text : b.type))).toEqual(['Hello! You said: beta'])
		expect(last().body.anthropic_beta).toEqual(['context-1m-2025-08-07', 'interleaved-thinking-2025-05-14'])
		expect(last().headers['anthropic-beta']).toBeUndefined()
	})

	for (const proto of PROTOCOLS)
		for (const stream of [false, true])
			it(`should carry tool calls and their results (${proto}, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				const tools =
					proto === 'chat'
						? { tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }] }
						: { tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }] }
				const a = await ask(proto, acct, SIGNED, 'weather #tools', stream, tools)
				expect(a.calls.map((c) => [c.name, c.args])).toEqual([
					['get_weather', { city: 'Paris' }],
					['get_weather', { city: 'Tokyo' }],
				])
				expect(a.stop).toBe(proto === 'chat' ? 'tool_calls' : 'tool_use')
				const results =
					proto === 'chat'
						? a.calls.map((c, i) => ({ role: 'tool', tool_call_id: c.id, content: ['rain', 'sun'][i] }))
						: [{ role: 'user', content: a.calls.map((c, i) => ({ type: 'tool_result', tool_use_id: c.id, content: ['rain', 'sun'][i] })) }]
				const history = [{ role: 'user', content: 'weather #tools' }, a.replay, ...results]
				const b =
					proto === 'chat'
						? await chat(acct.openai, { model: SIGNED, messages: history, ...tools } as never, stream)
						: await messages(acct.anthropic, { model: SIGNED, max_tokens: 256, messages: history, ...tools } as never, stream)
				expect(b.text).toBe('Tool results: rain; sun')
			})

	for (const proto of PROTOCOLS)
		for (const stream of [false, true])
			it(`should return signed thinking and take it back on the tool-result turn (${proto}, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				const think = proto === 'chat' ? { reasoning_effort: 'low' } : { thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 4096 }
				const tools =
					proto === 'chat'
						? { tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }] }
						: { tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }] }
				const user = 'weather please #tools'
				const a = await ask(proto, acct, BEARER, user, stream, { ...think, ...tools })
				const thinking = `Let me think about ${user}.`
				expect(a.reasoning).toBe(thinking)
				expect(a.signatures).toEqual([thinkingSignature(thinking)])
				const results =
					proto === 'chat'
						? a.calls.map((c, i) => ({ role: 'tool', tool_call_id: c.id, content: ['rain', 'sun'][i] }))
						: [{ role: 'user', content: a.calls.map((c, i) => ({ type: 'tool_result', tool_use_id: c.id, content: ['rain', 'sun'][i] })) }]
				const history = [{ role: 'user', content: user }, a.replay, ...results]
				const b =
					proto === 'chat'
						? await chat(acct.openai, { model: BEARER, messages: history, ...think, ...tools } as never, stream)
						: await messages(acct.anthropic, { model: BEARER, max_tokens: 4096, messages: history, ...think, ...tools } as never, stream)
				expect(b.text).toBe('Tool results: rain; sun')
				// The mock refuses a replayed thinking block whose signature does not match; check the bytes too.
				const assistant = last().body.messages.find((x: any) => x.role === 'assistant')
				expect(assistant.content[0]).toEqual({ type: 'thinking', thinking, signature: thinkingSignature(thinking) })
			})

	it('should pass images (OpenAI data URI → Anthropic base64 source)', async () => {
		const acct = await m.account()
		const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
		const a = await chat(
			acct.openai,
			{ model: BEARER, messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] }] },
			true,
		)
		expect(a.text).toBe('I see 1 image. Hello! You said: what is this')
		const part = last().body.messages[0].content.find((p: any) => p.type === 'image')
		expect(part.source).toEqual({ type: 'base64', media_type: 'image/png', data: png })
	})

	it('should bill cache reads as Anthropic reports them', async () => {
		const acct = await m.account()
		for (const stream of [false, true]) {
			const a = await ask('messages', acct, BEARER, 'reuse the prefix please #cache', stream)
			expect(a.usage.cached).toBe(5)
		}
		const input = countWords('reuse the prefix please #cache')
		await expectCharges(m, acct, [
			{ model: BEARER, input, output: countWords('Hello! You said: reuse the prefix please #cache'), cached: 5, stream: false },
			{ model: BEARER, input, output: countWords('Hello! You said: reuse the prefix please #cache'), cached: 5, stream: true },
		])
	})
})

describe('bedrock errors', () => {
	it('should refuse a wrong IAM secret at the signature check, and say so as an upstream credential error', async () => {
		const acct = await m.account()
		const err = await acct.anthropic.messages.create({ model: BAD_SECRET, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e)
		expect(err).toBeInstanceOf(Anthropic.APIError)
		expect(err.status).toBe(502)
		// Bedrock says 403 InvalidSignatureException: the channel's keys, not a model it may not use.
		expect(err.message).toContain("refused the gateway's credentials")
		const rows = await usageRows(m, acct.accountId)
		expect(rows.every((r) => r.cost === 0)).toBe(true)
	})

	it("should give a ValidationException's 400 and words to the caller, in its protocol", async () => {
		const acct = await m.account()
		br.faultOnce = { kind: 'status', status: 400, type: 'ValidationException', message: 'messages.0.content: bad block' }
		const e1 = await acct.openai.chat.completions.create({ model: BEARER, messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e)
		expect(e1).toBeInstanceOf(OpenAI.BadRequestError)
		expect(e1.message).toContain('messages.0.content: bad block')
		br.faultOnce = { kind: 'status', status: 400, type: 'ValidationException', message: 'messages.0.content: bad block' }
		const e2 = await acct.anthropic.messages.create({ model: BEARER, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e)
		expect(e2).toBeInstanceOf(Anthropic.BadRequestError)
		expect(e2.error.error).toMatchObject({ type: 'invalid_request_error', message: 'messages.0.content: bad block' })
	})

	for (const [status, type] of [
		[429, 'ThrottlingException'],
		[503, 'ServiceUnavailableException'],
		// The model's failures, not the request's, whatever their 4xx status.
		[408, 'ModelTimeoutException'],
		[424, 'ModelErrorException'],
	] as const)
		it(`should fail over from a ${status} ${type} to the next channel`, async () => {
			const acct = await m.account()
			br.faultOnce = { kind: 'status', status, type, message: 'Too many requests, please wait before trying your request again.' }
			const a = await ask('messages', acct, FAILOVER, 'fail over', true)
			expect(a.text).toBe('Hello! You said: fail over')
			const rows = await usageRows(m, acct.accountId)
			expect(rows.map((r) => r.channel)).toEqual(['fo-anthropic'])
		})

	it('should answer 429 in the caller’s shape when Bedrock throttles and no other channel serves', async () => {
		const acct = await m.account()
		br.faultOnce = { kind: 'status', status: 429, type: 'ThrottlingException', message: 'Too many tokens, please wait before trying again.' }
		const err = await acct.anthropic.messages.create({ model: BEARER, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e)
		expect(err).toBeInstanceOf(Anthropic.RateLimitError)
		expect(err.error.error.type).toBe('rate_limit_error')
	})

	it('should surface a mid-stream exception to Anthropic clients as an error event', async () => {
		const acct = await m.account()
		br.faultOnce = { kind: 'exception', afterEvents: 4, type: 'modelStreamErrorException', message: 'The model stopped unexpectedly.' }
		const s = acct.anthropic.messages.stream({ model: BEARER, max_tokens: 64, messages: [{ role: 'user', content: 'cut me off please' }] })
		const err = await s.finalMessage().catch((e) => e)
		expect(err).toBeInstanceOf(Anthropic.APIError)
		expect(String(err.message)).toContain('The model stopped unexpectedly.')
	})

	it('should surface a mid-stream throttling exception to OpenAI clients as an error', async () => {
		const acct = await m.account()
		br.faultOnce = { kind: 'exception', afterEvents: 4, type: 'throttlingException', message: 'Too many tokens, please wait before trying again.' }
		const s = await acct.openai.chat.completions.create({ model: BEARER, stream: true, messages: [{ role: 'user', content: 'cut me off please' }] })
		const err = await (async () => {
			for await (const _ of s) {
			}
		})().catch((e) => e)
		expect(err).toBeInstanceOf(OpenAI.APIError)
		expect(String(err.message)).toContain('rate limiting')
	})

	it('should fail over when the stream breaks before any content (a throttling exception first)', async () => {
		const acct = await m.account()
		br.faultOnce = { kind: 'exception', afterEvents: 1, type: 'throttlingException', message: 'Too many tokens, please wait before trying again.' }
		const a = await ask('chat', acct, FAILOVER, 'fail over in stream', true)
		expect(a.text).toBe('Hello! You said: fail over in stream')
		const rows = await usageRows(m, acct.accountId)
		expect(rows.map((r) => r.channel)).toEqual(['fo-anthropic'])
	})

	it('should treat a frame with a bad CRC as a broken stream, not as content', async () => {
		const acct = await m.account()
		br.faultOnce = { kind: 'bad-crc', atEvent: 4 }
		const s = acct.anthropic.messages.stream({ model: BEARER, max_tokens: 64, messages: [{ role: 'user', content: 'one two three four' }] })
		const err = await s.finalMessage().catch((e) => e)
		expect(err).toBeInstanceOf(Anthropic.APIError)
		expect(String(err.message)).toContain('"type":"api_error"')
	})
})

describe('bedrock channel, an OpenAI client with prompt_cache_key', () => {
	for (const stream of [false, true])
		it(`should have Claude cache the prompt with a breakpoint on the last block, not Anthropic's request-level field (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			await ask('chat', acct, BEARER, 'cache this on aws', stream, { prompt_cache_key: 'session-br' })
			const r = last()
			expect(r.body.cache_control).toBeUndefined()
			expect(r.body.prompt_cache_key).toBeUndefined()
			expect(r.body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'cache this on aws', cache_control: { type: 'ephemeral' } }] }])
		})
})
