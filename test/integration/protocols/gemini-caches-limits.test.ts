/**
 * The bounds of the gateway's Gemini context caches (modules/gemini-caches), through `ai.caches` of `@google/genai`:
 * storage is not billed, so each account holds at most MAX_GEMINI_CACHES live caches of MAX_GEMINI_CACHE_BYTES in all,
 * each living at most MAX_GEMINI_CACHE_TTL_SECONDS; and a cache is only made for a model the key can call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ApiError, GoogleGenAI } from '@google/genai'
import { pageCaches } from '../../../src/modules/gemini-caches/store'
import { type Account, type Matrix, MODEL, SETUP_MS, startMatrix } from './harness'

const MAX_CACHES = 3
const MAX_BYTES = 40_000
const MAX_TTL_S = 3_600
/** Served by the OpenAI mock, with no price: the gateway answers 403 to every call of it. */
const UNPRICED = 'free-m'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		env: { MAX_GEMINI_CACHES: String(MAX_CACHES), MAX_GEMINI_CACHE_BYTES: String(MAX_BYTES), MAX_GEMINI_CACHE_TTL_SECONDS: String(MAX_TTL_S) },
		channels: (mocks) => [{ name: 'unpriced', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: [UNPRICED], model_map: { [UNPRICED]: 'gpt-4o-mini' } }],
	})
}, SETUP_MS)
afterAll(() => m.close())

const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })

/** The SDK's error of a call that must fail: its HTTP status and Google's body. */
async function failure(p: Promise<unknown>): Promise<{ status: number; error: { code: number; status: string; message: string } }> {
	const e = await p.then(
		() => undefined,
		(err: unknown) => err,
	)
	expect(e).toBeInstanceOf(ApiError)
	return { status: (e as ApiError).status, error: JSON.parse((e as ApiError).message).error }
}

const cache = (ai: GoogleGenAI, config: Record<string, unknown> = {}, model = MODEL.openai) =>
	ai.caches.create({ model, config: { contents: [{ role: 'user', parts: [{ text: 'The contract renews every year.' }] }], ttl: '600s', ...config } })

/** Text that compresses to nothing less than its length (the database compresses what it stores). */
const noise = (chars: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(Math.ceil((chars * 3) / 4)))).toString('base64').slice(0, chars)

const stored = async (accountId: number) => (await m.app.svc.db.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM gemini_caches WHERE account_id = $1', [accountId]))[0]!.n

describe('the lifetime of a cache', () => {
	it('should refuse a ttl or expireTime past the longest a cache may live, with a 400 naming it, on create and on update', async () => {
		const acct = await m.account()
		const ai = genai(acct)
		for (const config of [{ ttl: `${MAX_TTL_S + 1}s` }, { ttl: '31536000s' }, { ttl: undefined, expireTime: new Date(Date.now() + (MAX_TTL_S + 60) * 1000).toISOString() }]) {
			const f = await failure(cache(ai, config))
			expect(f.status).toBe(400)
			expect(f.error.status).toBe('INVALID_ARGUMENT')
			expect(f.error.message).toContain(`${MAX_TTL_S}s`)
		}
		expect(await stored(acct.accountId)).toBe(0)
		// The longest is allowed, and an update is held to it too.
		const made = await cache(ai, { ttl: `${MAX_TTL_S}s` })
		expect(Date.parse(made.expireTime!) - Date.now()).toBeGreaterThan((MAX_TTL_S - 60) * 1000)
		const f = await failure(ai.caches.update({ name: made.name!, config: { ttl: `${MAX_TTL_S * 2}s` } }))
		expect(f.status).toBe(400)
		expect(f.error.message).toContain(`${MAX_TTL_S}s`)
		expect((await ai.caches.get({ name: made.name! })).expireTime).toBe(made.expireTime)
	})
})

describe('the caches an account may hold', () => {
	it(`should answer 429 RESOURCE_EXHAUSTED past ${MAX_CACHES} live caches, and take one more once one is deleted`, async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const made = []
		for (let i = 0; i < MAX_CACHES; i++) made.push(await cache(ai))
		const f = await failure(cache(ai))
		expect(f.status).toBe(429)
		expect(f.error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' })
		expect(f.error.message).toContain(`${MAX_CACHES}`)
		expect(await stored(acct.accountId)).toBe(MAX_CACHES)
		// Another account has its own.
		expect((await cache(genai(await m.account()))).name).toMatch(/^cachedContents\//)
		await ai.caches.delete({ name: made[0]!.name! })
		expect((await cache(ai)).name).toMatch(/^cachedContents\//)
	})

	it('should not let caches that expired, still stored until the purge, pile up past the bounds', async () => {
		const acct = await m.account()
		const ai = genai(acct)
		for (let i = 0; i < MAX_CACHES; i++) await cache(ai, { ttl: '1s' })
		await Bun.sleep(1_100)
		// Expired caches count no longer; they are gone from the database once the account makes new ones.
		for (let i = 0; i < MAX_CACHES; i++) await cache(ai)
		expect(await stored(acct.accountId)).toBe(MAX_CACHES)
		expect((await failure(cache(ai))).status).toBe(429)
	})

	it('should let no two creates racing past the count both in', async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const results = await Promise.allSettled(Array.from({ length: MAX_CACHES * 3 }, () => cache(ai)))
		expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(MAX_CACHES)
		for (const r of results) if (r.status === 'rejected') expect((r.reason as ApiError).status).toBe(429)
		expect(await stored(acct.accountId)).toBe(MAX_CACHES)
	})

	it(`should answer 429 RESOURCE_EXHAUSTED for a cache that would take the account's caches past ${MAX_BYTES} bytes, keeping nothing of it`, async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const big = () => cache(ai, { contents: [{ role: 'user', parts: [{ text: noise(MAX_BYTES * 0.6) }] }] })
		await big()
		const f = await failure(big())
		expect(f.status).toBe(429)
		expect(f.error.status).toBe('RESOURCE_EXHAUSTED')
		expect(f.error.message).toContain(`${MAX_BYTES}`)
		expect(await stored(acct.accountId)).toBe(1)
		// A small one still fits.
		expect((await cache(ai)).name).toMatch(/^cachedContents\//)
	})
})

describe('the model of a cache', () => {
	it('should refuse a cache for a model with no price, as every request using it would be (403), and keep nothing', async () => {
		const acct = await m.account()
		const ai = genai(acct)
		const f = await failure(cache(ai, {}, UNPRICED))
		expect(f.status).toBe(403)
		expect(f.error.message).toContain('no price')
		expect(await stored(acct.accountId)).toBe(0)
	})

	it("should refuse a cache for a model outside the key's allowed models (403)", async () => {
		const acct = await m.account(10, { allowed_models: [MODEL.openai] } as Record<string, unknown>)
		const ai = genai(acct)
		expect((await failure(cache(ai, {}, MODEL.anthropic))).status).toBe(403)
		expect(await stored(acct.accountId)).toBe(0)
		expect((await cache(ai)).model).toBe(`models/${MODEL.openai}`)
	})
})

describe('what the cache routes cost the gateway', () => {
	it("should count creates, updates and deletes toward the key's requests per minute (a create asks the vendor to count), not gets and lists", async () => {
		const acct = await m.account()
		expect((await m.app.admin(`/api/tokens/${acct.tokenId}`, { method: 'PATCH', body: { rpm_limit: 2 } })).status).toBe(200)
		const ai = genai(acct)
		const made = await cache(ai)
		await ai.caches.update({ name: made.name!, config: { ttl: '60s' } })
		const f = await failure(cache(ai))
		expect(f.status).toBe(429)
		expect(f.error.message).not.toContain('context caches')
		expect(await stored(acct.accountId)).toBe(1)
		for (let i = 0; i < 3; i++) {
			expect((await ai.caches.get({ name: made.name! })).name).toBe(made.name!)
			for await (const c of await ai.caches.list()) expect(c.name).toBe(made.name!)
		}
	})

	it("should list a page of caches without reading their contents from the database", async () => {
		const acct = await m.account()
		const ai = genai(acct)
		await cache(ai, { contents: [{ role: 'user', parts: [{ text: noise(10_000) }] }] })
		const rows = await pageCaches(m.app.svc, acct.accountId, 10)
		expect(rows).toHaveLength(1)
		expect(Object.keys(rows[0]!)).not.toContain('content')
	})
})
