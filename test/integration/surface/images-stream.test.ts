/**
 * POST /v1/images/generations with `stream: true` (QA non-chat endpoints, item 1): relayed as OpenAI's image streaming
 * events, billed from the completed events, failing over only before the first event, and never opening a channel's
 * circuit breaker for a request's own answer.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import type { ImageGenStreamEvent } from 'openai/resources/images'
import { canStream, completedEvents, ImageMeter } from '../../../src/modules/images/stream'
import { countText } from '../../../src/relay/estimate'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { expectLedgerInvariant } from '../resilience/invariant'
import { call, micros, priceList, usageOf } from './helpers'

let oa: VendorMock
let app: TestApp
/** An OpenAI-compatible upstream that answers every image call the same way, whatever was asked: SSE or JSON. */
let odd: ReturnType<typeof Bun.serve>
const oddHits: string[] = []

const PNG = 'iVBORw0KGgo='
const completed = { type: 'image_generation.completed', b64_json: PNG, created_at: 1, size: '1024x1024', quality: 'low', background: 'opaque', output_format: 'png', usage: { input_tokens: 7, input_tokens_details: { text_tokens: 7, image_tokens: 0 }, output_tokens: 100, total_tokens: 107 } }

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	odd = Bun.serve({
		port: 0,
		hostname: '127.0.0.1',
		async fetch(req) {
			const body = (await req.json()) as { model: string }
			oddHits.push(body.model)
			if (body.model === 'always-sse') return new Response(`event: image_generation.completed\ndata: ${JSON.stringify(completed)}\n\n`, { headers: { 'content-type': 'text/event-stream' } })
			return Response.json({ created: 5, data: [{ b64_json: PNG }, { b64_json: PNG }], usage: { input_tokens: 7, output_tokens: 200, total_tokens: 207 } })
		},
	})
	const both = ['gpt-image-1', 'gpt-image-pi', 'dall-e-3']
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'oa1', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: both, model_map: { 'gpt-image-pi': 'gpt-image-1' } },
				{ name: 'oa2', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: both, model_map: { 'gpt-image-pi': 'gpt-image-1' } },
				{ name: 'odd', type: 'openai', base_url: `http://127.0.0.1:${odd.port}/v1`, api_key: 'up-odd', models: ['always-sse', 'always-json'] },
			],
			models: priceList([
				{ name: 'gpt-image-1', input_per_mtok: 5, output_per_mtok: 40 },
				{ name: 'gpt-image-pi', per_image: 0.04 },
				{ name: 'dall-e-3', per_image: 0.04 },
				{ name: 'always-sse', input_per_mtok: 5, output_per_mtok: 40 },
				{ name: 'always-json', input_per_mtok: 5, output_per_mtok: 40 },
			]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await oa.stop()
	odd.stop(true)
})

beforeEach(() => {
	oa.reset()
	oa.fault = undefined
	oa.faultOnce = undefined
	oddHits.length = 0
})

const sdk = (key: string) => new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })

/** Every event of a streamed generation, and the error that ended it early, if any. */
async function collect(key: string, params: Record<string, unknown>): Promise<{ events: ImageGenStreamEvent[]; error?: unknown }> {
	const events: ImageGenStreamEvent[] = []
	try {
		const stream = await sdk(key).images.generate({ model: 'gpt-image-1', prompt: 'a red fox', stream: true, ...params } as OpenAI.Images.ImageGenerateParamsStreaming)
		for await (const e of stream) events.push(e)
		return { events }
	} catch (error) {
		return { events, error }
	}
}

const breakers = async () => ((await app.admin('/api/channels')).body.data as Array<{ name: string; health: { state: string; consecutive_failures: number } }>).map((c) => [c.name, c.health.state, c.health.consecutive_failures]).sort((a, b) => String(a[0]).localeCompare(String(b[0])))

/** The row is written when the stream's bill settles, just after its last byte. */
async function rowsOf(accountId: number, count = 1) {
	for (let i = 0; i < 50; i++) {
		const rows = await usageOf(app, accountId)
		if (rows.length >= count) return rows
		await Bun.sleep(20)
	}
	return usageOf(app, accountId)
}

describe('POST /v1/images/generations with stream: true', () => {
	it('should relay the partial and completed events to the SDK and charge the completed event usage exactly', async () => {
		const { key, accountId } = await app.account(1)
		const { events, error } = await collect(key, { partial_images: 2 })
		expect(error).toBeUndefined()
		expect(events.map((e) => e.type)).toEqual(['image_generation.partial_image', 'image_generation.partial_image', 'image_generation.completed'])
		const done = events[2] as OpenAI.Images.ImageGenCompletedEvent
		expect(done.b64_json.length).toBeGreaterThan(10)
		expect(done.usage).toMatchObject({ input_tokens: 3, output_tokens: 272 })
		expect(oa.requests.map((r) => r.path)).toEqual(['/v1/images/generations'])
		expect((oa.requests[0]!.body as { stream?: unknown }).stream).toBe(true)
		const [row] = await rowsOf(accountId)
		// 3 input tokens × $5/M + 272 output tokens × $40/M = 15 + 10,880 micro-USD
		expect(row).toMatchObject({ endpoint: '/v1/images/generations', model: 'gpt-image-1', input_tokens: 3, output_tokens: 272, status: 200, end_reason: 'ok', estimated: false, stream: true })
		expect(micros(row!.cost)).toBe(10_895)
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 10_895)
	})

	it('should charge a per-image price for each completed image of a stream', async () => {
		const { key, accountId } = await app.account(1)
		const { events, error } = await collect(key, { model: 'gpt-image-pi', n: 2, partial_images: 1 })
		expect(error).toBeUndefined()
		expect(events.filter((e) => e.type === 'image_generation.completed')).toHaveLength(2)
		const [row] = await rowsOf(accountId)
		expect(row).toMatchObject({ model: 'gpt-image-pi', end_reason: 'ok', cost: 0.08 })
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 80_000)
	})

	it('should never fail over once an event reached the client, and charge a stream cut before completed the prompt alone', async () => {
		const { key, accountId } = await app.account(1)
		oa.faultOnce = { kind: 'cut', afterChunks: 1 }
		const { events, error } = await collect(key, { partial_images: 1 })
		expect(events.map((e) => e.type)).toEqual(['image_generation.partial_image'])
		expect(error).toBeInstanceOf(OpenAI.APIError)
		expect((error as InstanceType<typeof OpenAI.APIError>).message).toContain('ended before the images were completed')
		expect(oa.requests).toHaveLength(1)
		const [row] = await rowsOf(accountId)
		const prompt = countText('a red fox')
		expect(row).toMatchObject({ end_reason: 'upstream_cut', status: 200, input_tokens: prompt, output_tokens: 0, estimated: true })
		expect(micros(row!.cost)).toBe(prompt * 5)
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - prompt * 5)
	})

	it('should charge nothing for a per-image stream cut before its image completed', async () => {
		const { key, accountId } = await app.account(1)
		oa.faultOnce = { kind: 'cut', afterChunks: 1, abrupt: true }
		const { events, error } = await collect(key, { model: 'gpt-image-pi', partial_images: 1 })
		expect(events).toHaveLength(1)
		expect(error).toBeDefined()
		const [row] = await rowsOf(accountId)
		expect(row).toMatchObject({ end_reason: 'upstream_cut', cost: 0 })
		expect(await app.balance(accountId)).toBe(1)
	})

	it("should relay the upstream's error event mid-stream and charge what was produced", async () => {
		const { key, accountId } = await app.account(1)
		oa.faultOnce = { kind: 'midstream', afterChunks: 1 }
		const { events, error } = await collect(key, { partial_images: 2 })
		expect(events).toHaveLength(1)
		expect(error).toBeInstanceOf(OpenAI.APIError)
		expect(oa.requests).toHaveLength(1)
		const [row] = await rowsOf(accountId)
		expect(row).toMatchObject({ end_reason: 'error', output_tokens: 0 })
		expect(micros(row!.cost)).toBe(countText('a red fox') * 5)
	})

	it('should fail over when the upstream stream ends before its first event, charging once', async () => {
		const { key, accountId } = await app.account(1)
		oa.faultOnce = { kind: 'cut', afterChunks: 0 }
		const { events, error } = await collect(key, {})
		expect(error).toBeUndefined()
		expect(events.map((e) => e.type)).toEqual(['image_generation.completed'])
		expect(oa.requests).toHaveLength(2)
		const rows = await rowsOf(accountId)
		expect(rows).toHaveLength(1)
		expect(micros(rows[0]!.cost)).toBe(10_895)
	})

	it('should fail over on an error event as the first event (nothing sent, nothing made)', async () => {
		const { key, accountId } = await app.account(1)
		oa.faultOnce = { kind: 'midstream', afterChunks: 0 }
		const { events, error } = await collect(key, {})
		expect(error).toBeUndefined()
		expect(events).toHaveLength(1)
		expect(oa.requests).toHaveLength(2)
		expect(micros((await rowsOf(accountId))[0]!.cost)).toBe(10_895)
	})

	it('should charge a client that leaves mid-stream the prompt, and let go of the upstream call', async () => {
		const { key, accountId } = await app.account(1)
		oa.faultOnce = { kind: 'stall', afterChunks: 1 }
		const ac = new AbortController()
		const stream = await sdk(key).images.generate({ model: 'gpt-image-1', prompt: 'a red fox', stream: true, partial_images: 2 }, { signal: ac.signal })
		const seen: string[] = []
		try {
			for await (const e of stream) {
				seen.push(e.type)
				ac.abort()
			}
		} catch {
			// the abort
		}
		expect(seen).toEqual(['image_generation.partial_image'])
		const [row] = await rowsOf(accountId)
		expect(row).toMatchObject({ end_reason: 'client_abort', output_tokens: 0 })
		expect(micros(row!.cost)).toBe(countText('a red fox') * 5)
		for (let i = 0; i < 50 && oa.aborts.length === 0; i++) await Bun.sleep(20)
		expect(oa.aborts).toHaveLength(1)
	})

	it('should answer 400 naming stream for a model that cannot stream, before any upstream call', async () => {
		const { key, accountId } = await app.account(1)
		const r = await call(app, key, '/v1/images/generations', { body: { model: 'dall-e-3', prompt: 'x', stream: true } })
		expect(r.status).toBe(400)
		expect(r.body.error.param).toBe('stream')
		expect(oa.requests).toHaveLength(0)
		expect(await app.balance(accountId)).toBe(1)
	})

	it('should send an upstream that answers JSON to a stream as completed events, billed like the JSON answer', async () => {
		const { key, accountId } = await app.account(1)
		const { events, error } = await collect(key, { model: 'always-json', n: 2 })
		expect(error).toBeUndefined()
		expect(events.map((e) => e.type)).toEqual(['image_generation.completed', 'image_generation.completed'])
		expect((events[1] as OpenAI.Images.ImageGenCompletedEvent).usage).toMatchObject({ output_tokens: 200 })
		const [row] = await rowsOf(accountId)
		expect(row).toMatchObject({ input_tokens: 7, output_tokens: 200, end_reason: 'ok' })
		expect(micros(row!.cost)).toBe(7 * 5 + 200 * 40)
	})

	it("should not open the channels' breakers on streamed calls, nor on an event stream the request did not ask for", async () => {
		const { key, accountId } = await app.account(1)
		// Earlier tests' failovers may have left a failure on oa1 or oa2, which only a call that lands there (by weight,
		// at random) clears: the calls below must add none.
		const before = new Map((await breakers()).map(([name, , failures]) => [name, failures as number]))
		for (let i = 0; i < 4; i++) expect((await collect(key, {})).error).toBeUndefined()
		// A field the gateway does not model made the vendor stream: the images were made, so they are answered as JSON.
		for (let i = 0; i < 4; i++) {
			const r = await call(app, key, '/v1/images/generations', { body: { model: 'always-sse', prompt: 'x' } })
			expect(r.status).toBe(200)
		}
		expect(oddHits).toEqual(['always-sse', 'always-sse', 'always-sse', 'always-sse'])
		const after = await breakers()
		expect(after.map(([name, state]) => [name, state])).toEqual([
			['oa1', 'closed'],
			['oa2', 'closed'],
			['odd', 'closed'],
		])
		for (const [name, , failures] of after) expect({ name, added: (failures as number) > (before.get(name as string) ?? 0) }).toEqual({ name, added: false })
		expect(after.find(([name]) => name === 'odd')![2]).toBe(0)
		expect((await rowsOf(accountId, 8)).filter((r) => r.status === 200)).toHaveLength(8)
	})

	it('should answer a non-streamed request that got an event stream with the images as JSON, billed like the JSON answer', async () => {
		const { key, accountId } = await app.account(1)
		const client = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		const r = await client.images.generate({ model: 'always-sse', prompt: 'a red fox' })
		expect(r.data).toEqual([{ b64_json: PNG }])
		expect(r).toMatchObject({ created: 1, size: '1024x1024', quality: 'low', background: 'opaque', output_format: 'png', usage: { input_tokens: 7, output_tokens: 100, total_tokens: 107 } })
		const [row] = await rowsOf(accountId)
		expect(row).toMatchObject({ status: 200, input_tokens: 7, output_tokens: 100, end_reason: 'ok' })
		expect(micros(row!.cost)).toBe(7 * 5 + 100 * 40)
	})

	it('should leave the ledger sound with nothing reserved after all of the above', async () => {
		const t = await expectLedgerInvariant(app.svc.db.sql, app.svc.ledger)
		expect(t.inUse).toBe(0)
	})
})

describe('ImageMeter', () => {
	it("should keep the prompt's tokens once and add up each image's output tokens, by event name or by type", () => {
		const m = new ImageMeter()
		const done = (output: number) => JSON.stringify({ ...completed, usage: { ...completed.usage, output_tokens: output } })
		m.see({ event: 'image_generation.partial_image', data: JSON.stringify({ type: 'image_generation.partial_image', b64_json: PNG }) })
		m.see({ event: 'image_generation.completed', data: done(100) })
		m.see({ data: done(150) })
		expect(m.tally).toEqual({ images: 2, partials: 1, input: 7, imageInput: 0, output: 250, made: { size: '1024x1024', quality: 'low' } })
		expect(m.end(2)).toBe('ok')
		expect(m.end(3)).toBe('upstream_cut')
		m.see({ event: 'image_generation.completed', data: '{"type":"image_generation.completed","b64' })
		expect(m.end(2)).toBe('upstream_malformed')
		m.see({ event: 'error', data: '{"type":"error","error":{"message":"x"}}' })
		expect(m.end(2)).toBe('error')
	})

	it('should turn a JSON answer into completed events with its usage on the last', () => {
		const text = completedEvents({ created: 9, data: [{ b64_json: 'a' }, { b64_json: 'b' }], usage: { input_tokens: 1, output_tokens: 2 } })
		const events = text.split('\n\n').filter(Boolean).map((e) => JSON.parse(e.split('data: ')[1]!))
		expect(events).toEqual([
			{ type: 'image_generation.completed', b64_json: 'a', created_at: 9 },
			{ type: 'image_generation.completed', b64_json: 'b', created_at: 9, usage: { input_tokens: 1, output_tokens: 2 } },
		])
		expect([canStream('gpt-image-1'), canStream('dall-e-3'), canStream('dall-e-2')]).toEqual([true, false, false])
	})
})
