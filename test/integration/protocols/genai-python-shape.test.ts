/**
 * Google's Gen AI SDK for Python, `google-genai` 2.25.0 (`from google import genai`), as it sends and reads the wire
 * with `genai.Client(api_key='sk-…', http_options={'base_url': root, 'api_version': 'v1beta'})`. The shapes were
 * recorded from the SDK itself (run against this gateway and its mocks, and against a local recorder for the raw
 * bytes): its converters write the outer field names in lowerCamel but copy the inner ones of `Blob`, `FileData`,
 * `Schema` and `ThinkingConfig` as the pydantic models spell them, so an image goes as `inlineData: {data, mime_type}`,
 * an uploaded file as `fileData: {file_uri, mime_type}`, a response schema with `any_of` and `property_ordering`, and
 * thinking as `thinkingConfig: {include_thoughts, thinking_budget}` (proto-JSON takes either spelling). Every bytes
 * field (inline data, `thoughtSignature`) is pydantic's base64, URL-safe with padding, and signatures it got are
 * decoded and sent back re-encoded so (Claude's, through the codec: test/unit/protocols/gemini/client-signatures.test.ts).
 * `files.upload` starts a resumable upload with the key, then POSTs the bytes to the `X-Goog-Upload-URL` answered
 * with no key at all (only its upload headers). `chats.send_message_stream` keeps each streamed chunk's content as its
 * own model turn and sends them all back, a Gemini 3 answer's signature on an empty text part in a turn of its own.
 * Automatic function calling (plain Python functions as tools) sends the model turn back as it came and each result
 * as `functionResponse: {name, response: {result: …}}`, with no `id`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { parseSse } from '../../../src/core/sse'
import { thoughtSignatureFor } from '../../mocks'
import { pngOf } from '../../helpers/png'
import { type Account, GEMINI_3, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrixWithGemini3, THINKER } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrixWithGemini3()
}, SETUP_MS)
afterAll(() => m.close())

type Obj = Record<string, any>
const SDK = 'google-genai-sdk/2.25.0 gl-python/3.11.7'
/** The headers of the SDK's API calls (httpx adds the rest). */
const headers = (acct: Account): Record<string, string> => ({ 'content-type': 'application/json', 'x-goog-api-key': acct.key, 'user-agent': SDK, 'x-goog-api-client': SDK })
const call = (acct: Account, model: string, method: string, body: unknown) =>
	fetch(`${m.app.url}/v1beta/models/${model}:${method}${method === 'streamGenerateContent' ? '?alt=sse' : ''}`, { method: 'POST', headers: headers(acct), body: JSON.stringify(body) })

/** Bytes as google-genai writes them: pydantic's base64, URL-safe with padding (proto-JSON takes either alphabet). */
const pydanticBase64 = (bytes: Uint8Array) => {
	const s = Buffer.from(bytes).toString('base64url')
	return s.padEnd(Math.ceil(s.length / 4) * 4, '=')
}
const PNG = pydanticBase64(pngOf(8, 8))
/** `contents=['what is this', types.Part.from_bytes(data=png, mime_type='image/png')]` */
const withImage = { contents: [{ parts: [{ text: 'what is this' }, { inlineData: { data: PNG, mime_type: 'image/png' } }], role: 'user' }] }

const MODELS = [MODEL.gemini, GEMINI_3, MODEL.openai, MODEL.anthropic]

describe('google-genai (Python) inline media: `inlineData.mime_type`', () => {
	for (const model of MODELS) {
		it(`should read the image for generateContent and countTokens (${model})`, async () => {
			const acct = await m.account()
			const res = await call(acct, model, 'generateContent', withImage)
			const body = await res.json()
			expect(res.status).toBe(200)
			// The mock says so only when it got the image.
			expect(body.candidates[0].content.parts[0].text).toBe('I see 1 image. Hello! You said: what is this')
			const counted = await call(acct, model, 'countTokens', withImage)
			expect(counted.status).toBe(200)
			expect((await counted.json()).totalTokens).toBeGreaterThan(2)
		})
	}
})

describe('google-genai (Python) inline bytes in the URL-safe alphabet', () => {
	// Bytes whose standard base64 holds `+` and `/`, as almost any real file's does.
	const pdf = new Uint8Array([...Buffer.from('%PDF-1.4\n'), ...Array(10).fill([0xfb, 0xff, 0xfe, 0xfa]).flat(), ...Buffer.from('\n%%EOF')])
	const wav = new Uint8Array([...Buffer.from('RIFF'), ...Array(20).fill([0xfb, 0xff, 0xfe]).flat()])
	const ask = (data: Uint8Array, mimeType: string) => ({ contents: [{ parts: [{ text: 'read this' }, { inlineData: { data: pydanticBase64(data), mime_type: mimeType } }], role: 'user' }] })

	it('should send OpenAI a PDF and audio in standard base64, which its data URLs and input_audio take', async () => {
		const acct = await m.account()
		for (const [data, type] of [[pdf, 'application/pdf'], [wav, 'audio/wav']] as const) {
			const res = await call(acct, MODEL.openai, 'generateContent', ask(data, type))
			expect(res.status).toBe(200)
			const part = lastRequest(m.mocks.openai).body.messages[0].content[1]
			const sent = type === 'audio/wav' ? part.input_audio.data : part.file.file_data.slice(part.file.file_data.indexOf(',') + 1)
			expect(sent).toBe(Buffer.from(data).toString('base64'))
		}
	})

	it("should send Claude an image's base64 source in the standard alphabet", async () => {
		const acct = await m.account()
		const png = pngOf(40, 40, 250)
		const res = await call(acct, MODEL.anthropic, 'generateContent', ask(png, 'image/png'))
		expect(res.status).toBe(200)
		const image = lastRequest(m.mocks.anthropic).body.messages[0].content[1]
		expect(image.source).toEqual({ type: 'base64', media_type: 'image/png', data: Buffer.from(png).toString('base64') })
	})
})

/** `client.files.upload(file='red.png', config={'display_name': 'red'})`: the start, then the bytes with no key. */
async function upload(acct: Account, bytes: Uint8Array<ArrayBuffer>): Promise<Obj> {
	const start = await fetch(`${m.app.url}/upload/v1beta/files`, {
		method: 'POST',
		headers: {
			...headers(acct),
			'X-Goog-Upload-Protocol': 'resumable',
			'X-Goog-Upload-Command': 'start',
			'X-Goog-Upload-Header-Content-Length': String(bytes.length),
			'X-Goog-Upload-Header-Content-Type': 'image/png',
			'X-Goog-Upload-File-Name': 'red.png',
		},
		body: JSON.stringify({ file: { display_name: 'red', mime_type: 'image/png', size_bytes: bytes.length } }),
	})
	expect(start.status).toBe(200)
	const url = start.headers.get('x-goog-upload-url')!
	expect(url).toContain(`${m.app.url}/upload/v1beta/files?upload_id=`)
	const res = await chunk(url, bytes)
	expect(res.status).toBe(200)
	expect(res.headers.get('x-goog-upload-status')).toBe('final')
	return (await res.json()).file
}

/** The SDK's chunk request (`_upload_fd`): its upload headers and the bytes, no `x-goog-api-key`. */
const chunk = (url: string, bytes: Uint8Array<ArrayBuffer>, extra: Record<string, string> = {}) =>
	fetch(url, {
		method: 'POST',
		headers: {
			'user-agent': 'python-httpx/0.28.1',
			'content-type': 'application/json',
			'X-Goog-Upload-Protocol': 'resumable',
			'X-Goog-Upload-Command': 'upload, finalize',
			'X-Goog-Upload-Header-Content-Length': String(bytes.length),
			'X-Goog-Upload-Header-Content-Type': 'image/png',
			'X-Goog-Upload-File-Name': 'red.png',
			'X-Goog-Upload-Offset': '0',
			...extra,
		},
		body: bytes,
	})

describe('google-genai (Python) files.upload', () => {
	it('should take the chunks without a key at the upload URL the start answered, and serve the file', async () => {
		const acct = await m.account()
		const file = await upload(acct, pngOf(8, 8))
		expect(file).toMatchObject({ mimeType: 'image/png', state: 'ACTIVE' })
		expect(file.uri).toBe(`${m.app.url}/v1beta/${file.name}`)
		const got = await fetch(`${m.app.url}/v1beta/${file.name}`, { headers: headers(acct) })
		expect((await got.json()).name).toBe(file.name)
	})

	it('should refuse a chunk whose upload URL names no session of its own, with or without a key', async () => {
		const acct = await m.account()
		const other = await m.account()
		const bytes = pngOf(8, 8)
		const start = await fetch(`${m.app.url}/upload/v1beta/files`, {
			method: 'POST',
			headers: { ...headers(acct), 'X-Goog-Upload-Protocol': 'resumable', 'X-Goog-Upload-Command': 'start', 'X-Goog-Upload-Header-Content-Length': String(bytes.length) },
			body: '{}',
		})
		const url = new URL(start.headers.get('x-goog-upload-url')!)
		const id = url.searchParams.get('upload_id')!
		const before = m.mocks.gemini.requests.length
		url.searchParams.set('upload_id', `${id.slice(0, id.indexOf('.'))}.not-the-secret`)
		const forged = await chunk(url.toString(), bytes)
		expect(forged.status).toBe(404)
		expect((await forged.json()).error.status).toBe('NOT_FOUND')
		url.searchParams.set('upload_id', id)
		const foreign = await chunk(url.toString(), bytes, { 'x-goog-api-key': other.key })
		expect(foreign.status).toBe(404)
		const badKey = await chunk(url.toString(), bytes, { 'x-goog-api-key': 'sk-not-a-key' })
		expect(badKey.status).toBe(400) // Google's API_KEY_INVALID
		expect(m.mocks.gemini.requests.length).toBe(before)
		// The session is still there for its own client.
		expect((await chunk(url.toString(), bytes)).status).toBe(200)
	})

	it('should read the file named as `fileData.file_uri` in generateContent and countTokens, on every channel of its key', async () => {
		// An upload goes to one of the two Gemini channels (same address and key, equal priority: drawn by weight), and
		// each serves one of these models: one of them always reads the file through the other channel.
		const acct = await m.account()
		const file = await upload(acct, pngOf(8, 8))
		const body = { contents: [{ parts: [{ text: 'describe' }, { fileData: { file_uri: file.uri, mime_type: 'image/png' } }], role: 'user' }] }
		for (const [model, upstream] of [[MODEL.gemini, 'gemini-2.5-flash'], [GEMINI_3, 'gemini-3-pro-preview']]) {
			const res = await call(acct, model!, 'generateContent', body)
			expect(res.status).toBe(200)
			const sent = lastRequest(m.mocks.gemini)
			expect(sent.path).toBe(`/v1beta/models/${upstream}:generateContent`)
			expect(sent.body.contents[0].parts[1].fileData.file_uri).toStartWith(m.mocks.gemini.url)
			const counted = await call(acct, model!, 'countTokens', body)
			expect(counted.status).toBe(200)
			expect((await counted.json()).totalTokens).toBe((await res.json()).usageMetadata.promptTokenCount)
		}
	})
})

/** `response_schema=Pick` for `class Pick(BaseModel): value: Union[int, str]; note: Optional[str] = None`, as the SDK writes it. */
const PICK = {
	properties: { value: { any_of: [{ type: 'INTEGER' }, { type: 'STRING' }], title: 'Value' }, note: { nullable: true, title: 'Note', type: 'STRING' } },
	property_ordering: ['value', 'note'],
	required: ['value'],
	title: 'Pick',
	type: 'OBJECT',
}

describe('google-genai (Python) response_schema from a pydantic model', () => {
	for (const model of [MODEL.openai, MODEL.anthropic]) {
		it(`should send the schema's \`any_of\` as anyOf of JSON Schema types, without property_ordering (${model})`, async () => {
			const acct = await m.account()
			const res = await call(acct, model, 'generateContent', { contents: [{ parts: [{ text: 'pick' }], role: 'user' }], generationConfig: { responseMimeType: 'application/json', responseSchema: PICK } })
			expect(res.status).toBe(200)
			expect(JSON.parse((await res.json()).candidates[0].content.parts[0].text)).toEqual({ value: 42, note: 'pick' })
			const body = model === MODEL.openai ? lastRequest(m.mocks.openai).body : lastRequest(m.mocks.anthropic).body
			// Claude takes it as its structured output (not a prompted instruction), OpenAI as json_schema.
			const schema = model === MODEL.openai ? body.response_format.json_schema.schema : body.output_config.format.schema
			expect(schema.properties.value).toEqual({ anyOf: [{ type: 'integer' }, { type: 'string' }], title: 'Value' })
			expect(JSON.stringify(schema)).not.toContain('property_ordering')
		})
	}

	it('should ask Claude for a JSON array, not an object, for `response_schema=list[City]` (prompted: its structured outputs take an object root)', async () => {
		const acct = await m.account()
		const city = { properties: { name: { title: 'Name', type: 'STRING' } }, property_ordering: ['name'], required: ['name'], title: 'City', type: 'OBJECT' }
		const res = await call(acct, MODEL.anthropic, 'generateContent', {
			contents: [{ parts: [{ text: 'a city' }], role: 'user' }],
			generationConfig: { responseMimeType: 'application/json', responseSchema: { items: city, title: 'Placeholder', type: 'ARRAY' } },
		})
		expect(res.status).toBe(200)
		const system = lastRequest(m.mocks.anthropic).body.system as string
		expect(system).toStartWith('Respond with a single JSON array that conforms to the JSON Schema "response" below')
		expect(JSON.parse(system.slice(system.indexOf('\n') + 1))).toMatchObject({ type: 'array', items: { type: 'object' } })
	})
})

/** A streamed answer as `chats.send_message_stream` keeps it: each chunk's candidate content, one model turn each. */
async function chunkTurns(res: Response): Promise<Obj[]> {
	expect(res.status).toBe(200)
	const turns: Obj[] = []
	for await (const f of parseSse(res.body!)) {
		const content = JSON.parse(f.data).candidates?.[0]?.content
		if (content?.parts?.length) turns.push(content)
	}
	return turns
}

describe('google-genai (Python) chats on Gemini 3', () => {
	it('should take back a streamed answer kept one chunk per model turn, its signature on an empty text part of its own', async () => {
		const acct = await m.account()
		const config = { generationConfig: { thinkingConfig: { include_thoughts: true } } }
		const first = { parts: [{ text: 'one' }], role: 'user' }
		const turns = await chunkTurns(await call(acct, GEMINI_3, 'streamGenerateContent', { contents: [first], ...config }))
		const last = turns[turns.length - 1]!
		expect(last.parts).toEqual([{ text: '', thoughtSignature: expect.any(String) }])
		const res = await call(acct, GEMINI_3, 'streamGenerateContent', { contents: [first, ...turns, { parts: [{ text: 'two' }], role: 'user' }], ...config })
		const text = (await chunkTurns(res)).flatMap((c) => c.parts.filter((p: Obj) => !p.thought).map((p: Obj) => p.text ?? '')).join('')
		expect(text).toBe('Hello! You said: two')
	})
})

/** `tools=[get_weather, local_time]` as the SDK declares two plain functions (from their signatures and docstrings). */
const FUNCTIONS = [
	{
		functionDeclarations: [
			{ description: 'Weather for a city.', name: 'get_weather', parameters: { properties: { city: { type: 'STRING' } }, required: ['city'], type: 'OBJECT' } },
			{ description: 'Local time in a city.', name: 'local_time', parameters: { properties: { city: { type: 'STRING' } }, required: ['city'], type: 'OBJECT' } },
		],
	},
]

describe('google-genai (Python) automatic function calling', () => {
	for (const model of [GEMINI_3, THINKER.openai, MODEL.anthropic]) {
		it(`should take back the model turn as it came and the results as {result} (${model}, thinking)`, async () => {
			const acct = await m.account()
			const config = { tools: FUNCTIONS, generationConfig: { maxOutputTokens: 8000, thinkingConfig: { include_thoughts: true, thinking_budget: 2048 } } }
			const ask = { parts: [{ text: '#tools weather please' }], role: 'user' }
			const res = await call(acct, model, 'generateContent', { contents: [ask], ...config })
			expect(res.status).toBe(200)
			const turn = (await res.json()).candidates[0].content
			const calls = turn.parts.filter((p: Obj) => p.functionCall)
			expect(calls.map((p: Obj) => p.functionCall.name)).toEqual(['get_weather', 'local_time'])
			// The SDK keeps the first call's signature (bytes) and sends it back base64 again.
			expect(calls[0].thoughtSignature).toEqual(expect.any(String))
			if (model === GEMINI_3) expect(calls[0].thoughtSignature).toBe(thoughtSignatureFor('get_weather', { city: 'Paris' }))
			const results = { parts: [{ functionResponse: { name: 'get_weather', response: { result: { temp: 25 } } } }, { functionResponse: { name: 'local_time', response: { result: '12:00' } } }], role: 'user' }
			const next = await call(acct, model, 'generateContent', { contents: [ask, turn, results], ...config })
			expect(next.status).toBe(200)
			const parts = (await next.json()).candidates[0].content.parts
			expect(parts.filter((p: Obj) => !p.thought).map((p: Obj) => p.text).join('')).toBe('Tool results: {"result":{"temp":25}}; 12:00')
			if (model === MODEL.anthropic) {
				// Claude needs its signed thinking back before the tool_use blocks of the turn.
				const replay = lastRequest(m.mocks.anthropic).body.messages[1].content
				expect(replay.map((b: Obj) => b.type)).toEqual(['thinking', 'tool_use', 'tool_use'])
				expect(replay[0].signature).toEqual(expect.any(String))
			}
		})
	}
})
