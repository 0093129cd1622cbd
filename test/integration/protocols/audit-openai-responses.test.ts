/**
 * The Responses API as an `openai` SDK user sees it with Claude and Gemini models, against the reference
 * (https://platform.openai.com/docs/api-reference/responses/create and /responses/object): sampling settings out of
 * OpenAI's ranges are a 400 naming the field, as they are on chat completions, rather than reaching the vendor (Claude
 * clamps a temperature of 9 to 1, Gemini refuses it in its own words); and the `store` a Response object carries says
 * whether the gateway kept it, so a stored answer that `GET /v1/responses/{id}` returns does not claim `store: false`;
 * and an `input_file` given as `file_data` (a base64 data URL, https://platform.openai.com/docs/guides/pdf-files)
 * reaches Claude as a document and Gemini as inline data, as chat completions' `file` part does, rather than a 400;
 * and an `input_file` given by `file_url` (what the Vercel AI SDK's Responses model sends for a PDF URL) reaches Claude as
 * a `url` document and Gemini inline (the gateway fetches it under its URL guard), rather than a 400 saying it needs OpenAI;
 * and `include: ["message.output_text.logprobs"]` with `top_logprobs` gives a Gemini answer's log probabilities on its
 * `output_text` part and each `response.output_text.delta`, and is refused for Claude, which has none, as on chat;
 * and an answer cut by `max_output_tokens` marks the message it cut `incomplete`, as OpenAI does, not `completed`;
 * and `truncation`, `safety_identifier` and `prompt_cache_key` come back on the Response object as sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createOpenAI } from '@ai-sdk/openai'
import { generateText } from 'ai'
import OpenAI from 'openai'
import { label, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix } from './harness'

// The SDK warns on stderr about model names it does not know (ours are aliases).
;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false

/** `%PDF-1.4` and a page object, served by `docs` at /report.pdf for the `file_url` tests. */
const PDF_BYTES = Buffer.from('%PDF-1.4\n1 0 obj <</Type /Page>> endobj\n%%EOF')

let m: Matrix
let docs: ReturnType<typeof Bun.serve>
beforeAll(async () => {
	docs = Bun.serve({
		hostname: '127.0.0.1',
		port: 0,
		fetch: (req) => (new URL(req.url).pathname === '/report.pdf' ? new Response(PDF_BYTES, { headers: { 'content-type': 'application/pdf' } }) : new Response('not found', { status: 404 })),
	})
	// The document server listens on loopback, which the URL guard lets the gateway fetch only when told to.
	m = await startMatrix({ env: { FETCH_ALLOW: '127.0.0.1' } })
}, SETUP_MS)
afterAll(async () => {
	await m.close()
	await docs.stop(true)
})

type Up = 'anthropic' | 'gemini'
/** `store` as the Response object carries it (the SDK's type leaves it out; the API sends it). */
const storeOf = (r: object) => (r as { store?: boolean }).store

const BOTH: Array<[Up, boolean]> = (['anthropic', 'gemini'] as Up[]).flatMap((u) => [[u, false] as [Up, boolean], [u, true] as [Up, boolean]])

describe('sampling settings out of range', () => {
	for (const [up, stream] of BOTH)
		it(`should answer 400 naming the field and call no vendor (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const before = m.mocks[up].requests.length
			for (const [param, body] of [
				['temperature', { temperature: 9 }],
				['temperature', { temperature: -1 }],
				['top_p', { top_p: 1.5 }],
				['top_logprobs', { top_logprobs: 21 }],
			] as const) {
				const err = await acct.openai.responses.create({ model: MODEL[up], input: 'hi', stream, ...body } as OpenAI.Responses.ResponseCreateParamsNonStreaming).catch((e: unknown) => e)
				expect(err).toBeInstanceOf(OpenAI.BadRequestError)
				const e = err as InstanceType<typeof OpenAI.BadRequestError>
				expect([e.status, e.type, e.param]).toEqual([400, 'invalid_request_error', param])
			}
			expect(m.mocks[up].requests.length).toBe(before)
		})

	it('should still send settings within the ranges', async () => {
		const acct = await m.account()
		const r = await acct.openai.responses.create({ model: MODEL.gemini, input: 'hi', temperature: 2, top_p: 0 })
		expect(r.status).toBe('completed')
		expect([r.temperature, r.top_p]).toEqual([2, 0])
	})
})

describe('store', () => {
	for (const [up, stream] of BOTH) {
		it(`should say store: true on an answer it keeps, as OpenAI does by default, and return that from GET (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const r = stream ? await acct.openai.responses.stream({ model: MODEL[up], input: 'keep this' }).finalResponse() : await acct.openai.responses.create({ model: MODEL[up], input: 'keep this' })
			expect(storeOf(r)).toBe(true)
			const got = await acct.openai.responses.retrieve(r.id)
			expect(storeOf(got)).toBe(true)
			expect(got.output_text).toBe('Hello! You said: keep this')
		})

		it(`should say store: false on an answer sent with store: false, which GET does not find (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const params = { model: MODEL[up], input: 'forget this', store: false }
			const r = stream ? await acct.openai.responses.stream(params).finalResponse() : await acct.openai.responses.create(params)
			expect(storeOf(r)).toBe(false)
			expect(await acct.openai.responses.retrieve(r.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError)
		})
	}

	it('should say store: true on every lifecycle event of a kept stream', async () => {
		const acct = await m.account()
		const s = acct.openai.responses.stream({ model: MODEL.anthropic, input: 'keep this stream' })
		const stores: Array<[string, boolean | undefined]> = []
		s.on('event', (e) => {
			if ('response' in e) stores.push([e.type, storeOf(e.response)])
		})
		await s.finalResponse()
		expect(stores).toEqual([
			['response.created', true],
			['response.in_progress', true],
			['response.completed', true],
		])
	})
})

describe('input_file with file_data', () => {
	const PDF = 'JVBERi0xLjQK'
	const SENT: Record<Up, (body: Record<string, any>) => unknown> = {
		anthropic: (b) => b.messages[0].content[0],
		gemini: (b) => b.contents[0].parts[0],
	}
	const EXPECTED: Record<Up, unknown> = {
		anthropic: { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF } },
		gemini: { inlineData: { mimeType: 'application/pdf', data: PDF } },
	}
	for (const [up, stream] of BOTH)
		it(`should send a PDF as the vendor's document and answer (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const input: OpenAI.Responses.ResponseInput = [
				{ role: 'user', content: [{ type: 'input_file', filename: 'report.pdf', file_data: `data:application/pdf;base64,${PDF}` }, { type: 'input_text', text: 'summarise this' }] },
			]
			const r = stream ? await acct.openai.responses.stream({ model: MODEL[up], input }).finalResponse() : await acct.openai.responses.create({ model: MODEL[up], input })
			// The Gemini mock counts every inlineData part as an image.
			expect(r.output_text).toBe(`${up === 'gemini' ? 'I see 1 image. ' : ''}Hello! You said: summarise this`)
			expect(SENT[up](lastRequest(m.mocks[up]).body)).toEqual(EXPECTED[up])
		})

	it('should send a file a function returned in its output to Claude within the tool result', async () => {
		const acct = await m.account()
		const r = await acct.openai.responses.create({
			model: MODEL.anthropic,
			input: [
				{ role: 'user', content: 'fetch the report' },
				{ type: 'function_call', call_id: 'call_1', name: 'fetch', arguments: '{}' },
				{ type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_file', filename: 'r.pdf', file_data: `data:application/pdf;base64,${PDF}` }] },
			],
			tools: [{ type: 'function', name: 'fetch', parameters: { type: 'object', properties: {} }, strict: false }],
		})
		expect(r.status).toBe('completed')
		const result = lastRequest(m.mocks.anthropic).body.messages[2].content[0]
		expect(result.type).toBe('tool_result')
		expect(result.content).toContainEqual(EXPECTED.anthropic)
	})

	for (const up of ['anthropic', 'gemini'] as Up[])
		it(`should take a PDF from the Vercel AI SDK's Responses model (${up} upstream)`, async () => {
			const acct = await m.account()
			const model = createOpenAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1` }).responses(MODEL[up])
			const r = await generateText({ model, messages: [{ role: 'user', content: [{ type: 'file', mediaType: 'application/pdf', data: PDF, filename: 'r.pdf' }, { type: 'text', text: 'sum it' }] }] })
			expect(r.text).toBe(`${up === 'gemini' ? 'I see 1 image. ' : ''}Hello! You said: sum it`)
			expect(SENT[up](lastRequest(m.mocks[up]).body)).toEqual(EXPECTED[up])
		})

	it('should still refuse a file_id, which needs OpenAI\'s file store, with a 400 naming the part', async () => {
		const acct = await m.account()
		const before = m.mocks.anthropic.requests.length
		const err = await acct.openai.responses.create({ model: MODEL.anthropic, input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-abc' }] }] }).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(OpenAI.BadRequestError)
		expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('input[0].content[0]')
		expect(m.mocks.anthropic.requests.length).toBe(before)
	})
})

describe('input_file with file_url', () => {
	const url = () => `http://127.0.0.1:${docs.port}/report.pdf`
	const SENT: Record<Up, (body: Record<string, any>) => unknown> = {
		anthropic: (b) => b.messages[0].content[0],
		gemini: (b) => b.contents[0].parts[0],
	}
	// Claude reads a PDF by URL itself; Gemini takes documents only inline, so the gateway downloads it.
	const EXPECTED: Record<Up, () => unknown> = {
		anthropic: () => ({ type: 'document', source: { type: 'url', url: url() } }),
		gemini: () => ({ inlineData: { mimeType: 'application/pdf', data: PDF_BYTES.toString('base64') } }),
	}
	const answer = (up: Up, text: string) => `${up === 'gemini' ? 'I see 1 image. ' : ''}Hello! You said: ${text}`

	for (const [up, stream] of BOTH)
		it(`should send a PDF by URL as the vendor's document and answer (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: [{ type: 'input_file', file_url: url() }, { type: 'input_text', text: 'summarise this' }] }]
			const r = stream ? await acct.openai.responses.stream({ model: MODEL[up], input }).finalResponse() : await acct.openai.responses.create({ model: MODEL[up], input })
			expect(r.output_text).toBe(answer(up, 'summarise this'))
			expect(SENT[up](lastRequest(m.mocks[up]).body)).toEqual(EXPECTED[up]())
		})

	for (const up of ['anthropic', 'gemini'] as Up[])
		it(`should take a PDF URL from the Vercel AI SDK's Responses model, which sends it as file_url (${up} upstream)`, async () => {
			const acct = await m.account()
			const model = createOpenAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1` }).responses(MODEL[up])
			const r = await generateText({ model, messages: [{ role: 'user', content: [{ type: 'file', mediaType: 'application/pdf', data: new URL(url()) }, { type: 'text', text: 'sum it' }] }] })
			expect(r.text).toBe(answer(up, 'sum it'))
			expect(SENT[up](lastRequest(m.mocks[up]).body)).toEqual(EXPECTED[up]())
		})
})

describe('input_file with a file_url that does not parse', () => {
	for (const up of ['openai', 'anthropic', 'gemini'] as const)
		it(`should be a 400 naming the field, not a 500 (${up} model)`, async () => {
			const acct = await m.account()
			for (const bad of ['http://', 'http://a b/x.pdf', 'https://[::1/x.pdf', 'http://exa%mple.com/x.pdf']) {
				const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }, { type: 'input_file', file_url: bad }] }]
				const err = await acct.openai.responses.create({ model: MODEL[up], input }).then(
					() => undefined,
					(e: InstanceType<typeof OpenAI.APIError>) => e,
				)
				expect({ bad, status: err?.status, param: (err?.error as { param?: string } | undefined)?.param }).toEqual({ bad, status: 400, param: 'input[0].content[1].file_url' })
			}
		})
})

describe('logprobs', () => {
	/** The log probabilities the mocks give an answer (test/mocks/shared/logprobs.ts), as OpenAI writes them. */
	function expected(text: string, top: number) {
		const entry = (token: string, logprob: number) => ({ token, logprob, bytes: [...new TextEncoder().encode(token)] })
		return text.split(/(?= )/).map((token, i) => {
			const lp = -(i + 1) / 10
			return { ...entry(token, lp), top_logprobs: Array.from({ length: top }, (_, k) => entry(k === 0 ? token : `alt${k}`, lp - k)) }
		})
	}
	const include: OpenAI.Responses.ResponseIncludable[] = ['message.output_text.logprobs']

	it('should give a Gemini answer\'s logprobs on its output_text part (non-stream)', async () => {
		const acct = await m.account()
		const r = await acct.openai.responses.create({ model: MODEL.gemini, input: 'rate these words', include, top_logprobs: 2 })
		const part = r.output.flatMap((o) => (o.type === 'message' ? o.content : []))[0] as OpenAI.Responses.ResponseOutputText
		expect(part.logprobs).toEqual(expected('Hello! You said: rate these words', 2))
		expect(lastRequest(m.mocks.gemini).body.generationConfig).toMatchObject({ responseLogprobs: true, logprobs: 2 })
	})

	it('should put each streamed piece\'s logprobs on its output_text.delta and all of them on the done events (stream)', async () => {
		const acct = await m.account()
		const s = acct.openai.responses.stream({ model: MODEL.gemini, input: 'rate these words', include, top_logprobs: 1 })
		const deltas: unknown[] = []
		let done: unknown
		s.on('event', (e) => {
			if (e.type === 'response.output_text.delta') deltas.push(...e.logprobs)
			if (e.type === 'response.output_text.done') done = e.logprobs
		})
		const r = await s.finalResponse()
		const all = expected('Hello! You said: rate these words', 1)
		expect(deltas).toEqual(all)
		expect(done).toEqual(all)
		expect((r.output.flatMap((o) => (o.type === 'message' ? o.content : []))[0] as OpenAI.Responses.ResponseOutputText).logprobs).toEqual(all)
	})

	it('should send no logprobs request to Gemini when none is asked for', async () => {
		const acct = await m.account()
		await acct.openai.responses.create({ model: MODEL.gemini, input: 'plain' })
		expect(lastRequest(m.mocks.gemini).body.generationConfig?.responseLogprobs).toBeUndefined()
	})

	for (const stream of [false, true])
		it(`should refuse them for Claude, which has none, with a 400 before any upstream call (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const before = m.mocks.anthropic.requests.length
			const err = await acct.openai.responses.create({ model: MODEL.anthropic, input: 'rate', include, stream } as OpenAI.Responses.ResponseCreateParamsNonStreaming).catch((e: unknown) => e)
			expect(err).toBeInstanceOf(OpenAI.BadRequestError)
			expect(m.mocks.anthropic.requests.length).toBe(before)
		})
})

describe('an answer cut by max_output_tokens', () => {
	for (const [up, stream] of BOTH)
		it(`should mark the message it cut incomplete, as the response (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const params = { model: MODEL[up], input: 'say a lot #length', max_output_tokens: 16 }
			const items: unknown[] = []
			let r: OpenAI.Responses.Response
			if (stream) {
				const s = acct.openai.responses.stream(params)
				s.on('event', (e) => {
					if (e.type === 'response.output_item.done') items.push((e.item as { status?: string }).status)
				})
				r = await s.finalResponse()
				expect(items).toEqual(['incomplete'])
			} else r = await acct.openai.responses.create(params)
			expect(r.status).toBe('incomplete')
			expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' })
			expect(r.output.map((o) => [o.type, (o as { status?: string }).status])).toEqual([['message', 'incomplete']])
			expect((await acct.openai.responses.retrieve(r.id)).output.map((o) => (o as { status?: string }).status)).toEqual(['incomplete'])
		})

	it('should leave a whole answer\'s message completed', async () => {
		const acct = await m.account()
		const r = await acct.openai.responses.create({ model: MODEL.anthropic, input: 'short one' })
		expect(r.output.map((o) => (o as { status?: string }).status)).toEqual(['completed'])
	})
})

describe('echoed request fields', () => {
	for (const [up, stream] of BOTH)
		it(`should give truncation, safety_identifier and prompt_cache_key back as sent (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const params = { model: MODEL[up], input: 'echo these', truncation: 'auto' as const, safety_identifier: 'user-42', prompt_cache_key: 'pck-1' }
			const r = stream ? await acct.openai.responses.stream(params).finalResponse() : await acct.openai.responses.create(params)
			const echoed = (x: OpenAI.Responses.Response) => ({ truncation: x.truncation, safety_identifier: x.safety_identifier, prompt_cache_key: x.prompt_cache_key })
			expect(echoed(r)).toEqual({ truncation: 'auto', safety_identifier: 'user-42', prompt_cache_key: 'pck-1' })
			expect(echoed(await acct.openai.responses.retrieve(r.id))).toEqual({ truncation: 'auto', safety_identifier: 'user-42', prompt_cache_key: 'pck-1' })
		})
})
