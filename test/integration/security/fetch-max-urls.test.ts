/**
 * How many image and document URLs the gateway downloads for one request (relay/images.ts: a Gemini upstream takes
 * files only inline): at most FETCH_MAX_URLS (default 20), refused past it with a 400 in the caller's shape before
 * anything is downloaded or charged. Before, there was no count at all: a request naming 500 URLs had the gateway
 * download them four at a time, each up to 15 s, holding the request for minutes.
 */
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { loadEnv } from '../../../src/config/env'
import { flushed, MODELS, type SecApp, startSecApp } from './setup'

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')

let app: SecApp
let images: ReturnType<typeof Bun.serve>
let fetched = 0
const urls = (n: number) => Array.from({ length: n }, (_, i) => `http://127.0.0.1:${images.port}/cat.png?i=${i}`)

beforeAll(async () => {
	images = Bun.serve({
		hostname: '127.0.0.1',
		port: 0,
		fetch() {
			fetched++
			return new Response(PNG, { headers: { 'content-type': 'image/png' } })
		},
	})
	app = await startSecApp({ FETCH_ALLOW: '127.0.0.1', FETCH_MAX_URLS: '3' })
}, 60_000)
afterAll(async () => {
	await app?.close()
	images?.stop(true)
})

const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: app.url, maxRetries: 0 })
const dataUri = `data:image/png;base64,${PNG.toString('base64')}`

describe('image URLs per request, fetched for Gemini', () => {
	it('should fetch up to FETCH_MAX_URLS of them (data URIs not counted)', async () => {
		const { key } = await app.account(5)
		fetched = 0
		const r = await openai(key).chat.completions.create({
			model: MODELS.gemini,
			max_tokens: 20,
			messages: [{ role: 'user', content: [{ type: 'text', text: 'what are these' }, ...[...urls(3), dataUri].map((url) => ({ type: 'image_url' as const, image_url: { url } }))] }],
		})
		expect(r.choices[0]!.message.content).toContain('I see 4 images.')
		expect(fetched).toBe(3)
	})

	it('should refuse one more with 400 too_many_urls (OpenAI shape), before any download or charge', async () => {
		const { key, accountId } = await app.account(5)
		fetched = 0
		const calls = app.mocks.gemini.requests.length
		const err = await openai(key)
			.chat.completions.create({
				model: MODELS.gemini,
				messages: [{ role: 'user', content: [{ type: 'text', text: 'what are these' }, ...urls(4).map((url) => ({ type: 'image_url' as const, image_url: { url } }))] }],
			})
			.catch((e: unknown) => e)
		expect(err).toBeInstanceOf(OpenAI.BadRequestError)
		expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('too_many_urls')
		expect((err as Error).message).toContain('at most 3')
		expect(fetched).toBe(0)
		expect(app.mocks.gemini.requests.length).toBe(calls)
		await flushed(app.svc)
		expect(await app.balance(accountId)).toBe(5)
	})

	it('should count images in tool results and documents too, and answer in Anthropic shape', async () => {
		const { key } = await app.account(5)
		fetched = 0
		const err = await anthropic(key)
			.messages.create({
				model: MODELS.gemini,
				max_tokens: 20,
				messages: [
					{ role: 'user', content: 'look these up' },
					{ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'pics', input: {} }] },
					{
						role: 'user',
						content: [
							{ type: 'tool_result', tool_use_id: 'toolu_1', content: urls(2).map((url) => ({ type: 'image' as const, source: { type: 'url' as const, url } })) },
							{ type: 'document', source: { type: 'url', url: `http://127.0.0.1:${images.port}/doc.pdf` } },
							{ type: 'image', source: { type: 'url', url: urls(1)[0]! } },
						],
					},
				],
				tools: [{ name: 'pics', input_schema: { type: 'object', properties: {} } }],
			})
			.catch((e: unknown) => e)
		expect(err).toBeInstanceOf(Anthropic.BadRequestError)
		expect((err as any).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
		expect((err as Error).message).toContain('4 image or document URLs')
		expect(fetched).toBe(0)
	})

	it('should default to 20 and take 1 to 500, naming the variable otherwise', () => {
		expect(loadEnv({}).maxFetchedUrls).toBe(20)
		expect(loadEnv({ FETCH_MAX_URLS: '500' }).maxFetchedUrls).toBe(500)
		expect(() => loadEnv({ FETCH_MAX_URLS: '0' })).toThrow('FETCH_MAX_URLS must be an integer from 1 to 500, got "0"')
	})
})
