import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import { lastRequest, type Native, SETUP_MS, startNative, usageRows } from './setup'

let n: Native
beforeAll(async () => {
	n = await startNative()
}, SETUP_MS)
afterAll(() => n.close())

/** @google/genai pointed at the gateway: by default it calls /v1/…, with apiVersion 'v1beta' /v1beta/…. */
const genai = (key: string, apiVersion?: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: n.app.url, ...(apiVersion && { apiVersion }) } })

const post = (path: string, body: unknown, headers: Record<string, string>) =>
	fetch(`${n.app.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })

const contents = (text: string) => ({ contents: [{ role: 'user', parts: [{ text }] }] })

describe('Gemini generateContent with @google/genai', () => {
	for (const version of [undefined, 'v1beta']) {
		for (const model of ['gemini-2.5-flash', 'claude-sonnet-5', 'gpt-4o-mini']) {
			it(`should answer ${model} at /${version ?? 'v1'} streamed and not, and bill each call`, async () => {
				const a = await n.app.account(10)
				const ai = genai(a.key, version)
				const r = await ai.models.generateContent({ model, contents: 'hello gemini', config: { systemInstruction: 'Be brief.' } })
				expect(r.text).toBe('Hello! You said: hello gemini')
				expect(r.usageMetadata?.promptTokenCount).toBeGreaterThan(0)
				let text = ''
				for await (const chunk of await ai.models.generateContentStream({ model, contents: 'stream gemini' })) text += chunk.text ?? ''
				expect(text).toBe('Hello! You said: stream gemini')
				const rows = await usageRows(n.app, a.accountId)
				expect(rows.map((u) => [u.model, u.endpoint, u.stream, u.end_reason])).toEqual([
					[model, `/${version ?? 'v1'}/models/{model}:generateContent`, false, 'ok'],
					[model, `/${version ?? 'v1'}/models/{model}:streamGenerateContent`, true, 'ok'],
				])
			})
		}
	}

	it('should serve a model whose name has a slash (vendor/model)', async () => {
		const a = await n.app.account(10)
		const r = await genai(a.key).models.generateContent({ model: 'openai/gpt-4o-mini', contents: 'slashed' })
		expect(r.text).toBe('Hello! You said: slashed')
		expect(lastRequest(n.openai).body.model).toBe('gpt-4o-mini')
	})

	it('should send a Gemini model body verbatim upstream (fast path) with x-goog-api-key', async () => {
		const a = await n.app.account(10)
		await genai(a.key).models.generateContent({ model: 'gemini-2.5-flash', contents: 'verbatim', config: { safetySettings: [{ category: 'HARM_CATEGORY_HATE_SPEECH' as never, threshold: 'BLOCK_NONE' as never }] } })
		const up = lastRequest(n.gemini)
		expect(up.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent')
		expect(up.headers['x-goog-api-key']).toBe('up-ge')
		expect(up.body.safetySettings).toEqual([{ category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'BLOCK_NONE' }])
	})

	it('should convert function calls of an Anthropic model to functionCall parts', async () => {
		const a = await n.app.account(10)
		const r = await genai(a.key).models.generateContent({
			model: 'claude-sonnet-5',
			contents: 'weather #tools',
			config: { tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } } }] }] },
		})
		expect(r.functionCalls?.map((c) => [c.name, c.args])).toEqual([
			['get_weather', { city: 'Paris' }],
			['get_weather', { city: 'Tokyo' }],
		])
	})
})

// Gemini reads a YouTube video by its URL in fileData, with no mimeType (ai.google.dev/gemini-api/docs/video-understanding#youtube),
// and a video file by URL; no other vendor's chat API takes video, so it must not reach them as an image URL.
describe('Gemini fileData naming a video by URL', () => {
	const parts = (fileData: { fileUri: string; mimeType?: string }) => [{ role: 'user', parts: [{ text: 'what happens' }, { fileData }] }]
	for (const model of ['gpt-4o-mini', 'claude-sonnet-5']) {
		it(`should refuse it for ${model} with a 400 naming the part and the video, before any upstream call`, async () => {
			const a = await n.app.account(10)
			const mock = model.startsWith('gpt') ? n.openai : n.anthropic
			const before = mock.requests.length
			for (const fileData of [{ fileUri: 'https://www.youtube.com/watch?v=9hE5-98ZeCg' }, { fileUri: 'https://youtu.be/9hE5-98ZeCg' }, { fileUri: 'https://example.com/clips/launch.mp4' }]) {
				const err = (await genai(a.key, 'v1beta').models.generateContent({ model, contents: parts(fileData) }).catch((e: unknown) => e)) as { status?: number; message?: string }
				expect(err.status).toBe(400)
				expect(err.message).toContain('contents[0].parts[1]')
				expect(err.message).toContain('video')
				expect(err.message).toContain('INVALID_ARGUMENT')
			}
			expect(mock.requests.length).toBe(before)
			expect((await usageRows(n.app, a.accountId)).map((r) => [r.status, r.cost])).toEqual([[400, 0], [400, 0], [400, 0]])
			expect(await n.app.balance(a.accountId)).toBe(10)
		})
	}

	it('should send it to a Gemini model as written', async () => {
		const a = await n.app.account(10)
		await genai(a.key, 'v1beta').models.generateContent({ model: 'gemini-2.5-flash', contents: parts({ fileUri: 'https://www.youtube.com/watch?v=9hE5-98ZeCg' }) })
		expect(lastRequest(n.gemini).body.contents[0].parts[1]).toEqual({ fileData: { fileUri: 'https://www.youtube.com/watch?v=9hE5-98ZeCg' } })
	})
})

describe('Gemini streamGenerateContent without alt=sse', () => {
	for (const model of ['gemini-2.5-flash', 'claude-sonnet-5']) {
		it(`should stream ${model} as one JSON array of chunks`, async () => {
			const a = await n.app.account(10)
			const res = await post(`/v1beta/models/${model}:streamGenerateContent?key=${a.key}`, contents('array please'), {})
			expect(res.status).toBe(200)
			expect(res.headers.get('content-type')).toStartWith('application/json')
			const chunks = (await res.json()) as Array<{ candidates?: Array<{ content?: { parts?: Array<{ text?: string }> }; finishReason?: string }> }>
			expect(Array.isArray(chunks)).toBe(true)
			expect(chunks.map((c) => c.candidates?.[0]?.content?.parts?.map((p) => p.text ?? '').join('') ?? '').join('')).toBe('Hello! You said: array please')
			expect(chunks.at(-1)?.candidates?.[0]?.finishReason).toBe('STOP')
			const [row] = await usageRows(n.app, a.accountId)
			expect(row).toMatchObject({ stream: true, end_reason: 'ok' })
		})
	}

	it('should wrap an error in a one-element array, as Google does', async () => {
		const a = await n.app.account(10)
		const res = await post('/v1beta/models/no-such-model:streamGenerateContent', contents('x'), { 'x-goog-api-key': a.key })
		expect(res.status).toBe(404)
		expect(await res.json()).toMatchObject([{ error: { code: 404, status: 'NOT_FOUND' } }])
	})
})

describe('Gemini countTokens', () => {
	it('should count by Gemini for a Gemini model, by Anthropic for an Anthropic model and locally otherwise', async () => {
		const a = await n.app.account(10)
		const ai = genai(a.key)
		const g = await ai.models.countTokens({ model: 'gemini-2.5-flash', contents: 'one two three four' })
		expect(g.totalTokens).toBe(4)
		expect(lastRequest(n.gemini).path).toBe('/v1beta/models/gemini-2.5-flash:countTokens')
		const c = await ai.models.countTokens({ model: 'claude-sonnet-5', contents: 'one two three four five' })
		expect(c.totalTokens).toBe(5)
		expect(lastRequest(n.anthropic).path).toBe('/v1/messages/count_tokens')
		const res = await post(`/v1beta/models/gpt-4o-mini:countTokens`, contents('one two three'), { 'x-goog-api-key': a.key })
		expect(res.headers.get('x-switchboard-counted-by')).toBe('estimate')
		expect(((await res.json()) as { totalTokens: number }).totalTokens).toBeGreaterThan(0)
		expect(await usageRows(n.app, a.accountId)).toEqual([])
		expect(await n.app.balance(a.accountId)).toBe(10)
	})
})

describe('Gemini embedContent and batchEmbedContents', () => {
	it('should embed with a Gemini model verbatim and bill the locally counted input', async () => {
		const a = await n.app.account(10)
		const r = await genai(a.key).models.embedContent({ model: 'gemini-embedding-001', contents: ['first text', 'second text here'], config: { outputDimensionality: 8 } })
		expect(r.embeddings?.map((e) => e.values?.length)).toEqual([8, 8])
		const up = lastRequest(n.gemini)
		expect(up.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents')
		expect(up.body.requests.map((q: { model: string }) => q.model)).toEqual(['models/gemini-embedding-001', 'models/gemini-embedding-001'])
		const [row] = await usageRows(n.app, a.accountId)
		expect(row).toMatchObject({ model: 'gemini-embedding-001', endpoint: '/v1/models/{model}:batchEmbedContents', input_tokens: 5, output_tokens: 0, estimated: true })
	})

	it('should convert to OpenAI /embeddings for an OpenAI model and bill its prompt_tokens', async () => {
		const a = await n.app.account(10)
		const r = await genai(a.key, 'v1beta').models.embedContent({ model: 'text-embedding-3-small', contents: ['alpha beta', 'gamma'], config: { outputDimensionality: 16 } })
		expect(r.embeddings?.map((e) => e.values?.length)).toEqual([16, 16])
		const up = lastRequest(n.openai)
		expect(up.path).toBe('/v1/embeddings')
		expect(up.body).toMatchObject({ model: 'text-embedding-3-small', input: ['alpha beta', 'gamma'], dimensions: 16, encoding_format: 'float' })
		const [row] = await usageRows(n.app, a.accountId)
		expect(row).toMatchObject({ model: 'text-embedding-3-small', endpoint: '/v1beta/models/{model}:batchEmbedContents', estimated: false })
		expect(row.input_tokens).toBeGreaterThan(0)
	})

	it('should serve the single embedContent form', async () => {
		const a = await n.app.account(10)
		const res = await post('/v1beta/models/text-embedding-3-small:embedContent', { content: { parts: [{ text: 'just one' }] } }, { 'x-goog-api-key': a.key })
		expect(res.status).toBe(200)
		expect(((await res.json()) as { embedding: { values: number[] } }).embedding.values.length).toBeGreaterThan(0)
	})
})

describe('Gemini routes: auth and errors in Gemini shape', () => {
	it('should accept the key as ?key=, x-goog-api-key, Bearer and x-api-key', async () => {
		const a = await n.app.account(10)
		const body = contents('auth')
		for (const [q, h] of [[`?key=${a.key}`, {}], ['', { 'x-goog-api-key': a.key }], ['', { authorization: `Bearer ${a.key}` }], ['', { 'x-api-key': a.key }]] as const)
			expect((await post(`/v1beta/models/gemini-2.5-flash:generateContent${q}`, body, h)).status).toBe(200)
	})

	for (const prefix of ['/v1beta', '/v1']) {
		it(`should answer errors under ${prefix}/models in Gemini's shape`, async () => {
			const a = await n.app.account(10)
			const h = { 'x-goog-api-key': a.key }
			const noKey = await post(`${prefix}/models/gemini-2.5-flash:generateContent`, contents('x'), {})
			expect(noKey.status).toBe(403)
			expect(await noKey.json()).toMatchObject({ error: { code: 403, status: 'PERMISSION_DENIED', message: expect.stringContaining('x-goog-api-key') } })
			const unknown = await post(`${prefix}/models/nope:generateContent`, contents('x'), h)
			expect(await unknown.json()).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } })
			const method = await post(`${prefix}/models/gemini-2.5-flash:summon`, contents('x'), h)
			expect(method.status).toBe(404)
			expect(await method.json()).toMatchObject({ error: { status: 'NOT_FOUND' } })
			const bad = await post(`${prefix}/models/gemini-2.5-flash:generateContent`, { contents: 'not an array' }, h)
			expect(bad.status).toBe(400)
			expect(await bad.json()).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } })
		})
	}

	it("should refuse a key to @google/genai as Google does, with the ErrorInfo reason Google's tools read", async () => {
		/** The SDK's ApiError for a call with `key`: its status, and the body its message carries as JSON. */
		const refused = async (key: string, apiVersion?: string) => {
			const e = (await genai(key, apiVersion).models.generateContent({ model: 'gemini-2.5-flash', contents: 'x' }).catch((e: unknown) => e)) as { status?: number; message: string }
			return { status: e.status, error: JSON.parse(e.message).error }
		}
		const invalid = 'API key not valid. Please pass a valid API key.'
		for (const version of [undefined, 'v1beta']) {
			const bad = await refused('sk-not-a-key-of-ours', version)
			expect(bad).toMatchObject({ status: 400, error: { code: 400, status: 'INVALID_ARGUMENT', message: invalid } })
			expect(bad.error.details[0].reason).toBe('API_KEY_INVALID')
			expect(bad.error.details[1]).toEqual({ '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message: invalid })
		}
		const expired = await n.app.account(10, { expires_at: new Date(Date.now() - 60_000).toISOString() })
		const late = await refused(expired.key)
		expect(late).toMatchObject({ status: 400, error: { status: 'INVALID_ARGUMENT', message: 'API key expired. Please renew the API key.' } })
		expect(late.error.details[0].reason).toBe('API_KEY_EXPIRED')
		const disabled = await n.app.account(10)
		expect((await n.app.admin(`/api/tokens/${disabled.tokenId}`, { method: 'PATCH', body: { status: 'disabled' } })).status).toBe(200)
		const off = await refused(disabled.key)
		expect(off).toMatchObject({ status: 403, error: { status: 'PERMISSION_DENIED', message: 'API key is disabled' } })
		expect(off.error.details[0].reason).toBe('CONSUMER_SUSPENDED')
		// No key: an empty one (the SDK sends it as `x-goog-api-key: `, presented as none).
		const none = await refused('')
		expect(none).toMatchObject({ status: 403, error: { code: 403, status: 'PERMISSION_DENIED', message: expect.stringContaining('x-goog-api-key') } })
	})

	it('should surface a 402 to the SDK as an error with Gemini status RESOURCE_EXHAUSTED', async () => {
		const a = await n.app.account(0)
		const err = (await genai(a.key).models.generateContent({ model: 'gemini-2.5-flash', contents: 'x' }).catch((e: unknown) => e)) as { status?: number; message?: string }
		expect(err.status).toBe(402)
		expect(err.message).toContain('RESOURCE_EXHAUSTED')
	})
})
