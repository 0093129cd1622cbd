/**
 * `POST /v1/responses` as OpenAI answers it, for every model (QA pass on the Responses API): an unknown
 * `previous_response_id` is OpenAI's 400; a Claude refusal told only at the end streams as well-formed parts and the
 * whole answer has the same shape; a stored Claude reasoning item replayed by its id alone comes back with its
 * signature; bodies OpenAI refuses are refused for every vendor; image parts without an image or with bad base64 name
 * the client's field; an empty text block before a call makes no message; `service_tier` and `max_tool_calls` are
 * always on the Response object.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { MODEL, type Matrix, SETUP_MS, startMatrix, usageRows } from './harness'

/** A Claude that answers scripted blocks (`blocks`, `stop`, `stop_details`) per keyword of the last user message. */
type Script = { blocks: Array<Record<string, unknown>>; stop?: string; details?: Record<string, unknown> }
function scriptedClaude(scripts: Record<string, Script>) {
	const seen: any[] = []
	const server = Bun.serve({
		port: 0,
		hostname: '127.0.0.1',
		async fetch(req) {
			const body: any = await req.json()
			seen.push(body)
			const last = JSON.stringify(body.messages.at(-1))
			const s = scripts[Object.keys(scripts).find((k) => last.includes(k)) ?? ''] ?? { blocks: [{ type: 'text', text: 'ok' }] }
			const stop = s.stop ?? (s.blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn')
			const usage = { input_tokens: 100, output_tokens: 50, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 }
			const msg = { id: 'msg_s', type: 'message', role: 'assistant', model: body.model, content: [] as unknown[], stop_reason: null, stop_sequence: null, usage }
			if (!body.stream) return Response.json({ ...msg, content: s.blocks, stop_reason: stop, stop_details: s.details ?? null })
			const ev: string[] = []
			const send = (type: string, data: object) => ev.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
			send('message_start', { message: msg })
			s.blocks.forEach((b, index) => {
				if (b.type === 'text') {
					send('content_block_start', { index, content_block: { type: 'text', text: '' } })
					if (b.text) send('content_block_delta', { index, delta: { type: 'text_delta', text: b.text } })
				}
				if (b.type === 'tool_use') {
					send('content_block_start', { index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } })
					send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } })
				}
				send('content_block_stop', { index })
			})
			send('message_delta', { delta: { stop_reason: stop, stop_sequence: null, stop_details: s.details ?? null }, usage })
			send('message_stop', {})
			return new Response(ev.join(''), { headers: { 'content-type': 'text/event-stream' } })
		},
	})
	return { url: `http://127.0.0.1:${server.port}`, seen, stop: () => server.stop(true) }
}

const SCRIPTED = 'claude-compat'
const scripted = scriptedClaude({
	emptyText: { blocks: [{ type: 'text', text: '' }, { type: 'tool_use', id: 'toolu_01', name: 'w', input: { city: 'Paris' } }] },
	explained: { blocks: [{ type: 'text', text: 'I will not' }], stop: 'refusal', details: { type: 'refusal', category: 'cyber', explanation: 'That asks for malware.' } },
	callRefused: { blocks: [{ type: 'tool_use', id: 'toolu_02', name: 'w', input: { city: 'Oslo' } }], stop: 'refusal' },
})

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		channels: () => [{ name: 'scripted', type: 'anthropic', base_url: scripted.url, api_key: 'k', models: [SCRIPTED], model_map: { [SCRIPTED]: 'claude-sonnet-4-6' } }],
	})
}, SETUP_MS)
afterAll(async () => {
	await m.close()
	scripted.stop()
})

const refused = <T>(p: Promise<T>) => p.then(() => undefined, (e: unknown) => e as InstanceType<typeof OpenAI.APIError>)
const tools = [{ type: 'function' as const, name: 'w', strict: false, parameters: { type: 'object', properties: { city: { type: 'string' } } } }]

/** The SSE events of a streamed POST /v1/responses, parsed. */
async function events(key: string, body: object): Promise<any[]> {
	const res = await fetch(`${m.app.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...body, stream: true }) })
	return (await res.text())
		.split('\n')
		.filter((l) => l.startsWith('data: '))
		.map((l) => JSON.parse(l.slice(6)))
}

/** Output items with fresh ids reduced to their prefixes. */
const shape = (output: unknown) => JSON.parse(JSON.stringify(output).replace(/"(msg|fc|rs)_[A-Za-z0-9_-]+"/g, '"$1_*"'))

describe('previous_response_id unknown to the account', () => {
	it("should be OpenAI's 400 previous_response_not_found for every model, a GET of an unknown id staying 404", async () => {
		const a = await m.account()
		for (const model of Object.values(MODEL)) {
			const err = await refused(a.openai.responses.create({ model, input: 'hi', previous_response_id: 'resp_doesnotexist' }))
			expect(err).toBeInstanceOf(OpenAI.BadRequestError)
			expect(err!.error).toEqual({ message: "Previous response with id 'resp_doesnotexist' not found.", type: 'invalid_request_error', param: 'previous_response_id', code: 'previous_response_not_found' })
		}
		const unstored = await a.openai.responses.create({ model: MODEL.anthropic, input: 'hi', store: false })
		expect((await refused(a.openai.responses.create({ model: MODEL.anthropic, input: 'again', previous_response_id: unstored.id })))!.status).toBe(400)
		expect((await refused(a.openai.responses.retrieve('resp_doesnotexist')))!.status).toBe(404)
		expect((await refused(a.openai.responses.delete('resp_doesnotexist')))!.status).toBe(404)
	})
})

describe('Claude refusal told at the end of the answer', () => {
	const parts = (evs: any[]) => evs.filter((e) => e.type !== 'response.output_text.delta').map((e) => e.type.replace('response.', '') + (e.part ? `(${e.part.type})` : ''))

	it('should close the output_text part as opened, then say the refusal in a refusal part of its own, as the whole answer gives it', async () => {
		const a = await m.account()
		const evs = await events(a.key, { model: MODEL.anthropic, input: 'do bad #refusal' })
		expect(parts(evs)).toEqual([
			'created',
			'in_progress',
			'output_item.added',
			'content_part.added(output_text)',
			'output_text.done',
			'content_part.done(output_text)',
			'content_part.added(refusal)',
			'refusal.done',
			'content_part.done(refusal)',
			'output_item.done',
			'completed',
		])
		const completed = evs.at(-1).response
		expect(completed.output).toEqual(evs.filter((e) => e.type === 'response.output_item.done').map((e) => e.item))
		expect(completed.output[0].content.map((c: any) => c.type)).toEqual(['output_text', 'refusal'])
		expect(completed.output[0].content[1]).toEqual({ type: 'refusal', refusal: '' })
		const whole = await a.openai.responses.create({ model: MODEL.anthropic, input: 'do bad #refusal' })
		expect(shape(whole.output)).toEqual(shape(completed.output))
		// The openai SDK accumulates the stream to the same final response.
		const sdk = await a.openai.responses.stream({ model: MODEL.anthropic, input: 'do bad #refusal' }).finalResponse()
		expect((sdk.output[0] as any).content.map((c: any) => c.type)).toEqual(['output_text', 'refusal'])
	})

	it("should give Claude's stop_details.explanation as the refusal's text, streamed or not", async () => {
		const a = await m.account()
		const evs = await events(a.key, { model: SCRIPTED, input: 'explained' })
		expect(evs.filter((e) => e.type === 'response.refusal.delta').map((e) => [e.content_index, e.delta])).toEqual([[1, 'That asks for malware.']])
		const completed = evs.at(-1).response
		expect(completed.output[0].content).toEqual([
			{ type: 'output_text', text: 'I will not', annotations: [], logprobs: [] },
			{ type: 'refusal', refusal: 'That asks for malware.' },
		])
		const whole = await a.openai.responses.create({ model: SCRIPTED, input: 'explained' })
		expect(shape(whole.output)).toEqual(shape(completed.output))
	})

	it('should follow a call with a message of the refusal part alone, streamed or not', async () => {
		const a = await m.account()
		const evs = await events(a.key, { model: SCRIPTED, input: 'callRefused', tools })
		const completed = evs.at(-1).response
		expect(completed.output.map((o: any) => o.type)).toEqual(['function_call', 'message'])
		expect(completed.output[1].content).toEqual([{ type: 'refusal', refusal: '' }])
		expect(completed.output).toEqual(evs.filter((e) => e.type === 'response.output_item.done').map((e) => e.item))
		const whole = await a.openai.responses.create({ model: SCRIPTED, input: 'callRefused', tools })
		expect(shape(whole.output)).toEqual(shape(completed.output))
	})
})

describe('stored Claude reasoning replayed by its id alone', () => {
	it('should go back to Claude as the signed thinking it was, thinking on', async () => {
		const a = await m.account()
		const reasoning = { effort: 'low' as const, summary: 'auto' as const }
		const first = await a.openai.responses.create({ model: MODEL.anthropic, input: 'weather #tools', tools, reasoning })
		const kept = first.output.find((o) => o.type === 'reasoning') as OpenAI.Responses.ResponseReasoningItem
		expect(kept.encrypted_content).toBeString()
		const replay = first.output.map((o) => (o.type === 'reasoning' ? { type: 'reasoning' as const, id: o.id, summary: o.summary } : o))
		const outputs = first.output.flatMap((o) => (o.type === 'function_call' ? [{ type: 'function_call_output' as const, call_id: o.call_id, output: 'sunny' }] : []))
		await a.openai.responses.create({ model: MODEL.anthropic, tools, reasoning, input: [{ role: 'user', content: 'weather #tools' }, ...(replay as any), ...outputs] })
		const up = m.mocks.anthropic.requests.at(-1)!.body as any
		expect(up.thinking.type).not.toBe('disabled')
		expect(up.messages[1].content[0]).toMatchObject({ type: 'thinking' })
		expect(up.messages[1].content[0].signature).toBeString()
	})

	it("should refuse an id the gateway holds no reasoning for with OpenAI's words, before the vendor", async () => {
		const a = await m.account()
		const before = m.mocks.anthropic.requests.length
		const err = await refused(a.openai.responses.create({ model: MODEL.anthropic, input: [{ role: 'user', content: 'x' }, { type: 'reasoning', id: 'rs_unknown', summary: [] } as any] }))
		expect(err).toBeInstanceOf(OpenAI.NotFoundError)
		expect(err!.message).toContain("Item with id 'rs_unknown' not found.")
		expect(err!.param).toBe('input[1]')
		expect(m.mocks.anthropic.requests.length).toBe(before)
	})
})

describe('bodies OpenAI refuses', () => {
	const cases: Array<[string, object, string, string]> = [
		['json_schema without schema', { text: { format: { type: 'json_schema', name: 'x' } } }, 'text.format.schema', 'missing_required_parameter'],
		['max_output_tokens below 16', { max_output_tokens: 5 }, 'max_output_tokens', 'integer_below_min_value'],
		['truncation neither auto nor disabled', { truncation: 'sometimes' }, 'truncation', 'invalid_value'],
		['17 metadata pairs', { metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata', 'object_above_max_properties'],
		['a metadata value past 512', { metadata: { k: 'v'.repeat(513) } }, 'metadata.k', 'string_above_max_length'],
		['a metadata key past 64', { metadata: { ['k'.repeat(65)]: 'v' } }, 'metadata', 'string_above_max_length'],
	]
	it('should be 400 for every model, before any vendor is asked or anything billed', async () => {
		const a = await m.account()
		const before = { anthropic: m.mocks.anthropic.requests.length, gemini: m.mocks.gemini.requests.length, openai: m.mocks.openai.requests.length }
		for (const model of Object.values(MODEL))
			for (const [label, body, param, code] of cases) {
				const err = await refused(a.openai.responses.create({ model, input: 'hi', ...(body as object) } as any))
				expect([label, model, err?.status, err?.param, err?.code]).toEqual([label, model, 400, param, code])
			}
		expect({ anthropic: m.mocks.anthropic.requests.length, gemini: m.mocks.gemini.requests.length, openai: m.mocks.openai.requests.length }).toEqual(before)
		// The bounds themselves are taken.
		const ok = await a.openai.responses.create({ model: MODEL.anthropic, input: 'hi', max_output_tokens: 16, truncation: 'auto', metadata: Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v'])) })
		expect(ok.status).toBeString()
	})

	// QA (d_validation_converted): Claude and Gemini models answered these 200, and billed them.
	const values: Array<[string, object, string, string]> = [
		['include not an array', { include: 'reasoning.encrypted_content' }, 'include', 'invalid_type'],
		['include naming an unknown value', { include: ['reasoning.encrypted_content', 'bogus'] }, 'include[1]', 'invalid_value'],
		['service_tier not a tier', { service_tier: 'bogus' }, 'service_tier', 'invalid_value'],
		['max_tool_calls below 1', { max_tool_calls: 0 }, 'max_tool_calls', 'integer_below_min_value'],
		[
			'a function_call without arguments',
			{ input: [{ type: 'function_call', call_id: 'c1', name: 'f' }, { type: 'function_call_output', call_id: 'c1', output: 'r' }] },
			'input[0].arguments',
			'missing_required_parameter',
		],
	]
	it('should refuse include, service_tier, max_tool_calls and function_call arguments OpenAI refuses, for every model, unbilled', async () => {
		const a = await m.account()
		const before = { anthropic: m.mocks.anthropic.requests.length, gemini: m.mocks.gemini.requests.length, openai: m.mocks.openai.requests.length }
		for (const model of Object.values(MODEL))
			for (const [label, body, param, code] of values) {
				const err = await refused(a.openai.responses.create({ model, input: 'hi', ...(body as object) } as any))
				expect([label, model, err?.status, err?.param, err?.code]).toEqual([label, model, 400, param, code])
			}
		expect({ anthropic: m.mocks.anthropic.requests.length, gemini: m.mocks.gemini.requests.length, openai: m.mocks.openai.requests.length }).toEqual(before)
		expect(await usageRows(m, a.accountId)).toEqual([])
		// What OpenAI documents is taken.
		const ok = await a.openai.responses.create({ model: MODEL.anthropic, input: 'hi', include: ['reasoning.encrypted_content', 'web_search_call.action.sources'], service_tier: 'flex', max_tool_calls: 1 })
		expect(ok.status).toBe('completed')
	})
})

describe('image parts', () => {
	it('should say an input_image needs image_url or file_id, naming the part', async () => {
		const a = await m.account()
		for (const model of [MODEL.anthropic, MODEL.gemini]) {
			const err = await refused(a.openai.responses.create({ model, input: [{ role: 'user', content: [{ type: 'input_image', detail: 'auto' } as any] }] }))
			expect(err!.status).toBe(400)
			expect(err!.param).toBe('input[0].content[0]')
			expect(err!.message).toContain("needs 'image_url' or 'file_id'")
			expect(err!.message).not.toContain('file_id)')
		}
	})

	it("should refuse a data URL of invalid base64 naming the client's field, on Responses and chat", async () => {
		const a = await m.account()
		const before = m.mocks.anthropic.requests.length + m.mocks.gemini.requests.length
		for (const model of [MODEL.anthropic, MODEL.gemini]) {
			const err = await refused(a.openai.responses.create({ model, input: [{ role: 'user', content: [{ type: 'input_image', detail: 'auto', image_url: 'data:image/png;base64,!!!!' }] }] }))
			expect(err!.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_value', param: 'input[0].content[0].image_url' })
			const chat = await refused(a.openai.chat.completions.create({ model, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0K$$$$' } }] }] }))
			expect(chat!.error).toMatchObject({ code: 'invalid_value', param: 'messages[0].content[0].image_url.url' })
		}
		expect(m.mocks.anthropic.requests.length + m.mocks.gemini.requests.length).toBe(before)
	})
})

describe('an empty Claude text block before a call', () => {
	it('should make no message item, streamed or not', async () => {
		const a = await m.account()
		const whole = await a.openai.responses.create({ model: SCRIPTED, input: 'emptyText', tools })
		const streamed = await a.openai.responses.stream({ model: SCRIPTED, input: 'emptyText', tools }).finalResponse()
		expect(whole.output.map((o) => o.type)).toEqual(['function_call'])
		expect(streamed.output.map((o) => o.type)).toEqual(['function_call'])
	})
})

describe('service_tier and max_tool_calls', () => {
	it('should be on every converted Response object, streamed or not', async () => {
		const a = await m.account()
		for (const model of [MODEL.anthropic, MODEL.gemini]) {
			const plain = await a.openai.responses.create({ model, input: 'hi' })
			expect([plain.service_tier, plain.max_tool_calls]).toEqual(['default', null])
			const capped = await a.openai.responses.create({ model, input: 'hi', max_tool_calls: 2, service_tier: 'auto' })
			expect([capped.service_tier, capped.max_tool_calls]).toEqual(['default', 2])
			const evs = await events(a.key, { model, input: 'hi', max_tool_calls: 3 })
			for (const e of evs.filter((x) => x.response)) expect([e.type, e.response.service_tier, e.response.max_tool_calls]).toEqual([e.type, 'default', 3])
		}
	})
})
