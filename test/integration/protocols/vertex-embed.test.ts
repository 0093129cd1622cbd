/**
 * Google Vertex AI (`vertex` channels) beyond chat, through the official SDKs: embeddings over `:predict` (OpenAI's
 * `embeddings.create`, @google/genai's `models.embedContent`), in as many calls as Vertex's limits need
 * (gemini-embedding-001 one text a call, the others 250), billed from Vertex's token counts; and token counts asked
 * of Vertex (Gemini's `:countTokens`, Claude's `count-tokens:rawPredict`), the local estimate when Vertex refuses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { countWords, startVertexMock, vector, type VertexMock } from '../../mocks'
import { type Account, expectCharges, type Matrix, PRICE, SETUP_MS, startMatrix, usageRows } from './harness'

const PROJECT = 'proj-vx'
const REGION = 'us-east5'
const EXPRESS_KEY = 'AQ.Ab8RN6mockexpresskey'
const CLAUDE_ID = 'claude-sonnet-4-5@20250929'

/** gemini-embedding-001: one instance per call. */
const GEMB = 'gemb-vx'
/** text-embedding-005: up to 250 instances per call. */
const TEMB = 'temb-vx'
/** text-embedding-005 on a channel of its own, so its token can be revoked alone. */
const TEMB_REVOKED = 'temb-vx-revoked'
const TEMB_EXPRESS = 'temb-vx-express'
const CLAUDE = 'claude-vx'
const GEMINI = 'gemini-vx'
const EMBEDDERS = [GEMB, TEMB, TEMB_REVOKED, TEMB_EXPRESS]

let m: Matrix
let v: VertexMock
beforeAll(async () => {
	v = await startVertexMock({ project: PROJECT, region: REGION, expressKey: EXPRESS_KEY })
	// $1000 per million tokens: every token shows in the charge.
	for (const name of EMBEDDERS) PRICE[name] = { input: 1000, output: 0 }
	for (const name of [CLAUDE, GEMINI]) PRICE[name] = { input: 3, output: 15 }
	const sa = v.key.json
	const settings = { region: REGION }
	m = await startMatrix({
		models: [...EMBEDDERS.map((name) => ({ name, input_per_mtok: 1000, output_per_mtok: 0 })), ...[CLAUDE, GEMINI].map((name) => ({ name, input_per_mtok: 3, output_per_mtok: 15 }))],
		channels: (): GatewayConfig['channels'] => [
			{
				name: 'vx',
				type: 'vertex',
				base_url: v.url,
				api_key: sa,
				settings,
				models: [GEMB, TEMB, CLAUDE, GEMINI],
				model_map: { [GEMB]: 'gemini-embedding-001', [TEMB]: 'text-embedding-005', [CLAUDE]: CLAUDE_ID, [GEMINI]: 'gemini-2.5-flash' },
			},
			{ name: 'vx-revoked', type: 'vertex', base_url: v.url, api_key: sa, settings, models: [TEMB_REVOKED], model_map: { [TEMB_REVOKED]: 'text-embedding-005' } },
			{ name: 'vx-express', type: 'vertex', base_url: v.url, api_key: EXPRESS_KEY, models: [TEMB_EXPRESS], model_map: { [TEMB_EXPRESS]: 'text-embedding-005' } },
		],
	})
}, SETUP_MS)
afterAll(async () => {
	await m.close()
	await v.stop()
})

type Req = VertexMock['requests'][number] & { body: Record<string, any> }
const since = (n: number) => v.requests.slice(n) as Req[]
const predictPath = (model: string) => `/v1/projects/${PROJECT}/locations/${REGION}/publishers/google/models/${model}:predict`
/** A float vector as it comes back through float32 (the SDK's base64 default decodes to these). */
const f32 = (values: number[]) => Array.from(new Float32Array(values))
const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })

describe('vertex channel: POST /v1/embeddings (openai SDK)', () => {
	it("should embed one input over :predict with the channel's OAuth token, and bill Vertex's token count", async () => {
		const acct = await m.account()
		const before = v.requests.length
		const r = await acct.openai.embeddings.create({ model: TEMB, input: 'hello vertex embeddings' })
		expect(r.model).toBe(TEMB)
		expect(r.data).toHaveLength(1)
		expect(r.data[0]!.embedding).toEqual(f32(vector('hello vertex embeddings', 768)))
		const tokens = countWords('hello vertex embeddings')
		expect(r.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens })
		const [call, ...more] = since(before)
		expect(more).toHaveLength(0)
		expect(call!.path).toBe(predictPath('text-embedding-005'))
		expect(call!.body).toEqual({ instances: [{ content: 'hello vertex embeddings' }] })
		expect(call!.headers.authorization).toMatch(/^Bearer ya29\.mock-\d+$/)
		await expectCharges(m, acct, [{ model: TEMB, input: tokens, output: 0, endpoint: '/v1/embeddings' }])
	})

	it('should send gemini-embedding-001 one input a call, with dimensions, and join the vectors in input order', async () => {
		const acct = await m.account()
		const before = v.requests.length
		const input = ['first text here', 'second', 'the third one is longest of all', 'four']
		const r = await acct.openai.embeddings.create({ model: GEMB, input, dimensions: 256 })
		expect(r.data.map((d) => d.index)).toEqual([0, 1, 2, 3])
		r.data.forEach((d, i) => expect(d.embedding).toEqual(f32(vector(input[i]!, 256))))
		const calls = since(before)
		expect(calls).toHaveLength(4)
		for (const c of calls) {
			expect(c.path).toBe(predictPath('gemini-embedding-001'))
			expect(c.body.instances).toHaveLength(1)
			expect(c.body.parameters).toEqual({ outputDimensionality: 256 })
		}
		expect(calls.map((c) => c.body.instances[0].content).sort()).toEqual([...input].sort())
		const tokens = input.reduce((n, t) => n + countWords(t), 0)
		expect(r.usage.prompt_tokens).toBe(tokens)
		await expectCharges(m, acct, [{ model: GEMB, input: tokens, output: 0 }])
	})

	it('should answer encoding_format base64 as float32 little-endian, as OpenAI does', async () => {
		const acct = await m.account()
		const r = await acct.openai.embeddings.create({ model: TEMB, input: ['alpha beta', 'gamma'], encoding_format: 'base64' })
		expect(r.data.map((d) => d.embedding)).toEqual(['alpha beta', 'gamma'].map((t) => Buffer.from(new Float32Array(vector(t, 768)).buffer).toString('base64')))
		await expectCharges(m, acct, [{ model: TEMB, input: 3, output: 0 }])
	})

	it('should cut 300 inputs for text-embedding-005 into calls of 250 and 50', async () => {
		const acct = await m.account()
		const before = v.requests.length
		const input = Array.from({ length: 300 }, (_, i) => `text number ${i}`)
		const r = await acct.openai.embeddings.create({ model: TEMB, input, dimensions: 8, encoding_format: 'float' })
		expect(since(before).map((c) => c.body.instances.length)).toEqual([250, 50])
		expect(r.data.map((d) => d.embedding)).toEqual(input.map((t) => vector(t, 8)))
		await expectCharges(m, acct, [{ model: TEMB, input: 900, output: 0 }])
	})

	it('should fetch a new token and call once more when Vertex refuses the cached one with 401', async () => {
		const acct = await m.account()
		await acct.openai.embeddings.create({ model: TEMB_REVOKED, input: 'warm up' })
		const fetches = v.tokenFetches
		const before = v.requests.length
		v.revokeTokens()
		const r = await acct.openai.embeddings.create({ model: TEMB_REVOKED, input: 'after revocation' })
		expect(r.data[0]!.embedding).toEqual(f32(vector('after revocation', 768)))
		expect(v.tokenFetches).toBe(fetches + 1)
		const [refused, retried] = since(before)
		expect(refused!.headers.authorization).not.toBe(retried!.headers.authorization)
		await expectCharges(m, acct, [
			{ model: TEMB_REVOKED, input: 2, output: 0 },
			{ model: TEMB_REVOKED, input: 2, output: 0 },
		])
	})

	it('should call an express mode key on the project-less path with x-goog-api-key', async () => {
		const acct = await m.account()
		const before = v.requests.length
		await acct.openai.embeddings.create({ model: TEMB_EXPRESS, input: 'express embed' })
		const [call] = since(before)
		expect(call!.path).toBe('/v1/publishers/google/models/text-embedding-005:predict')
		expect(call!.headers['x-goog-api-key']).toBe(EXPRESS_KEY)
		expect(call!.headers.authorization).toBeUndefined()
	})

	it("should give Vertex's 400 to the caller uncharged", async () => {
		const acct = await m.account()
		// text-embedding-005 gives at most 768 dimensions.
		const err = await acct.openai.embeddings.create({ model: TEMB, input: 'too wide', dimensions: 1024 }).catch((e) => e)
		expect(err.status).toBe(400)
		expect(err.message).toContain('outputDimensionality')
		const rows = await usageRows(m, acct.accountId)
		expect(rows.map((r) => [r.status, r.cost])).toEqual([[400, 0]])
		expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
	})
})

describe('vertex channel: Gemini embedContent (@google/genai)', () => {
	for (const [model, upstream, calls] of [
		[TEMB, 'text-embedding-005', 1],
		[GEMB, 'gemini-embedding-001', 3],
	] as const)
		it(`should embed several contents with taskType and title over ${calls} :predict call(s) of ${upstream}`, async () => {
			const acct = await m.account()
			const before = v.requests.length
			const contents = ['doc one text', 'doc two', 'the third doc']
			const r = await genai(acct).models.embedContent({ model, contents, config: { taskType: 'RETRIEVAL_DOCUMENT', title: 'Handbook', outputDimensionality: 64 } })
			expect(r.embeddings?.map((e) => e.values)).toEqual(contents.map((t) => vector(t, 64)))
			const sent = since(before)
			expect(sent).toHaveLength(calls)
			expect(sent.flatMap((c) => c.body.instances).sort((a, b) => a.content.localeCompare(b.content))).toEqual(
				[...contents].sort().map((content) => ({ content, task_type: 'RETRIEVAL_DOCUMENT', title: 'Handbook' })),
			)
			expect(sent.every((c) => c.path === predictPath(upstream) && c.body.parameters.outputDimensionality === 64)).toBe(true)
			const tokens = contents.reduce((n, t) => n + countWords(t), 0)
			await expectCharges(m, acct, [{ model, input: tokens, output: 0, endpoint: '/v1beta/models/{model}:batchEmbedContents' }])
		})

	it('should embed one content with embedContent', async () => {
		const acct = await m.account()
		const r = await genai(acct).models.embedContent({ model: GEMB, contents: 'just one', config: { taskType: 'RETRIEVAL_QUERY' } })
		expect(r.embeddings?.[0]?.values).toEqual(vector('just one', 3072))
		await expectCharges(m, acct, [{ model: GEMB, input: 2, output: 0 }])
	})
})

describe('vertex channel: token counts', () => {
	it("should count a Gemini model's tokens with Vertex's :countTokens (@google/genai), answered as Vertex counted", async () => {
		const acct = await m.account()
		const before = v.requests.length
		const r = await genai(acct).models.countTokens({ model: GEMINI, contents: 'how many tokens is this' })
		expect(r.totalTokens).toBe(countWords('how many tokens is this'))
		const [call, ...more] = since(before)
		expect(more).toHaveLength(0)
		expect(call!.path).toBe(`/v1/projects/${PROJECT}/locations/${REGION}/publishers/google/models/gemini-2.5-flash:countTokens`)
		expect(call!.body).toEqual({ contents: [{ role: 'user', parts: [{ text: 'how many tokens is this' }] }] })
		expect(call!.headers.authorization).toMatch(/^Bearer ya29\.mock-\d+$/)
	})

	it("should send a converted request's system instruction at the top level, as Vertex's countTokens takes it", async () => {
		const acct = await m.account()
		const before = v.requests.length
		const { data, response } = await acct.anthropic.messages.countTokens({ model: GEMINI, system: 'be brief', messages: [{ role: 'user', content: 'count me' }] }).withResponse()
		expect(data.input_tokens).toBe(countWords('be brief') + countWords('count me'))
		expect(response.headers.get('x-switchboard-counted-by')).toBe('vertex')
		const [call] = since(before)
		expect(call!.body.generateContentRequest).toBeUndefined()
		expect(call!.body.systemInstruction.parts).toEqual([{ text: 'be brief' }])
	})

	it("should count a Claude model's tokens with Vertex's count-tokens:rawPredict (@anthropic-ai/sdk), the model in the body", async () => {
		const acct = await m.account()
		const before = v.requests.length
		const { data, response } = await acct.anthropic.messages.countTokens({ model: CLAUDE, system: 'you count', messages: [{ role: 'user', content: 'how many tokens is this' }] }).withResponse()
		expect(data.input_tokens).toBe(countWords('you count') + countWords('how many tokens is this'))
		expect(response.headers.get('x-switchboard-counted-by')).toBe('vertex')
		const [call, ...more] = since(before)
		expect(more).toHaveLength(0)
		expect(call!.path).toBe(`/v1/projects/${PROJECT}/locations/${REGION}/publishers/anthropic/models/count-tokens:rawPredict`)
		expect(call!.body).toMatchObject({ model: CLAUDE_ID, anthropic_version: 'vertex-2023-10-16', system: 'you count' })
		expect(call!.headers.authorization).toMatch(/^Bearer ya29\.mock-\d+$/)
	})

	it('should fall back to the local estimate when Vertex refuses to count', async () => {
		const acct = await m.account()
		const before = v.requests.length
		// A 400 (not retryable elsewhere): Claude's counter serves some models and regions only.
		v.faultOnce = { status: 400, googleStatus: 'INVALID_ARGUMENT', message: 'Token counting is not supported for this model.' }
		const { data, response } = await acct.anthropic.messages.countTokens({ model: CLAUDE, messages: [{ role: 'user', content: 'estimate me please' }] }).withResponse()
		expect(data.input_tokens).toBeGreaterThan(0)
		expect(response.headers.get('x-switchboard-counted-by')).toBe('estimate')
		expect(since(before)).toHaveLength(1)
	})
})
