/**
 * Claude's `output_config.format` and Gemini's response schemas are enforced by their vendors (constrained decoding).
 * Converted for a GPT model, they ask for OpenAI's strict mode where the schema meets its rules (every object closed,
 * every property required), and leave it off where it does not: OpenAI answers 400 to a strict schema short of them,
 * as the mock does. The same for a Claude client's strict tools.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import { lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
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
