import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI, { APIError } from 'openai'
import { lastRequest, type Native, SETUP_MS, settledRows, startNative, usageRows } from './setup'

let n: Native
beforeAll(async () => {
	n = await startNative()
}, SETUP_MS)
afterAll(() => n.close())

const client = async (balance = 10) => {
	const a = await n.app.account(balance)
	return { ...a, openai: new OpenAI({ apiKey: a.key, baseURL: `${n.app.url}/v1`, maxRetries: 0 }) }
}

const weather = { type: 'function' as const, name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false }

describe('POST /v1/responses to an OpenAI channel (verbatim)', () => {
	it('should forward the body to {base_url}/responses and bill the reported usage', async () => {
		const a = await client()
		const r = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'hello there', store: false, metadata: { k: 'v' } })
		expect(r.output_text).toBe('Hello! You said: hello there')
		const up = lastRequest(n.openai)
		expect(up.path).toBe('/v1/responses')
		expect(up.body).toMatchObject({ model: 'gpt-4o-mini', input: 'hello there', store: false, metadata: { k: 'v' } })
		const [row] = await usageRows(n.app, a.accountId)
		expect(row).toMatchObject({ model: 'gpt-4o-mini', endpoint: '/v1/responses', input_tokens: r.usage!.input_tokens, output_tokens: r.usage!.output_tokens, estimated: false, stream: false })
	})

	it('should relay the stream event by event and bill from response.completed', async () => {
		const a = await client()
		const stream = a.openai.responses.stream({ model: 'gpt-4o-mini', input: 'stream me please' })
		const types: string[] = []
		stream.on('event', (e) => types.push(e.type))
		const final = await stream.finalResponse()
		expect(final.output_text).toBe('Hello! You said: stream me please')
		expect(types[0]).toBe('response.created')
		expect(types).toContain('response.output_text.delta')
		expect(types.at(-1)).toBe('response.completed')
		expect(lastRequest(n.openai).body.stream).toBe(true)
		const [row] = await usageRows(n.app, a.accountId)
		expect(row).toMatchObject({ endpoint: '/v1/responses', stream: true, end_reason: 'ok', input_tokens: final.usage!.input_tokens, output_tokens: final.usage!.output_tokens, estimated: false })
	})

	it('should show a model_map alias as the client named it, streamed or not', async () => {
		const a = await client()
		const r = await a.openai.responses.create({ model: 'gpt-alias', input: 'hi' })
		expect(r.model).toBe('gpt-alias')
		expect(lastRequest(n.openai).body.model).toBe('gpt-4o-mini')
		const s = await a.openai.responses.stream({ model: 'gpt-alias', input: 'hi' }).finalResponse()
		expect(s.model).toBe('gpt-alias')
	})

	it('should pass previous_response_id and built-in tools through to OpenAI', async () => {
		const a = await client()
		// Only a response answered to this account can be continued (responses-ownership.test.ts).
		const earlier = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'an earlier turn to continue' })
		const r = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'again', previous_response_id: earlier.id, tools: [{ type: 'web_search' }] })
		expect(r.status).toBe('completed')
		expect(lastRequest(n.openai).body).toMatchObject({ previous_response_id: earlier.id, tools: [{ type: 'web_search' }] })
	})

	it('should relay the upstream 4xx as an OpenAI error', async () => {
		const a = await client()
		const err = await a.openai.responses.create({ model: 'gpt-4o-mini', input: [{ type: 'function_call_output', call_id: 'nope', output: 'x' }] }).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(APIError)
		expect((err as APIError).status).toBe(400)
		expect((err as APIError).message).toContain('No tool call found')
	})
})

describe('POST /v1/responses converted for Anthropic and Gemini models', () => {
	for (const model of ['claude-sonnet-5', 'gemini-2.5-flash']) {
		it(`should answer ${model} non-stream with text, usage and the client model name`, async () => {
			const a = await client()
			const r = await a.openai.responses.create({ model, instructions: 'Be brief.', input: 'hello converted' })
			expect(r.object).toBe('response')
			expect(r.status).toBe('completed')
			expect(r.model).toBe(model)
			expect(r.output_text).toBe('Hello! You said: hello converted')
			expect(r.usage!.input_tokens).toBeGreaterThan(0)
			const [row] = await usageRows(n.app, a.accountId)
			expect(row).toMatchObject({ model, endpoint: '/v1/responses', input_tokens: r.usage!.input_tokens, output_tokens: r.usage!.output_tokens })
		})

		it(`should stream ${model} through the SDK's strict accumulator, tools and a tool-result turn`, async () => {
			const a = await client()
			const first = await a.openai.responses.stream({ model, input: 'weather in two cities #tools', tools: [weather] }).finalResponse()
			const calls = first.output.flatMap((o) => (o.type === 'function_call' ? [o] : []))
			expect(calls.map((c) => JSON.parse(c.arguments))).toEqual([{ city: 'Paris' }, { city: 'Tokyo' }])
			expect(new Set(calls.map((c) => c.call_id)).size).toBe(2)
			const second = await a.openai.responses.stream({
				model,
				tools: [weather],
				input: [
					{ role: 'user', content: 'weather in two cities #tools' },
					...first.output.filter((o) => o.type === 'function_call' || o.type === 'reasoning'),
					...calls.map((c, i) => ({ type: 'function_call_output' as const, call_id: c.call_id, output: i === 0 ? '18C' : '22C' })),
				],
			}).finalResponse()
			expect(second.output_text).toBe('Tool results: 18C; 22C')
			const rows = await usageRows(n.app, a.accountId)
			expect(rows.map((r) => [r.stream, r.end_reason])).toEqual([
				[true, 'ok'],
				[true, 'ok'],
			])
		})

		it(`should pass an input_image to ${model}`, async () => {
			const a = await client()
			const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
			const r = await a.openai.responses.create({
				model,
				input: [{ role: 'user', content: [{ type: 'input_text', text: 'what is this' }, { type: 'input_image', image_url: `data:image/png;base64,${png}`, detail: 'auto' }] }],
			})
			expect(r.output_text).toBe('I see 1 image. Hello! You said: what is this')
		})

		it(`should stream ${model} reasoning as a reasoning item and replay it next turn`, async () => {
			const a = await client()
			const first = await a.openai.responses.stream({ model, input: 'think about cats', reasoning: { effort: 'medium', summary: 'auto' } }).finalResponse()
			const reasoning = first.output.find((o) => o.type === 'reasoning')
			expect(reasoning?.type === 'reasoning' && reasoning.summary[0]?.text).toBe('Let me think about think about cats.')
			expect(first.output_text).toBe('Hello! You said: think about cats')
			// The next turn carries the reasoning item back (with its signature for Anthropic), which the mock verifies.
			const next = await a.openai.responses.create({
				model,
				reasoning: { effort: 'medium' },
				input: [{ role: 'user', content: 'think about cats' }, ...(first.output as never[]), { role: 'user', content: 'and dogs' }],
			})
			expect(next.output_text).toBe('Hello! You said: and dogs')
		})
	}

	it('should convert to chat completions for an OpenAI-type channel without the Responses API', async () => {
		const a = await client()
		const r = await a.openai.responses.stream({ model: 'compat-chat', input: 'compat please' }).finalResponse()
		expect(r.output_text).toBe('Hello! You said: compat please')
		expect(r.model).toBe('compat-chat')
		expect(lastRequest(n.openai).path).toBe('/v1/chat/completions')
	})

	it("should refuse previous_response_id of an OpenAI response for a converted model with a clear 400, and an unknown one with OpenAI's 400", async () => {
		const a = await client()
		const openai = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'an openai response, then claude' })
		const spent = await n.app.balance(a.accountId)
		const rows = (await usageRows(n.app, a.accountId)).length
		const err = (await a.openai.responses.create({ model: 'claude-sonnet-5', input: 'x', previous_response_id: openai.id }).catch((e: unknown) => e)) as APIError
		expect(err.status).toBe(400)
		expect(err.message).toContain('previous_response_id')
		expect(err.message).toContain('claude-sonnet-5')
		// Refused before anything was reserved or sent upstream.
		expect(await n.app.balance(a.accountId)).toBe(spent)
		expect(await usageRows(n.app, a.accountId)).toHaveLength(rows)
		const unknown = (await a.openai.responses.create({ model: 'claude-sonnet-5', input: 'x', previous_response_id: 'resp_1' }).catch((e: unknown) => e)) as APIError
		expect(unknown.status).toBe(400)
		expect(unknown.code).toBe('previous_response_not_found')
		expect(await usageRows(n.app, a.accountId)).toHaveLength(rows)
	})

	it('should serve a request that needs OpenAI from the OpenAI channel of a model that also has others', async () => {
		const a = await client()
		const plain = await a.openai.responses.create({ model: 'mixed', input: 'first' })
		expect(plain.output_text).toBe('Hello! You said: first')
		expect(lastRequest(n.anthropic).body.model).toBe('claude-sonnet-5')
		const stored = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'a stored turn for mixed' })
		const chained = await a.openai.responses.create({ model: 'mixed', input: 'next', previous_response_id: stored.id })
		expect(chained.model).toBe('mixed')
		expect(lastRequest(n.openai).body).toMatchObject({ model: 'gpt-4o-mini', previous_response_id: stored.id })
	})

	it('should refuse OpenAI built-in tools for a converted model', async () => {
		const a = await client()
		const err = (await a.openai.responses.create({ model: 'gemini-2.5-flash', input: 'x', tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }] }).catch((e: unknown) => e)) as APIError
		expect(err.status).toBe(400)
		expect(err.message).toContain("'file_search'")
	})

	it('should end a truncated converted answer as incomplete with max_output_tokens', async () => {
		const a = await client()
		const r = await a.openai.responses.create({ model: 'claude-sonnet-5', input: 'count #length', max_output_tokens: 16 })
		expect(r.status).toBe('incomplete')
		expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' })
	})

	it('should answer a malformed body with a 400 in OpenAI shape', async () => {
		const a = await client()
		const res = await fetch(`${n.app.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ input: 'no model' }) })
		expect(res.status).toBe(400)
		expect(((await res.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error')
	})
})

describe('POST /v1/responses verbatim stream failures', () => {
	const read = async (s: AsyncIterable<unknown>) => {
		for await (const _ of s) void _
	}

	it('should relay a mid-stream error event to the SDK and record the request as failed', async () => {
		const a = await client()
		// After the first text delta: the four events before it (lifecycle, the empty message and part) are preamble, and
		// an error among them fails before the stream begins (below).
		n.openai.faultOnce = { kind: 'midstream', afterChunks: 5 }
		const err = await read(await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'break later please', stream: true })).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(APIError)
		const [row] = await settledRows(n.app, a.accountId)
		expect(row).toMatchObject({ endpoint: '/v1/responses', stream: true, end_reason: 'error' })
	})

	it('should end a cut stream with an error event and bill the output it counted', async () => {
		const a = await client()
		n.openai.faultOnce = { kind: 'cut', afterChunks: 6 }
		const err = await read(await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'cut me off now', stream: true })).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(APIError)
		expect((err as APIError).message).toContain('ended unexpectedly')
		const [row] = await settledRows(n.app, a.accountId)
		expect(row).toMatchObject({ end_reason: 'upstream_cut', estimated: true })
		expect(row.output_tokens).toBeGreaterThan(0)
	})

	it('should fail before the first byte when the upstream errors in its preamble, without charging', async () => {
		const a = await client()
		n.openai.faultOnce = { kind: 'midstream', afterChunks: 1 }
		const err = (await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'x', stream: true }).catch((e: unknown) => e)) as APIError
		expect(err).toBeInstanceOf(APIError)
		expect(err.status).toBe(502)
		expect(await n.app.balance(a.accountId)).toBe(10)
	})
})
