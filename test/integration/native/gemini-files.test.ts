/**
 * Gemini's Files API through the gateway, with the official `@google/genai` (`ai.files.upload/get/list/delete`,
 * apiVersion v1beta) against the Gemini mock (test/mocks/gemini/files.ts): a resumable upload in several chunks relayed
 * to one Gemini channel, the file shown under the gateway's name and URI (never the vendor's, nor its key), `get`
 * until ACTIVE, `generateContent` / `streamGenerateContent` / Interactions naming it by the gateway URI routed to the
 * channel holding it under the vendor's URI, another vendor's model refused, each file its account's (others 404).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type ApiError, createPartFromUri, type File as GenaiFile, FileState, GoogleGenAI, JobState } from '@google/genai'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startGeminiMock, startOpenAIMock, type VendorMock } from '../../mocks'
import type { GeminiFileStore } from '../../mocks/gemini/files'

let gm: VendorMock & { files: GeminiFileStore }
let gm2: VendorMock & { files: GeminiFileStore }
let oa: VendorMock
let app: TestApp

const config = (): GatewayConfig => ({
	channels: [
		// Two Gemini channels of one priority: a request goes to either, unless it names a file one of them holds.
		{ name: 'gm', type: 'gemini', base_url: gm.url, api_key: 'up-gm-secret', models: ['gemini-2.5-flash'] },
		{ name: 'gm2', type: 'gemini', base_url: gm2.url, api_key: 'up-gm-secret', models: ['gemini-2.5-flash'] },
		{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['gpt-4o-mini'] },
	],
	models: [
		{ name: 'gemini-2.5-flash', input_per_mtok: 0.3, output_per_mtok: 2.5 },
		{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 },
	],
})

beforeAll(async () => {
	gm = await startGeminiMock({ apiKey: 'up-gm-secret' })
	gm2 = await startGeminiMock({ apiKey: 'up-gm-secret' })
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	app = await startTestApp({ config: config(), env: { MAX_GEMINI_FILE_BYTES: String(20 * 1024 * 1024) } })
}, 60_000)

afterAll(async () => {
	await app.close()
	await gm.stop()
	await gm2.stop()
	await oa.stop()
})

const genai = (key: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: app.url, apiVersion: 'v1beta' } })
const client = async () => {
	const a = await app.account(5)
	return { ...a, ai: genai(a.key) }
}
const failure = (p: Promise<unknown>) => p.then(
	() => undefined,
	(e) => e as ApiError,
)

/** `n` bytes that are no text (every byte value), so a relay that decoded them would break them. */
const bytes = (n: number) => {
	const b = new Uint8Array(n)
	for (let i = 0; i < n; i++) b[i] = (i * 131 + (i >> 8)) & 0xff
	return b
}
const sha256 = (b: Uint8Array) => Buffer.from(new Bun.CryptoHasher('sha256').update(b).digest()).toString('base64')
/** The mock holding the file, and its own record of it. */
const holderOf = (f: GenaiFile) => {
	for (const m of [gm, gm2]) for (const [id, held] of m.files.files) if (held.file.sha256Hash === f.sha256Hash && held.file.displayName === f.displayName) return { mock: m, other: m === gm ? gm2 : gm, id, held }
	throw new Error('no mock holds the file')
}
const generateBodies = (m: VendorMock) => m.requests.filter((r) => /:(stream)?[gG]enerateContent$/.test(r.path)).map((r) => r.body as { contents: Array<{ parts: Array<Record<string, any>> }> })

async function untilActive(ai: GoogleGenAI, name: string): Promise<GenaiFile> {
	for (let i = 0; i < 10; i++) {
		const f = await ai.files.get({ name })
		if (f.state === 'ACTIVE') return f
		await Bun.sleep(20)
	}
	throw new Error('never ACTIVE')
}

describe('Gemini Files API', () => {
	let owner: Awaited<ReturnType<typeof client>>
	let video: GenaiFile
	const data = bytes(9 * 1024 * 1024 + 12_345)

	it('should relay a chunked upload to one Gemini channel and show the file under the gateway name and URI', async () => {
		owner = await client()
		video = await owner.ai.files.upload({ file: new Blob([data], { type: 'video/mp4' }), config: { mimeType: 'video/mp4', displayName: 'clip one' } })
		const { mock, id, held } = holderOf(video)
		// Every byte reached the vendor as sent, in the SDK's two 8 MiB chunks.
		expect(held.bytes.byteLength).toBe(data.byteLength)
		expect(sha256(held.bytes)).toBe(sha256(data))
		expect(mock.requests.filter((r) => r.query.upload_id).length).toBe(2)
		expect(video.name).toMatch(/^files\/[a-z0-9]{20}$/)
		expect(video.name).not.toBe(`files/${id}`)
		expect(video.uri).toBe(`${app.url}/v1beta/${video.name}`)
		expect(video.sizeBytes).toBe(String(data.byteLength))
		expect(video.mimeType).toBe('video/mp4')
		expect(video.state).toBe(FileState.PROCESSING)
		const shown = JSON.stringify(video)
		expect(shown).not.toContain(mock.url)
		expect(shown).not.toContain('up-gm-secret')
	})

	it('should hand out an upload URL of the gateway, never the vendor URL or key', async () => {
		const res = await fetch(`${app.url}/upload/v1beta/files`, {
			method: 'POST',
			headers: { 'x-goog-api-key': owner.key, 'content-type': 'application/json', 'x-goog-upload-protocol': 'resumable', 'x-goog-upload-command': 'start', 'x-goog-upload-header-content-length': '5', 'x-goog-upload-header-content-type': 'text/plain' },
			body: JSON.stringify({ file: { displayName: 'five' } }),
		})
		expect(res.status).toBe(200)
		const url = res.headers.get('x-goog-upload-url')!
		expect(url.startsWith(`${app.url}/upload/v1beta/files?upload_id=`)).toBe(true)
		expect(url).not.toContain(gm.url.split(':').at(-1)!)
		expect(url).not.toContain(gm2.url.split(':').at(-1)!)
		expect(url).not.toContain('up-gm-secret')
		expect(JSON.stringify([...res.headers])).not.toContain('up-gm-secret')
		// The session is the account's: another account's key cannot send to it.
		const other = await app.account(1)
		const stolen = await fetch(url, { method: 'POST', headers: { 'x-goog-api-key': other.key, 'x-goog-upload-command': 'upload, finalize', 'x-goog-upload-offset': '0' }, body: 'hello' })
		expect(stolen.status).toBe(404)
		// Nor past the size it declared.
		const over = await fetch(url, { method: 'POST', headers: { 'x-goog-api-key': owner.key, 'x-goog-upload-command': 'upload, finalize', 'x-goog-upload-offset': '0' }, body: 'hello world' })
		expect(over.status).toBe(400)
		const done = await fetch(url, { method: 'POST', headers: { 'x-goog-api-key': owner.key, 'x-goog-upload-command': 'upload, finalize', 'x-goog-upload-offset': '0' }, body: 'hello' })
		expect(done.status).toBe(200)
		expect(done.headers.get('x-goog-upload-status')).toBe('final')
		const { file } = (await done.json()) as { file: GenaiFile }
		expect(file.uri).toBe(`${app.url}/v1beta/${file.name}`)
		expect(file.state).toBe(FileState.ACTIVE)
	})

	it('should refuse a file past MAX_GEMINI_FILE_BYTES before anything reaches the vendor', async () => {
		const before = gm.requests.length + gm2.requests.length
		const e = await failure(owner.ai.files.upload({ file: new Blob([bytes(20 * 1024 * 1024 + 1)]), config: { mimeType: 'application/octet-stream' } }))
		expect(e?.status).toBe(413)
		expect(gm.requests.length + gm2.requests.length).toBe(before)
	})

	it('should read the file anew until ACTIVE', async () => {
		const f = await untilActive(owner.ai, video.name!)
		expect(f.name).toBe(video.name)
		expect(f.uri).toBe(video.uri)
		expect(JSON.stringify(f)).not.toContain(holderOf(video).mock.url)
	})

	it('should route generateContent naming the file to the channel holding it, under the vendor URI', async () => {
		const { mock, other, id } = holderOf(video)
		const otherBefore = generateBodies(other).length
		for (let i = 0; i < 6; i++) {
			const r = await owner.ai.models.generateContent({ model: 'gemini-2.5-flash', contents: [{ role: 'user', parts: [createPartFromUri(video.uri!, video.mimeType!), { text: `describe the clip ${i}` }] }] })
			expect(r.text).toContain(`describe the clip ${i}`)
		}
		// Both channels serve the model at one priority: only the file pinned all six to its holder.
		expect(generateBodies(other).length).toBe(otherBefore)
		const sent = generateBodies(mock).at(-1)!
		expect(sent.contents[0]!.parts[0]!.fileData).toEqual({ fileUri: `${mock.url}/v1beta/files/${id}`, mimeType: 'video/mp4' })
		const stream = await owner.ai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: [{ role: 'user', parts: [createPartFromUri(video.uri!, 'video/mp4'), { text: 'stream it' }] }] })
		let text = ''
		for await (const c of stream) text += c.text ?? ''
		expect(text).toContain('stream it')
		expect(generateBodies(mock).at(-1)!.contents[0]!.parts[0]!.fileData.fileUri).toBe(`${mock.url}/v1beta/files/${id}`)
		// Billed by tokens as any request.
		expect(await app.balance(owner.accountId)).toBeLessThan(5)
	})

	it('should count tokens of a request naming the file on the channel holding it', async () => {
		const { mock, other, id } = holderOf(video)
		const counts = (m: VendorMock) => m.requests.filter((r) => r.path.endsWith(':countTokens'))
		const otherBefore = counts(other).length
		for (let i = 0; i < 6; i++) {
			const r = await owner.ai.models.countTokens({ model: 'gemini-2.5-flash', contents: [{ role: 'user', parts: [createPartFromUri(video.uri!, 'video/mp4'), { text: 'how long' }] }] })
			expect(r.totalTokens).toBeGreaterThan(0)
		}
		expect(counts(other).length).toBe(otherBefore)
		expect(JSON.stringify(counts(mock).at(-1)!.body)).toContain(`${mock.url}/v1beta/files/${id}`)
	})

	it('should route an interaction naming the file by uri to the channel holding it', async () => {
		const { mock, other, id } = holderOf(video)
		const otherBefore = generateBodies(other).length
		for (let i = 0; i < 6; i++) {
			const r = await owner.ai.interactions.create({ model: 'gemini-2.5-flash', input: [{ type: 'text', text: `what is in it ${i}` }, { type: 'video', uri: video.uri!, mime_type: 'video/mp4' }] } as never)
			expect((r as { status?: string }).status).toBe('completed')
		}
		expect(generateBodies(other).length).toBe(otherBefore)
		const sent = generateBodies(mock).at(-1)!
		expect(sent.contents.flatMap((c) => c.parts).find((p) => p.fileData)?.fileData.fileUri).toBe(`${mock.url}/v1beta/files/${id}`)
	})

	it('should run a batch naming the file on the channel holding it, under the vendor URI; 404 for another account, 400 for files of two channels', async () => {
		const { mock, other, id } = holderOf(video)
		const creates = (m: VendorMock) => m.requests.filter((r) => r.path.endsWith(':batchGenerateContent'))
		const sentParts = (m: VendorMock) =>
			(creates(m).at(-1)!.body as { batch: { inputConfig: { requests: { requests: Array<{ request: { contents: Array<{ parts: Array<Record<string, any>> }> } }> } } } }).batch.inputConfig.requests.requests.map(
				(r) => r.request.contents[0]!.parts[0]!,
			)
		const src = [
			{ contents: [{ role: 'user', parts: [createPartFromUri(video.uri!, 'video/mp4'), { text: 'describe the clip in a batch' }] }] },
			{ contents: [{ role: 'user', parts: [{ text: 'no file here' }] }] },
		]
		const otherBefore = creates(other).length
		let job
		// Both channels serve the model at one priority: only the file pins every batch to its holder.
		for (let i = 0; i < 4; i++) job = await owner.ai.batches.create({ model: 'gemini-2.5-flash', src })
		expect(creates(other).length).toBe(otherBefore)
		expect(sentParts(mock)[0]!.fileData).toEqual({ fileUri: `${mock.url}/v1beta/files/${id}`, mimeType: 'video/mp4' })
		expect(sentParts(mock)[1]).toEqual({ text: 'no file here' })
		const done = await owner.ai.batches.get({ name: job!.name! })
		expect(done.state).toBe(JobState.JOB_STATE_SUCCEEDED)
		expect(done.dest?.inlinedResponses?.map((r) => (r.error ? `error ${r.error.message}` : r.response?.candidates?.[0]?.content?.parts?.map((p) => p.text).join('')))).toEqual([expect.stringContaining('describe the clip in a batch'), expect.stringContaining('no file here')])

		// Another account naming the file: Gemini's 404, before anything is sent or held.
		const stranger = await client()
		const sent = creates(mock).length + creates(other).length
		const e = await failure(stranger.ai.batches.create({ model: 'gemini-2.5-flash', src }))
		expect(e?.status).toBe(404)
		expect(creates(mock).length + creates(other).length).toBe(sent)
		expect(await app.balance(stranger.accountId)).toBe(5)

		// A file on the other channel too (uploads go to either): no one key reads both, so a 400.
		const spread: GenaiFile[] = []
		while (spread.length < 30 && holderOf(spread.at(-1) ?? video).mock !== other)
			spread.push(await owner.ai.files.upload({ file: new Blob([`notes ${spread.length}`]), config: { mimeType: 'text/plain', displayName: `spread ${spread.length}` } }))
		const elsewhere = spread.at(-1)
		const both = await failure(owner.ai.batches.create({ model: 'gemini-2.5-flash', src: [...src, { contents: [{ role: 'user', parts: [createPartFromUri(elsewhere!.uri!, 'text/plain'), { text: 'and these notes' }] }] }] }))
		expect(both?.status).toBe(400)
		expect(both?.message).toContain('uploaded through different channels')
		expect(creates(mock).length + creates(other).length).toBe(sent)
		// The account's list (tested below) stays as it was.
		for (const f of spread) await owner.ai.files.delete({ name: f.name! })
	})

	it("should refuse the file for another vendor's model with a 400 before any call", async () => {
		const before = oa.requests.length
		const e = await failure(owner.ai.models.generateContent({ model: 'gpt-4o-mini', contents: [{ role: 'user', parts: [createPartFromUri(video.uri!, 'video/mp4'), { text: 'hi' }] }] }))
		expect(e?.status).toBe(400)
		expect(e?.message).toContain('Gemini')
		expect(oa.requests.length).toBe(before)
	})

	it("should keep each file its account's: others get 404 for get, delete, list and generateContent", async () => {
		const stranger = await client()
		expect((await failure(stranger.ai.files.get({ name: video.name! })))?.status).toBe(404)
		expect((await failure(stranger.ai.files.delete({ name: video.name! })))?.status).toBe(404)
		expect((await stranger.ai.files.list()).page).toEqual([])
		const e = await failure(stranger.ai.models.generateContent({ model: 'gemini-2.5-flash', contents: [{ role: 'user', parts: [createPartFromUri(video.uri!, 'video/mp4'), { text: 'hi' }] }] }))
		expect(e?.status).toBe(404)
		// Still there for its owner.
		expect((await owner.ai.files.get({ name: video.name! })).state).toBe(FileState.ACTIVE)
	})

	it("should list the account's files newest first, paged", async () => {
		const second = await owner.ai.files.upload({ file: new Blob(['some notes']), config: { mimeType: 'text/plain', displayName: 'notes' } })
		const names: string[] = []
		const pager = await owner.ai.files.list({ config: { pageSize: 2 } })
		for await (const f of pager) names.push(f.name!)
		// The 5-byte file of the raw upload above, this one and the video.
		expect(names.length).toBe(3)
		expect(names[0]).toBe(second.name!)
		expect(names.at(-1)).toBe(video.name!)
	})

	it("should serve the SDK's default /v1 paths beside OpenAI's Files API", async () => {
		const v1 = new GoogleGenAI({ apiKey: owner.key, httpOptions: { baseUrl: app.url } })
		const f = await v1.files.upload({ file: new Blob(['v1 notes']), config: { mimeType: 'text/plain', displayName: 'v1' } })
		expect(f.uri).toBe(`${app.url}/v1beta/${f.name}`)
		expect((await v1.files.get({ name: f.name! })).sizeBytes).toBe('8')
		const names: string[] = []
		for await (const x of await v1.files.list()) names.push(x.name!)
		expect(names[0]).toBe(f.name!)
		const r = await v1.models.generateContent({ model: 'gemini-2.5-flash', contents: [{ role: 'user', parts: [createPartFromUri(f.uri!, 'text/plain'), { text: 'read the notes' }] }] })
		expect(r.text).toContain('read the notes')
		await v1.files.delete({ name: f.name! })
		expect((await failure(v1.files.get({ name: f.name! })))?.status).toBe(404)
		// OpenAI's clients still get OpenAI's list there.
		const list = await fetch(`${app.url}/v1/files`, { headers: { authorization: `Bearer ${owner.key}` } })
		expect(((await list.json()) as { object: string }).object).toBe('list')
	})

	it('should delete the file at the vendor and here', async () => {
		const { mock, id } = holderOf(video)
		await owner.ai.files.delete({ name: video.name! })
		expect(mock.files.files.has(id)).toBe(false)
		expect((await failure(owner.ai.files.get({ name: video.name! })))?.status).toBe(404)
		const names: string[] = []
		for await (const f of await owner.ai.files.list()) names.push(f.name!)
		expect(names).not.toContain(video.name!)
	})
})
