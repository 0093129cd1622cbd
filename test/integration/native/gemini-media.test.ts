/**
 * Gemini's Imagen `:predict` and Veo `:predictLongRunning` with its operations and video downloads
 * (ai.google.dev/gemini-api/docs/imagen, …/docs/video). Veo through the Vercel AI SDK's `google.video()` (start, poll
 * `GET {baseURL}/{name}`, download the URI with `?key=`) and @google/genai's `operations.getVideosOperation`; Imagen
 * over HTTP as Google documents it (@google/genai 3.3 and @ai-sdk/google 4 call `:predict` only on Vertex AI).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createGoogleGenerativeAI } from '@ai-sdk/google'
import { GenerateVideosOperation, GoogleGenAI } from '@google/genai'
import { experimental_generateVideo as generateVideo } from 'ai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startGeminiMock } from '../../mocks'
import { IMAGE_BYTES } from '../../mocks/gemini/predict'
import { VIDEO_BYTES } from '../../mocks/tasks/video'
import { call, micros, priceList, usageOf } from '../surface/helpers'

let a: Awaited<ReturnType<typeof startGeminiMock>>
let b: Awaited<ReturnType<typeof startGeminiMock>>
let app: TestApp

const IMAGEN = 'imagen-4.0-generate-001'
const VEO = 'veo-3.0-generate-001'

beforeAll(async () => {
	a = await startGeminiMock({ apiKey: 'up-a' })
	b = await startGeminiMock({ apiKey: 'up-b' })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'ge-a', type: 'gemini', base_url: a.url, api_key: 'up-a', models: [IMAGEN, VEO, 'imagen-alias', 'veo-alias'], model_map: { 'imagen-alias': IMAGEN, 'veo-alias': VEO }, priority: 0 },
				{ name: 'ge-b', type: 'gemini', base_url: b.url, api_key: 'up-b', models: [IMAGEN, VEO], priority: 1 },
			],
			models: priceList([
				{ name: IMAGEN, per_image: 0.04, per_image_2048x2048: 0.06 },
				{ name: 'imagen-alias', per_image: 0.03 },
				{ name: VEO, per_request: 0.01, per_second: 0.4, per_second_1920x1080: 0.5 },
				{ name: 'veo-alias', per_second: 0.15 },
			]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await a.stop()
	await b.stop()
})

const predictBody = (prompt: string, parameters: Record<string, unknown> = {}) => ({ instances: [{ prompt }], parameters })
const gemini = (key: string, path: string, body?: unknown) => call(app, key, path, { body, headers: { authorization: '', 'x-goog-api-key': key } })
const refunds = async (accountId: number) => (await usageOf(app, accountId)).filter((r) => r.end_reason === 'refund')

describe('POST /v1beta/models/{imagen}:predict', () => {
	it('should forward the body to the channel under the mapped model with its key and charge each image returned', async () => {
		const { key, accountId } = await app.account(2)
		a.reset()
		const r = await gemini(key, '/v1beta/models/imagen-alias:predict', predictBody('a red fox', { sampleCount: 2, aspectRatio: '16:9' }))
		expect(r.status).toBe(200)
		expect(r.body.predictions).toHaveLength(2)
		expect(Buffer.from(r.body.predictions[0].bytesBase64Encoded, 'base64')).toEqual(Buffer.from(IMAGE_BYTES))
		const sent = a.requests[0]!
		expect(sent.path).toBe(`/v1beta/models/${IMAGEN}:predict`)
		expect(sent.headers['x-goog-api-key']).toBe('up-a')
		expect(JSON.stringify(sent.headers)).not.toContain(key)
		expect(sent.body).toEqual(predictBody('a red fox', { sampleCount: 2, aspectRatio: '16:9' }))
		expect(micros(await app.balance(accountId))).toBe(micros(2) - 2 * micros(0.03))
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ model: 'imagen-alias', endpoint: '/v1beta/models/{model}:predict', cost: 0.06, end_reason: 'ok' })
	})

	it("should charge Imagen's default four images when sampleCount is absent, at the imageSize's price", async () => {
		const { key, accountId } = await app.account(2)
		const plain = await gemini(key, `/v1/models/${IMAGEN}:predict`, predictBody('a lighthouse'))
		expect(plain.body.predictions).toHaveLength(4)
		expect(micros(await app.balance(accountId))).toBe(micros(2) - 4 * micros(0.04))
		const large = await gemini(key, `/v1beta/models/${IMAGEN}:predict`, predictBody('a lighthouse', { sampleCount: 1, imageSize: '2K' }))
		expect(large.status).toBe(200)
		expect(micros(await app.balance(accountId))).toBe(micros(2) - 4 * micros(0.04) - micros(0.06))
	})

	it('should not charge an image the safety filter withheld', async () => {
		const { key, accountId } = await app.account(2)
		const r = await gemini(key, `/v1beta/models/${IMAGEN}:predict`, predictBody('a crowd #filter', { sampleCount: 3, includeRaiReason: true }))
		expect(r.status).toBe(200)
		expect(r.body.predictions).toHaveLength(3)
		expect(r.body.predictions[2]).toEqual({ raiFilteredReason: 'Filtered by the mock safety filter.' })
		expect(micros(await app.balance(accountId))).toBe(micros(2) - 2 * micros(0.04))
	})

	it('should fail over to the next channel before charging, and charge nothing when every channel fails', async () => {
		const { key, accountId } = await app.account(2)
		a.reset()
		b.reset()
		a.faultOnce = { kind: 'status', status: 503 }
		const r = await gemini(key, `/v1beta/models/${IMAGEN}:predict`, predictBody('a boat', { sampleCount: 1 }))
		expect(r.status).toBe(200)
		expect(b.requests[0]!.headers['x-goog-api-key']).toBe('up-b')
		expect(micros(await app.balance(accountId))).toBe(micros(2) - micros(0.04))
		a.fault = { kind: 'status', status: 500 }
		b.fault = { kind: 'status', status: 500 }
		try {
			const failed = await gemini(key, `/v1beta/models/${IMAGEN}:predict`, predictBody('a boat', { sampleCount: 1 }))
			expect(failed.status).toBe(502)
			expect(failed.body.error).toMatchObject({ code: 502 })
			expect(typeof failed.body.error.status).toBe('string')
		} finally {
			a.fault = undefined
			b.fault = undefined
		}
		expect(micros(await app.balance(accountId))).toBe(micros(2) - micros(0.04))
	})

	it("should pass the upstream's refusal back in Gemini's shape, uncharged, and refuse a body without instances", async () => {
		const { key, accountId } = await app.account(2)
		const refused = await gemini(key, `/v1beta/models/${IMAGEN}:predict`, predictBody('a boat', { sampleCount: 9 }))
		expect(refused.status).toBe(400)
		expect(refused.body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' })
		const bad = await gemini(key, `/v1beta/models/${IMAGEN}:predict`, { prompt: 'a boat' })
		expect(bad.status).toBe(400)
		expect(bad.body.error.message).toContain('instances')
		expect(await app.balance(accountId)).toBe(2)
	})
})

/** The Vercel AI SDK's Google provider on the gateway, with the caller's key. */
const aiGoogle = (key: string) => createGoogleGenerativeAI({ apiKey: key, baseURL: `${app.url}/v1beta` })

/** Submits over HTTP as Google's REST example does; answers the operation name. */
async function submit(key: string, model: string, prompt: string, parameters: Record<string, unknown> = {}): Promise<string> {
	const r = await gemini(key, `/v1beta/models/${model}:predictLongRunning`, predictBody(prompt, parameters))
	expect(r.status).toBe(200)
	return r.body.name
}

describe('POST /v1beta/models/{veo}:predictLongRunning and its operation', () => {
	it('should run through the AI SDK: charged seconds × per_second on acceptance, polled and downloaded with the caller key', async () => {
		const { key, accountId } = await app.account(5)
		a.reset()
		// The SDK refuses to download from a private address such as the test's 127.0.0.1: fetched here instead.
		const download = async ({ url }: { url: URL }) => {
			const res = await fetch(url)
			return { data: new Uint8Array(await res.arrayBuffer()), mediaType: res.headers.get('content-type') ?? undefined }
		}
		const { videos } = await generateVideo({ model: aiGoogle(key).video('veo-alias'), prompt: 'a cat surfing', duration: 6, poll: { intervalMs: 10 }, download })
		expect(videos).toHaveLength(1)
		expect(videos[0]!.uint8Array).toEqual(VIDEO_BYTES)
		const sent = a.requests.find((r) => r.path.endsWith(':predictLongRunning'))!
		expect(sent.path).toBe(`/v1beta/models/${VEO}:predictLongRunning`)
		expect((sent.body as { parameters: { durationSeconds: unknown } }).parameters.durationSeconds).toBe(6)
		// Polls and the download reached the upstream with the channel's key only.
		for (const r of a.requests) expect(r.headers['x-goog-api-key']).toBe('up-a')
		expect(a.requests.some((r) => r.path.startsWith('/v1beta/files/'))).toBe(true)
		expect(micros(await app.balance(accountId))).toBe(micros(5) - 6 * micros(0.15))
		expect((await usageOf(app, accountId)).map((r) => [r.endpoint, r.cost])).toEqual([['/v1beta/models/{model}:predictLongRunning', 0.9]])
	})

	it("should answer the gateway's own operation name, readable through @google/genai, with gateway video URIs", async () => {
		const { key, accountId } = await app.account(5)
		const name = await submit(key, VEO, 'a sunset', { resolution: '1080p' })
		expect(name).toMatch(new RegExp(`^models/${VEO}/operations/veo[a-z0-9]{24}$`))
		expect(a.media.operations.has(name)).toBe(false)
		// Veo's default length (8 s) at the resolution's price, plus the request fee.
		expect(micros(await app.balance(accountId))).toBe(micros(5) - micros(0.01) - 8 * micros(0.5))
		const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: app.url } })
		let op: GenerateVideosOperation = Object.assign(new GenerateVideosOperation(), { name })
		for (let i = 0; i < 5 && !op.done; i++) op = await ai.operations.getVideosOperation({ operation: op })
		expect(op.done).toBe(true)
		const uri = op.response!.generatedVideos![0]!.video!.uri!
		expect(uri).toMatch(new RegExp(`^${app.url}/v1beta/files/veo[a-z0-9]{25}:download\\?alt=media$`))
		const res = await fetch(uri, { headers: { 'x-goog-api-key': key } })
		expect(res.status).toBe(200)
		expect(res.headers.get('content-type')).toBe('video/mp4')
		expect(new Uint8Array(await res.arrayBuffer())).toEqual(VIDEO_BYTES)
		expect(await refunds(accountId)).toEqual([])
	})

	it("should keep one account's operations and videos from another (404 in Gemini's shape)", async () => {
		const owner = await app.account(5)
		const other = await app.account(5)
		const name = await submit(owner.key, VEO, 'a private clip', { durationSeconds: 4 })
		for (let i = 0; i < 3; i++) await gemini(owner.key, `/v1beta/${name}`)
		const done = await gemini(owner.key, `/v1beta/${name}`)
		expect(done.body.done).toBe(true)
		const uri: string = done.body.response.generateVideoResponse.generatedSamples[0].video.uri
		const poll = await gemini(other.key, `/v1beta/${name}`)
		expect(poll.status).toBe(404)
		expect(poll.body.error).toMatchObject({ code: 404, status: 'NOT_FOUND' })
		expect((await gemini(other.key, `/v1/${name}`)).status).toBe(404)
		const file = await fetch(`${uri}&key=${other.key}`)
		expect(file.status).toBe(404)
		expect((await file.json()).error.status).toBe('NOT_FOUND')
		expect((await fetch(`${uri}&key=${owner.key}`)).status).toBe(200)
	})

	it('should refund a failed operation exactly once, however often it is polled', async () => {
		const { key, accountId } = await app.account(5)
		const name = await submit(key, VEO, 'a storm #fail', { durationSeconds: 5 })
		expect(micros(await app.balance(accountId))).toBe(micros(5) - micros(0.01) - 5 * micros(0.4))
		let op: any
		for (let i = 0; i < 4; i++) op = (await gemini(key, `/v1beta/${name}`)).body
		expect(op).toMatchObject({ name, done: true, error: { code: 13, message: 'Video generation failed due to an internal error.' } })
		expect(op.response).toBeUndefined()
		expect(await app.balance(accountId)).toBe(5)
		expect(await refunds(accountId)).toHaveLength(1)
		const id = name.split('/').pop()!
		const download = await gemini(key, `/v1beta/files/${id}0:download?alt=media`)
		expect(download.status).toBe(409)
	})

	it('should refund an operation whose every video the safety filter withheld', async () => {
		const { key, accountId } = await app.account(5)
		const name = await submit(key, VEO, 'a crowd #filter')
		let op: any
		for (let i = 0; i < 3; i++) op = (await gemini(key, `/v1beta/${name}`)).body
		expect(op.done).toBe(true)
		expect(op.error.message).toContain('Filtered by the mock safety filter.')
		expect(await app.balance(accountId)).toBe(5)
		expect(await refunds(accountId)).toHaveLength(1)
	})
})

describe('GET /v1beta/models (Imagen and Veo)', () => {
	it("should list Imagen with Gemini's predict and Veo with predictLongRunning for @google/genai, aliases as the model they map to", async () => {
		// QA: every Gemini-shape entry said generateContent, so clients filtering chat models by it listed Imagen and Veo.
		const { key } = await app.account(1)
		const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: app.url } })
		const actions: Record<string, string[] | undefined> = {}
		for await (const m of await ai.models.list()) actions[m.name!] = m.supportedActions
		expect(actions).toEqual({
			[`models/${IMAGEN}`]: ['predict'],
			'models/imagen-alias': ['predict'],
			[`models/${VEO}`]: ['predictLongRunning'],
			'models/veo-alias': ['predictLongRunning'],
		})
		expect((await ai.models.get({ model: VEO })).supportedActions).toEqual(['predictLongRunning'])
	})
})
