/**
 * What each model family takes over Bedrock's Converse beyond the common fields, through the official SDKs against the
 * Bedrock mock (which refuses, as Bedrock does, a field or cache point a model does not take): Anthropic clients'
 * cache breakpoints as `cachePoint` blocks for Nova, billed as Converse reports the cache reads and writes;
 * DeepSeek-R1's own reasoning; top-k, seed and penalties in each family's own fields; none of them for an application
 * inference profile of unknown model. Claude reached through an application inference profile (`settings.base_models`)
 * is the contrast: it goes over InvokeModel with Anthropic's own fields (bedrock-app-profiles.test.ts for the rest).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { type BedrockMock, countWords, startBedrockMock, thinkingSignature } from '../../mocks'
import { chat, messages } from './clients'
import { type Account, lastRequest, type Matrix, PRICE, SETUP_MS, startMatrix, usageRows } from './harness'

;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false

const REGION = 'us-east-1'
const API_KEY = 'ABSKQmVkcm9ja0FQSUtleS1mYW1pbGllcw=='
const IAM = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' }
const NOVA_ID = 'us.amazon.nova-pro-v1:0'
const LLAMA_ID = 'meta.llama3-3-70b-instruct-v1:0'
const DEEPSEEK_ID = 'us.deepseek.r1-v1:0'
const COHERE_ID = 'cohere.command-r-plus-v1:0'
const MISTRAL_ID = 'mistral.mistral-7b-instruct-v0:2'
/** An application inference profile: its ARN names no model; the channel says it serves Claude Sonnet 4.5. */
const PROFILE_ARN = 'arn:aws:bedrock:us-east-1:111122223333:application-inference-profile/a1b2c3d4e5f6'
const PROFILE_BASE = 'anthropic.claude-sonnet-4-5-20250929-v1:0'

const NOVA = 'fam-nova'
const LLAMA = 'fam-llama'
const DEEPSEEK = 'fam-deepseek'
const COHERE = 'fam-cohere'
const MISTRAL = 'fam-mistral'
const CLAUDE = 'fam-claude-profile'
/** The same profile on a channel that does not say what it serves. */
const BARE = 'fam-bare-profile'
const NAMES = [NOVA, LLAMA, DEEPSEEK, COHERE, MISTRAL, CLAUDE, BARE]
const RATE = { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 }

let m: Matrix
let br: BedrockMock
beforeAll(async () => {
	br = await startBedrockMock({
		apiKey: API_KEY,
		iam: IAM,
		region: REGION,
		models: [NOVA_ID, LLAMA_ID, DEEPSEEK_ID, COHERE_ID, MISTRAL_ID, PROFILE_ARN],
		profiles: { [PROFILE_ARN]: PROFILE_BASE },
	})
	for (const name of NAMES) PRICE[name] = { input: RATE.input, output: RATE.output, cacheRead: RATE.cacheRead }
	const ids = { [NOVA]: NOVA_ID, [LLAMA]: LLAMA_ID, [DEEPSEEK]: DEEPSEEK_ID, [COHERE]: COHERE_ID, [MISTRAL]: MISTRAL_ID, [CLAUDE]: PROFILE_ARN }
	m = await startMatrix({
		models: NAMES.map((name) => ({ name, input_per_mtok: RATE.input, output_per_mtok: RATE.output, cache_read_per_mtok: RATE.cacheRead, cache_write_per_mtok: RATE.cacheWrite })),
		channels: (): GatewayConfig['channels'] => [
			{ name: 'fam-br', type: 'bedrock', base_url: br.url, api_key: API_KEY, models: Object.keys(ids), model_map: ids, settings: { base_models: { [PROFILE_ARN]: PROFILE_BASE } } },
			{ name: 'fam-br-bare', type: 'bedrock', base_url: br.url, api_key: API_KEY, models: [BARE], model_map: { [BARE]: PROFILE_ARN } },
		],
	})
}, SETUP_MS)
afterAll(async () => {
	await m.close()
	await br.stop()
})

const last = () => lastRequest(br)

const LONG = 'You are a careful assistant who answers questions about the attached handbook in plain words.'
const TOOL = { name: 'lookup', description: 'Look a term up', input_schema: { type: 'object', properties: { term: { type: 'string' } } } }

const KEPT = 'Here is the handbook text to keep.'
/** The mock's answer: the last user turn's texts, joined. */
const said = (question: string, kept = KEPT) => `Hello! You said: ${kept} ${question}`

/** An Anthropic request with breakpoints on the system prompt, the first user text and the tool. */
const cachedRequest = (model: string, question: string, ttl?: '1h', kept = KEPT, system = LONG) => {
	const cc = { type: 'ephemeral' as const, ...(ttl && { ttl }) }
	return {
		model,
		max_tokens: 256,
		system: [{ type: 'text' as const, text: system, cache_control: cc }],
		tools: [{ ...TOOL, cache_control: cc }],
		messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: kept, cache_control: cc }, { type: 'text' as const, text: question }] }],
	}
}

type CacheRow = { input_tokens: number; cached_tokens: number; cache_write_tokens: number; cost: number }

describe('bedrock Converse: prompt caching', () => {
	for (const stream of [false, true])
		it(`should send Anthropic breakpoints to Nova as cachePoint blocks after the system text and the content, not the tools, and bill the write then the read (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			// Prefixes of its own (each cache point's): the mock's cache, like Bedrock's, outlives one test.
			const kept = `Here is the ${stream ? 'streamed' : 'whole'} handbook text to keep.`
			const system = `${LONG} (${stream ? 'streamed' : 'whole'})`
			const prefix = countWords(system) + countWords(kept)
			const ask = (q: string) => messages(acct.anthropic, cachedRequest(NOVA, q, undefined, kept, system) as never, stream)
			const first = await ask('first question')
			const sent = last().body
			expect(sent.system).toEqual([{ text: system }, { cachePoint: { type: 'default' } }])
			expect(sent.messages[0].content).toEqual([{ text: kept }, { cachePoint: { type: 'default' } }, { text: 'first question' }])
			// Nova caches no tool definitions ("Tools caching is not supported"): the mock refuses a cachePoint there.
			expect(sent.toolConfig.tools).toEqual([{ toolSpec: { name: 'lookup', description: 'Look a term up', inputSchema: { json: TOOL.input_schema } } }])
			expect(first.text).toBe(said('first question', kept))
			const second = await ask('second question')
			expect(second.usage.cached).toBe(prefix)
			const rows = (await usageRows(m, acct.accountId)) as unknown as CacheRow[]
			const input = (q: string) => prefix + countWords(q)
			expect(rows.map((r) => [r.input_tokens, r.cached_tokens, r.cache_write_tokens])).toEqual([
				[input('first question'), 0, prefix],
				[input('second question'), prefix, 0],
			])
			// Written at the write rate, read at the read rate, the rest at the input rate (micro-USD, half up).
			const out = (q: string) => countWords(said(q, kept)) * RATE.output
			expect(Math.round(rows[0]!.cost * 1e6)).toBe(Math.round(countWords('first question') * RATE.input + prefix * RATE.cacheWrite + out('first question')))
			expect(Math.round(rows[1]!.cost * 1e6)).toBe(Math.round(countWords('second question') * RATE.input + prefix * RATE.cacheRead + out('second question')))
		})

	it("should send Claude behind a profile mapped in base_models over InvokeModel, the client's cache_control (1h TTL) as Anthropic's, not cachePoint blocks", async () => {
		const acct = await m.account()
		const a = await messages(acct.anthropic, cachedRequest(CLAUDE, 'claude caches tools', '1h') as never, false)
		expect(a.text).toBe(said('claude caches tools'))
		expect(last().path).toBe(`/model/${encodeURIComponent(PROFILE_ARN)}/invoke`)
		const sent = last().body
		const cc = { type: 'ephemeral', ttl: '1h' }
		expect(sent.system).toEqual([{ type: 'text', text: LONG, cache_control: cc }])
		expect(sent.tools).toEqual([{ ...TOOL, cache_control: cc }])
		expect(sent.messages[0].content[0]).toEqual({ type: 'text', text: KEPT, cache_control: cc })
		expect(JSON.stringify(sent)).not.toContain('cachePoint')
	})

	it('should leave breakpoints out for models without prompt caching (Llama, a profile of unknown model), which would refuse them', async () => {
		const acct = await m.account()
		for (const model of [LLAMA, BARE]) {
			const a = await messages(acct.anthropic, cachedRequest(model, 'no cache here') as never, false)
			expect(a.text).toBe(said('no cache here'))
			expect(JSON.stringify(last().body)).not.toContain('cachePoint')
		}
	})
})

describe('bedrock Converse: reasoning by family', () => {
	for (const stream of [false, true])
		it(`should send Claude behind a mapped application inference profile its thinking as Anthropic's over InvokeModel, and take its signed reasoning back on the tool turn (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const think = { thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 4096 }
			const user = 'think then call #tools'
			const a = await messages(acct.anthropic, { model: CLAUDE, messages: [{ role: 'user', content: user }], tools: [TOOL], ...think } as never, stream)
			expect(last().path).toBe(`/model/${encodeURIComponent(PROFILE_ARN)}/${stream ? 'invoke-with-response-stream' : 'invoke'}`)
			expect(last().body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 })
			expect(last().body.max_tokens).toBe(4096)
			expect(last().body.additionalModelRequestFields).toBeUndefined()
			const thinking = `Let me think about ${user}.`
			expect(a.reasoning).toBe(thinking)
			const history = [{ role: 'user', content: user }, a.replay, { role: 'user', content: a.calls.map((c) => ({ type: 'tool_result', tool_use_id: c.id, content: 'found' })) }]
			const b = await messages(acct.anthropic, { model: CLAUDE, messages: history, tools: [TOOL], ...think } as never, stream)
			expect(b.text).toBe('Tool results: found; found')
			expect(last().body.messages[1].content[0]).toEqual({ type: 'thinking', thinking, signature: thinkingSignature(thinking) })
		})

	it("should turn an OpenAI client's effort into the mapped profile's Claude thinking budget under a cap that fits it, without the temperature thinking refuses", async () => {
		const acct = await m.account()
		const a = await chat(acct.openai, { model: CLAUDE, reasoning_effort: 'high', temperature: 0.3, messages: [{ role: 'user', content: 'reason hard' }] } as never, false)
		expect(a.text).toBe('Hello! You said: reason hard')
		expect(a.reasoning).toBe('Let me think about reason hard.')
		expect(last().path).toBe(`/model/${encodeURIComponent(PROFILE_ARN)}/invoke`)
		const sent = last().body
		expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 4096 })
		expect(sent.temperature).toBeUndefined()
		expect(sent.max_tokens).toBeGreaterThan(4096)
	})

	it('should ask a profile of unknown model for no thinking, which it would refuse', async () => {
		const acct = await m.account()
		const a = await chat(acct.openai, { model: BARE, reasoning_effort: 'high', messages: [{ role: 'user', content: 'plain please' }] } as never, false)
		expect(a.text).toBe('Hello! You said: plain please')
		expect(last().body.additionalModelRequestFields).toBeUndefined()
	})

	for (const stream of [false, true])
		it(`should give DeepSeek-R1's own reasoning to OpenAI and Anthropic clients as thinking, asking it nothing (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const o = await chat(acct.openai, { model: DEEPSEEK, reasoning_effort: 'low', messages: [{ role: 'user', content: 'deep thought' }] } as never, stream)
			expect(o.reasoning).toBe('Let me think about deep thought.')
			expect(o.text).toBe('Hello! You said: deep thought')
			expect(last().body.additionalModelRequestFields).toBeUndefined()
			const c = await messages(acct.anthropic, { model: DEEPSEEK, max_tokens: 256, messages: [{ role: 'user', content: 'deep thought' }] } as never, stream)
			expect(c.reasoning).toBe('Let me think about deep thought.')
		})
})

describe('bedrock Converse: sampling settings by family', () => {
	const ask = (acct: Account, model: string, extra: Record<string, unknown>) => messages(acct.anthropic, { model, max_tokens: 64, messages: [{ role: 'user', content: 'sample me' }], ...extra } as never, false)

	it("should send top_k as Nova's inferenceConfig.topK, Mistral's top_k, Anthropic's own to Claude behind a mapped profile, and leave it out for Llama", async () => {
		const acct = await m.account()
		await ask(acct, NOVA, { top_k: 40 })
		expect(last().body.additionalModelRequestFields).toEqual({ inferenceConfig: { topK: 40 } })
		await ask(acct, CLAUDE, { top_k: 40 })
		expect(last().path).toBe(`/model/${encodeURIComponent(PROFILE_ARN)}/invoke`)
		expect(last().body.top_k).toBe(40)
		expect(last().body.additionalModelRequestFields).toBeUndefined()
		await ask(acct, MISTRAL, { top_k: 40 })
		expect(last().body.additionalModelRequestFields).toEqual({ top_k: 40 })
		const a = await ask(acct, LLAMA, { top_k: 40 })
		expect(a.text).toBe('Hello! You said: sample me')
		expect(last().body.additionalModelRequestFields).toBeUndefined()
	})

	it("should send a Gemini client's topK, seed and penalties to Cohere Command R as k, seed and its 0-to-1 penalties", async () => {
		const acct = await m.account()
		const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
		const r = await ai.models.generateContent({ model: COHERE, contents: 'sample me', config: { topK: 40, seed: 7, frequencyPenalty: 1.5, presencePenalty: -0.5 } })
		expect(r.text).toBe('Hello! You said: sample me')
		expect(last().body.additionalModelRequestFields).toEqual({ k: 40, seed: 7, frequency_penalty: 1, presence_penalty: 0 })
	})
})

describe('bedrock: the matched stop sequence', () => {
	for (const stream of [false, true])
		it(`should give Anthropic clients the stop_sequence Claude behind a mapped profile names in its own answer, and null for Nova, whose Converse answer names none (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			// Several sequences, one matched: Nova's answer says only that one did (request.ts: not determinable).
			const params = (model: string) => ({ model, max_tokens: 64, stop_sequences: ['HALT', 'STOP'], messages: [{ role: 'user' as const, content: 'stop me #stop' }] })
			const read = async (model: string) => (stream ? await acct.anthropic.messages.stream(params(model)).finalMessage() : await acct.anthropic.messages.create(params(model)))
			const claude = await read(CLAUDE)
			expect(last().path).toBe(`/model/${encodeURIComponent(PROFILE_ARN)}/${stream ? 'invoke-with-response-stream' : 'invoke'}`)
			expect(last().body.stop_sequences).toEqual(['HALT', 'STOP'])
			expect([claude.stop_reason, claude.stop_sequence]).toEqual(['stop_sequence', 'STOP'])
			const nova = await read(NOVA)
			expect(last().body.inferenceConfig.stopSequences).toEqual(['HALT', 'STOP'])
			expect(last().body.additionalModelResponseFieldPaths).toBeUndefined()
			expect([nova.stop_reason, nova.stop_sequence]).toEqual(['stop_sequence', null])
		})
})
