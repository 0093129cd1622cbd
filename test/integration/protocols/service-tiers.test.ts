/**
 * Processing tiers through the official SDKs: OpenAI's against the OpenAI mock, which reports the tier that served each
 * request in `service_tier` as OpenAI documents (test/mocks/openai/service-tier.ts), and Anthropic's fast mode against
 * the Anthropic mock, which reports it in `usage.speed`. Each request is billed at the prices of the tier its answer
 * reports (which may differ from the one asked), on the same-protocol fast path, through the Responses API and
 * converted; and reserved at the dearest tier it can be served at, so a flex request near a spend limit keeps its cap
 * where a request that may be served at Priority, Ultrafast or fast mode has it lowered. Micro-USD by hand.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createGoogleGenerativeAI } from '@ai-sdk/google'
import { GoogleGenAI, ServiceTier } from '@google/genai'
import { generateText } from 'ai'
import { countWords } from '../../mocks'
import { type Account, FAILOVER, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, usageRows } from './harness'

/** A Gemini model whose channel serves Interactions clients from Gemini's own Interactions API (`interactions_api`). */
const NATIVE_IX = 'gemini-ix'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		models: [
			// gpt-m (base $0.15 / $0.60): Priority $0.25 / $1.00, Flex $0.075 / $0.30 (gpt-4o-mini's Priority prices),
			// Ultrafast six times the base, $0.90 / $3.60 (as gpt-6-astra's $60 / $300 against $10 / $50).
			{ name: MODEL.openai, priority_input_per_mtok: 0.25, priority_output_per_mtok: 1, flex_input_per_mtok: 0.075, flex_output_per_mtok: 0.3, ultrafast_input_per_mtok: 0.9, ultrafast_output_per_mtok: 3.6 },
			// claude-m (base $3 / $15): fast mode six times that, $18 / $90 (as Claude Opus 4.6's $30 / $150 against $5 / $25);
			// inference kept in the US 1.1 times every token price.
			{ name: MODEL.anthropic, fast_input_per_mtok: 18, fast_output_per_mtok: 90, us_inference_multiplier: 1.1 },
			// gemini-m (base $0.30 / $2.50): Priority 80% more, $0.54 / $4.50; Flex half, $0.15 / $1.25.
			{ name: MODEL.gemini, priority_input_per_mtok: 0.54, priority_output_per_mtok: 4.5, flex_input_per_mtok: 0.15, flex_output_per_mtok: 1.25 },
			// fo-m (base $1 / $2, an OpenAI channel then a Gemini one): Flex $0.50 / $1.
			{ name: FAILOVER, flex_input_per_mtok: 0.5, flex_output_per_mtok: 1 },
			// gemini-ix: gemini-m's prices, served by Gemini's own Interactions API.
			{ name: NATIVE_IX, input_per_mtok: 0.3, output_per_mtok: 2.5, priority_input_per_mtok: 0.54, priority_output_per_mtok: 4.5, flex_input_per_mtok: 0.15, flex_output_per_mtok: 1.25 },
		],
		channels: (mocks) => [
			{ name: 'ch-gemini-ix', type: 'gemini', base_url: mocks.gemini.url, api_key: 'up-gemini', models: [NATIVE_IX], model_map: { [NATIVE_IX]: 'gemini-2.5-flash' }, settings: { interactions_api: true } },
		],
	})
}, SETUP_MS)
afterAll(() => m.close())

/** Costs of the account's requests in micro-USD, oldest first, and the balance's fall. */
async function charged(acct: Account): Promise<{ costs: number[]; spent: number }> {
	await m.app.svc.ledger.flush()
	const rows = await usageRows(m, acct.accountId)
	const spent = Math.round(acct.balance * 1e6) - Math.round((await m.app.balance(acct.accountId)) * 1e6)
	return { costs: rows.map((r) => Math.round(r.cost * 1e6)), spent }
}

// 10 words in; the answer "Hello! You said: …" is 13 words.
const TEXT = 'what is the weather like in paris today my friend'
// standard 10 × 0.15 + 13 × 0.60 = 9.3; Priority 10 × 0.25 + 13 × 1 = 15.5; Flex 10 × 0.075 + 13 × 0.30 = 4.65;
// Ultrafast 10 × 0.90 + 13 × 3.60 = 55.8
const STANDARD = 9
const PRIORITY = 16
const FLEX = 5
const ULTRAFAST = 56

describe('billing by the tier that served the request', () => {
	it('should bill chat completions at the tier the answer reports, streamed or not, and show OpenAI its own field', async () => {
		expect(countWords(TEXT)).toBe(10)
		const acct = await m.account()
		const priority = await acct.openai.chat.completions.create({ model: MODEL.openai, service_tier: 'priority', messages: [{ role: 'user', content: TEXT }] })
		expect(priority.service_tier).toBe('priority')
		expect(priority.usage?.completion_tokens).toBe(13)
		const flex = await acct.openai.chat.completions.create({ model: MODEL.openai, service_tier: 'flex', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: TEXT }] })
		const tiers = new Set<string | null | undefined>()
		for await (const chunk of flex) tiers.add(chunk.service_tier)
		expect([...tiers]).toEqual(['flex'])
		// Asked for Priority, downgraded by its ramp-rate limit: the answer says default, billed at the standard prices.
		const ramped = await acct.openai.chat.completions.create({ model: MODEL.openai, service_tier: 'priority', messages: [{ role: 'user', content: 'what is the weather like in paris today #ramp friend' }] })
		expect(ramped.service_tier).toBe('default')
		// No tier asked, a project whose default tier is Priority: billed at Priority, streamed without include_usage too.
		const project = await acct.openai.chat.completions.create({ model: MODEL.openai, stream: true, messages: [{ role: 'user', content: 'what is the weather like in paris today #project-priority friend' }] })
		for await (const _ of project);
		expect(await charged(acct)).toEqual({ costs: [PRIORITY, FLEX, STANDARD, PRIORITY], spent: 2 * PRIORITY + FLEX + STANDARD })
	})

	it('should bill the Responses API at the tier the Response reports, streamed or not', async () => {
		const acct = await m.account()
		const r = await acct.openai.responses.create({ model: MODEL.openai, service_tier: 'priority', input: TEXT })
		expect(r.service_tier).toBe('priority')
		expect(r.usage?.output_tokens).toBe(13)
		const s = await acct.openai.responses.create({ model: MODEL.openai, service_tier: 'flex', stream: true, input: TEXT })
		for await (const _ of s);
		expect(await charged(acct)).toEqual({ costs: [PRIORITY, FLEX], spent: PRIORITY + FLEX })
	})

	it('should bill a Response served at Ultrafast at its prices, and one the region kept at the standard tier at those', async () => {
		const acct = await m.account()
		const r = await acct.openai.responses.create({ model: MODEL.openai, service_tier: 'ultrafast', input: TEXT })
		expect(r.service_tier).toBe('ultrafast')
		const s = await acct.openai.responses.create({ model: MODEL.openai, service_tier: 'ultrafast', stream: true, input: TEXT })
		const served = new Set<string | null | undefined>()
		for await (const e of s) if (e.type === 'response.completed') served.add(e.response.service_tier)
		expect([...served]).toEqual(['ultrafast'])
		// Pinned to a region Ultrafast does not serve: run, and billed, at the standard tier.
		const eu = await acct.openai.responses.create({ model: MODEL.openai, service_tier: 'ultrafast', input: 'what is the weather like in paris today #eu-region friend' })
		expect(eu.service_tier).toBe('default')
		expect(await charged(acct)).toEqual({ costs: [ULTRAFAST, ULTRAFAST, STANDARD], spent: 2 * ULTRAFAST + STANDARD })
	})

	it("should bill Claude's fast mode at its prices, streamed or not, and a standard-speed answer at the standard ones", async () => {
		const acct = await m.account()
		const fast = await acct.anthropic.messages.create({ model: MODEL.anthropic, max_tokens: 100, speed: 'fast', messages: [{ role: 'user', content: TEXT }] })
		expect(fast.usage.speed).toBe('fast')
		const stream = acct.anthropic.messages.stream({ model: MODEL.anthropic, max_tokens: 100, speed: 'fast', messages: [{ role: 'user', content: TEXT }] })
		const streamed = await stream.finalMessage()
		expect(streamed.usage.speed).toBe('fast')
		const standard = await acct.anthropic.messages.create({ model: MODEL.anthropic, max_tokens: 100, messages: [{ role: 'user', content: TEXT }] })
		expect(standard.usage.speed).toBe('standard')
		// The mock counts the same tokens each time; no cache: fast 18 / 90 a token, standard 3 / 15 (micro-USD per token).
		const { input_tokens: i, output_tokens: o } = standard.usage
		expect([fast.usage.input_tokens, fast.usage.output_tokens, streamed.usage.output_tokens]).toEqual([i, o, o])
		const FAST = 18 * i + 90 * o
		expect(await charged(acct)).toEqual({ costs: [FAST, FAST, 3 * i + 15 * o], spent: 2 * FAST + 3 * i + 15 * o })
	})

	it('should bill a Claude request kept in the US at 1.1 times every token price, stacked on fast mode, streamed or not', async () => {
		const acct = await m.account()
		const us = await acct.anthropic.messages.create({ model: MODEL.anthropic, max_tokens: 100, inference_geo: 'us', messages: [{ role: 'user', content: TEXT }] })
		expect(us.usage.inference_geo).toBe('us')
		const streamed = await acct.anthropic.messages.stream({ model: MODEL.anthropic, max_tokens: 100, inference_geo: 'us', speed: 'fast', messages: [{ role: 'user', content: TEXT }] }).finalMessage()
		expect([streamed.usage.inference_geo, streamed.usage.speed]).toEqual(['us', 'fast'])
		const global = await acct.anthropic.messages.create({ model: MODEL.anthropic, max_tokens: 100, inference_geo: 'global', messages: [{ role: 'user', content: TEXT }] })
		expect(global.usage.inference_geo).toBe('global')
		const { input_tokens: i, output_tokens: o } = us.usage
		expect([streamed.usage.input_tokens, global.usage.output_tokens]).toEqual([i, o])
		// One rounding of 1.1 × the exact sum (micro-USD): 3.3 / 16.5 a token in the US, 19.8 / 99 fast there.
		const halfUp = (tenths: number) => Math.floor((tenths + 5) / 10)
		const US = halfUp(33 * i + 165 * o)
		const FAST_US = halfUp(198 * i + 990 * o)
		expect(await charged(acct)).toEqual({ costs: [US, FAST_US, 3 * i + 15 * o], spent: US + FAST_US + 3 * i + 15 * o })
	})

	it("should bill Gemini's Priority and Flex at their prices, and Priority downgraded to standard at the standard ones", async () => {
		const acct = await m.account()
		const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url } })
		const priority = await ai.models.generateContent({ model: MODEL.gemini, contents: TEXT, config: { serviceTier: ServiceTier.PRIORITY } })
		// The served tier in `usageMetadata.serviceTier`, as @ai-sdk/google reads it (@google/genai 3.3 types it on the Live API's only).
		const served = (u: unknown) => (u as { serviceTier?: string } | undefined)?.serviceTier
		expect(served(priority.usageMetadata)).toBe(ServiceTier.PRIORITY)
		let streamed: string | undefined
		for await (const c of await ai.models.generateContentStream({ model: MODEL.gemini, contents: TEXT, config: { serviceTier: ServiceTier.FLEX } })) streamed = served(c.usageMetadata) ?? streamed
		expect(streamed).toBe(ServiceTier.FLEX)
		const ramped = await ai.models.generateContent({ model: MODEL.gemini, contents: 'what is the weather like in paris today #ramp friend', config: { serviceTier: ServiceTier.PRIORITY } })
		expect(served(ramped.usageMetadata)).toBe(ServiceTier.STANDARD)
		// An OpenAI client of the model is billed at the tier the Gemini answer reports too.
		await acct.openai.chat.completions.create({ model: MODEL.gemini, messages: [{ role: 'user', content: TEXT }] })
		// 10 in, 13 out: Priority 5.4 + 58.5 = 63.9; Flex 1.5 + 16.25 = 17.75; standard 3 + 32.5 = 35.5.
		expect(await charged(acct)).toEqual({ costs: [64, 18, 36, 36], spent: 64 + 18 + 36 + 36 })
	})

	it('should bill the tier Gemini names only in its x-gemini-service-tier header, and show Gemini clients that header', async () => {
		const acct = await m.account()
		const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url } })
		const tierHeader = (r: { sdkHttpResponse?: { headers?: Record<string, string> } }) => r.sdkHttpResponse?.headers?.['x-gemini-service-tier']
		const served = (u: unknown) => (u as { serviceTier?: string } | undefined)?.serviceTier
		// The mock names the tier in the header alone (`#tier-header`): its body says nothing of it.
		const headerOnly = 'what is the weather like in paris today #tier-header friend'
		const priority = await ai.models.generateContent({ model: MODEL.gemini, contents: headerOnly, config: { serviceTier: ServiceTier.PRIORITY } })
		expect([served(priority.usageMetadata), tierHeader(priority)]).toEqual([undefined, 'priority'])
		let streamed: string | undefined
		for await (const c of await ai.models.generateContentStream({ model: MODEL.gemini, contents: headerOnly, config: { serviceTier: ServiceTier.FLEX } })) streamed = tierHeader(c) ?? streamed
		expect(streamed).toBe('flex')
		// As @ai-sdk/google reads it, for its providerMetadata.
		const google = createGoogleGenerativeAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1beta` })
		const viaAiSdk = await generateText({ model: google(MODEL.gemini), prompt: headerOnly, providerOptions: { google: { serviceTier: 'priority' } } })
		expect(viaAiSdk.providerMetadata?.google?.serviceTier).toBe('priority')
		// An answer converted for a Gemini client carries the header too: OpenAI's project default (Priority) served it,
		// then the standard tier.
		const converted = await ai.models.generateContent({ model: MODEL.openai, contents: 'what is the weather like in paris today #project-priority friend' })
		expect([served(converted.usageMetadata), tierHeader(converted)]).toEqual(['priority', 'priority'])
		const standard = await ai.models.generateContent({ model: MODEL.openai, contents: TEXT })
		expect([served(standard.usageMetadata), tierHeader(standard)]).toEqual([undefined, 'standard'])
		// gemini-m at Priority 64, Flex 18, Priority 64; gpt-m at Priority, then standard.
		expect(await charged(acct)).toEqual({ costs: [64, 18, 64, PRIORITY, STANDARD], spent: 64 + 18 + 64 + PRIORITY + STANDARD })
	})

	it("should bill an interaction at the tier Gemini's Interactions API reports, in its body or its header", async () => {
		const acct = await m.account()
		const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url } })
		const priority = await ai.interactions.create({ model: NATIVE_IX, input: TEXT, service_tier: 'priority' })
		expect(priority.service_tier).toBe('priority')
		const headerOnly = await ai.interactions.create({ model: NATIVE_IX, input: 'what is the weather like in paris today #tier-header friend', service_tier: 'flex' })
		expect(headerOnly.service_tier).toBe('flex')
		let completed: string | undefined
		const events = (await ai.interactions.create({ model: NATIVE_IX, input: TEXT, service_tier: 'flex', stream: true })) as unknown as AsyncIterable<{ event_type: string; interaction?: { service_tier?: string } }>
		for await (const e of events) if (e.event_type === 'interaction.completed') completed = e.interaction?.service_tier
		expect(completed).toBe('flex')
		const standard = await ai.interactions.create({ model: NATIVE_IX, input: 'what is the weather like in paris today #ramp friend', service_tier: 'priority' })
		expect(standard.service_tier).toBeUndefined()
		// Priority 5.4 + 58.5 = 63.9; Flex 1.5 + 16.25 = 17.75, twice; standard 3 + 32.5 = 35.5.
		expect(await charged(acct)).toEqual({ costs: [64, 18, 18, 36], spent: 64 + 18 + 18 + 36 })
	})

	it("should send an interaction's tier to a Gemini channel's generateContent, and bill and show the tier that served it", async () => {
		const acct = await m.account()
		const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url } })
		const priority = await ai.interactions.create({ model: MODEL.gemini, input: TEXT, service_tier: 'priority' })
		expect(lastRequest(m.mocks.gemini).body.serviceTier).toBe('priority')
		expect(priority.service_tier).toBe('priority')
		let completed: string | undefined
		const events = (await ai.interactions.create({ model: MODEL.gemini, input: TEXT, service_tier: 'flex', stream: true })) as unknown as AsyncIterable<{ event_type: string; interaction?: { service_tier?: string } }>
		for await (const e of events) if (e.event_type === 'interaction.completed') completed = e.interaction?.service_tier
		expect(completed).toBe('flex')
		expect(lastRequest(m.mocks.gemini).body.serviceTier).toBe('flex')
		// Named none: none is sent.
		await ai.interactions.create({ model: MODEL.gemini, input: TEXT })
		expect(lastRequest(m.mocks.gemini).body.serviceTier).toBeUndefined()
		expect(await charged(acct)).toEqual({ costs: [64, 18, 36], spent: 64 + 18 + 36 })
	})

	it("should tell an Anthropic client a converted answer's tier and speed: Priority is not fast mode", async () => {
		// An Anthropic client cannot ask OpenAI's tiers; the project's default (Priority here) serves it.
		const acct = await m.account()
		const priority = await acct.anthropic.messages.create({ model: MODEL.openai, max_tokens: 100, messages: [{ role: 'user', content: 'what is the weather like in paris today #project-priority friend' }] })
		expect([priority.usage.service_tier, priority.usage.speed]).toEqual(['priority', 'standard'])
	})

	it('should bill a converted request at the tier its OpenAI answer reports', async () => {
		const acct = await m.account()
		// An Anthropic client names no OpenAI tier: the project's default (Priority here) serves it.
		const text = 'what is the weather like in paris today #project-priority friend'
		await acct.anthropic.messages.create({ model: MODEL.openai, max_tokens: 100, messages: [{ role: 'user', content: text }] })
		const s = acct.anthropic.messages.stream({ model: MODEL.openai, max_tokens: 100, messages: [{ role: 'user', content: text }] })
		await s.finalMessage()
		await acct.anthropic.messages.create({ model: MODEL.openai, max_tokens: 100, messages: [{ role: 'user', content: TEXT }] })
		expect(await charged(acct)).toEqual({ costs: [PRIORITY, PRIORITY, STANDARD], spent: 2 * PRIORITY + STANDARD })
	})
})

describe('the reservation at the dearest tier a request can be served at', () => {
	/** The max_tokens the OpenAI mock received for a request of 1,000 under a $0.0006 key limit. */
	async function sentCap(model: string, tier?: 'flex' | 'default' | 'priority' | 'auto', limit = 0.0006): Promise<number> {
		const acct = await m.account(10, { spend_limit: limit })
		await acct.openai.chat.completions.create({ model, max_tokens: 1000, messages: [{ role: 'user', content: TEXT }], ...(tier && { service_tier: tier }) })
		return lastRequest(m.mocks.openai).body.max_tokens as number
	}

	it('should keep a flex request its cap where the limit covers it at the flex price', async () => {
		// 1,000 tokens: $0.0003 at Flex, $0.0006 standard, $0.001 at Priority.
		expect(await sentCap(MODEL.openai, 'flex')).toBe(1000)
		// Standard only: (600 − input − 1) / 0.60 per token.
		const standard = await sentCap(MODEL.openai, 'default')
		expect(standard).toBeGreaterThan(900)
		expect(standard).toBeLessThan(1000)
		// No tier, auto or priority: the project's default may be Priority, (600 − input − 1) / 1.00.
		for (const tier of [undefined, 'auto', 'priority'] as const) {
			const cap = await sentCap(MODEL.openai, tier)
			expect(cap).toBeGreaterThan(550)
			expect(cap).toBeLessThan(600)
		}
	})

	it('should reserve a request that asks for Ultrafast or fast mode at those prices, and no other at them', async () => {
		// Ultrafast's $3.60 output: (600 − input − 1) / 3.60 per token under a $0.0006 limit.
		const acct = await m.account(10, { spend_limit: 0.0006 })
		await acct.openai.responses.create({ model: MODEL.openai, service_tier: 'ultrafast', max_output_tokens: 1000, input: TEXT })
		const ultrafast = lastRequest(m.mocks.openai).body.max_output_tokens as number
		expect(ultrafast).toBeGreaterThan(150)
		expect(ultrafast).toBeLessThan(166)
		// Asked for none: at most Priority's $1.00, as before.
		const other = await m.account(10, { spend_limit: 0.0006 })
		await other.openai.responses.create({ model: MODEL.openai, max_output_tokens: 1000, input: TEXT })
		const unasked = lastRequest(m.mocks.openai).body.max_output_tokens as number
		expect(unasked).toBeGreaterThan(550)
		expect(unasked).toBeLessThan(600)
		// claude-m under $0.01, where any request may run in the US (a workspace's default) at 1.1 times: fast mode's
		// $99 output leaves (10,000 − input × 19.8 − 1) / 99 tokens, standard's $16.50 six times as many.
		const claude = await m.account(10, { spend_limit: 0.01 })
		await claude.anthropic.messages.create({ model: MODEL.anthropic, max_tokens: 1000, speed: 'fast', messages: [{ role: 'user', content: TEXT }] })
		const fast = lastRequest(m.mocks.anthropic).body.max_tokens as number
		expect(fast).toBeGreaterThan(90)
		expect(fast).toBeLessThan(101)
		const standard = await m.account(10, { spend_limit: 0.01 })
		await standard.anthropic.messages.create({ model: MODEL.anthropic, max_tokens: 1000, messages: [{ role: 'user', content: TEXT }] })
		const std = lastRequest(m.mocks.anthropic).body.max_tokens as number
		expect(std).toBeGreaterThan(550)
		expect(std).toBeLessThan(606)
	})

	it("should keep a Gemini flex request its cap, and reserve one naming no tier at Priority's prices", async () => {
		// gemini-m under $0.0015: 1,000 tokens cost $0.00125 at Flex, $0.0025 standard, $0.0045 at Priority.
		const cap = async (serviceTier?: ServiceTier) => {
			const acct = await m.account(10, { spend_limit: 0.0015 })
			const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url } })
			await ai.models.generateContent({ model: MODEL.gemini, contents: TEXT, config: { maxOutputTokens: 1000, ...(serviceTier && { serviceTier }) } })
			return (lastRequest(m.mocks.gemini).body.generationConfig as { maxOutputTokens: number }).maxOutputTokens
		}
		expect(await cap(ServiceTier.FLEX)).toBe(1000)
		// Standard only: (1,500 − 10 × 0.30 − 1) / 2.50; any tier: (1,500 − 10 × 0.54 − 1) / 4.50.
		const standard = await cap(ServiceTier.STANDARD)
		expect(standard).toBeGreaterThan(590)
		expect(standard).toBeLessThan(600)
		const unasked = await cap()
		expect(unasked).toBeGreaterThan(320)
		expect(unasked).toBeLessThan(333)
		// An interaction naming Flex, served by generateContent, keeps it too.
		const acct = await m.account(10, { spend_limit: 0.0015 })
		await new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url } }).interactions.create({ model: MODEL.gemini, input: TEXT, service_tier: 'flex', generation_config: { max_output_tokens: 1000 } })
		expect((lastRequest(m.mocks.gemini).body.generationConfig as { maxOutputTokens: number }).maxOutputTokens).toBe(1000)
	})

	it('should reserve a flex request at the standard price when a channel of the model would not pass the tier on', async () => {
		// fo-m's Gemini channel converts (no service_tier, no Flex): 1,000 tokens at $2, not $1, under a $0.0015 limit.
		const cap = await sentCap(FAILOVER, 'flex', 0.0015)
		expect(cap).toBeGreaterThan(700)
		expect(cap).toBeLessThan(750)
	})
})
