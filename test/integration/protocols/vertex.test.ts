/**
 * Google Vertex AI (`vertex` channels) through the official SDKs: Claude over rawPredict/streamRawPredict (Anthropic
 * clients on the same-protocol fast path, OpenAI clients converted) and Gemini over generateContent (@google/genai on
 * the fast path, OpenAI and Anthropic clients converted); a service-account key whose RS256-signed JWT the mock's token
 * endpoint checks against the key's public half; the token cached per channel, fetched once for concurrent calls,
 * renewed before it expires and after a 401; express mode API keys; Google's errors; the charges. Embeddings and token
 * counts: vertex-embed.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI, ServiceTier } from '@google/genai'
import OpenAI from 'openai'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { vertexRegion, vertexRoot } from '../../../src/providers/vertex'
import type { Channel } from '../../../src/routing/catalog'
import { countWords, startVertexMock, thinkingSignature, type VertexMock } from '../../mocks'
import { testServiceAccount } from '../../mocks/vertex/oauth'
import { chat, messages, type Protocol, PROTOCOLS } from './clients'
import { type Account, expectCharges, lastRequest, type Matrix, PRICE, SETUP_MS, startMatrix, usageRows } from './harness'

const PROJECT = 'proj-vx'
const REGION = 'us-east5'
const EXPRESS_KEY = 'AQ.Ab8RN6mockexpresskey'
const CLAUDE_ID = 'claude-sonnet-4-5@20250929'
const GEMINI_ID = 'gemini-2.5-flash'

const CLAUDE = 'claude-vx'
const GEMINI = 'gemini-vx'
/** Each on a channel of its own, so its token cache starts empty. */
const CONCURRENT = 'claude-vx-conc'
const SHORT_LIVED = 'gemini-vx-ttl'
const REVOKED = 'claude-vx-revoked'
const EXPRESS = 'gemini-vx-express'
/** A key the token endpoint does not know: its JWT's signature does not verify. */
const FOREIGN = 'claude-vx-foreign'
/** Vertex first (priority 0), Anthropic second, for failover. */
const FAILOVER = 'claude-vx-fo'
/** On channels that ask Vertex for Priority and Flex PayGo (`X-Vertex-AI-LLM-Shared-Request-Type` in `settings.headers`). */
const PRIORITY_VX = 'gemini-vx-priority'
const FLEX_VX = 'gemini-vx-flex'
const ALL = [CLAUDE, GEMINI, CONCURRENT, SHORT_LIVED, REVOKED, EXPRESS, FOREIGN, FAILOVER]

let m: Matrix
let v: VertexMock
let foreignKey: string
beforeAll(async () => {
	v = await startVertexMock({ project: PROJECT, region: REGION, expressKey: EXPRESS_KEY })
	foreignKey = (await testServiceAccount(`${v.url}/token`, PROJECT)).json
	for (const name of ALL) PRICE[name] = { input: 3, output: 15, cacheRead: 0.3 }
	const sa = v.key.json
	const settings = { region: REGION }
	m = await startMatrix({
		models: [
			...ALL.map((name) => ({ name, input_per_mtok: 3, output_per_mtok: 15, cache_read_per_mtok: 0.3 })),
			// Priority 80% more, Flex half.
			...[PRIORITY_VX, FLEX_VX].map((name) => ({ name, input_per_mtok: 3, output_per_mtok: 15, priority_input_per_mtok: 5.4, priority_output_per_mtok: 27, flex_input_per_mtok: 1.5, flex_output_per_mtok: 7.5 })),
		],
		channels: (mocks): GatewayConfig['channels'] => [
			{ name: 'vx', type: 'vertex', base_url: v.url, api_key: sa, settings, models: [CLAUDE, GEMINI, FAILOVER], model_map: { [CLAUDE]: CLAUDE_ID, [GEMINI]: GEMINI_ID, [FAILOVER]: CLAUDE_ID }, priority: 0 },
			{ name: 'vx-conc', type: 'vertex', base_url: v.url, api_key: sa, settings, models: [CONCURRENT], model_map: { [CONCURRENT]: CLAUDE_ID } },
			{ name: 'vx-ttl', type: 'vertex', base_url: v.url, api_key: sa, settings, models: [SHORT_LIVED], model_map: { [SHORT_LIVED]: GEMINI_ID } },
			{ name: 'vx-revoked', type: 'vertex', base_url: v.url, api_key: sa, settings, models: [REVOKED], model_map: { [REVOKED]: CLAUDE_ID } },
			{ name: 'vx-priority', type: 'vertex', base_url: v.url, api_key: sa, settings: { ...settings, headers: { 'X-Vertex-AI-LLM-Shared-Request-Type': 'priority' } }, models: [PRIORITY_VX], model_map: { [PRIORITY_VX]: GEMINI_ID } },
			{ name: 'vx-flex', type: 'vertex', base_url: v.url, api_key: sa, settings: { ...settings, headers: { 'X-Vertex-AI-LLM-Shared-Request-Type': 'flex' } }, models: [FLEX_VX], model_map: { [FLEX_VX]: GEMINI_ID } },
			{ name: 'vx-express', type: 'vertex', base_url: v.url, api_key: EXPRESS_KEY, models: [EXPRESS], model_map: { [EXPRESS]: GEMINI_ID } },
			{ name: 'vx-foreign', type: 'vertex', base_url: v.url, api_key: foreignKey, settings, models: [FOREIGN], model_map: { [FOREIGN]: CLAUDE_ID } },
			{ name: 'fo-anthropic', type: 'anthropic', base_url: mocks.anthropic.url, api_key: 'up-anthropic', models: [FAILOVER], model_map: { [FAILOVER]: 'claude-sonnet-4-5' }, priority: 1 },
		],
	})
}, SETUP_MS)
afterAll(async () => {
	await m.close()
	await v.stop()
})

const last = () => lastRequest(v)

const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })

const ask = (proto: Protocol, acct: Account, model: string, text: string, stream: boolean, extra: Record<string, unknown> = {}) =>
	proto === 'chat' ? chat(acct.openai, { model, messages: [{ role: 'user', content: text }], ...extra }, stream) : messages(acct.anthropic, { model, max_tokens: 256, messages: [{ role: 'user', content: text }], ...extra } as never, stream)

const claudePath = (stream: boolean) => `/v1/projects/${PROJECT}/locations/${REGION}/publishers/anthropic/models/${CLAUDE_ID}:${stream ? 'streamRawPredict' : 'rawPredict'}`
const geminiPath = (stream: boolean) => `/v1/projects/${PROJECT}/locations/${REGION}/publishers/google/models/${GEMINI_ID}:${stream ? 'streamGenerateContent' : 'generateContent'}`

describe('vertex channel: Claude', () => {
	for (const proto of PROTOCOLS)
		for (const stream of [false, true])
			it(`should answer ${proto} clients (${stream ? 'stream' : 'non-stream'}) over ${stream ? 'streamRawPredict' : 'rawPredict'} in Vertex's envelope, and bill it`, async () => {
				const acct = await m.account()
				const a = await ask(proto, acct, CLAUDE, 'hello from gcp', stream)
				expect(a.text).toBe('Hello! You said: hello from gcp')
				expect(a.stop).toBe(proto === 'chat' ? 'stop' : 'end_turn')
				const input = countWords('hello from gcp')
				const output = countWords(a.text)
				expect(a.usage).toMatchObject({ input, output, cached: 0 })
				const r = last()
				expect(r.path).toBe(claudePath(stream))
				expect(r.body.model).toBeUndefined()
				expect(r.body.anthropic_version).toBe('vertex-2023-10-16')
				expect(r.body.stream === true).toBe(stream)
				// An OpenAI client named no cap: the model's maximum, known from the Vertex id (Sonnet 4.5: 64,000), not a 4,096 default.
				expect(r.body.max_tokens).toBe(proto === 'chat' ? 64_000 : 256)
				expect(r.headers.authorization).toMatch(/^Bearer ya29\.mock-\d+$/)
				expect(r.headers['x-api-key']).toBeUndefined()
				expect(r.headers['anthropic-version']).toBeUndefined()
				await expectCharges(m, acct, [{ model: CLAUDE, input, output, stream }])
			})

	it('should relay Anthropic SSE to Anthropic clients as Vertex sent it, the alias shown', async () => {
		const acct = await m.account()
		const res = await fetch(`${m.app.url}/v1/messages`, {
			method: 'POST',
			headers: { 'content-type': 'application/json', 'x-api-key': acct.key, 'anthropic-version': '2023-06-01' },
			body: JSON.stringify({ model: CLAUDE, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'two words' }] }),
		})
		expect(res.status).toBe(200)
		const text = await res.text()
		const events = [...text.matchAll(/^event: (.*)$/gm)].map((x) => x[1])
		expect(events[0]).toBe('message_start')
		expect(events.slice(-2)).toEqual(['message_delta', 'message_stop'])
		expect(text).toContain(`"model":"${CLAUDE}"`)
	})

	it('should keep anthropic-beta as a header, as Vertex takes it', async () => {
		const acct = await m.account()
		const client = new Anthropic({ apiKey: acct.key, baseURL: m.app.url, maxRetries: 0, defaultHeaders: { 'anthropic-beta': 'context-1m-2025-08-07' } })
		const r = await client.messages.create({ model: CLAUDE, max_tokens: 64, messages: [{ role: 'user', content: 'beta' }] })
		expect(r.content.map((b) => (b.type === 'text' ? b.text : b.type))).toEqual(['Hello! You said: beta'])
		expect(last().headers['anthropic-beta']).toBe('context-1m-2025-08-07')
		expect(last().body.anthropic_beta).toBeUndefined()
	})

	for (const proto of PROTOCOLS)
		for (const stream of [false, true])
			it(`should carry tool calls and their results (${proto}, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				const tools =
					proto === 'chat'
						? { tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }] }
						: { tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }] }
				const a = await ask(proto, acct, CLAUDE, 'weather #tools', stream, tools)
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
						? await chat(acct.openai, { model: CLAUDE, messages: history, ...tools } as never, stream)
						: await messages(acct.anthropic, { model: CLAUDE, max_tokens: 256, messages: history, ...tools } as never, stream)
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
				const a = await ask(proto, acct, CLAUDE, user, stream, { ...think, ...tools })
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
						? await chat(acct.openai, { model: CLAUDE, messages: history, ...think, ...tools } as never, stream)
						: await messages(acct.anthropic, { model: CLAUDE, max_tokens: 4096, messages: history, ...think, ...tools } as never, stream)
				expect(b.text).toBe('Tool results: rain; sun')
				const assistant = last().body.messages.find((x: any) => x.role === 'assistant')
				expect(assistant.content[0]).toEqual({ type: 'thinking', thinking, signature: thinkingSignature(thinking) })
			})
})

describe('vertex channel: Gemini', () => {
	for (const stream of [false, true])
		it(`should answer @google/genai (${stream ? 'stream' : 'non-stream'}) over ${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}, and bill it`, async () => {
			const acct = await m.account()
			const ai = genai(acct)
			let text = ''
			let usage: { promptTokenCount?: number; candidatesTokenCount?: number } | undefined
			if (stream) {
				for await (const c of await ai.models.generateContentStream({ model: GEMINI, contents: 'hello gemini on vertex' })) {
					text += c.text ?? ''
					usage = c.usageMetadata ?? usage
				}
			} else {
				const r = await ai.models.generateContent({ model: GEMINI, contents: 'hello gemini on vertex' })
				text = r.text ?? ''
				usage = r.usageMetadata
			}
			expect(text).toBe('Hello! You said: hello gemini on vertex')
			const r = last()
			expect(r.path).toBe(geminiPath(stream))
			expect(r.query).toEqual(stream ? { alt: 'sse' } : {})
			expect(r.headers.authorization).toMatch(/^Bearer ya29\.mock-\d+$/)
			expect(r.headers['x-goog-api-key']).toBeUndefined()
			expect(r.body.contents).toEqual([{ role: 'user', parts: [{ text: 'hello gemini on vertex' }] }])
			const input = countWords('hello gemini on vertex')
			const output = countWords(text)
			expect(usage).toMatchObject({ promptTokenCount: input, candidatesTokenCount: output })
			await expectCharges(m, acct, [{ model: GEMINI, input, output, stream }])
		})

	for (const proto of PROTOCOLS)
		for (const stream of [false, true])
			it(`should convert ${proto} clients to Gemini's protocol (${stream ? 'stream' : 'non-stream'}), tools too`, async () => {
				const acct = await m.account()
				const a = await ask(proto, acct, GEMINI, 'hello converted', stream)
				expect(a.text).toBe('Hello! You said: hello converted')
				expect(last().path).toBe(geminiPath(stream))
				const tools =
					proto === 'chat'
						? { tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }] }
						: { tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }] }
				const t = await ask(proto, acct, GEMINI, 'weather #tools', stream, tools)
				expect(t.calls.map((c) => [c.name, c.args])).toEqual([
					['get_weather', { city: 'Paris' }],
					['get_weather', { city: 'Tokyo' }],
				])
				expect(t.stop).toBe(proto === 'chat' ? 'tool_calls' : 'tool_use')
				expect(last().body.tools[0].functionDeclarations[0].name).toBe('get_weather')
			})

	it("should bill Priority and Flex PayGo at their prices by the trafficType Vertex reports, and show OpenAI clients the tier", async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const text = 'what is the weather like in paris today my friend'
		const traffic = (u: unknown) => (u as { trafficType?: string } | undefined)?.trafficType
		const priority = await ai.models.generateContent({ model: PRIORITY_VX, contents: text })
		expect(last().headers['x-vertex-ai-llm-shared-request-type']).toBe('priority')
		expect(traffic(priority.usageMetadata)).toBe('ON_DEMAND_PRIORITY')
		let flexTraffic: string | undefined
		for await (const c of await ai.models.generateContentStream({ model: FLEX_VX, contents: text })) flexTraffic = traffic(c.usageMetadata) ?? flexTraffic
		expect(flexTraffic).toBe('ON_DEMAND_FLEX')
		const converted = await acct.openai.chat.completions.create({ model: PRIORITY_VX, messages: [{ role: 'user', content: text }] })
		expect(converted.service_tier).toBe('priority')
		const flexChunks = await acct.openai.chat.completions.create({ model: FLEX_VX, messages: [{ role: 'user', content: text }], stream: true, stream_options: { include_usage: true } })
		const tiers = new Set<string | null | undefined>()
		for await (const c of flexChunks) if (c.usage) tiers.add(c.service_tier)
		expect([...tiers]).toEqual(['flex'])
		const response = await acct.openai.responses.create({ model: FLEX_VX, input: text })
		expect(response.service_tier).toBe('flex')
		const plain = await ai.models.generateContent({ model: GEMINI, contents: text })
		expect(traffic(plain.usageMetadata)).toBe('ON_DEMAND')
		// 10 words in, 13 out (micro-USD): Priority 54 + 351 = 405, Flex 15 + 97.5 = 112.5, standard 30 + 195 = 225.
		await m.app.svc.ledger.flush()
		const costs = (await usageRows(m, acct.accountId)).map((r) => Math.round(r.cost * 1e6))
		expect(costs).toEqual([405, 113, 405, 113, 113, 225])
	})

	it("should reserve a request to a channel that asks for Priority PayGo at Priority's prices, whatever tier it names", async () => {
		// 1,000 tokens under a $0.02 limit: $0.015 standard, $0.027 at Priority; (20,000 − 10 × 5.4 − 1) / 27 ≈ 738 there.
		const cap = async (model: string) => {
			const acct = await m.account(10, { spend_limit: 0.02 })
			await genai(acct).models.generateContent({ model, contents: 'what is the weather like in paris today my friend', config: { maxOutputTokens: 1000, serviceTier: ServiceTier.STANDARD } })
			return (last().body.generationConfig as { maxOutputTokens: number }).maxOutputTokens
		}
		expect(await cap(GEMINI)).toBe(1000)
		const held = await cap(PRIORITY_VX)
		expect(held).toBeGreaterThan(700)
		expect(held).toBeLessThan(740)
	})

	it('should call an express mode key on the project-less path with x-goog-api-key, no token', async () => {
		const acct = await m.account()
		const before = v.tokenFetches
		const a = await ask('chat', acct, EXPRESS, 'express please', true)
		expect(a.text).toBe('Hello! You said: express please')
		const r = last()
		expect(r.path).toBe(`/v1/publishers/google/models/${GEMINI_ID}:streamGenerateContent`)
		expect(r.headers['x-goog-api-key']).toBe(EXPRESS_KEY)
		expect(r.headers.authorization).toBeUndefined()
		expect(v.tokenFetches).toBe(before)
	})
})

describe('vertex channel: access tokens', () => {
	it('should fetch one token for many concurrent calls on a channel, and reuse it', async () => {
		const acct = await m.account()
		const before = v.tokenFetches
		v.tokenDelayMs = 150
		try {
			const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => ask('messages', acct, CONCURRENT, `call ${i}`, i % 2 === 0)))
			expect(answers.map((a) => a.text)).toEqual(Array.from({ length: 6 }, (_, i) => `Hello! You said: call ${i}`))
		} finally {
			v.tokenDelayMs = 0
		}
		expect(v.tokenFetches - before).toBe(1)
		for (let i = 0; i < 3; i++) await ask('chat', acct, CONCURRENT, 'again', false)
		expect(v.tokenFetches - before).toBe(1)
	})

	it('should fetch a new token once the cached one is about to expire', async () => {
		const acct = await m.account()
		// 301 s: fresh for one second before the gateway's five-minute margin.
		v.tokenTtl = 301
		try {
			const before = v.tokenFetches
			await ask('chat', acct, SHORT_LIVED, 'first', false)
			await ask('chat', acct, SHORT_LIVED, 'second', false)
			expect(v.tokenFetches - before).toBe(1)
			const first = last().headers.authorization
			await Bun.sleep(1_100)
			await ask('chat', acct, SHORT_LIVED, 'third', false)
			expect(v.tokenFetches - before).toBe(2)
			expect(last().headers.authorization).not.toBe(first)
		} finally {
			v.tokenTtl = 3600
		}
	})

	it('should fetch a new token and call again once when Vertex refuses the cached one with 401', async () => {
		const acct = await m.account()
		await ask('messages', acct, REVOKED, 'warm up', false)
		const stale = last().headers.authorization
		const fetches = v.tokenFetches
		const calls = v.requests.length
		v.revokeTokens()
		const a = await ask('messages', acct, REVOKED, 'after revocation', true)
		expect(a.text).toBe('Hello! You said: after revocation')
		expect(v.tokenFetches).toBe(fetches + 1)
		const [refused, retried] = v.requests.slice(calls)
		expect(refused!.headers.authorization).toBe(stale!)
		expect(retried!.headers.authorization).not.toBe(stale!)
		expect(v.requests.length).toBe(calls + 2)
		const rows = await usageRows(m, acct.accountId)
		expect(rows.filter((r) => r.cost > 0)).toHaveLength(2)
	})

	it('should refuse a key the token endpoint does not take as an upstream credential error, never showing the key', async () => {
		const acct = await m.account()
		const calls = v.requests.length
		const err = await acct.anthropic.messages.create({ model: FOREIGN, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e)
		expect(err).toBeInstanceOf(Anthropic.APIError)
		expect(err.status).toBe(502)
		expect(err.message).toContain("refused the gateway's credentials")
		expect(JSON.stringify(err.error)).not.toContain('PRIVATE KEY')
		expect(JSON.stringify(err.error)).not.toContain(JSON.parse(foreignKey).private_key.slice(40, 80))
		// The call never reached Vertex, and nothing was charged.
		expect(v.requests.length).toBe(calls)
		const rows = await usageRows(m, acct.accountId)
		expect(rows.every((r) => r.cost === 0)).toBe(true)
	})
})

describe('vertex channel: errors', () => {
	it("should give Google's 400 INVALID_ARGUMENT and its words to the caller, in its protocol", async () => {
		const acct = await m.account()
		v.faultOnce = { status: 400, googleStatus: 'INVALID_ARGUMENT', message: 'Request contains an invalid argument.' }
		const e1 = await acct.openai.chat.completions.create({ model: GEMINI, messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e)
		expect(e1).toBeInstanceOf(OpenAI.BadRequestError)
		expect(e1.message).toContain('Request contains an invalid argument.')
		v.faultOnce = { status: 400, googleStatus: 'INVALID_ARGUMENT', message: 'Request contains an invalid argument.' }
		const e2 = await acct.anthropic.messages.create({ model: CLAUDE, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e)
		expect(e2).toBeInstanceOf(Anthropic.BadRequestError)
		expect(e2.error.error).toMatchObject({ type: 'invalid_request_error', message: 'Request contains an invalid argument.' })
	})

	for (const [status, googleStatus] of [
		[429, 'RESOURCE_EXHAUSTED'],
		[503, 'UNAVAILABLE'],
	] as const)
		it(`should fail over from a ${status} ${googleStatus} to the next channel`, async () => {
			const acct = await m.account()
			v.faultOnce = { status, googleStatus, message: 'Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model.' }
			const a = await ask('messages', acct, FAILOVER, 'fail over', true)
			expect(a.text).toBe('Hello! You said: fail over')
			const rows = await usageRows(m, acct.accountId)
			expect(rows.map((r) => r.channel)).toEqual(['fo-anthropic'])
		})

	it('should answer 429 in the Gemini client’s shape when Vertex is out of quota and no other channel serves', async () => {
		const acct = await m.account()
		v.faultOnce = { status: 429, googleStatus: 'RESOURCE_EXHAUSTED', message: 'Quota exceeded.' }
		const err = await genai(acct)
			.models.generateContent({ model: GEMINI, contents: 'hi' })
			.catch((e) => e)
		expect(err.status).toBe(429)
		expect(JSON.parse(err.message).error.status).toBe('RESOURCE_EXHAUSTED')
	})
})

describe('vertex channel: the console’s Test button', () => {
	for (const [model, publisher] of [
		[GEMINI, 'google'],
		[CLAUDE, 'anthropic'],
	] as const)
		it(`should test a model of publishers/${publisher} in its own protocol`, async () => {
			const list = (await m.app.admin('/api/channels')).body.data as Array<{ id: number; name: string }>
			const vx = list.find((c) => c.name === 'vx')!
			const r = await m.app.admin(`/api/channels/${vx.id}/test`, { method: 'POST', body: { model } })
			expect(r.body).toMatchObject({ ok: true, status: 200 })
			expect(last().path).toContain(`/publishers/${publisher}/models/`)
		})
})

describe('vertex URLs', () => {
	const ch = (baseUrl: string, settings: Record<string, unknown> = {}) => ({ baseUrl, settings }) as Channel
	it('should call the region’s own host on Google, and global on aiplatform.googleapis.com', () => {
		expect(vertexRoot(ch('https://aiplatform.googleapis.com'), vertexRegion(ch('https://aiplatform.googleapis.com')))).toBe('https://aiplatform.googleapis.com/v1')
		const east = ch('https://aiplatform.googleapis.com', { region: 'us-east5' })
		expect(vertexRoot(east, vertexRegion(east))).toBe('https://us-east5-aiplatform.googleapis.com/v1')
		const eu = ch('https://europe-west1-aiplatform.googleapis.com/v1')
		expect(vertexRegion(eu)).toBe('europe-west1')
		expect(vertexRoot(eu, 'europe-west1')).toBe('https://europe-west1-aiplatform.googleapis.com/v1')
		expect(vertexRoot(ch('http://proxy.internal:8080/vertex/v1'), 'us-east5')).toBe('http://proxy.internal:8080/vertex/v1')
	})
})

describe('vertex channel, an OpenAI client with prompt_cache_key on Claude', () => {
	for (const stream of [false, true])
		it(`should have Claude cache the prompt with a breakpoint on the last block, not Anthropic's request-level field (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			await ask('chat', acct, CLAUDE, 'cache this on google', stream, { prompt_cache_key: 'session-vx' })
			const r = last()
			expect(r.path).toBe(claudePath(stream))
			expect(r.body.cache_control).toBeUndefined()
			expect(r.body.prompt_cache_key).toBeUndefined()
			expect(r.body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'cache this on google', cache_control: { type: 'ephemeral' } }] }])
		})
})
