import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import OpenAI, { toFile } from 'openai'

import { startOpenAIMock, vector, type VendorMock } from '../../mocks'

let m: VendorMock
let client: OpenAI

beforeAll(async () => {
	m = await startOpenAIMock({ apiKey: 'up-key' })
	client = new OpenAI({ apiKey: 'up-key', baseURL: m.url, maxRetries: 0 })
})
afterAll(() => m.stop())
beforeEach(() => m.reset())

const tools = [{ type: 'function' as const, name: 'lookup', strict: false, parameters: { type: 'object', properties: { query: { type: 'string' } } } }]

describe('openai mock: responses', () => {
	it('should answer a string input with a message item and usage', async () => {
		const r = await client.responses.create({ model: 'gpt-4o', instructions: 'be brief', input: 'hi there' })
		expect(r.status).toBe('completed')
		expect(r.output_text).toBe('Hello! You said: hi there')
		expect(r.usage).toMatchObject({ input_tokens: 4, output_tokens: 5, total_tokens: 9 })
	})

	it("should refuse include, service_tier, max_tool_calls and a function_call's missing arguments as OpenAI does", async () => {
		const refused = (body: object) => client.responses.create({ model: 'gpt-4o', input: 'hi', ...body } as never).then(() => undefined, (e: InstanceType<typeof OpenAI.APIError>) => [e.status, e.param, e.code])
		expect(await refused({ include: 'reasoning.encrypted_content' })).toEqual([400, 'include', 'invalid_type'])
		expect(await refused({ include: ['bogus'] })).toEqual([400, 'include[0]', 'invalid_value'])
		expect(await refused({ service_tier: 'bogus' })).toEqual([400, 'service_tier', 'invalid_value'])
		expect(await refused({ max_tool_calls: 0 })).toEqual([400, 'max_tool_calls', 'integer_below_min_value'])
		const call = [{ type: 'function_call', call_id: 'c1', name: 'f' }, { type: 'function_call_output', call_id: 'c1', output: 'r' }]
		expect(await refused({ input: call })).toEqual([400, 'input[0].arguments', 'missing_required_parameter'])
		expect(await refused({ include: ['reasoning.encrypted_content'], service_tier: 'ultrafast', max_tool_calls: 1 })).toBeUndefined()
	})

	it('should stream the documented event sequence that the SDK assembles', async () => {
		const stream = client.responses.stream({ model: 'gpt-4o', input: 'hi there' })
		const types: string[] = []
		const seq: number[] = []
		stream.on('event', (e) => {
			types.push(e.type)
			seq.push(e.sequence_number)
		})
		const final = await stream.finalResponse()
		expect(final.output_text).toBe('Hello! You said: hi there')
		expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added'])
		expect(types.slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed'])
		expect(seq).toEqual(seq.map((_, i) => i))
	})

	it('should stream function calls and accept their outputs next turn', async () => {
		const stream = client.responses.stream({ model: 'gpt-4o', input: 'find #tools', tools })
		const final = await stream.finalResponse()
		const calls = final.output.filter((o) => o.type === 'function_call')
		expect(calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
			['lookup', { query: 'Paris' }],
			['lookup', { query: 'Tokyo' }],
		])
		const next = await client.responses.create({
			model: 'gpt-4o',
			tools,
			input: [
				{ role: 'user', content: 'find #tools' },
				...calls.map((c) => ({ type: 'function_call' as const, call_id: c.call_id, name: c.name, arguments: c.arguments })),
				...calls.map((c, i) => ({ type: 'function_call_output' as const, call_id: c.call_id, output: i ? 'b' : 'a' })),
			],
		})
		expect(next.output_text).toBe('Tool results: a; b')
		const orphan = await client.responses
			.create({ model: 'gpt-4o', input: [{ type: 'function_call_output', call_id: 'call_zz', output: 'x' }] })
			.catch((e: unknown) => e)
		expect((orphan as Error).message).toContain('No tool call found for function call output with call_id call_zz')
	})

	it('should end with response.incomplete when the output cap is hit', async () => {
		const r = await client.responses.create({ model: 'gpt-4o', input: 'go #length', max_output_tokens: 4 })
		expect(r.status).toBe('incomplete')
		expect(r.incomplete_details?.reason).toBe('max_output_tokens')
		expect(r.output_text.split(' ')).toHaveLength(4)
	})

	it('should add a reasoning item with a summary when reasoning is requested', async () => {
		const r = await client.responses.create({ model: 'o3-mini', input: 'hi there', reasoning: { effort: 'low', summary: 'auto' } })
		const reasoning = r.output.find((o) => o.type === 'reasoning')
		expect(reasoning?.type === 'reasoning' && reasoning.summary[0]?.text).toBe('Let me think about hi there.')
		expect(r.usage?.output_tokens_details.reasoning_tokens).toBe(6)
	})
})

describe('openai mock: embeddings, moderations, rerank', () => {
	it('should return deterministic float vectors with the requested dimensions', async () => {
		const r = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['hello', 'world'], dimensions: 8, encoding_format: 'float' })
		expect(r.data).toHaveLength(2)
		expect(r.data[0].embedding).toEqual(vector('hello', 8))
		expect(r.usage.prompt_tokens).toBe(2)
	})

	it('should encode base64 float32 vectors that the SDK decodes', async () => {
		const r = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello' })
		expect(m.requests[0].body).toMatchObject({ encoding_format: 'base64' })
		expect(r.data[0].embedding).toHaveLength(1536)
		expect(r.data[0].embedding[0]).toBeCloseTo(vector('hello', 1536)[0], 5)
	})

	it('should flag #flag texts only', async () => {
		const r = await client.moderations.create({ model: 'omni-moderation-latest', input: ['fine', 'bad #flag'] })
		expect(r.results.map((x) => x.flagged)).toEqual([false, true])
		expect(r.results[1].categories.violence).toBe(true)
	})

	it('should rank documents by shared query words at /v1/rerank', async () => {
		const res = await fetch(`${m.url}/rerank`, {
			method: 'POST',
			headers: { authorization: 'Bearer up-key', 'content-type': 'application/json' },
			body: JSON.stringify({ model: 'rerank-v3', query: 'red apple', documents: ['green pear', 'red apple pie', { text: 'apple' }], top_n: 2 }),
		})
		const body = (await res.json()) as { results: { index: number; relevance_score: number }[]; meta: unknown; usage: unknown }
		expect(body.results.map((r) => r.index)).toEqual([1, 2])
		expect(body.results[0].relevance_score).toBe(1)
		expect(body.meta).toBeDefined()
		expect(body.usage).toEqual({ total_tokens: 2 + 2 + 3 + 1 })
	})
})

describe('openai mock: images and audio', () => {
	it('should return image URLs that serve a PNG, or base64 when asked', async () => {
		const r = await client.images.generate({ model: 'dall-e-2', prompt: 'a cat', n: 2 })
		expect(r.data).toHaveLength(2)
		const png = await fetch(r.data?.[0].url ?? '')
		expect(png.headers.get('content-type')).toBe('image/png')
		expect(new Uint8Array(await png.arrayBuffer()).slice(1, 4)).toEqual(new Uint8Array([0x50, 0x4e, 0x47]))
		const b64 = await client.images.generate({ model: 'dall-e-3', prompt: 'a cat', response_format: 'b64_json' })
		expect(b64.data?.[0].b64_json?.length).toBeGreaterThan(10)
		const gpt = await client.images.generate({ model: 'gpt-image-1', prompt: 'a cat' })
		expect(gpt.usage?.input_tokens).toBe(2)
	})

	it('should stream WAV speech sized by the input', async () => {
		const r = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'one two three four', response_format: 'wav' })
		expect(r.headers.get('content-type')).toBe('audio/wav')
		const bytes = new Uint8Array(await r.arrayBuffer())
		expect(new TextDecoder().decode(bytes.slice(0, 4))).toBe('RIFF')
		expect(bytes.length).toBe(44 + 24000 * 2)
	})

	it('should transcribe multipart uploads in every format', async () => {
		const file = await toFile(new Uint8Array(32000), 'clip.mp3')
		const json = await client.audio.transcriptions.create({ model: 'whisper-1', file })
		expect(json.text).toBe('Transcript of clip.mp3.')
		expect(m.requests[0].body).toMatchObject({ model: 'whisper-1', file: { filename: 'clip.mp3', size: 32000 } })
		const srt = await client.audio.transcriptions.create({ model: 'whisper-1', file, response_format: 'srt' })
		expect(srt).toBe('1\n00:00:00,000 --> 00:00:02,000\nTranscript of clip.mp3.\n\n')
		const vtt = await client.audio.transcriptions.create({ model: 'whisper-1', file, response_format: 'vtt' })
		expect(vtt).toStartWith('WEBVTT\n\n00:00:00.000 --> 00:00:02.000')
		const text = await client.audio.transcriptions.create({ model: 'whisper-1', file, response_format: 'text' })
		expect(text).toBe('Transcript of clip.mp3.\n')
		const verbose = await client.audio.transcriptions.create({ model: 'whisper-1', file, response_format: 'verbose_json' })
		expect(verbose).toMatchObject({ duration: 2, segments: [{ end: 2 }] })
		const err = await client.audio.transcriptions.create({ model: 'gpt-4o-transcribe', file, response_format: 'srt' }).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(OpenAI.BadRequestError)
	})
})
