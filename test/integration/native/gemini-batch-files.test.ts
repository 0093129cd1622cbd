/**
 * Gemini's Batch Mode from an input file through the gateway, with the official `@google/genai` (`ai.files.upload` of
 * a JSONL file, `ai.batches.create({src: fileName})`, `ai.batches.get`, `ai.files.download`) against the Gemini mock
 * (test/mocks/gemini/batches.ts, files.ts): the file's lines bounded from the bytes the gateway kept as they passed
 * (Google gives no upload back) and held at batch prices; when the batch ends its responses file read from the channel,
 * each line billed from its `usageMetadata` and the rest refunded, once, across two instances; the responses file
 * downloaded under the gateway's name; each file and batch its account's. Also Google's snake_case file references
 * (`file_data.file_uri`) rewritten to the vendor's URI.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtemp, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type ApiError, type File as GenaiFile, GoogleGenAI, JobState } from '@google/genai'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { startTaskPoller } from '../../../src/tasks/poller'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startGeminiMock, type VendorMock } from '../../mocks'
import type { GeminiFileStore } from '../../mocks/gemini/files'
import { type Cluster, allUsage, clients, startCluster } from '../admin/instances'

let mock: VendorMock & { files: GeminiFileStore }
let app: TestApp

/** Batch prices of gemini-2.5-flash, micro-USD per million tokens: half of $0.30 / $2.50 / $0.075. */
const [IN, OUT, CACHED] = [150_000, 1_250_000, 37_500]

const config = (gm: string): GatewayConfig => ({
	channels: [{ name: 'gm', type: 'gemini', base_url: gm, api_key: 'up-gm', models: ['gemini-2.5-flash', 'qa-gemini'], model_map: { 'qa-gemini': 'gemini-2.5-flash' } }],
	models: [
		{ name: 'gemini-2.5-flash', input_per_mtok: 0.3, output_per_mtok: 2.5, cache_read_per_mtok: 0.075 },
		{ name: 'qa-gemini', input_per_mtok: 0.3, output_per_mtok: 2.5 },
	],
})

beforeAll(async () => {
	mock = await startGeminiMock({ apiKey: 'up-gm' })
	app = await startTestApp({ config: config(mock.url) })
}, 60_000)

afterAll(async () => {
	await app.close()
	await mock.stop()
})

const genai = (url: string, key: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: url, apiVersion: 'v1beta' } })
const client = async (balance = 1) => {
	const a = await app.account(balance)
	return { ...a, ai: genai(app.url, a.key) }
}
const failure = (p: Promise<unknown>) => p.then(
	() => undefined,
	(e) => e as ApiError,
)
const said = (e: ApiError | undefined) => JSON.parse(e?.message ?? '{}') as { error: { code: number; message: string; status: string } }
const micro = async (accountId: number) => Math.round((await app.balance(accountId)) * 1e6)
const rowsOf = async (accountId: number) => (await app.admin(`/api/usage?account_id=${accountId}&limit=100`)).body.data as Array<Record<string, number | string>>

type Line = { key: string; request: Record<string, unknown> }
const line = (key: string, text: string, generationConfig: Record<string, unknown> = { maxOutputTokens: 100 }): Line => ({ key, request: { contents: [{ role: 'user', parts: [{ text }] }], generationConfig } })
const jsonl = (lines: Line[]) => lines.map((l) => JSON.stringify(l)).join('\n') + '\n'
const upload = (ai: GoogleGenAI, text: string, mimeType = 'jsonl') => ai.files.upload({ file: new Blob([text]), config: { mimeType, displayName: 'batch input' } })

/** The bound of a file's lines: every byte of a request at the batch input price, its cap × candidates at the output price. */
const bound = (lines: Line[]) =>
	lines.reduce((n, { request }) => {
		const g = (request.generation_config ?? request.generationConfig) as Record<string, number>
		const cap = (g.max_output_tokens ?? g.maxOutputTokens)! * (g.candidate_count ?? g.candidateCount ?? 1)
		return n + Math.round((Buffer.byteLength(JSON.stringify(request)) * IN) / 1e6) + Math.round((cap * OUT) / 1e6) + 1
	}, 0)

type Usage = { promptTokenCount?: number; cachedContentTokenCount?: number; candidatesTokenCount?: number; thoughtsTokenCount?: number }
type Answer = { key: string; response?: { usageMetadata: Usage; modelVersion?: string; candidates: Array<{ content: { parts: Array<{ text?: string; thought?: boolean }> } }> }; error?: { code: number } }
/** micro-USD of the answered lines at batch prices, each rounded as the ledger rounds. */
const costOf = (answers: Answer[]) =>
	answers.reduce((n, a) => {
		const u = a.response?.usageMetadata
		if (!u) return n
		const cached = u.cachedContentTokenCount ?? 0
		return n + Math.round((((u.promptTokenCount ?? 0) - cached) * IN + cached * CACHED + ((u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0)) * OUT) / 1e6)
	}, 0)

/** The responses file, as `ai.files.download` writes it. */
async function download(ai: GoogleGenAI, name: string): Promise<Answer[]> {
	const path = join(await mkdtemp(join(tmpdir(), 'gbatch-')), 'out.jsonl')
	await ai.files.download({ file: name, downloadPath: path })
	return (await readFile(path, 'utf8')).split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Answer)
}
const lastCreate = () => mock.requests.filter((r) => r.path.endsWith(':batchGenerateContent')).at(-1)
const vendorIdOf = (f: GenaiFile) => [...mock.files.files.entries()].find(([, held]) => held.file.displayName === f.displayName && held.file.sizeBytes === f.sizeBytes)![0]

describe('Gemini batches from an input file', () => {
	it("should hold the file's bound at batch prices, settle each line from the responses file and let the client download it under the gateway's names", async () => {
		const a = await client(1)
		const lines = [
			line('first', 'hello there batch file'),
			line('cached', 'a cached prompt #cache with enough words to cover the cache', { maxOutputTokens: 50 }),
			// Google's snake_case: its cap and candidates are bounded as Google reads them.
			line('snake', 'think in snake case', { max_output_tokens: 300, candidate_count: 2, thinking_config: { include_thoughts: true, thinking_budget: 200 } }),
		]
		const file = await upload(a.ai, jsonl(lines))
		expect(file.name).toMatch(/^files\/[a-z0-9]{20}$/)
		const created = await a.ai.batches.create({ model: 'gemini-2.5-flash', src: file.name!, config: { displayName: 'from a file' } })
		expect(created).toMatchObject({ displayName: 'from a file', state: JobState.JOB_STATE_PENDING, model: 'models/gemini-2.5-flash' })
		expect(created.name).toMatch(/^batches\/gemini_batch_/)
		// The vendor runs its own copy of the file, named as it knows it.
		const vendorId = vendorIdOf(file)
		expect((lastCreate()!.body as { batch: { inputConfig: unknown } }).batch.inputConfig).toEqual({ fileName: `files/${vendorId}` })
		expect(await micro(a.accountId)).toBe(1e6 - bound(lines))

		const raw = await (await fetch(`${app.url}/v1beta/${created.name}`, { headers: { 'x-goog-api-key': a.key } })).text()
		const done = await a.ai.batches.get({ name: created.name! })
		expect(done.state).toBe(JobState.JOB_STATE_SUCCEEDED)
		const vendorOut = [...mock.files.files.keys()].find((k) => k.startsWith('batch-'))!
		expect(raw).not.toContain(vendorOut)
		expect(raw).not.toContain(vendorId)
		expect(JSON.parse(raw).metadata.inputConfig).toEqual({ fileName: file.name })
		const out = done.dest?.fileName
		expect(out).toMatch(/^files\/[a-z0-9]{20}$/)

		const answers = await download(a.ai, out!)
		expect(answers.map((x) => [x.key, x.response?.candidates[0]!.content.parts.filter((p) => !p.thought).map((p) => p.text).join('')])).toEqual([
			['first', 'Hello! You said: hello there batch file'],
			['cached', 'Hello! You said: a cached prompt #cache with enough words to cover the cache'],
			['snake', 'Hello! You said: think in snake case'],
		])
		expect(answers[1]!.response!.usageMetadata.cachedContentTokenCount).toBeGreaterThan(0)
		expect(answers[2]!.response!.usageMetadata.thoughtsTokenCount).toBeGreaterThan(0)
		const cost = costOf(answers)
		expect(cost).toBeGreaterThan(0)
		expect(await micro(a.accountId)).toBe(1e6 - cost)
		// Settled once: asking again changes nothing.
		await a.ai.batches.get({ name: created.name! })
		expect(await micro(a.accountId)).toBe(1e6 - cost)
		const rows = await rowsOf(a.accountId)
		expect(Math.round(rows.reduce((n, r) => n + Number(r.cost), 0) * 1e6)).toBe(cost)
		expect(rows.reduce((n, r) => n + Number(r.input_tokens), 0)).toBe(answers.reduce((n, x) => n + (x.response!.usageMetadata.promptTokenCount ?? 0), 0))

		// Google's REST download path serves the same bytes; the file is the account's, under the gateway's name.
		const rest = await fetch(`${app.url}/download/v1beta/${out}:download?alt=media`, { headers: { 'x-goog-api-key': a.key } })
		expect(rest.status).toBe(200)
		expect((await rest.text()).trim().split('\n').map((l) => JSON.parse(l))).toEqual(answers)
		const shown = await a.ai.files.get({ name: out! })
		expect(shown.name).toBe(out)
		expect(JSON.stringify(shown)).not.toContain(vendorOut)
	})

	it("should answer a Google client's errors in Gemini's shape on the paths it shares with OpenAI's clients and on the download path", async () => {
		const a = await client(1)
		// @google/genai's default apiVersion is `v1`: its files and models calls land on OpenAI's paths.
		const v1 = new GoogleGenAI({ apiKey: a.key, httpOptions: { baseUrl: app.url } })
		const missing = await failure(v1.files.get({ name: 'files/nosuchfile' }))
		expect(missing?.status).toBe(404)
		expect(said(missing).error).toMatchObject({ code: 404, status: 'NOT_FOUND' })
		const badKey = await failure(new GoogleGenAI({ apiKey: 'sk-not-a-key', httpOptions: { baseUrl: app.url } }).models.get({ model: 'gemini-2.5-flash' }))
		// A key refused as Google refuses one: 400 INVALID_ARGUMENT, ErrorInfo reason API_KEY_INVALID.
		const keyInvalid = { code: 400, status: 'INVALID_ARGUMENT', details: expect.arrayContaining([expect.objectContaining({ reason: 'API_KEY_INVALID' })]) }
		expect(badKey?.status).toBe(400)
		expect(said(badKey).error).toMatchObject(keyInvalid)
		const rest = async (path: string, headers: Record<string, string>) => (await fetch(app.url + path, { headers })).json() as Promise<{ error: Record<string, unknown> }>
		expect((await rest('/v1/files', { 'x-goog-api-key': 'sk-not-a-key' })).error).toMatchObject(keyInvalid)
		expect((await rest('/download/v1beta/files/nosuchfile:download?alt=media', { 'x-goog-api-key': a.key })).error).toMatchObject({ code: 404, status: 'NOT_FOUND' })
		const noKey = (await rest('/download/v1beta/files/nosuchfile:download?alt=media', {})).error
		expect(noKey).toMatchObject({ code: 403, status: 'PERMISSION_DENIED' })
		expect(String(noKey.message)).not.toContain('Bearer')
		// OpenAI's clients on the same paths keep OpenAI's shape.
		const openai = await rest('/v1/files/file-nosuch', { authorization: `Bearer ${a.key}` })
		expect(openai.error).toMatchObject({ type: 'invalid_request_error' })
	})

	it("should run a model_map alias's file batch under the channel's name and show the client only its own, in the batch and in the responses file", async () => {
		const a = await client(1)
		const lines = [line('one', 'an alias of the channel', { maxOutputTokens: 40 }), line('two', 'and another line', { maxOutputTokens: 40 })]
		const b = await a.ai.batches.create({ model: 'qa-gemini', src: (await upload(a.ai, jsonl(lines))).name! })
		expect(lastCreate()!.path).toBe('/v1beta/models/gemini-2.5-flash:batchGenerateContent')
		const raw = await (await fetch(`${app.url}/v1beta/${b.name}`, { headers: { 'x-goog-api-key': a.key } })).text()
		expect(raw).not.toContain('gemini-2.5-flash')
		const out = (await a.ai.batches.get({ name: b.name! })).dest!.fileName!
		// Read anew (files.get) before the download: the record keeps what the download needs.
		await a.ai.files.get({ name: out })
		const answers = await download(a.ai, out)
		expect(answers.map((x) => x.response?.modelVersion)).toEqual(['qa-gemini', 'qa-gemini'])
		expect(await micro(a.accountId)).toBe(1e6 - costOf(answers))
		expect(new Set((await rowsOf(a.accountId)).map((r) => r.model))).toEqual(new Set(['qa-gemini']))
	})

	it('should refund all of a file batch that expired, and bill a cancelled one only for the lines it answered', async () => {
		const a = await client(1)
		const late = [line('x', 'ran out of time #expire'), line('y', 'this one too')]
		const expired = await a.ai.batches.create({ model: 'gemini-2.5-flash', src: (await upload(a.ai, jsonl(late))).name! })
		expect(await micro(a.accountId)).toBe(1e6 - bound(late))
		expect((await a.ai.batches.get({ name: expired.name! })).state).toBe(JobState.JOB_STATE_EXPIRED)
		expect(await micro(a.accountId)).toBe(1e6)

		const b = await client(1)
		const held = [line('one', 'answered before the cancel #hold'), line('two', 'never run'), line('three', 'never run either')]
		const batch = await b.ai.batches.create({ model: 'gemini-2.5-flash', src: (await upload(b.ai, jsonl(held))).name! })
		expect((await b.ai.batches.get({ name: batch.name! })).state).toBe(JobState.JOB_STATE_RUNNING)
		expect(await micro(b.accountId)).toBe(1e6 - bound(held))
		await b.ai.batches.cancel({ name: batch.name! })
		const done = await b.ai.batches.get({ name: batch.name! })
		expect(done.state).toBe(JobState.JOB_STATE_CANCELLED)
		const answers = await download(b.ai, done.dest!.fileName!)
		expect(answers.map((x) => x.key)).toEqual(['one'])
		expect(await micro(b.accountId)).toBe(1e6 - costOf(answers))
		expect((await rowsOf(b.accountId)).some((r) => r.end_reason === 'cancelled')).toBe(true)
	})

	it("should refuse another account's file (404, in Gemini's shape) and keep its batches and responses files from other accounts", async () => {
		const a = await client(1)
		const b = await client(1)
		const file = await upload(a.ai, jsonl([line('mine', 'private input')]))
		const before = mock.requests.length
		const stolen = await failure(b.ai.batches.create({ model: 'gemini-2.5-flash', src: file.name! }))
		expect(stolen?.status).toBe(404)
		expect(said(stolen).error.status).toBe('NOT_FOUND')
		expect(mock.requests.length).toBe(before)
		expect(await micro(b.accountId)).toBe(1e6)

		const batch = await a.ai.batches.create({ model: 'gemini-2.5-flash', src: file.name! })
		const out = (await a.ai.batches.get({ name: batch.name! })).dest!.fileName!
		expect((await failure(b.ai.batches.get({ name: batch.name! })))?.status).toBe(404)
		expect((await failure(b.ai.files.get({ name: out })))?.status).toBe(404)
		const other = await fetch(`${app.url}/v1beta/${out}:download?alt=media`, { headers: { 'x-goog-api-key': b.key } })
		expect(other.status).toBe(404)
		expect((await a.ai.files.list()).page.map((f) => f.name)).toContain(out)
		expect((await b.ai.files.list()).page).toEqual([])
	})

	it('should refuse, before anything is sent or held, a file not kept as a batch input, a line that is no request, one naming an uploaded file by gateway URI, and a model the channel renames', async () => {
		const a = await client(1)
		const before = mock.requests.filter((r) => r.path.endsWith(':batchGenerateContent')).length
		const create = (name: string, model = 'gemini-2.5-flash') => failure(a.ai.batches.create({ model, src: name }))

		const plain = await create((await upload(a.ai, jsonl([line('k', 'declared as text')]), 'text/plain')).name!)
		expect(plain?.status).toBe(400)
		expect(said(plain).error.message).toContain('mimeType "jsonl"')

		const broken = await create((await upload(a.ai, `${JSON.stringify(line('ok', 'fine'))}\nnot json\n`)).name!)
		expect(broken?.status).toBe(400)
		expect(said(broken).error.message).toContain('Line 2')

		const image = await upload(a.ai, 'not really an image', 'image/png')
		const naming = { key: 'img', request: { contents: [{ role: 'user', parts: [{ text: 'describe' }, { fileData: { fileUri: image.uri, mimeType: 'image/png' } }] }], generationConfig: { maxOutputTokens: 10 } } }
		const refs = await create((await upload(a.ai, jsonl([naming]))).name!)
		expect(refs?.status).toBe(400)
		expect(said(refs).error.message).toContain('inline')

		const renamed = await create((await upload(a.ai, jsonl([{ key: 'm', request: { ...line('m', 'aliased').request, model: 'models/qa-gemini' } }]))).name!, 'qa-gemini')
		expect(renamed?.status).toBe(400)
		expect(said(renamed).error.message).toContain('"gemini-2.5-flash"')

		expect(mock.requests.filter((r) => r.path.endsWith(':batchGenerateContent')).length).toBe(before)
		expect(await micro(a.accountId)).toBe(1e6)
	})

	it("should refuse a file batch the balance cannot cover, holding nothing and sending nothing", async () => {
		const lines = [line('big', 'needs a large cap', { maxOutputTokens: 100_000 })]
		const poor = await client((bound(lines) - 1) / 1e6)
		const name = (await upload(poor.ai, jsonl(lines))).name!
		const before = mock.requests.length
		expect((await failure(poor.ai.batches.create({ model: 'gemini-2.5-flash', src: name })))?.status).toBe(402)
		expect(mock.requests.length).toBe(before)
		expect(await micro(poor.accountId)).toBe(bound(lines) - 1)
	})

	it('should settle a file batch found ended by the background poller', async () => {
		const a = await client(1)
		const b = await a.ai.batches.create({ model: 'gemini-2.5-flash', src: (await upload(a.ai, jsonl([line('p', 'nobody polls this one')]))).name! })
		const poller = startTaskPoller(app.svc, { intervalMs: 3_600_000, idleMs: 0 })
		try {
			expect(await poller.tick()).toBeGreaterThan(0)
		} finally {
			await poller.stop()
		}
		const done = await a.ai.batches.get({ name: b.name! })
		expect(await micro(a.accountId)).toBe(1e6 - costOf(await download(a.ai, done.dest!.fileName!)))
	})
})

describe("Google's snake_case file references", () => {
	it('should send `file_data.file_uri` naming an upload to its channel under the vendor URI, in generateContent and in inline batch requests', async () => {
		const a = await client(1)
		const image = await upload(a.ai, 'bytes of a picture', 'image/png')
		const vendorUri = `${mock.url}/v1beta/files/${vendorIdOf(image)}`
		const body = { contents: [{ role: 'user', parts: [{ text: 'what is this' }, { file_data: { file_uri: image.uri, mime_type: 'image/png' } }] }] }
		const res = await fetch(`${app.url}/v1beta/models/gemini-2.5-flash:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': a.key, 'content-type': 'application/json' }, body: JSON.stringify(body) })
		expect(res.status).toBe(200)
		const sent = mock.requests.filter((r) => r.path.endsWith(':generateContent')).at(-1)!.body as typeof body
		expect(sent.contents[0]!.parts[1]).toEqual({ file_data: { file_uri: vendorUri, mime_type: 'image/png' } })

		const extraBody = { batch: { inputConfig: { requests: { requests: [{ request: { contents: body.contents, generationConfig: { maxOutputTokens: 10 } } }] } } } }
		await a.ai.batches.create({ model: 'gemini-2.5-flash', src: [{ contents: [{ role: 'user', parts: [{ text: 'replaced' }] }] }], config: { httpOptions: { extraBody } } })
		const inline = (lastCreate()!.body as { batch: { inputConfig: { requests: { requests: Array<{ request: typeof body }> } } } }).batch.inputConfig.requests.requests[0]!.request
		expect(inline.contents[0]!.parts[1]).toEqual({ file_data: { file_uri: vendorUri, mime_type: 'image/png' } })

		// Another account's upload is unknown, in either spelling.
		const b = await client(1)
		const stolen = await fetch(`${app.url}/v1beta/models/gemini-2.5-flash:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': b.key, 'content-type': 'application/json' }, body: JSON.stringify(body) })
		expect(stolen.status).toBe(404)
	})
})

describe('two instances', () => {
	let cl: Cluster
	beforeAll(async () => {
		cl = await startCluster(2, config(mock.url))
	}, 60_000)
	afterAll(() => cl.close())

	it('should settle a file batch exactly once when both instances and their pollers see it end together', async () => {
		const a = await cl.account(1)
		const [one, two] = cl.nodes.map((n) => clients(n, a.key).gemini)
		const name = (await upload(one!, jsonl([line('a', 'seen by both instances'), line('b', 'a cached line #cache with words enough to cover it')]))).name!
		const b = await two!.batches.create({ model: 'gemini-2.5-flash', src: name })
		const pollers = cl.nodes.map((n) => startTaskPoller(n.svc, { intervalMs: 3_600_000, idleMs: 0 }))
		try {
			await Promise.all([one!.batches.get({ name: b.name! }), two!.batches.get({ name: b.name! }), ...pollers.map((p) => p.tick()), two!.batches.get({ name: b.name! })])
		} finally {
			for (const p of pollers) await p.stop()
		}
		const cost = costOf(await download(one!, (await two!.batches.get({ name: b.name! })).dest!.fileName!))
		for (const n of cl.nodes) await n.svc.ledger.flush()
		const balance = Math.round((await cl.nodes[1]!.admin(`/api/accounts/${a.accountId}`)).body.balance * 1e6)
		expect(balance).toBe(1e6 - cost)
		const rows = await allUsage(cl.nodes[0]!, a.accountId)
		expect(rows.filter((r) => String(r.request_id).endsWith(':settle'))).toHaveLength(1)
		expect(Math.round(rows.reduce((n, r) => n + Number(r.cost), 0) * 1e6)).toBe(cost)
	})
})
