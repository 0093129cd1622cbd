/**
 * POST /v1/audio/speech answered 200 with no audio (QA non-chat endpoints, item 7): a failed call, retried on another
 * channel and never charged, whether the empty body says `content-length: 0` or is chunked.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { expectLedgerInvariant } from '../resilience/invariant'
import { micros, priceList, usageOf } from './helpers'

let oa: VendorMock
let app: TestApp

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'oa1', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['tts-1'] },
				{ name: 'oa2', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['tts-1'] },
			],
			models: priceList([{ name: 'tts-1', per_mchar: 15 }]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await oa.stop()
})

beforeEach(() => {
	oa.reset()
	oa.fault = undefined
	oa.faultOnce = undefined
})

const speak = (key: string) => new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 }).audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'hello there world', response_format: 'wav' })

describe('POST /v1/audio/speech with an empty upstream answer', () => {
	it('should fail over from a 200 with no bytes and charge the audio once', async () => {
		const { key, accountId } = await app.account(1)
		oa.faultOnce = { kind: 'empty' }
		const res = await speak(key)
		expect((await res.arrayBuffer()).byteLength).toBe(44 + 24000 * 0.75 * 2)
		expect(oa.requests).toHaveLength(2)
		// 17 characters at $15 per million
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 255)
	})

	for (const [name, fault] of [
		['content-length: 0', { kind: 'empty' }],
		['a chunked body that ends at once', { kind: 'cut', afterChunks: 0 }],
	] as const) {
		it(`should answer 502 upstream_malformed and charge nothing for ${name}`, async () => {
			const { key, accountId } = await app.account(1)
			oa.fault = fault
			const err = await speak(key).then(
				() => undefined,
				(e: unknown) => e,
			)
			expect(err).toBeInstanceOf(OpenAI.APIError)
			expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(502)
			expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_malformed')
			expect(await app.balance(accountId)).toBe(1)
			const rows = await usageOf(app, accountId)
			expect(rows).toHaveLength(1)
			expect(rows[0]).toMatchObject({ cost: 0, status: 502, end_reason: 'error' })
		})
	}

	it('should leave nothing reserved', async () => {
		expect((await expectLedgerInvariant(app.svc.db.sql, app.svc.ledger)).inUse).toBe(0)
	})
})

describe('POST /v1/audio/speech whose audio the upstream cuts', () => {
	it('should fail the client’s body and charge nothing, recording the cut', async () => {
		const { key, accountId } = await app.account(1)
		oa.faultOnce = { kind: 'cut', afterChunks: 2, abrupt: true }
		const res = await speak(key)
		const read = await res.arrayBuffer().then(
			(b) => b.byteLength,
			(e: unknown) => e,
		)
		expect(read).toBeInstanceOf(Error)
		for (let i = 0; i < 50 && (await usageOf(app, accountId)).length === 0; i++) await Bun.sleep(20)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ end_reason: 'upstream_cut' })
		expect(micros(row!.cost)).toBe(0)
		expect(micros(await app.balance(accountId))).toBe(1_000_000)
	})

	it('should still charge in full a client that leaves before the end (the upstream made the audio)', async () => {
		const { key, accountId } = await app.account(1)
		const res = await speak(key)
		const reader = res.body!.getReader()
		await reader.read()
		await reader.cancel()
		for (let i = 0; i < 50 && (await usageOf(app, accountId)).length === 0; i++) await Bun.sleep(20)
		const [row] = await usageOf(app, accountId)
		expect(micros(row!.cost)).toBe(255)
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 255)
	})

	it('should leave the ledger sound', async () => {
		await expectLedgerInvariant(app.svc.db.sql, app.svc.ledger)
	})
})
