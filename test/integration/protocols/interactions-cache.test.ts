/**
 * The Interactions API's `cached_content` (ai.interactions.create of @google/genai) naming a context cache the gateway
 * keeps (`ai.caches.create`, modules/gemini-caches): the cache goes in front of the interaction for every vendor, as
 * for generateContent. Claude gets a `cache_control` breakpoint at the cache's end; Gemini (generateContent or its own
 * Interactions API) the prefix itself, never the gateway's cache name (Google knows none of them). Another account's
 * cache or an unknown one is 404, and a request setting what the cache holds 400, as Google answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type CachedContent, FunctionCallingConfigMode, GoogleGenAI, type Tool, Type } from '@google/genai'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { type Account, expectCharges, lastRequest, type Matrix, MODEL, PRICE, SETUP_MS, startMatrix, type Upstream, UPSTREAMS, usageRows } from './harness'

/** A Gemini model whose channel serves Interactions clients from Gemini's own Interactions API (`interactions_api`). */
const NATIVE = 'gemini-ix-cache'
PRICE[NATIVE] = PRICE['gemini-m']!

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		channels: (mocks): NonNullable<GatewayConfig['channels']> => [
			{ name: 'ch-gemini-ix', type: 'gemini', base_url: mocks.gemini.url, api_key: 'up-gemini', models: [NATIVE], model_map: { [NATIVE]: 'gemini-2.5-flash' }, settings: { interactions_api: true } },
		],
		models: [{ name: NATIVE, input_per_mtok: PRICE[NATIVE].input, output_per_mtok: PRICE[NATIVE].output }],
	})
}, SETUP_MS)
afterAll(() => m.close())

type Target = Upstream | 'native'
const modelOf = (t: Target) => (t === 'native' ? NATIVE : MODEL[t])
const mockOf = (t: Target) => m.mocks[t === 'native' ? 'gemini' : t]

const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })

const SYSTEM = 'You answer from the contract.'
const DOC = 'The contract renews every year unless cancelled #cache'
const QUESTION = 'When does it renew?'
const TOOLS: Tool[] = [{ functionDeclarations: [{ name: 'lookup', parameters: { type: Type.OBJECT, properties: { clause: { type: Type.STRING } } } }] }]

const makeCache = (ai: GoogleGenAI, model: string): Promise<CachedContent> =>
	ai.caches.create({ model, config: { systemInstruction: SYSTEM, contents: [{ role: 'user', parts: [{ text: DOC }] }], tools: TOOLS, ttl: '600s' } })

type Event = { event_type: string; delta?: Record<string, any>; interaction?: Record<string, any> }

/** A create's answer text, usage and id, streamed or not. */
async function interact(ai: GoogleGenAI, params: Record<string, unknown>, stream: boolean) {
	if (!stream) {
		const r = await ai.interactions.create(params as never)
		return { text: r.output_text, usage: r.usage as Record<string, any> | undefined, id: r.id, cached: (r as { cached_content?: string }).cached_content }
	}
	const events: Event[] = []
	for await (const e of (await ai.interactions.create({ ...params, stream: true } as never)) as unknown as AsyncIterable<Event>) events.push(e)
	const text = events.filter((e) => e.event_type === 'step.delta' && e.delta?.type === 'text').map((e) => e.delta!.text).join('')
	const done = events.find((e) => e.event_type === 'interaction.completed')?.interaction
	return { text, usage: done?.usage as Record<string, any> | undefined, id: done?.id as string, cached: done?.cached_content as string | undefined }
}

/** The status of an SDK call that must fail. */
const failed = async (p: Promise<unknown>): Promise<{ status: number; message: string }> => {
	const e = (await p.then(
		() => ({ status: 200, message: 'no error' }),
		(err: unknown) => err,
	)) as { status: number; message: string }
	return { status: e.status, message: String(e.message) }
}

const TARGETS: Target[] = [...UPSTREAMS, 'native']

describe('ai.interactions.create with cached_content', () => {
	for (const t of TARGETS)
		for (const stream of [false, true])
			it(`should put the account's cache in front of the interaction (${t} upstream${stream ? ', streamed' : ''})`, async () => {
				const acct = await m.account()
				const ai = genai(acct)
				const cache = await makeCache(ai, modelOf(t))
				const r = await interact(ai, { model: modelOf(t), input: QUESTION, cached_content: cache.name }, stream)
				expect(r.text).toContain(QUESTION)
				expect(r.usage?.total_cached_tokens).toBe(10)
				// The resource says which cache it read, as Google's does.
				if (!stream) expect(r.cached).toBe(cache.name)
				const sent = lastRequest(mockOf(t))
				expect(JSON.stringify(sent.body)).not.toContain(cache.name!)
				const body = sent.body
				if (t === 'anthropic') {
					expect(body.system).toBe(SYSTEM)
					expect(body.tools.map((x: { name: string }) => x.name)).toEqual(['lookup'])
					// The breakpoint on the cache's last block: tools, system and the document cached.
					expect(body.messages).toEqual([
						{
							role: 'user',
							content: [
								{ type: 'text', text: DOC, cache_control: { type: 'ephemeral' } },
								{ type: 'text', text: QUESTION },
							],
						},
					])
				} else if (t === 'openai') {
					expect(body.messages[0]).toEqual({ role: 'system', content: SYSTEM })
					expect(JSON.stringify(body.messages.slice(1))).toContain(DOC)
					expect(body.tools.map((x: { function: { name: string } }) => x.function.name)).toEqual(['lookup'])
					expect(JSON.stringify(body)).not.toContain('cache_control')
				} else if (t === 'gemini') {
					expect(body.cachedContent).toBeUndefined()
					expect(body.systemInstruction.parts).toEqual([{ text: SYSTEM }])
					expect(body.tools[0].functionDeclarations.map((f: { name: string }) => f.name)).toEqual(['lookup'])
					expect(JSON.stringify(body.contents)).toContain(DOC)
					expect(JSON.stringify(body.contents.at(-1))).toContain(QUESTION)
				} else {
					expect(sent.path).toBe('/v1beta/interactions')
					expect(body.cached_content).toBeUndefined()
					expect(body.system_instruction).toBe(SYSTEM)
					expect(body.tools.map((x: { name: string }) => x.name)).toEqual(['lookup'])
					expect(body.input[0]).toEqual({ type: 'user_input', content: [{ type: 'text', text: DOC }] })
					expect(JSON.stringify(body.input.at(-1))).toContain(QUESTION)
				}
				const rows = await usageRows(m, acct.accountId)
				expect(rows).toHaveLength(1)
				await expectCharges(m, acct, [{ model: modelOf(t), input: rows[0]!.input_tokens, output: rows[0]!.output_tokens, cached: 10, endpoint: '/v1beta/interactions', stream }])
				// Kept without the cache's contents: read back, it names the cache and holds the request's own input.
				const kept = await ai.interactions.get(r.id)
				expect((kept as { cached_content?: string }).cached_content).toBe(cache.name)
				expect(kept.steps[0]).toEqual({ type: 'user_input', content: [{ type: 'text', text: QUESTION }] })
			})

	it('should put the cache before the conversation a previous_interaction_id continues (Claude)', async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const cache = await makeCache(ai, MODEL.anthropic)
		const first = await ai.interactions.create({ model: MODEL.anthropic, input: 'first', cached_content: cache.name } as never)
		await ai.interactions.create({ model: MODEL.anthropic, input: 'second', cached_content: cache.name, previous_interaction_id: first.id } as never)
		const body = lastRequest(m.mocks.anthropic).body
		expect(body.messages.map((x: { role: string }) => x.role)).toEqual(['user', 'assistant', 'user'])
		expect(body.messages[0].content).toEqual([
			{ type: 'text', text: DOC, cache_control: { type: 'ephemeral' } },
			{ type: 'text', text: 'first' },
		])
		expect(JSON.stringify(body.messages[2])).toContain('second')
	})

	for (const t of ['anthropic', 'native'] as const)
		for (const stream of [false, true])
			it(`should answer 404 for another account's cache or an unknown one, send nothing and charge nothing (${t} upstream${stream ? ', streamed' : ''})`, async () => {
				const cache = await makeCache(genai(await m.account()), modelOf(t))
				const acct = await m.account()
				const ai = genai(acct)
				const before = mockOf(t).requests.length
				for (const name of [cache.name!, 'cachedContents/nosuchcache']) {
					const e = await failed(interact(ai, { model: modelOf(t), input: QUESTION, cached_content: name }, stream))
					expect(e.status).toBe(404)
				}
				expect(mockOf(t).requests.length).toBe(before)
				expect(await usageRows(m, acct.accountId)).toEqual([])
			})

	it("should answer 404 in the Interactions API's error shape", async () => {
		const acct = await m.account()
		const res = await fetch(`${m.app.url}/v1beta/interactions`, {
			method: 'POST',
			headers: { 'x-goog-api-key': acct.key, 'content-type': 'application/json' },
			body: JSON.stringify({ model: MODEL.openai, input: 'hi', cached_content: 'cachedContents/nosuchcache' }),
		})
		expect(res.status).toBe(404)
		expect(await res.json()).toEqual({ error: { code: 404, message: 'CachedContent not found (or permission denied): cachedContents/nosuchcache', status: 'NOT_FOUND' } })
	})

	for (const t of ['anthropic', 'native'] as const)
		it(`should refuse an interaction also setting system_instruction, tools or tool_choice, or of another model, as Google does (${t} upstream)`, async () => {
			const acct = await m.account()
			const ai = genai(acct)
			const cache = await makeCache(ai, modelOf(t))
			const before = mockOf(t).requests.length
			const own = [
				{ system_instruction: 'other' },
				{ tools: [{ type: 'function', name: 'other', parameters: { type: 'object', properties: {} } }] },
				{ generation_config: { tool_choice: 'none' } },
			]
			for (const extra of own) {
				const e = await failed(ai.interactions.create({ model: modelOf(t), input: QUESTION, cached_content: cache.name, ...extra } as never))
				expect(e.status).toBe(400)
				expect(e.message).toContain('CachedContent can not be used with')
			}
			const other = await failed(ai.interactions.create({ model: MODEL.openai, input: QUESTION, cached_content: cache.name } as never))
			expect(other.status).toBe(400)
			expect(other.message).toContain('has to be the same')
			expect(mockOf(t).requests.length).toBe(before)
			expect(await usageRows(m, acct.accountId)).toEqual([])
		})
})

describe('ai.interactions.create with a cache holding a tool config', () => {
	for (const t of ['anthropic', 'native'] as const)
		it(`should send the cache's tool config as the interaction's tool choice (${t} upstream)`, async () => {
			const ai = genai(await m.account())
			const cache = await ai.caches.create({
				model: modelOf(t),
				config: { contents: [{ role: 'user', parts: [{ text: DOC }] }], tools: TOOLS, toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.NONE } }, ttl: '60s' },
			})
			await ai.interactions.create({ model: modelOf(t), input: QUESTION, cached_content: cache.name } as never)
			const body = lastRequest(mockOf(t)).body
			if (t === 'anthropic') expect(body.tool_choice).toEqual({ type: 'none' })
			else expect(body.generation_config?.tool_choice).toBe('none')
		})
})
