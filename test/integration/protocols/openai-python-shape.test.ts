/**
 * The official OpenAI Python SDK (`openai` 3.22.1, and 2.54.0 for the same calls) as it sends and reads the wire,
 * replayed here because CI has no Python. Captured by running the SDK against this gateway and the mocks (an httpx
 * event hook printing each request's headers and body, and the mocks' recorded requests): `OpenAI` and `AsyncOpenAI`
 * with default settings, base URL `{root}/v1`, the `sk-…` key.
 * What is unusual about it: `chat.completions.parse()` / `.stream()` and `responses.parse()` send a Pydantic model's
 * strict JSON Schema, in which every nested model is a `$ref` into `$defs` and an optional field is
 * `anyOf: [{…}, {type: null}]`; the SDK then validates the answer with Pydantic and raises on a missing field. Uploads
 * are httpx multipart bodies whose list fields repeat a `name[]` part (`timestamp_granularities[]`, `image[]`), after
 * the other fields and before the file. The SDK retries 408, 409, 429 and 5xx twice (`x-stainless-retry-count` 0, 1,
 * 2), waiting what `retry-after` says (up to two minutes; longer, it does not retry), unless `x-should-retry` says
 * otherwise. Its types are Literals of OpenAI's values (a failed response's `error.code` among them), not checked when
 * it reads a body, so an unknown value reaches the caller's code as it came.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { parseSse } from '../../../src/core/sse'
import { priceList } from '../surface/helpers'
import { type Account, expectCharges, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, type Upstream, UPSTREAMS, usageRows } from './harness'
import { openaiPythonHeaders } from './openai-python-headers'

const WHISPER = 'whisper-1'
/** A model served by one channel of its own, whose key the vendor refuses in the retry test (the channel is then disabled). */
const LONE = 'gemini-lone'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		models: priceList([
			{ name: WHISPER, per_minute: 0.006 },
			{ name: LONE, input_per_mtok: 0.3, output_per_mtok: 2.5 },
		]),
		channels: (mocks) => [
			{ name: 'oa-audio', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: [WHISPER] },
			{ name: 'gm-lone', type: 'gemini', base_url: mocks.gemini.url, api_key: 'up-gemini', models: [LONE], model_map: { [LONE]: 'gemini-2.5-flash' } },
		],
	})
}, SETUP_MS)
afterAll(() => m.close())

type Obj = Record<string, any>

const pyHeaders = (acct: Account, helper?: string, retry = 0) => openaiPythonHeaders(acct, { helper, retry })

/**
 * `to_strict_json_schema(Math)` for
 * `class Step(BaseModel): explanation: str; output: str` and
 * `class Math(BaseModel): steps: list[Step]; final_answer: str; confidence: float | None`, key order as sent.
 */
const MATH_SCHEMA = {
	$defs: {
		Step: {
			properties: { explanation: { title: 'Explanation', type: 'string' }, output: { title: 'Output', type: 'string' } },
			required: ['explanation', 'output'],
			title: 'Step',
			type: 'object',
			additionalProperties: false,
		},
	},
	properties: {
		steps: { items: { $ref: '#/$defs/Step' }, title: 'Steps', type: 'array' },
		final_answer: { title: 'Final Answer', type: 'string' },
		confidence: { anyOf: [{ type: 'number' }, { type: 'null' }], title: 'Confidence' },
	},
	required: ['steps', 'final_answer', 'confidence'],
	title: 'Math',
	type: 'object',
	additionalProperties: false,
}
const PROMPT = 'solve 8x+7=-23'

/** What Pydantic's `Math.model_validate_json` demands of the answer: every required field, of its type, nested ones too. */
function expectMath(text: string) {
	const v = JSON.parse(text)
	expect(Object.keys(v).sort()).toEqual(['confidence', 'final_answer', 'steps'])
	expect(v.final_answer).toBeString()
	expect(v.confidence === null || typeof v.confidence === 'number').toBe(true)
	expect(v.steps.length).toBeGreaterThan(0)
	for (const step of v.steps) {
		expect(step.explanation).toBeString()
		expect(step.output).toBeString()
	}
}

/** The schema as it reached the vendor: `$defs` and the `$ref` kept (each vendor takes local references). */
function upstreamSchema(up: Upstream): Obj {
	const body = lastRequest(m.mocks[up]).body
	if (up === 'anthropic') return body.output_config.format.schema
	if (up === 'gemini') return body.generationConfig.responseJsonSchema
	return body.response_format?.json_schema?.schema ?? body.text.format.schema
}

const post = (path: string, headers: Record<string, string>, body: unknown) => fetch(`${m.app.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })

describe('openai-python parse helpers with a nested Pydantic model ($defs and $ref)', () => {
	for (const up of UPSTREAMS)
		it(`should answer chat.completions.parse() with JSON its Pydantic model validates (${up} upstream)`, async () => {
			const acct = await m.account()
			const res = await post('/v1/chat/completions', pyHeaders(acct, 'chat.completions.parse'), {
				messages: [{ role: 'user', content: PROMPT }],
				model: MODEL[up],
				response_format: { type: 'json_schema', json_schema: { schema: MATH_SCHEMA, name: 'Math', strict: true } },
				stream: false,
			})
			expect(res.status).toBe(200)
			const r = (await res.json()) as Obj
			expect(r.choices[0].finish_reason).toBe('stop')
			expect(r.choices[0].message.refusal).toBeNull()
			expectMath(r.choices[0].message.content)
			expect(upstreamSchema(up).$defs.Step.required).toEqual(['explanation', 'output'])
			await expectCharges(m, acct, [{ model: MODEL[up], input: r.usage.prompt_tokens, output: r.usage.completion_tokens }])
		})

	for (const up of UPSTREAMS)
		it(`should stream chat.completions.stream() content its accumulator parses, and the usage chunk it asked for (${up} upstream)`, async () => {
			const acct = await m.account()
			const res = await post('/v1/chat/completions', pyHeaders(acct, 'chat.completions.stream'), {
				messages: [{ role: 'user', content: PROMPT }],
				model: MODEL[up],
				response_format: { type: 'json_schema', json_schema: { schema: MATH_SCHEMA, name: 'Math', strict: true } },
				stream: true,
				stream_options: { include_usage: true },
			})
			expect(res.status).toBe(200)
			let text = ''
			let finish: string | undefined
			let usage: Obj | undefined
			for await (const f of parseSse(res.body!)) {
				if (f.data === '[DONE]') continue
				const chunk = JSON.parse(f.data)
				if (chunk.usage) usage = chunk.usage
				for (const c of chunk.choices) {
					text += c.delta.content ?? ''
					finish = c.finish_reason ?? finish
				}
			}
			expect(finish).toBe('stop')
			expectMath(text)
			await expectCharges(m, acct, [{ model: MODEL[up], input: usage!.prompt_tokens, output: usage!.completion_tokens, stream: true }])
		})

	for (const up of UPSTREAMS)
		it(`should answer responses.parse() with output_text its Pydantic model validates (${up} upstream)`, async () => {
			const acct = await m.account()
			const res = await post('/v1/responses', pyHeaders(acct), {
				input: PROMPT,
				model: MODEL[up],
				text: { format: { type: 'json_schema', strict: true, name: 'Math', schema: MATH_SCHEMA } },
			})
			expect(res.status).toBe(200)
			const r = (await res.json()) as Obj
			expect(r.status).toBe('completed')
			const texts = r.output.filter((o: Obj) => o.type === 'message').flatMap((o: Obj) => o.content.filter((c: Obj) => c.type === 'output_text').map((c: Obj) => c.text))
			expect(texts).toHaveLength(1)
			expectMath(texts[0])
			expect(upstreamSchema(up).$defs.Step.required).toEqual(['explanation', 'output'])
			await expectCharges(m, acct, [{ model: MODEL[up], input: r.usage.input_tokens, output: r.usage.output_tokens, endpoint: '/v1/responses' }])
		})
})

/** A Responses stream's events as openai-python's `responses.stream()` iterates them (each frame's JSON; that helper sends no helper header). */
async function responsesEvents(res: Response): Promise<Obj[]> {
	expect(res.status).toBe(200)
	const out: Obj[] = []
	for await (const f of parseSse(res.body!)) out.push(JSON.parse(f.data))
	return out
}

/** openai-python 3.22.1 types `ResponseError.code` (a failed response's `error.code`) as a Literal of these. */
const RESPONSE_ERROR_CODES = ['server_error', 'rate_limit_exceeded', 'invalid_prompt', 'data_residency_mismatch', 'bio_policy', 'misalignment_policy_violation', 'vector_store_timeout']

describe("openai-python's responses.stream() of a failure after the answer began", () => {
	const cases: Array<[Upstream, NonNullable<Matrix['mocks']['openai']['fault']>, string]> = [
		['gemini', { kind: 'midstream', afterChunks: 2 }, 'server_error'],
		['gemini', { kind: 'midstream', afterChunks: 2, status: 429 }, 'rate_limit_exceeded'],
		['anthropic', { kind: 'midstream', afterChunks: 4 }, 'server_error'],
	]
	for (const [up, fault, code] of cases)
		it(`should fail the response with ${code}, one of the codes the SDK types, after the error event (${up} upstream${fault.kind === 'midstream' && fault.status ? `, ${fault.status}` : ''})`, async () => {
			const acct = await m.account()
			m.mocks[up].faultOnce = fault
			const events = await responsesEvents(await post('/v1/responses', pyHeaders(acct), { input: 'hello there my friend', model: MODEL[up], stream: true }))
			// The answer had begun (a text delta reached the SDK), so the failure is told in the stream, not as an HTTP error.
			expect(events.some((e) => e.type === 'response.output_text.delta')).toBe(true)
			expect(events.slice(-2).map((e) => e.type)).toEqual(['error', 'response.failed'])
			expect(events.at(-2)!.message).toBeString()
			const failed = events.at(-1)!.response
			expect(failed.status).toBe('failed')
			expect(failed.error.code).toBe(code)
			expect(RESPONSE_ERROR_CODES).toContain(failed.error.code)
		})
})

describe("openai-python's multipart upload", () => {
	it('should relay both timestamp_granularities[] parts of audio.transcriptions.create to the vendor, and bill the minutes once', async () => {
		const acct = await m.account()
		// httpx's layout for `file=open('a.wav','rb'), response_format='verbose_json', timestamp_granularities=['word','segment']`:
		// the list as repeated `name[]` parts, then the file with the type guessed from its name.
		const wav = new Uint8Array(44 + 16000 * 2 * 3)
		wav.set(new TextEncoder().encode('RIFF'), 0)
		wav.set(new TextEncoder().encode('WAVEfmt '), 8)
		new DataView(wav.buffer).setUint32(16, 16, true)
		new DataView(wav.buffer).setUint16(20, 1, true)
		new DataView(wav.buffer).setUint16(22, 1, true)
		new DataView(wav.buffer).setUint32(24, 16000, true)
		new DataView(wav.buffer).setUint32(28, 32000, true)
		new DataView(wav.buffer).setUint16(32, 2, true)
		new DataView(wav.buffer).setUint16(34, 16, true)
		wav.set(new TextEncoder().encode('data'), 36)
		new DataView(wav.buffer).setUint32(40, 16000 * 2 * 3, true)
		const form = new FormData()
		form.append('timestamp_granularities[]', 'word')
		form.append('timestamp_granularities[]', 'segment')
		form.append('model', WHISPER)
		form.append('response_format', 'verbose_json')
		form.append('file', new File([wav], 'a.wav', { type: 'audio/x-wav' }))
		const { 'content-type': _json, ...headers } = pyHeaders(acct)
		const res = await fetch(`${m.app.url}/v1/audio/transcriptions`, { method: 'POST', headers, body: form })
		expect(res.status).toBe(200)
		const r = (await res.json()) as Obj
		expect(r.duration).toBe(3)
		const sent = lastRequest(m.mocks.openai).form!
		expect(sent.getAll('timestamp_granularities[]')).toEqual(['word', 'segment'])
		expect((sent.get('file') as File).size).toBe(wav.length)
		const rows = await usageRows(m, acct.accountId)
		expect(rows.map((row) => [row.model, row.endpoint, row.status, Math.round(row.cost * 1e6)])).toEqual([[WHISPER, '/v1/audio/transcriptions', 200, 300]])
	})
})

describe("openai-python's retries", () => {
	it("should answer each of the SDK's three attempts at an upstream 429 with 429 and its retry-after, charging none", async () => {
		const acct = await m.account()
		m.mocks.gemini.fault = { kind: 'status', status: 429, retryAfter: 1 }
		try {
			for (const attempt of [0, 1, 2]) {
				const res = await post('/v1/chat/completions', pyHeaders(acct, undefined, attempt), { messages: [{ role: 'user', content: 'hi' }], model: MODEL.gemini })
				expect(res.status).toBe(429)
				// The SDK waits this long (under its two-minute ceiling) instead of its own 0.5 s and 1 s backoff.
				expect(res.headers.get('retry-after')).toBe('1')
				expect(((await res.json()) as Obj).error).toMatchObject({ type: 'rate_limit_error', code: 'upstream_rate_limited' })
			}
		} finally {
			m.mocks.gemini.fault = undefined
		}
		const rows = await usageRows(m, acct.accountId)
		expect(rows.map((r) => [r.status, r.cost])).toEqual([
			[429, 0],
			[429, 0],
			[429, 0],
		])
		expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
	})

	it('should tell the SDK not to retry a model whose every channel is disabled (x-should-retry: false), which only an operator brings back', async () => {
		const acct = await m.account()
		// The vendor refuses the channel's key: the gateway disables the channel (its only one), so the model has none left.
		m.mocks.gemini.faultOnce = { kind: 'status', status: 401 }
		const refused = await post('/v1/chat/completions', pyHeaders(acct), { messages: [{ role: 'user', content: 'hi' }], model: LONE })
		expect(refused.status).toBe(502)
		const before = m.mocks.gemini.requests.length
		const res = await post('/v1/chat/completions', pyHeaders(acct), { messages: [{ role: 'user', content: 'hi' }], model: LONE })
		expect(res.status).toBe(503)
		expect(((await res.json()) as Obj).error).toMatchObject({ code: 'model_unavailable', param: 'model' })
		// Without it the SDK asks twice more within a second and a half, for the same 503.
		expect(res.headers.get('x-should-retry')).toBe('false')
		expect(m.mocks.gemini.requests.length).toBe(before)
		expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
	})
})
