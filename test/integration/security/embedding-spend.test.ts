/**
 * Embeddings as an amplifier, as a hostile key holder would use them: gemini-embedding-001 on Vertex takes one text a
 * call, so every input is an upstream call the operator pays for. Held here, through the official SDKs against the
 * Vertex mock: a request names at most 2048 inputs (OpenAI's documented cap) on the OpenAI route and on Gemini's
 * batchEmbedContents alike, refused before any call and uncharged; and a request that fails midway (Vertex's quota
 * met after some calls, or the client leaving) is charged for the calls Vertex had answered, not nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { startVertexMock, type VertexMock } from '../../mocks'
import { type Account, type Matrix, PRICE, SETUP_MS, startMatrix, usageRows } from '../protocols/harness'

const PROJECT = 'proj-spend'
const REGION = 'us-east5'
const GEMB = 'gemb-spend'
/** $1000 per million tokens: $0.001 a token, so every token shows in the charge. */
const MICROS_PER_TOKEN = 1000
/** Three words, three tokens to the mock: each answered call is worth the same. */
const TEXT = (i: number) => `text number ${i}`
const RESOURCE_EXHAUSTED = { status: 429, googleStatus: 'RESOURCE_EXHAUSTED', message: 'Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model' }

let m: Matrix
let v: VertexMock
beforeAll(async () => {
	v = await startVertexMock({ project: PROJECT, region: REGION, expressKey: 'AQ.unused' })
	PRICE[GEMB] = { input: 1000, output: 0 }
	m = await startMatrix({
		models: [{ name: GEMB, input_per_mtok: 1000, output_per_mtok: 0 }],
		channels: (): GatewayConfig['channels'] => [
			{ name: 'vx-spend', type: 'vertex', base_url: v.url, api_key: v.key.json, settings: { region: REGION }, models: [GEMB], model_map: { [GEMB]: 'gemini-embedding-001' } },
		],
	})
}, SETUP_MS)
afterAll(async () => {
	await m.close()
	await v.stop()
})

const predicts = () => v.requests.filter((r) => r.path.endsWith(':predict')).length
const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })

/** The one usage row of the account's failed request: charged for whole calls Vertex answered, between `least` and what it answered. */
async function expectChargedForAnswered(acct: Account, answeredByVertex: number, least: number, row: { status: number; endReason: string }) {
	const [r, ...more] = await usageRows(m, acct.accountId)
	expect(more).toHaveLength(0)
	expect([r!.status, r!.end_reason]).toEqual([row.status, row.endReason])
	const calls = r!.input_tokens / 3
	expect(Number.isInteger(calls)).toBe(true)
	expect(calls).toBeGreaterThanOrEqual(least)
	expect(calls).toBeLessThanOrEqual(answeredByVertex)
	expect(r!.estimated).toBe(false)
	expect(Math.round(r!.cost * 1e6)).toBe(r!.input_tokens * MICROS_PER_TOKEN)
	expect(Math.round((await m.app.balance(acct.accountId)) * 1e6)).toBe(Math.round(acct.balance * 1e6) - r!.input_tokens * MICROS_PER_TOKEN)
}

describe('embeddings input cap', () => {
	it('should refuse 2049 inputs on /v1/embeddings (openai SDK) before calling Vertex, uncharged', async () => {
		const acct = await m.account()
		const before = predicts()
		const err = await acct.openai.embeddings.create({ model: GEMB, input: Array.from({ length: 2049 }, (_, i) => TEXT(i)) }).catch((e) => e)
		expect(err.status).toBe(400)
		expect(predicts()).toBe(before)
		expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
	})

	it("should refuse Gemini's batchEmbedContents with 2049 requests (@google/genai) before calling Vertex, uncharged", async () => {
		const acct = await m.account()
		const before = predicts()
		const err = await genai(acct)
			.models.embedContent({ model: GEMB, contents: Array.from({ length: 2049 }, (_, i) => TEXT(i)) })
			.catch((e) => e)
		expect(err.status).toBe(400)
		expect(String(err.message)).toContain('requests')
		expect(predicts()).toBe(before)
		expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
		const rows = await usageRows(m, acct.accountId)
		expect(rows.every((r) => r.cost === 0)).toBe(true)
	})

	it('should still take 2048 requests on batchEmbedContents', async () => {
		const acct = await m.account()
		const r = await genai(acct).models.embedContent({ model: GEMB, contents: Array.from({ length: 2048 }, (_, i) => TEXT(i)), config: { outputDimensionality: 2 } })
		expect(r.embeddings).toHaveLength(2048)
	}, 60_000)
})

describe('embeddings that fail midway', () => {
	it("should charge the calls Vertex answered when its quota refuses a later one (openai SDK, 429 to the caller)", async () => {
		const acct = await m.account()
		const before = predicts()
		v.faultAfter(5, RESOURCE_EXHAUSTED)
		const err = await acct.openai.embeddings.create({ model: GEMB, input: Array.from({ length: 12 }, (_, i) => TEXT(i)) }).catch((e) => e)
		expect(err.status).toBe(429)
		// Five calls were answered before the sixth was refused; the first and the one that freed its slot were read for sure.
		await expectChargedForAnswered(acct, predicts() - before - 1, 2, { status: 429, endReason: 'error' })
	})

	it("should charge the calls Vertex answered before the client left (openai SDK, aborted)", async () => {
		const acct = await m.account()
		v.callDelayMs = 40
		try {
			const before = predicts()
			const ctl = new AbortController()
			const pending = acct.openai.embeddings.create({ model: GEMB, input: Array.from({ length: 40 }, (_, i) => TEXT(i)) }, { signal: ctl.signal }).catch((e) => e)
			// The first call, then four at a time: leave once at least six have been answered.
			while (predicts() - before < 10) await Bun.sleep(5)
			ctl.abort()
			expect(await pending).toBeInstanceOf(Error)
			// The gateway settles as it unwinds: wait for the row.
			for (let i = 0; i < 100 && !(await usageRows(m, acct.accountId)).length; i++) await Bun.sleep(20)
			await Bun.sleep(2 * v.callDelayMs)
			await expectChargedForAnswered(acct, predicts() - before, 6, { status: 499, endReason: 'client_abort' })
		} finally {
			v.callDelayMs = 0
		}
	})

	it("should charge the calls Vertex answered for Gemini's batchEmbedContents too (@google/genai)", async () => {
		const acct = await m.account()
		const before = predicts()
		v.faultAfter(3, RESOURCE_EXHAUSTED)
		const err = await genai(acct)
			.models.embedContent({ model: GEMB, contents: Array.from({ length: 8 }, (_, i) => TEXT(i)) })
			.catch((e) => e)
		expect(err.status).toBe(429)
		await expectChargedForAnswered(acct, predicts() - before - 1, 2, { status: 429, endReason: 'error' })
	})
})
