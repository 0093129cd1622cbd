/**
 * Gemini's explicit context caching (https://ai.google.dev/api/caching) through `ai.caches.*` of `@google/genai`, for
 * every vendor: the gateway keeps the cache and puts it in front of the requests naming it in `cachedContent`. Claude
 * gets a `cache_control` breakpoint at the end of the cached prefix (Anthropic caches nothing unmarked); OpenAI and
 * Gemini the prefix as it is (their caching is automatic). Billed as the upstream reports: the mocks report 10 cache
 * reads for a prompt holding `#cache`, at the cache-read price where the model has one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ApiError, type CachedContent, type GenerateContentResponse, GoogleGenAI, type Tool, Type } from '@google/genai'
import { purgeGeminiCaches } from '../../../src/modules/gemini-caches/store'
import { type Account, expectCharges, lastRequest, type Matrix, MODEL, PAIRS, SETUP_MS, startMatrix, type Upstream, UPSTREAMS, usageRows } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
const label = (up: Upstream, stream: boolean) => `${up} upstream, ${stream ? 'generateContentStream' : 'generateContent'}`

const SYSTEM = 'You answer from the contract.'
const DOC = 'The contract renews every year unless cancelled #cache'
const TOOLS: Tool[] = [{ functionDeclarations: [{ name: 'lookup', parameters: { type: Type.OBJECT, properties: { clause: { type: Type.STRING } } } }] }]

/** The SDK's ApiError status of a call that must fail. */
async function status(p: Promise<unknown>): Promise<number> {
	const e = await p.then(
		() => undefined,
		(err: unknown) => err,
	)
	expect(e).toBeInstanceOf(ApiError)
	return (e as ApiError).status
}

async function generate(ai: GoogleGenAI, params: Parameters<GoogleGenAI['models']['generateContent']>[0], stream: boolean) {
	const chunks: GenerateContentResponse[] = stream ? [] : [await ai.models.generateContent(params)]
	if (stream) for await (const c of await ai.models.generateContentStream(params)) chunks.push(c)
	return { text: chunks.map((c) => c.text ?? '').join(''), usage: chunks.at(-1)!.usageMetadata }
}

const makeCache = (ai: GoogleGenAI, model: string, extra: Record<string, unknown> = {}): Promise<CachedContent> =>
	ai.caches.create({ model, config: { systemInstruction: SYSTEM, contents: [{ role: 'user', parts: [{ text: DOC }] }], tools: TOOLS, ttl: '600s', displayName: 'contract', ...extra } })

describe('ai.caches through the gateway', () => {
	it("should create, get, list, update and delete a cache in Google's CachedContent shape", async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const before = Date.now()
		const made = await makeCache(ai, MODEL.anthropic)
		expect(made.name).toMatch(/^cachedContents\/[a-z0-9]+$/)
		expect(made.model).toBe(`models/${MODEL.anthropic}`)
		expect(made.displayName).toBe('contract')
		expect(made.usageMetadata?.totalTokenCount).toBeGreaterThan(0)
		const expires = Date.parse(made.expireTime!)
		expect(expires - before).toBeGreaterThanOrEqual(600_000 - 5_000)
		expect(expires - Date.now()).toBeLessThanOrEqual(600_000)
		expect(Date.parse(made.createTime!)).toBeGreaterThanOrEqual(before - 5_000)
		// Contents are input only, as at Google.
		expect(Object.keys(made).sort()).toEqual(['createTime', 'displayName', 'expireTime', 'model', 'name', 'updateTime', 'usageMetadata'])

		expect(await ai.caches.get({ name: made.name! })).toEqual(made)

		const other = await makeCache(ai, MODEL.gemini, { displayName: 'second' })
		const listed: string[] = []
		for await (const c of await ai.caches.list({ config: { pageSize: 1 } })) listed.push(c.name!)
		expect(listed).toEqual([other.name!, made.name!])

		const updated = await ai.caches.update({ name: made.name!, config: { ttl: '7200s' } })
		expect(Date.parse(updated.expireTime!) - Date.now()).toBeGreaterThan(7_000_000)
		expect(updated.usageMetadata).toEqual(made.usageMetadata)
		const at = new Date(Date.now() + 3 * 3_600_000).toISOString()
		expect((await ai.caches.update({ name: made.name!, config: { expireTime: at } })).expireTime).toBe(at)

		await ai.caches.delete({ name: made.name! })
		expect(await status(ai.caches.get({ name: made.name! }))).toBe(404)
		expect(await status(ai.caches.delete({ name: made.name! }))).toBe(404)
		const left: string[] = []
		for await (const c of await ai.caches.list()) left.push(c.name!)
		expect(left).toEqual([other.name!])
		// Creating and managing caches charges nothing.
		expect(await usageRows(m, acct.accountId)).toEqual([])
	})

	it("should serve the SDK's default /v1 paths too, errors in Gemini's shape", async () => {
		const acct = await m.account()
		const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url } })
		const made = await makeCache(ai, MODEL.gemini)
		expect((await ai.caches.get({ name: made.name! })).usageMetadata).toEqual(made.usageMetadata)
		const res = await fetch(`${m.app.url}/v1/cachedContents/nosuchcache`, { headers: { 'x-goog-api-key': acct.key } })
		expect(res.status).toBe(404)
		expect(await res.json()).toEqual({ error: { code: 404, message: 'CachedContent not found (or permission denied): cachedContents/nosuchcache', status: 'NOT_FOUND' } })
		await ai.caches.delete({ name: made.name! })
		expect(await status(genai(acct).caches.get({ name: made.name! }))).toBe(404)
	})

	it('should refuse a bad expiry, a cache of nothing and a model the key cannot reach', async () => {
		const ai = genai(await m.account())
		expect(await status(makeCache(ai, MODEL.openai, { ttl: 'soon' }))).toBe(400)
		expect(await status(makeCache(ai, MODEL.openai, { ttl: undefined, expireTime: '2001-01-01T00:00:00Z' }))).toBe(400)
		expect(await status(ai.caches.create({ model: MODEL.openai, config: { displayName: 'empty' } }))).toBe(400)
		expect(await status(makeCache(ai, 'no-such-model'))).toBe(404)
		const made = await makeCache(ai, MODEL.openai)
		expect(await status(ai.caches.update({ name: made.name!, config: {} }))).toBe(400)
	})
})

describe('generateContent with cachedContent', () => {
	for (const [up, stream] of PAIRS)
		it(`should put the cache in front of the request and bill what the vendor reports (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const ai = genai(acct)
			const cache = await makeCache(ai, MODEL[up])
			const r = await generate(ai, { model: MODEL[up], contents: 'When does it renew?', config: { cachedContent: cache.name! } }, stream)
			expect(r.text).toContain('When does it renew?')
			expect(r.usage?.cachedContentTokenCount).toBe(10)
			const body = lastRequest(m.mocks[up]).body
			if (up === 'anthropic') {
				// One user turn (Claude's rule), the breakpoint on the cache's last block: tools, system and document cached.
				expect(body.system).toBe(SYSTEM)
				expect(body.tools.map((t: { name: string }) => t.name)).toEqual(['lookup'])
				expect(body.messages).toEqual([
					{
						role: 'user',
						content: [
							{ type: 'text', text: DOC, cache_control: { type: 'ephemeral' } },
							{ type: 'text', text: 'When does it renew?' },
						],
					},
				])
			} else if (up === 'openai') {
				expect(body.messages[0]).toEqual({ role: 'system', content: SYSTEM })
				expect(JSON.stringify(body.messages.slice(1))).toContain(DOC)
				expect(body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['lookup'])
				expect(JSON.stringify(body)).not.toContain('cache_control')
			} else {
				// Verbatim on the fast path, with the cache's parts where Google would put them, and no gateway cache name.
				expect(body.cachedContent).toBeUndefined()
				expect(body.systemInstruction).toEqual({ parts: [{ text: SYSTEM }], role: 'user' })
				expect(body.tools).toEqual(TOOLS)
				expect(body.contents).toEqual([
					{ role: 'user', parts: [{ text: DOC }] },
					{ role: 'user', parts: [{ text: 'When does it renew?' }] },
				])
			}
			const words = (s: string) => s.split(/\s+/).filter(Boolean).length
			const rows = await usageRows(m, acct.accountId)
			expect(rows).toHaveLength(1)
			expect(rows[0]!.input_tokens).toBeGreaterThanOrEqual(words(DOC) + words('When does it renew?'))
			await expectCharges(m, acct, [{ model: MODEL[up], input: rows[0]!.input_tokens, output: rows[0]!.output_tokens, cached: 10, stream }])
		})

	for (const stream of [false, true])
		it(`should mark Claude's system prompt when the cache holds no contents, and a cached conversation at its last turn (${label('anthropic', stream)})`, async () => {
			const acct = await m.account()
			const ai = genai(acct)
			const system = await ai.caches.create({ model: MODEL.anthropic, config: { systemInstruction: SYSTEM, ttl: '60s' } })
			expect(system.usageMetadata?.totalTokenCount).toBeGreaterThan(0)
			await generate(ai, { model: MODEL.anthropic, contents: 'hi', config: { cachedContent: system.name! } }, stream)
			let body = lastRequest(m.mocks.anthropic).body
			expect(body.system).toEqual([{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }])
			expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }])
			const history = [
				{ role: 'user', parts: [{ text: DOC }] },
				{ role: 'model', parts: [{ text: 'Noted.' }] },
			]
			const convo = await ai.caches.create({ model: MODEL.anthropic, config: { contents: history, ttl: '60s' } })
			await generate(ai, { model: MODEL.anthropic, contents: 'When?', config: { cachedContent: convo.name! } }, stream)
			body = lastRequest(m.mocks.anthropic).body
			expect(body.system).toBeUndefined()
			expect(body.messages).toEqual([
				{ role: 'user', content: [{ type: 'text', text: DOC }] },
				{ role: 'assistant', content: [{ type: 'text', text: 'Noted.', cache_control: { type: 'ephemeral' } }] },
				{ role: 'user', content: [{ type: 'text', text: 'When?' }] },
			])
		})

	it('should refuse a request that also sets systemInstruction, tools or toolConfig, as Google does', async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const cache = await makeCache(ai, MODEL.anthropic)
		for (const config of [{ systemInstruction: 'other' }, { tools: TOOLS }]) {
			const e = await ai.models.generateContent({ model: MODEL.anthropic, contents: 'hi', config: { cachedContent: cache.name!, ...config } }).catch((err: unknown) => err)
			expect(e).toBeInstanceOf(ApiError)
			expect((e as ApiError).status).toBe(400)
			expect((e as ApiError).message).toContain('CachedContent can not be used with GenerateContent request setting system_instruction, tools or tool_config')
		}
		// The cache is for one model, as at Google.
		expect(await status(ai.models.generateContent({ model: MODEL.openai, contents: 'hi', config: { cachedContent: cache.name! } }))).toBe(400)
		expect(await usageRows(m, acct.accountId)).toEqual([])
	})

	it("should answer 404 for another account's cache, and charge nothing", async () => {
		const owner = genai(await m.account())
		const cache = await makeCache(owner, MODEL.anthropic)
		const acct = await m.account()
		const ai = genai(acct)
		const sent = m.mocks.anthropic.requests.length
		for (const stream of [false, true]) expect(await status(generate(ai, { model: MODEL.anthropic, contents: 'hi', config: { cachedContent: cache.name! } }, stream))).toBe(404)
		const counted = await fetch(`${m.app.url}/v1beta/models/${MODEL.anthropic}:countTokens`, {
			method: 'POST',
			headers: { 'x-goog-api-key': acct.key, 'content-type': 'application/json' },
			body: JSON.stringify({ generateContentRequest: { model: `models/${MODEL.anthropic}`, cachedContent: cache.name, contents: [{ role: 'user', parts: [{ text: 'hi' }] }] } }),
		})
		expect(counted.status).toBe(404)
		expect(await status(ai.caches.get({ name: cache.name! }))).toBe(404)
		expect(await status(ai.caches.update({ name: cache.name!, config: { ttl: '60s' } }))).toBe(404)
		expect(await status(ai.caches.delete({ name: cache.name! }))).toBe(404)
		const listed: string[] = []
		for await (const c of await ai.caches.list()) listed.push(c.name!)
		expect(listed).toEqual([])
		expect(m.mocks.anthropic.requests.length).toBe(sent)
		expect(await usageRows(m, acct.accountId)).toEqual([])
		// Still the owner's.
		expect((await owner.caches.get({ name: cache.name! })).name).toBe(cache.name!)
	})

	it('should forget an expired cache: 404 to get and use, left out of the list, purged', async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const cache = await makeCache(ai, MODEL.openai, { ttl: '1s' })
		expect((await ai.caches.get({ name: cache.name! })).name).toBe(cache.name!)
		await Bun.sleep(1_100)
		expect(await status(ai.caches.get({ name: cache.name! }))).toBe(404)
		expect(await status(ai.models.generateContent({ model: MODEL.openai, contents: 'hi', config: { cachedContent: cache.name! } }))).toBe(404)
		const listed: string[] = []
		for await (const c of await ai.caches.list()) listed.push(c.name!)
		expect(listed).toEqual([])
		const id = cache.name!.split('/')[1]!
		const rows = async () => (await m.app.svc.db.sql.query('SELECT id FROM gemini_caches WHERE id = $1', [id])).length
		expect(await rows()).toBe(1)
		expect(await purgeGeminiCaches(m.app.svc.db)).toBeGreaterThanOrEqual(1)
		expect(await rows()).toBe(0)
		expect(await usageRows(m, acct.accountId)).toEqual([])
	})
})

describe(':countTokens with a cachedContent', () => {
	for (const up of UPSTREAMS)
		it(`should count the cache with the request, as the request written out counts (${up} upstream)`, async () => {
			const acct = await m.account()
			const cache = await makeCache(genai(acct), MODEL[up])
			const question = { role: 'user', parts: [{ text: 'When does it renew?' }] }
			const count = async (generateContentRequest: Record<string, unknown>) => {
				const res = await fetch(`${m.app.url}/v1beta/models/${MODEL[up]}:countTokens`, {
					method: 'POST',
					headers: { 'x-goog-api-key': acct.key, 'content-type': 'application/json' },
					body: JSON.stringify({ generateContentRequest: { model: `models/${MODEL[up]}`, ...generateContentRequest } }),
				})
				expect(res.status).toBe(200)
				return ((await res.json()) as { totalTokens: number }).totalTokens
			}
			const written = await count({ systemInstruction: { parts: [{ text: SYSTEM }] }, tools: TOOLS, contents: [{ role: 'user', parts: [{ text: DOC }] }, question] })
			const alone = await count({ contents: [question] })
			expect(written).toBeGreaterThan(alone)
			expect(await count({ cachedContent: cache.name, contents: [question] })).toBe(written)
		})
})

describe('Batch Mode with a cachedContent', () => {
	it('should refuse it with a 400 naming cachedContent before anything is sent or held (Google knows none of the gateway\'s caches)', async () => {
		const acct = await m.account()
		const cache = await makeCache(genai(acct), MODEL.gemini)
		const sent = m.mocks.gemini.requests.length
		const res = await fetch(`${m.app.url}/v1beta/models/${MODEL.gemini}:batchGenerateContent`, {
			method: 'POST',
			headers: { 'x-goog-api-key': acct.key, 'content-type': 'application/json' },
			body: JSON.stringify({ batch: { displayName: 'b', inputConfig: { requests: { requests: [{ request: { contents: [{ role: 'user', parts: [{ text: 'When?' }] }], cachedContent: cache.name } }] } } } }),
		})
		expect(res.status).toBe(400)
		const body = (await res.json()) as { error: { status: string; message: string } }
		expect(body.error.status).toBe('INVALID_ARGUMENT')
		expect(body.error.message).toContain('batch.inputConfig.requests.requests[0].request: cachedContent is not served in Batch Mode')
		expect(m.mocks.gemini.requests.length).toBe(sent)
		expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
	})
})
