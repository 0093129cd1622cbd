/**
 * JSON mode with a schema beside it, `response_format: {type: "json_object", schema}`: Together's and Fireworks' form
 * (docs.together.ai/docs/json-mode), which instructor-js sends in its JSON_SCHEMA mode with the schema nowhere else.
 * Another vendor's model gets the schema as the format a JSON schema response format becomes (Claude's structured
 * outputs, Gemini's response schema, or the schema stated in the system prompt), not bare JSON mode; OpenAI's channels
 * get the body as written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { lastRequest, type Matrix, SETUP_MS, startMatrix } from './harness'

const OLD = 'claude-old'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		channels: (mocks) => [{ name: 'claude-35', type: 'anthropic', base_url: mocks.anthropic.url, api_key: 'up-anthropic', models: [OLD], model_map: { [OLD]: 'claude-3-5-haiku-20241022' } as Record<string, string> }],
		models: [{ name: OLD, input_per_mtok: 3, output_per_mtok: 15 }],
	})
}, SETUP_MS)
afterAll(() => m.close())

// What instructor-js sends for z.object({ name: z.string(), age: z.number(), role: z.enum(['admin', 'user']) }).
const schema = {
	type: 'object',
	properties: { name: { type: 'string' }, age: { type: 'number' }, role: { type: 'string', enum: ['admin', 'user'] } },
	required: ['name', 'age', 'role'],
	additionalProperties: false,
	$schema: 'http://json-schema.org/draft-07/schema#',
}
const messages = [{ role: 'user' as const, content: 'Jason is 30' }]
// The mocks answer a document satisfying the schema they were given: strings the last user text, numbers 42, enums the first.
const expected = { name: 'Jason is 30', age: 42, role: 'admin' }
// The openai SDK's type has no `schema` beside json_object; the wire takes it.
const format = { type: 'json_object', schema } as unknown as { type: 'json_object' }

describe('response_format json_object with a schema', () => {
	for (const stream of [false, true])
		it(`should reach a Claude model as its structured outputs (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			let text: string | null | undefined
			if (stream) {
				const s = acct.openai.chat.completions.stream({ model: 'claude-m', messages, response_format: format })
				text = (await s.finalChatCompletion()).choices[0].message.content
			} else text = (await acct.openai.chat.completions.create({ model: 'claude-m', messages, response_format: format })).choices[0].message.content
			expect(JSON.parse(text ?? '')).toEqual(expected)
			const body = lastRequest(m.mocks.anthropic).body
			expect(body.output_config.format.type).toBe('json_schema')
			expect(Object.keys(body.output_config.format.schema.properties)).toEqual(['name', 'age', 'role'])
			expect(body.output_config.format.schema.properties.role.enum).toEqual(['admin', 'user'])
		})

	it('should state the schema in the system prompt of a Claude model without structured outputs', async () => {
		const acct = await m.account()
		await acct.openai.chat.completions.create({ model: OLD, messages, response_format: format })
		const body = lastRequest(m.mocks.anthropic).body
		expect(body.output_config).toBeUndefined()
		expect(body.system).toContain('conforms to the JSON Schema')
		expect(body.system).toContain('"enum":["admin","user"]')
	})

	it('should reach a Gemini model as its response schema', async () => {
		const acct = await m.account()
		const r = await acct.openai.chat.completions.create({ model: 'gemini-m', messages, response_format: format })
		expect(JSON.parse(r.choices[0].message.content ?? '')).toEqual(expected)
		const cfg = lastRequest(m.mocks.gemini).body.generationConfig
		expect(cfg.responseMimeType).toBe('application/json')
		expect((cfg.responseJsonSchema ?? cfg.responseSchema).properties.role.enum).toEqual(['admin', 'user'])
	})

	it('should reach an OpenAI model as written', async () => {
		const acct = await m.account()
		// OpenAI's JSON mode refuses a conversation that does not mention JSON.
		await acct.openai.chat.completions.create({ model: 'gpt-m', messages: [{ role: 'system', content: 'Answer in JSON.' }, ...messages], response_format: format })
		expect(lastRequest(m.mocks.openai).body.response_format).toEqual({ type: 'json_object', schema })
	})
})
