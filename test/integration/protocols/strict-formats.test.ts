/**
 * Claude's `output_config.format` and Gemini's response schemas are enforced by their vendors (constrained decoding).
 * Converted for a GPT model, they ask for OpenAI's strict mode where the schema meets its rules (every object closed,
 * every property required), and leave it off where it does not: OpenAI answers 400 to a strict schema short of them,
 * as the mock does. The same for a Claude client's strict tools. A schema whose root is no object (Gemini's list or
 * enum), which OpenAI refuses as a format (as the mock does), goes as an instruction alone, as to Claude without
 * structured outputs, over Chat Completions and over the Responses API alike.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI, Type } from '@google/genai'
import { lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, UPSTREAM_MODEL } from './harness'

/** A GPT model on a channel with the Responses API, where a converted web search goes. */
const GPT_WEB = 'gpt-web'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		models: [{ name: GPT_WEB, input_per_mtok: 1, output_per_mtok: 1 }],
		channels: (mocks) => [
			{ name: 'openai-responses', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: [GPT_WEB], model_map: { [GPT_WEB]: UPSTREAM_MODEL.openai }, settings: { responses_api: true } },
		],
	})
}, SETUP_MS)
afterAll(() => m.close())

const closed = { type: 'object', properties: { city: { type: 'string' }, tags: { type: 'array', items: { type: 'object', properties: { t: { type: 'string' } }, required: ['t'], additionalProperties: false } } }, required: ['city', 'tags'], additionalProperties: false }
const open = { type: 'object', properties: { city: { type: 'string' }, note: { type: 'string' } }, required: ['city'] }

describe('a Claude client to a GPT model', () => {
	it('should ask for strict mode for a schema that meets its rules', async () => {
		const acct = await m.account()
		const r = await acct.anthropic.messages.create({ model: MODEL.openai, max_tokens: 200, messages: [{ role: 'user', content: 'Oslo' }], output_config: { format: { type: 'json_schema', schema: closed } } } as never)
		const text = (r as { content: { type: string; text: string }[] }).content.find((b) => b.type === 'text')?.text
		expect(JSON.parse(text!)).toEqual({ city: 'Oslo', tags: [{ t: 'Oslo' }] })
		expect(lastRequest(m.mocks.openai).body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'response', schema: closed, strict: true } })
	})

	it('should leave strict mode off for a schema with an optional property, rather than have it refused', async () => {
		const acct = await m.account()
		const r = await acct.anthropic.messages.create({ model: MODEL.openai, max_tokens: 200, messages: [{ role: 'user', content: 'Oslo' }], output_config: { format: { type: 'json_schema', schema: open } } } as never)
		expect((r as { stop_reason: string }).stop_reason).toBe('end_turn')
		expect(lastRequest(m.mocks.openai).body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'response', schema: open } })
	})
})

describe('a Gemini client to a GPT model', () => {
	const genai = (key: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
	it('should ask for strict mode for a responseJsonSchema that meets its rules, and not for one that does not', async () => {
		const acct = await m.account()
		const r = await genai(acct.key).models.generateContent({ model: MODEL.openai, contents: 'Oslo', config: { responseMimeType: 'application/json', responseJsonSchema: closed } })
		expect(JSON.parse(r.text!)).toEqual({ city: 'Oslo', tags: [{ t: 'Oslo' }] })
		expect(lastRequest(m.mocks.openai).body.response_format.json_schema.strict).toBe(true)
		await genai(acct.key).models.generateContent({ model: MODEL.openai, contents: 'Oslo', config: { responseMimeType: 'application/json', responseJsonSchema: open } })
		expect(lastRequest(m.mocks.openai).body.response_format.json_schema).not.toHaveProperty('strict')
	})
})

describe('a Gemini schema whose root is no object, to a GPT model', () => {
	const genai = (key: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
	const recipes = { type: Type.ARRAY, items: { type: Type.OBJECT, properties: { recipeName: { type: Type.STRING } } } }
	const roots: [string, Record<string, unknown>, string][] = [
		['responseSchema ARRAY', { responseSchema: recipes }, 'JSON array'],
		['responseJsonSchema array', { responseJsonSchema: { type: 'array', items: { type: 'integer' } } }, 'JSON array'],
		['responseSchema STRING enum', { responseSchema: { type: Type.STRING, enum: ['x', 'y'] } }, 'JSON value'],
	]
	for (const [name, config, kind] of roots)
		it(`should state a ${name} as an instruction with no response format, whole and streamed`, async () => {
			const acct = await m.account()
			const ask = { model: MODEL.openai, contents: 'list cookies', config: { responseMimeType: 'application/json', ...config } }
			const r = await genai(acct.key).models.generateContent(ask)
			expect(r.text).toBe('Hello! You said: list cookies')
			const sent = lastRequest(m.mocks.openai).body
			expect(sent).not.toHaveProperty('response_format')
			expect(sent.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining(`Respond with a single ${kind} that conforms to the JSON Schema "response"`) })
			let text = ''
			for await (const c of await genai(acct.key).models.generateContentStream(ask)) text += c.text ?? ''
			expect(text).toBe('Hello! You said: list cookies')
			expect(lastRequest(m.mocks.openai).body).not.toHaveProperty('response_format')
		})

	it('should state it as an instruction with no text.format over the Responses API (a converted web search)', async () => {
		const acct = await m.account()
		await genai(acct.key).models.generateContent({ model: GPT_WEB, contents: 'list cookies', config: { responseMimeType: 'application/json', responseSchema: recipes, tools: [{ googleSearch: {} }] } })
		const sent = lastRequest(m.mocks.openai)
		expect(sent.path).toEndWith('/responses')
		expect(sent.body.text?.format).toBeUndefined()
		expect(sent.body.instructions).toContain('Respond with a single JSON array that conforms to the JSON Schema "response"')
	})

	it('should still send an object root as the json_schema format', async () => {
		const acct = await m.account()
		await genai(acct.key).models.generateContent({ model: MODEL.openai, contents: 'Oslo', config: { responseMimeType: 'application/json', responseSchema: { type: Type.OBJECT, properties: { city: { type: Type.STRING } } } } })
		expect(lastRequest(m.mocks.openai).body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'response', schema: { type: 'object' } } })
	})
})

describe("a Claude client's strict tools to a GPT model", () => {
	const tool = (schema: Record<string, unknown>) => ({ name: 'lookup', description: 'Look up', input_schema: schema, strict: true })
	it('should keep strict for a schema that meets its rules and drop it, rather than be refused, for one that does not', async () => {
		const acct = await m.account()
		const ask = (schema: Record<string, unknown>) =>
			acct.anthropic.messages.create({ model: MODEL.openai, max_tokens: 200, messages: [{ role: 'user', content: 'Oslo' }], tools: [tool(schema)], tool_choice: { type: 'any' } } as never)
		const r = (await ask(closed)) as { content: { type: string; name?: string }[] }
		expect(r.content.find((b) => b.type === 'tool_use')?.name).toBe('lookup')
		expect(lastRequest(m.mocks.openai).body.tools[0].function.strict).toBe(true)
		const r2 = (await ask(open)) as { content: { type: string; name?: string }[] }
		expect(r2.content.find((b) => b.type === 'tool_use')?.name).toBe('lookup')
		expect(lastRequest(m.mocks.openai).body.tools[0].function).not.toHaveProperty('strict')
	})
})
