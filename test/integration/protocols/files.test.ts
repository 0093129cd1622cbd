/**
 * Files, documents and audio through the official SDKs (QA conversion report items 3, 4, 6, 8): what each vendor's
 * mock received, in the vendor's documented form (the mocks refuse malformed parts as the vendors do), and a 400 in the
 * caller's shape naming the part for what a vendor cannot take, with nothing sent upstream and nothing charged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { ApiError, GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import { type Account, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, type Upstream } from './harness'

/** `%PDF-1.4` and a page object. */
const PDF = Buffer.from('%PDF-1.4\n1 0 obj <</Type /Page>> endobj\n%%EOF').toString('base64')
const WAV = Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ').toString('base64')
/** A Gemini 3 model, which takes media inside a functionResponse (a multimodal function response). */
const GEMINI3 = 'gemini3-m'

let m: Matrix
let docs: ReturnType<typeof Bun.serve>
beforeAll(async () => {
	docs = Bun.serve({
		hostname: '127.0.0.1',
		port: 0,
		fetch: (req) =>
			new URL(req.url).pathname === '/report.pdf'
				? new Response(Buffer.from(PDF, 'base64'), { headers: { 'content-type': 'application/pdf' } })
				: new Response('not found', { status: 404 }),
	})
	m = await startMatrix({
		env: { FETCH_ALLOW: '127.0.0.1' },
		models: [{ name: GEMINI3, input_per_mtok: 1, output_per_mtok: 2 }],
		channels: (mocks) => [{ name: 'ch-gemini3', type: 'gemini', base_url: mocks.gemini.url, api_key: 'up-gemini', models: [GEMINI3], model_map: { [GEMINI3]: 'gemini-3-pro-preview' } }],
	})
}, SETUP_MS)
afterAll(async () => {
	await m.close()
	await docs.stop(true)
})

const pdfData = `data:application/pdf;base64,${PDF}`

/** Every part or block the vendor received in its request's user turns. */
function upstreamParts(up: Upstream): any[] {
	const body = lastRequest(m.mocks[up]).body
	if (up === 'gemini') return body.contents.flatMap((c: any) => c.parts)
	return body.messages.flatMap((x: any) => (Array.isArray(x.content) ? x.content : [{ type: 'text', text: x.content }]))
}

/** Expects a refusal: status 400, nothing sent to any vendor, nothing charged. */
async function expectRefused<T>(acct: Account, call: () => Promise<unknown>, check: (e: T) => void) {
	const before = Object.values(m.mocks).map((x) => x.requests.length)
	let error: unknown
	try {
		await call()
	} catch (e) {
		error = e
	}
	if (!error) throw new Error('expected the gateway to refuse the request')
	check(error as T)
	expect(Object.values(m.mocks).map((x) => x.requests.length)).toEqual(before)
	expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
}

describe('Anthropic document blocks to OpenAI and Gemini models (report item 3)', () => {
	const content: Anthropic.Messages.ContentBlockParam[] = [
		{ type: 'text', text: 'summarize' },
		{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'Report' },
		{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain doc' }, title: 'Notes' },
	]

	for (const stream of [false, true]) {
		it(`should send a PDF to OpenAI as a file part and plain text as text with its title (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const params = { model: MODEL.openai, max_tokens: 64, messages: [{ role: 'user' as const, content }] }
			const r = stream ? await acct.anthropic.messages.stream(params).finalMessage() : await acct.anthropic.messages.create(params)
			expect(r.stop_reason).toBe('end_turn')
			expect(lastRequest(m.mocks.openai).body.messages).toEqual([
				{
					role: 'user',
					content: [
						{ type: 'text', text: 'summarize' },
						{ type: 'file', file: { filename: 'Report.pdf', file_data: pdfData } },
						{ type: 'text', text: 'Notes\n\nplain doc' },
					],
				},
			])
		})
	}

	it('should send a PDF to Gemini as inlineData and plain text as a text part', async () => {
		const acct = await m.account()
		await acct.anthropic.messages.create({ model: MODEL.gemini, max_tokens: 64, messages: [{ role: 'user', content }] })
		expect(upstreamParts('gemini')).toEqual([{ text: 'summarize' }, { inlineData: { mimeType: 'application/pdf', data: PDF } }, { text: 'Notes\n\nplain doc' }])
	})

	for (const up of ['openai', 'gemini'] as const) {
		it(`should not send an empty conversation for a document-only message (${up} upstream)`, async () => {
			const acct = await m.account()
			await acct.anthropic.messages.create({ model: MODEL[up], max_tokens: 64, messages: [{ role: 'user', content: [content[1]!] }] })
			expect(upstreamParts(up)).toEqual(
				up === 'openai' ? [{ type: 'file', file: { filename: 'Report.pdf', file_data: pdfData } }] : [{ inlineData: { mimeType: 'application/pdf', data: PDF } }],
			)
		})
	}

	it('should carry a document a tool returned to OpenAI, after the tool message', async () => {
		const acct = await m.account()
		await acct.anthropic.messages.create({
			model: MODEL.openai,
			max_tokens: 64,
			messages: [
				{ role: 'user', content: 'fetch the report' },
				{ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'fetch', input: {} }] },
				{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'here it is' }, content[1] as Anthropic.Messages.DocumentBlockParam] }] },
			],
			tools: [{ name: 'fetch', input_schema: { type: 'object' } }],
		})
		expect(lastRequest(m.mocks.openai).body.messages.slice(2)).toEqual([
			{ role: 'tool', tool_call_id: 'toolu_1', content: 'here it is' },
			{ role: 'user', content: [{ type: 'file', file: { filename: 'Report.pdf', file_data: pdfData } }] },
		])
	})

	it('should tell OpenAI which tool call returned which image, and give a result of images alone some words', async () => {
		const acct = await m.account()
		const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
		const shot = { type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: PNG } }
		await acct.anthropic.messages.create({
			model: MODEL.openai,
			max_tokens: 64,
			messages: [
				{ role: 'user', content: 'take two screenshots' },
				{ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_A', name: 'shot', input: {} }, { type: 'tool_use', id: 'toolu_B', name: 'shot', input: {} }] },
				{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_A', content: [shot] }, { type: 'tool_result', tool_use_id: 'toolu_B', is_error: true, content: [{ type: 'text', text: 'partial' }, shot] }] },
			],
			tools: [{ name: 'shot', input_schema: { type: 'object' } }],
		})
		const image = { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }
		expect(lastRequest(m.mocks.openai).body.messages.slice(2)).toEqual([
			{ role: 'tool', tool_call_id: 'toolu_A', content: '(The tool returned images or files: they follow in the next message.)' },
			{ role: 'tool', tool_call_id: 'toolu_B', content: 'Error: the tool call failed.\npartial' },
			{ role: 'user', content: [{ type: 'text', text: 'Returned by tool call toolu_A:' }, image, { type: 'text', text: 'Returned by tool call toolu_B:' }, image] },
		])
	})

	it('should fetch a document URL for Gemini under the URL guard and send it inline', async () => {
		const acct = await m.account()
		const url = `http://127.0.0.1:${docs.port}/report.pdf`
		await acct.anthropic.messages.create({ model: MODEL.gemini, max_tokens: 64, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url } }, { type: 'text', text: 'go' }] }] })
		expect(upstreamParts('gemini')).toEqual([{ inlineData: { mimeType: 'application/pdf', data: PDF } }, { text: 'go' }])
	})

	it('should fetch a document URL for an OpenAI model too (its chat completions take documents only as data)', async () => {
		const acct = await m.account()
		const url = `http://127.0.0.1:${docs.port}/report.pdf`
		await acct.anthropic.messages.create({ model: MODEL.openai, max_tokens: 64, messages: [{ role: 'user', content: [{ type: 'text', text: 'read' }, { type: 'document', source: { type: 'url', url } }] }] })
		expect(lastRequest(m.mocks.openai).body.messages).toEqual([
			{ role: 'user', content: [{ type: 'text', text: 'read' }, { type: 'file', file: { filename: 'document.pdf', file_data: pdfData } }] },
		])
	})

	it("should refuse a document URL the URL guard refuses with a 400 in Anthropic's shape naming the block", async () => {
		const acct = await m.account()
		await expectRefused<InstanceType<typeof Anthropic.BadRequestError>>(
			acct,
			() =>
				acct.anthropic.messages.create({
					model: MODEL.openai,
					max_tokens: 64,
					messages: [{ role: 'user', content: [{ type: 'text', text: 'read' }, { type: 'document', source: { type: 'url', url: 'http://10.1.2.3/a.pdf' } }] }],
				}),
			(e) => {
				expect(e).toBeInstanceOf(Anthropic.BadRequestError)
				expect(e.status).toBe(400)
				expect(e.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
				expect(e.message).toContain('messages.0.content.1')
			},
		)
	})

	it('should relay documents to an Anthropic model as written (fast path)', async () => {
		const acct = await m.account()
		await acct.anthropic.messages.create({ model: MODEL.anthropic, max_tokens: 64, messages: [{ role: 'user', content }] })
		expect(lastRequest(m.mocks.anthropic).body.messages).toEqual([{ role: 'user', content }])
	})
})

describe('OpenAI file and input_audio parts (report item 4)', () => {
	const file: OpenAI.Chat.Completions.ChatCompletionContentPart = { type: 'file', file: { file_data: pdfData, filename: 'a.pdf' } }
	const audio: OpenAI.Chat.Completions.ChatCompletionContentPart = { type: 'input_audio', input_audio: { data: WAV, format: 'wav' } }

	it('should relay file and input_audio parts to an OpenAI model as written', async () => {
		const acct = await m.account()
		// A file by `file_id` must be one of the account's (test/integration/native/openai-file-refs.test.ts).
		const parts: OpenAI.Chat.Completions.ChatCompletionContentPart[] = [{ type: 'text', text: 'read this' }, file, audio]
		const r = await acct.openai.chat.completions.create({ model: MODEL.openai, messages: [{ role: 'user', content: parts }] })
		expect(r.choices[0]!.finish_reason).toBe('stop')
		expect(lastRequest(m.mocks.openai).body.messages).toEqual([{ role: 'user', content: parts }])
	})

	it('should send a PDF file to an Anthropic model as a document block', async () => {
		const acct = await m.account()
		await acct.openai.chat.completions.create({ model: MODEL.anthropic, messages: [{ role: 'user', content: [{ type: 'text', text: 'read this' }, file] }] })
		expect(upstreamParts('anthropic')).toEqual([{ type: 'text', text: 'read this' }, { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF } }])
	})

	it('should send a PDF and wav audio to a Gemini model as inlineData', async () => {
		const acct = await m.account()
		let text = ''
		const s = await acct.openai.chat.completions.create({ model: MODEL.gemini, stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: 'listen' }, file, audio] }] })
		for await (const c of s) text += c.choices[0]?.delta.content ?? ''
		// The Gemini mock counts every inlineData part as an image.
		expect(text).toBe('I see 2 images. Hello! You said: listen')
		expect(upstreamParts('gemini')).toEqual([
			{ text: 'listen' },
			{ inlineData: { mimeType: 'application/pdf', data: PDF } },
			{ inlineData: { mimeType: 'audio/wav', data: WAV } },
		])
	})

	const refusals: Array<[string, Upstream, OpenAI.Chat.Completions.ChatCompletionContentPart, string]> = [
		['audio for an Anthropic model', 'anthropic', audio, 'audio (audio/wav)'],
		["an OpenAI file_id for a Gemini model", 'gemini', { type: 'file', file: { file_id: 'file-abc' } }, "OpenAI's file store"],
		["an OpenAI file_id for an Anthropic model", 'anthropic', { type: 'file', file: { file_id: 'file-abc' } }, "OpenAI's file store"],
	]
	for (const [what, up, part, said] of refusals) {
		it(`should refuse ${what} with a 400 in OpenAI's shape naming messages[0].content[1]`, async () => {
			const acct = await m.account()
			await expectRefused<InstanceType<typeof OpenAI.BadRequestError>>(
				acct,
				() => acct.openai.chat.completions.create({ model: MODEL[up], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, part] }] }),
				(e) => {
					expect(e).toBeInstanceOf(OpenAI.BadRequestError)
					expect(e.status).toBe(400)
					expect(e.param).toBe('messages[0].content[1]')
					expect(e.code).toBe('unsupported_for_model')
					expect(e.message).toContain(said)
				},
			)
		})
	}
})

describe('Gemini fileData and inlineData parts (report item 6)', () => {
	const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url } })

	it("should refuse a gs:// fileData for an Anthropic model with a 400 in Gemini's shape naming the part", async () => {
		const acct = await m.account()
		await expectRefused<ApiError>(
			acct,
			() => genai(acct).models.generateContent({ model: MODEL.anthropic, contents: [{ role: 'user', parts: [{ text: 'summarize' }, { fileData: { fileUri: 'gs://b/x.pdf', mimeType: 'application/pdf' } }] }] }),
			(e) => {
				expect(e).toBeInstanceOf(ApiError)
				expect(e.status).toBe(400)
				expect(e.message).toContain('contents[0].parts[1]: a Gemini file reference (gs://b/x.pdf)')
			},
		)
	})

	it('should send an inlineData PDF to an Anthropic model as a document and to an OpenAI model as a file', async () => {
		const acct = await m.account()
		const contents = [{ role: 'user', parts: [{ text: 'summarize' }, { inlineData: { mimeType: 'application/pdf', data: PDF } }] }]
		await genai(acct).models.generateContent({ model: MODEL.anthropic, contents })
		expect(upstreamParts('anthropic')).toEqual([{ type: 'text', text: 'summarize' }, { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF } }])
		await genai(acct).models.generateContent({ model: MODEL.openai, contents })
		expect(upstreamParts('openai')).toEqual([{ type: 'text', text: 'summarize' }, { type: 'file', file: { filename: 'document.pdf', file_data: pdfData } }])
	})

	it('should relay a gs:// fileData to a Gemini model as written', async () => {
		const acct = await m.account()
		const parts = [{ text: 'summarize' }, { fileData: { fileUri: 'gs://b/x.pdf', mimeType: 'application/pdf' } }]
		await genai(acct).models.generateContent({ model: MODEL.gemini, contents: [{ role: 'user', parts }] })
		expect(upstreamParts('gemini')).toEqual(parts)
	})
})

describe('tool results with several parts to Gemini (report item 8)', () => {
	it('should keep the boundary between the text parts of an OpenAI tool message', async () => {
		const acct = await m.account()
		const r = await acct.openai.chat.completions.create({
			model: MODEL.gemini,
			messages: [
				{ role: 'user', content: 'weather?' },
				{ role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
				{ role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: 'sunny' }, { type: 'text', text: '20C' }] },
			],
			tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
		})
		expect(r.choices[0]!.message.content).toBe('Tool results: sunny\n20C')
		expect(lastRequest(m.mocks.gemini).body.contents[2].parts).toEqual([{ functionResponse: { name: 'get_weather', response: { result: 'sunny\n20C' } } }])
	})

	it('should send an image a tool returned inside functionResponse.parts to a Gemini 3 model', async () => {
		const acct = await m.account()
		const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
		await acct.anthropic.messages.create({
			model: GEMINI3,
			max_tokens: 64,
			messages: [
				{ role: 'user', content: 'take a screenshot' },
				{ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'screenshot', input: {} }] },
				{
					role: 'user',
					content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'done' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }] }],
				},
			],
			tools: [{ name: 'screenshot', input_schema: { type: 'object' } }],
		})
		const up = lastRequest(m.mocks.gemini)
		expect(up.path).toBe('/v1beta/models/gemini-3-pro-preview:generateContent')
		expect(up.body.contents[2].parts).toEqual([
			{ functionResponse: { name: 'screenshot', response: { result: 'done' }, parts: [{ inlineData: { mimeType: 'image/png', data: png } }] } },
		])
	})
})
