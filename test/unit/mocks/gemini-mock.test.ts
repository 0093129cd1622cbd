import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import { FinishReason, GoogleGenAI, Type, type Content, type FunctionDeclaration } from '@google/genai'

import { startGeminiMock, textSignatureFor, thoughtSignatureFor, vector, type VendorMock } from '../../mocks'

let m: VendorMock
let ai: GoogleGenAI

beforeAll(async () => {
	m = await startGeminiMock({ apiKey: 'up-key' })
	ai = new GoogleGenAI({ apiKey: 'up-key', httpOptions: { baseUrl: m.url, retryOptions: { attempts: 1 } } })
})
afterAll(() => m.stop())
beforeEach(() => m.reset())

const decls: FunctionDeclaration[] = [
	{ name: 'get_weather', parameters: { type: Type.OBJECT, properties: { location: { type: Type.STRING } } } },
]
const model = 'gemini-2.5-flash'

/** Raw POST to a model method, for bodies and framings the SDK does not produce. */
const call = (method: string, body: unknown, query = '') =>
	fetch(`${m.url}/v1beta/models/${model}:${method}${query}`, {
		method: 'POST',
		headers: { 'x-goog-api-key': 'up-key', 'content-type': 'application/json' },
		body: JSON.stringify(body),
	})

describe('gemini mock: generateContent', () => {
	it('should answer with text and usage metadata', async () => {
		const r = await ai.models.generateContent({ model, contents: 'hi there', config: { systemInstruction: 'be brief' } })
		expect(r.text).toBe('Hello! You said: hi there')
		expect(r.candidates?.[0].finishReason).toBe(FinishReason.STOP)
		expect(r.usageMetadata).toMatchObject({ promptTokenCount: 4, candidatesTokenCount: 5, totalTokenCount: 9 })
		// @google/genai 3.x calls the v1 surface by default; the mock serves /v1 and /v1beta alike.
		expect(m.requests[0].path).toMatch(/^\/v1(beta)?\/models\/gemini-2\.5-flash:generateContent$/)
		expect(m.requests[0].headers['x-goog-api-key']).toBe('up-key')
	})

	it('should stream SSE chunks with cumulative usage that the SDK parses', async () => {
		const stream = await ai.models.generateContentStream({ model, contents: 'hi there' })
		const texts: string[] = []
		const counts: (number | undefined)[] = []
		for await (const c of stream) {
			texts.push(c.text ?? '')
			counts.push(c.usageMetadata?.candidatesTokenCount)
		}
		expect(texts.join('')).toBe('Hello! You said: hi there')
		expect(texts.length).toBe(5)
		expect(counts).toEqual([1, 2, 3, 4, 5])
		expect(m.requests[0].query.alt).toBe('sse')
		const raw = await (await call('streamGenerateContent', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }, '?alt=sse')).text()
		expect(raw).toContain('\r\n\r\n')
	})

	it('should stream a JSON array without alt=sse, errors included', async () => {
		const r = await call('streamGenerateContent', { contents: [{ parts: [{ text: 'hi there' }] }] })
		const chunks = (await r.json()) as { candidates: { content: { parts: { text: string }[] } }[] }[]
		expect(chunks.map((c) => c.candidates[0].content.parts[0].text).join('')).toBe('Hello! You said: hi there')
		const bad = await call('streamGenerateContent', { contents: [] })
		expect(bad.status).toBe(400)
		expect(await bad.json()).toMatchObject([{ error: { code: 400, status: 'INVALID_ARGUMENT' } }])
	})

	it('should call functions with a thought signature on the first call only, and require it back', async () => {
		const r = await ai.models.generateContent({ model, contents: 'weather #tools', config: { tools: [{ functionDeclarations: decls }] } })
		expect(r.functionCalls?.map((c) => [c.name, c.args])).toEqual([
			['get_weather', { location: 'Paris' }],
			['get_weather', { location: 'Tokyo' }],
		])
		const parts = r.candidates?.[0].content?.parts ?? []
		expect(parts[0].thoughtSignature).toBe(thoughtSignatureFor('get_weather', { location: 'Paris' }))
		expect(parts[1].thoughtSignature).toBeUndefined()
		expect(r.candidates?.[0].finishReason).toBe(FinishReason.STOP)

		const history = (modelParts: typeof parts): Content[] => [
			{ role: 'user', parts: [{ text: 'weather #tools' }] },
			{ role: 'model', parts: modelParts },
			{ role: 'user', parts: modelParts.map((p, i) => ({ functionResponse: { name: p.functionCall?.name, response: { result: i ? 'cold' : 'warm' } } })) },
		]
		const next = await ai.models.generateContent({ model, contents: history(parts), config: { tools: [{ functionDeclarations: decls }] } })
		expect(next.text).toBe('Tool results: warm; cold')

		const stripped = parts.map(({ thoughtSignature: _drop, ...p }) => p)
		const err = await ai.models.generateContent({ model, contents: history(stripped), config: { tools: [{ functionDeclarations: decls }] } }).catch((e: unknown) => e)
		expect((err as Error).message).toContain('Function call is missing a thought_signature in functionCall parts')
		expect((err as Error).message).toContain('`default_api:get_weather` , position 2')
		const forged = await call('generateContent', { contents: history([{ ...parts[0], thoughtSignature: 'Zm9v' }, parts[1]]) })
		expect(await forged.json()).toEqual({ error: { code: 400, message: 'Corrupted thought signature.', status: 'INVALID_ARGUMENT' } })
	})

	it('should reject JSON-Schema-only keys and list types in parameters', async () => {
		const tools = [
			{
				functionDeclarations: [
					{ name: 'f', parameters: { $schema: 'x', type: 'object', additionalProperties: false, properties: { a: { type: ['string', 'null'] } } } },
				],
			},
		]
		const r = await call('generateContent', { contents: [{ parts: [{ text: 'hi' }] }], tools })
		expect(r.status).toBe(400)
		const body = (await r.json()) as { error: { status: string; message: string; details: { fieldViolations: unknown[] }[] } }
		expect(body.error.status).toBe('INVALID_ARGUMENT')
		expect(body.error.message.split('\n')).toEqual([
			`Invalid JSON payload received. Unknown name "$schema" at 'tools[0].function_declarations[0].parameters': Cannot find field.`,
			`Invalid JSON payload received. Unknown name "additionalProperties" at 'tools[0].function_declarations[0].parameters': Cannot find field.`,
			`Invalid JSON payload received. Unknown name "type" at 'tools[0].function_declarations[0].parameters.properties[0].value': Proto field is not repeating, cannot start list.`,
		])
		expect(body.error.details[0].fieldViolations).toHaveLength(3)
		const ok = await call('generateContent', { contents: [{ parts: [{ text: 'hi' }] }], tools: [{ functionDeclarations: [{ name: 'f', parametersJsonSchema: tools[0].functionDeclarations[0].parameters }] }] })
		expect(ok.status).toBe(200)
	})

	it('should return thoughts and thoughtsTokenCount when includeThoughts is set', async () => {
		const r = await ai.models.generateContent({ model, contents: 'hi there', config: { thinkingConfig: { includeThoughts: true } } })
		const parts = r.candidates?.[0].content?.parts ?? []
		expect(parts[0]).toEqual({ text: 'Let me think about hi there.', thought: true })
		expect(r.text).toBe('Hello! You said: hi there')
		expect(r.usageMetadata).toMatchObject({ candidatesTokenCount: 5, thoughtsTokenCount: 6, totalTokenCount: 2 + 5 + 6 })
	})

	it('should sign the answer text of a Gemini 3 model that thought, and want it back on that part only, as issued', async () => {
		const g3 = 'gemini-3-pro-preview'
		const config = { thinkingConfig: { includeThoughts: true } }
		const r = await ai.models.generateContent({ model: g3, contents: 'hi there', config })
		const answer = 'Hello! You said: hi there'
		expect(r.candidates?.[0].content?.parts).toEqual([
			{ text: 'Let me think about hi there.', thought: true },
			{ text: answer, thoughtSignature: textSignatureFor(answer) },
		])
		// Streamed: the signature comes alone on an empty text part at the end.
		const chunks = []
		for await (const c of await ai.models.generateContentStream({ model: g3, contents: 'hi there', config })) chunks.push(c)
		expect(chunks.at(-1)?.candidates?.[0].content?.parts).toEqual([{ text: '', thoughtSignature: textSignatureFor(answer) }])
		expect(chunks.map((c) => c.text ?? '').join('')).toBe(answer)
		// Gemini 2.5 signs no text part.
		const plain = await ai.models.generateContent({ model, contents: 'hi there', config })
		expect(plain.candidates?.[0].content?.parts?.some((p) => p.thoughtSignature)).toBe(false)

		const next = async (modelParts: unknown[]) =>
			(
				await fetch(`${m.url}/v1beta/models/${g3}:generateContent`, {
					method: 'POST',
					headers: { 'x-goog-api-key': 'up-key', 'content-type': 'application/json' },
					body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi there' }] }, { role: 'model', parts: modelParts }, { role: 'user', parts: [{ text: 'more' }] }] }),
				})
			).status
		const sig = textSignatureFor(answer)
		expect(await next([{ text: answer, thoughtSignature: sig }])).toBe(200)
		expect(await next([{ text: answer }, { text: '', thoughtSignature: sig }])).toBe(200)
		// Another vendor's signature on a text part is not this mock's to judge.
		expect(await next([{ text: answer, thoughtSignature: 'c2lnX2Zyb21fY2xhdWRl' }])).toBe(200)
		expect(await next([{ text: 'another text', thoughtSignature: sig }])).toBe(400)
		expect(await next([{ text: answer, thought: true, thoughtSignature: sig }])).toBe(400)
		// Wrapped in other bytes (a prefix that is itself base64, so the whole still decodes).
		expect(await next([{ text: answer, thoughtSignature: `QUJD${sig}` }])).toBe(400)
	})

	it('should report MAX_TOKENS, stop sequences, images and cached tokens', async () => {
		const len = await ai.models.generateContent({ model, contents: 'go #length', config: { maxOutputTokens: 3 } })
		expect(len.candidates?.[0].finishReason).toBe(FinishReason.MAX_TOKENS)
		expect(len.text).toBe('Hello! You said:')
		const stop = await ai.models.generateContent({ model, contents: 'count #stop', config: { stopSequences: ['STOP'] } })
		expect(stop.text).toBe('Hello! You said: count #stop one two ')
		const img = await ai.models.generateContent({
			model,
			contents: [{ role: 'user', parts: [{ text: 'what #cache ' + 'x '.repeat(20) }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }] }],
		})
		expect(img.text?.startsWith('I see 1 image. Hello! You said: what #cache')).toBe(true)
		expect(img.usageMetadata).toMatchObject({ promptTokenCount: 22 + 85, cachedContentTokenCount: 10 })
	})

	it('should authenticate with the key query parameter and reject bad keys the Google way', async () => {
		const viaQuery = await fetch(`${m.url}/v1beta/models?key=up-key`)
		expect(viaQuery.status).toBe(200)
		const bad = await fetch(`${m.url}/v1beta/models?key=nope`)
		expect(bad.status).toBe(400)
		expect(await bad.json()).toMatchObject({ error: { status: 'INVALID_ARGUMENT', message: 'API key not valid. Please pass a valid API key.' } })
		expect((await fetch(`${m.url}/v1beta/models`)).status).toBe(403)
	})
})

describe('gemini mock: tokens, embeddings, models', () => {
	it('should count tokens like usage does', async () => {
		const r = await ai.models.countTokens({ model, contents: 'one two three' })
		expect(r.totalTokens).toBe(3)
	})

	it('should embed single and batched contents deterministically', async () => {
		const one = await ai.models.embedContent({ model: 'text-embedding-004', contents: 'hello' })
		expect(one.embeddings?.[0].values).toEqual(vector('hello', 768))
		const many = await ai.models.embedContent({ model: 'gemini-embedding-001', contents: ['a', 'b'], config: { outputDimensionality: 16 } })
		expect(many.embeddings?.map((e) => e.values?.length)).toEqual([16, 16])
		expect(many.embeddings?.[1].values).toEqual(vector('b', 16))
	})

	it('should list models', async () => {
		const pager = await ai.models.list()
		const names: string[] = []
		for await (const x of pager) names.push(x.name ?? '')
		expect(names).toContain('models/gemini-2.5-flash')
	})
})

describe('gemini mock: batchEmbedContents limit', () => {
	const batch = (n: number) =>
		fetch(`${m.url}/v1beta/models/gemini-embedding-001:batchEmbedContents`, {
			method: 'POST',
			headers: { 'x-goog-api-key': 'up-key', 'content-type': 'application/json' },
			body: JSON.stringify({ requests: Array.from({ length: n }, (_, i) => ({ model: 'models/gemini-embedding-001', content: { parts: [{ text: `t${i}` }] } })) }),
		})

	it('should take 100 requests and refuse 101 as the API does (400 INVALID_ARGUMENT)', async () => {
		const ok = await batch(100)
		expect(ok.status).toBe(200)
		expect(((await ok.json()) as { embeddings: unknown[] }).embeddings).toHaveLength(100)
		const over = await batch(101)
		expect(over.status).toBe(400)
		const body = (await over.json()) as { error: { status: string; message: string } }
		expect(body.error.status).toBe('INVALID_ARGUMENT')
		expect(body.error.message).toContain('at most 100 requests can be in one batch')
	})
})
