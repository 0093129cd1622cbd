/**
 * A model request naming an OpenAI file by id (chat's `file` part, Responses' `input_file`), with the official
 * `openai` SDK against the OpenAI mocks (test/mocks/openai/batches.ts, which answers OpenAI's 404 for a file its
 * organisation does not hold): the file must be recorded to the caller's account (its upload, or its batch's output),
 * else 404 before any upstream call or charge; the account's own goes to the channel holding it. Vector stores and
 * containers go as written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI, { toFile } from 'openai'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { startVideoMock, type VideoMock } from '../../mocks/tasks'
import { refused } from './setup'

let held: VendorMock
let other: VendorMock
let video: VideoMock
let app: TestApp

beforeAll(async () => {
	held = await startOpenAIMock({ apiKey: 'up-held' })
	other = await startOpenAIMock({ apiKey: 'up-other' })
	video = await startVideoMock({ apiKey: 'up-video' })
	app = await startTestApp({
		config: {
			channels: [
				// Tried first for gpt-4o-mini, but another key: it holds none of the files uploaded to `held`.
				{ name: 'other', type: 'openai', base_url: other.url, api_key: 'up-other', models: ['gpt-4o-mini'], priority: 0 },
				// The only channel of gpt-4.1, so uploads for it land here.
				{ name: 'held', type: 'openai', base_url: held.url, api_key: 'up-held', models: ['gpt-4o-mini', 'gpt-4.1', 'gpt-image-1'], priority: 1 },
				{ name: 'vid', type: 'video', base_url: video.url, api_key: 'up-video', models: ['sora-2'] },
				{ name: 'only-41', type: 'openai', base_url: other.url, api_key: 'up-other', models: ['gpt-4.1-nano'] },
			],
			models: [
				{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 },
				{ name: 'gpt-4.1', input_per_mtok: 2, output_per_mtok: 8 },
				{ name: 'gpt-4.1-nano', input_per_mtok: 1, output_per_mtok: 2 },
				{ name: 'gpt-image-1', per_image: 0.04 },
				{ name: 'sora-2', per_second: 0.1 },
			] as never,
		},
	})
}, 60_000)

afterAll(async () => {
	await app.close()
	await held.stop()
	await other.stop()
	await video.stop()
})

const client = async (balance = 1) => {
	const a = await app.account(balance)
	return { ...a, openai: new OpenAI({ apiKey: a.key, baseURL: `${app.url}/v1`, maxRetries: 0 }) }
}

/** Account A's batch input file and the output file its batch wrote. */
async function filesOf(a: Awaited<ReturnType<typeof client>>) {
	const line = { custom_id: 'one', method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4.1', messages: [{ role: 'user', content: 'hello' }], max_tokens: 10 } }
	const input = await a.openai.files.create({ file: await toFile(Buffer.from(JSON.stringify(line) + '\n'), 'batch.jsonl'), purpose: 'batch' })
	const batch = await a.openai.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' })
	const done = await a.openai.batches.retrieve(batch.id)
	expect(done.status).toBe('completed')
	return { input: input.id, output: done.output_file_id! }
}

const chatWith = (openai: OpenAI, fileId: string, stream: boolean, model = 'gpt-4o-mini') =>
	openai.chat.completions
		.create({ model, stream, messages: [{ role: 'user', content: [{ type: 'text', text: 'read this' }, { type: 'file', file: { file_id: fileId } }] }] })
		.then(async (r) => {
			if (stream) for await (const _ of r as AsyncIterable<unknown>);
			return r
		})
const responsesWith = (openai: OpenAI, fileId: string, stream: boolean, model = 'gpt-4o-mini') =>
	openai.responses
		.create({ model, stream, input: [{ role: 'user', content: [{ type: 'input_text', text: 'read this' }, { type: 'input_file', file_id: fileId }] }] })
		.then(async (r) => {
			if (stream) for await (const _ of r as AsyncIterable<unknown>);
			return r
		})

const sent = () => held.requests.length + other.requests.length
/** The second content part of the first message (or input item) the channel holding the files was last sent. */
const lastPart = (field: 'messages' | 'input') => (held.requests.at(-1)!.body as Record<string, Array<{ content: unknown[] }>>)[field]![0]!.content[1]

describe('OpenAI file ids in model requests', () => {
	let a: Awaited<ReturnType<typeof client>>
	let files: { input: string; output: string }
	beforeAll(async () => {
		a = await client(1)
		files = await filesOf(a)
	})

	it("should answer 404 to another account naming A's uploaded or batch output file, streamed or not, before any upstream call or charge", async () => {
		const b = await client(1)
		const before = sent()
		for (const id of [files.input, files.output])
			for (const stream of [false, true]) {
				for (const [where, call] of [
					['messages[0].content[1].file.file_id', () => chatWith(b.openai, id, stream)],
					['input[0].content[1].file_id', () => responsesWith(b.openai, id, stream)],
				] as const) {
					const err = await refused(call())
					expect(err?.status).toBe(404)
					expect(err?.error).toMatchObject({ message: `No such File object: ${id}`, type: 'invalid_request_error', param: where })
				}
			}
		expect(sent()).toBe(before)
		expect(await app.balance(b.accountId)).toBe(1)
	})

	it('should answer 404 for a file id recorded to no account (unknown, or uploaded by the operator with the channel key)', async () => {
		const before = sent()
		const balance = await app.balance(a.accountId)
		for (const stream of [false, true]) {
			expect((await refused(chatWith(a.openai, 'file-unknown', stream)))?.status).toBe(404)
			expect((await refused(responsesWith(a.openai, 'file-unknown', stream)))?.status).toBe(404)
		}
		expect(sent()).toBe(before)
		expect(await app.balance(a.accountId)).toBe(balance)
	})

	it("should send the account's own files upstream, to the channel holding them, streamed or not", async () => {
		for (const id of [files.input, files.output])
			for (const stream of [false, true]) {
				const before = { held: held.requests.length, other: other.requests.length }
				await chatWith(a.openai, id, stream)
				expect(lastPart('messages')).toEqual({ type: 'file', file: { file_id: id } })
				await responsesWith(a.openai, id, stream)
				expect(lastPart('input')).toEqual({ type: 'input_file', file_id: id })
				expect(held.requests.length).toBe(before.held + 2)
				expect(other.requests.length).toBe(before.other)
			}
	})

	it("should hold input token counting and compaction to the same rule: another account's file is 404, the account's own goes to its channel", async () => {
		const b = await client(1)
		const input = (id: string) => [{ role: 'user' as const, content: [{ type: 'input_text' as const, text: 'read this' }, { type: 'input_file' as const, file_id: id }] }]
		const before = sent()
		for (const call of [() => b.openai.responses.inputTokens.count({ model: 'gpt-4o-mini', input: input(files.output) }), () => b.openai.responses.compact({ model: 'gpt-4o-mini', input: input(files.output) })]) {
			const err = await refused(call())
			expect(err?.status).toBe(404)
			expect(err?.error).toMatchObject({ message: `No such File object: ${files.output}`, param: 'input[0].content[1].file_id' })
		}
		expect(sent()).toBe(before)
		expect(await app.balance(b.accountId)).toBe(1)

		const counted = await a.openai.responses.inputTokens.count({ model: 'gpt-4o-mini', input: input(files.output) })
		expect(counted.input_tokens).toBeGreaterThan(0)
		expect(held.requests.at(-1)!.path).toBe('/v1/responses/input_tokens')
		await a.openai.responses.compact({ model: 'gpt-4o-mini', input: input(files.output) })
		expect(held.requests.at(-1)!.path).toBe('/v1/responses/compact')
		expect(lastPart('input')).toEqual({ type: 'input_file', file_id: files.output })
		expect(sent()).toBe(before + 2)
	})

	it("should refuse a batch input file whose lines name another account's file (404) before it is uploaded, and take one naming the account's own", async () => {
		const b = await client(1)
		const line = (id: string) => ({ custom_id: 'named', method: 'POST', url: '/v1/responses', body: { model: 'gpt-4.1', max_output_tokens: 10, input: [{ role: 'user', content: [{ type: 'input_file', file_id: id }] }] } })
		const upload = async (who: typeof a, id: string) => who.openai.files.create({ file: await toFile(Buffer.from(JSON.stringify(line(id)) + '\n'), 'batch.jsonl'), purpose: 'batch' })
		const before = sent()
		const err = await refused(upload(b, files.output))
		expect(err?.status).toBe(404)
		expect(err?.error).toMatchObject({ message: `No such File object: ${files.output} (request 'named')`, param: 'input[0].content[0].file_id' })
		expect(sent()).toBe(before)
		expect((await b.openai.files.list()).data).toEqual([])
		expect((await upload(a, files.output)).purpose).toBe('batch')
	})

	it('should refuse with 400 a model the holding channel does not serve, before any upstream call', async () => {
		const before = sent()
		const err = await refused(chatWith(a.openai, files.output, false, 'gpt-4.1-nano'))
		expect(err?.status).toBe(400)
		expect(err?.message).toContain('does not serve the model "gpt-4.1-nano"')
		expect(sent()).toBe(before)
	})

	it("should answer 404 to another account's file named by an image edit or a video's input_reference, before any upstream call or charge", async () => {
		const b = await client(1)
		const before = sent() + video.requests.length
		const post = (path: string, body: unknown) => fetch(`${app.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${b.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
		for (const [path, body, param] of [
			['/v1/images/edits', { model: 'gpt-image-1', prompt: 'blue', images: [{ image_url: 'https://example.com/a.png' }, { file_id: files.output }] }, 'images[1].file_id'],
			['/v1/images/edits', { model: 'gpt-image-1', prompt: 'blue', images: [{ image_url: 'https://example.com/a.png' }], mask: { file_id: files.output } }, 'mask.file_id'],
			['/v1/video/generations', { model: 'sora-2', prompt: 'a dog', input_reference: { file_id: files.output } }, 'input_reference.file_id'],
		] as const) {
			const res = await post(path, body)
			expect(res.status).toBe(404)
			expect(((await res.json()) as { error: unknown }).error).toMatchObject({ message: `No such File object: ${files.output}`, param })
		}
		expect(sent() + video.requests.length).toBe(before)
		expect(await app.balance(b.accountId)).toBe(1)

		const mine = await fetch(`${app.url}/v1/images/edits`, {
			method: 'POST',
			headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
			body: JSON.stringify({ model: 'gpt-image-1', prompt: 'blue', images: [{ file_id: files.input }] }),
		})
		expect(mine.status).toBe(200)
		expect((held.requests.at(-1)!.body as { images: unknown }).images).toEqual([{ file_id: files.input }])
	})

	it("should send vector store and container ids as written (the operator's and the account's own), and refuse a container's file not the caller's", async () => {
		const before = sent()
		const search = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'find it', tools: [{ type: 'file_search', vector_store_ids: ['vs_operator'] }] })
		expect(search.status).toBe('completed')
		const upstreamTools = [held, other].flatMap((m) => m.requests.map((r) => (r.body as { tools?: unknown } | undefined)?.tools))
		expect(upstreamTools).toContainEqual([{ type: 'file_search', vector_store_ids: ['vs_operator'] }])
		const code = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'run it', tools: [{ type: 'code_interpreter', container: 'cntr_mine' }] })
		expect(code.status).toBe('completed')
		expect(sent()).toBe(before + 2)
		const theirs = await refused(a.openai.responses.create({ model: 'gpt-4o-mini', input: 'run it', tools: [{ type: 'code_interpreter', container: { type: 'auto', file_ids: ['file-unknown'] } }] }))
		expect(theirs?.status).toBe(404)
		expect(theirs?.error).toMatchObject({ message: 'No such File object: file-unknown', param: 'tools[0].container.file_ids[0]' })
		expect(sent()).toBe(before + 2)
	})
})
