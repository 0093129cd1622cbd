/**
 * A JSON schema response format sent to a Claude model through another protocol goes as Claude's structured outputs
 * (`output_config.format`) on Claude 4.5 and later, with the constraints Claude refuses (minimum, maxLength,
 * maxItems …) moved into descriptions, since the API answers 400 for them; older models and channels set to
 * `structured_outputs: "prompt"` get the schema as a system instruction instead. The mock refuses what the API refuses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { zodFunction, zodResponseFormat } from 'openai/helpers/zod'
import { z } from 'zod'
import { lastRequest, type Matrix, SETUP_MS, startMatrix } from './harness'

const OLD = 'claude-old'
const PROMPTED = 'claude-prompted'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		channels: (mocks) => [
			{ name: 'claude-35', type: 'anthropic', base_url: mocks.anthropic.url, api_key: 'up-anthropic', models: [OLD], model_map: { [OLD]: 'claude-3-5-haiku-20241022' } as Record<string, string> },
			// An Anthropic-compatible vendor whose model is named like a Claude 4.5 but lacks the feature.
			{ name: 'compat', type: 'anthropic', base_url: mocks.anthropic.url, api_key: 'up-anthropic', models: [PROMPTED], model_map: { [PROMPTED]: 'claude-sonnet-4-5' } as Record<string, string>, settings: { structured_outputs: 'prompt' as const } },
		],
		models: [OLD, PROMPTED].map((name) => ({ name, input_per_mtok: 3, output_per_mtok: 15 })),
	})
}, SETUP_MS)
afterAll(() => m.close())

const Review = z.object({
	score: z.number().int().min(1).max(100).describe('How good'),
	summary: z.string().max(280),
	tags: z.array(z.string()).min(1).max(5),
	verdict: z.enum(['ship', 'hold']),
	note: z.string().nullable(),
})

describe('Claude structured outputs from an OpenAI client', () => {
	for (const stream of [false, true])
		it(`should constrain a zod schema with Claude's output_config.format, its limits in the descriptions (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const format = zodResponseFormat(Review, 'review')
			const messages = [{ role: 'user' as const, content: 'review this' }]
			let parsed: z.infer<typeof Review> | null | undefined
			if (stream) {
				const s = acct.openai.chat.completions.stream({ model: 'claude-m', messages, response_format: format })
				parsed = (await s.finalChatCompletion()).choices[0].message.parsed
			} else parsed = (await acct.openai.chat.completions.parse({ model: 'claude-m', messages, response_format: format })).choices[0].message.parsed
			// The mock answers schema-shaped JSON only for a format it accepted (it refuses `minimum` and the like with 400).
			expect(parsed).toEqual({ score: 42, summary: 'review this', tags: ['review this'], verdict: 'ship', note: 'review this' })
			const body = lastRequest(m.mocks.anthropic).body
			const schema = body.output_config.format.schema
			expect(body.output_config.format.type).toBe('json_schema')
			expect(schema.additionalProperties).toBe(false)
			expect(schema.properties.score).toEqual({ type: 'integer', description: 'How good\n\n{minimum: 1, maximum: 100}' })
			expect(schema.properties.summary).toEqual({ type: 'string', description: '{maxLength: 280}' })
			expect(schema.properties.tags).toEqual({ type: 'array', items: { type: 'string' }, minItems: 1, description: '{maxItems: 5}' })
			expect(body.system).toBeUndefined()
		})

	it('should keep the system prompt for a model without structured outputs and say the schema there', async () => {
		const acct = await m.account()
		const format = zodResponseFormat(Review, 'review')
		await acct.openai.chat.completions.create({ model: OLD, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'review this' }], response_format: format })
		const body = lastRequest(m.mocks.anthropic).body
		expect(body.model).toBe('claude-3-5-haiku-20241022')
		expect(body.output_config).toBeUndefined()
		expect(body.system).toEqual([
			{ type: 'text', text: 'Be brief.' },
			{ type: 'text', text: expect.stringContaining('conforms to the JSON Schema "review"') },
		])
		expect(body.system[1].text).toContain('"minimum":1')
	})

	it("should follow a channel's structured_outputs: prompt over the model's name", async () => {
		const acct = await m.account()
		await acct.openai.chat.completions.create({ model: PROMPTED, messages: [{ role: 'user', content: 'review this' }], response_format: zodResponseFormat(Review, 'review') })
		const body = lastRequest(m.mocks.anthropic).body
		expect(body.output_config).toBeUndefined()
		expect(body.system).toContain('conforms to the JSON Schema "review"')
	})

	it('should ask in the system prompt when the conversation ends with an assistant prefill, which structured outputs refuse', async () => {
		const acct = await m.account()
		const r = await acct.openai.chat.completions.create({
			model: 'claude-m',
			messages: [
				{ role: 'user', content: 'review this' },
				{ role: 'assistant', content: '{"score":' },
			],
			response_format: zodResponseFormat(Review, 'review'),
		})
		expect(r.choices[0].message.content).toBeString()
		const body = lastRequest(m.mocks.anthropic).body
		expect(body.output_config).toBeUndefined()
		expect(body.system).toContain('conforms to the JSON Schema "review"')
	})

	it('should ask in the system prompt for a recursive schema, which structured outputs cannot express', async () => {
		const acct = await m.account()
		const schema = {
			type: 'object',
			properties: { root: { $ref: '#/$defs/node' } },
			required: ['root'],
			additionalProperties: false,
			$defs: { node: { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } }, required: ['name', 'children'], additionalProperties: false } },
		}
		await acct.openai.chat.completions.create({ model: 'claude-m', messages: [{ role: 'user', content: 'a tree' }], response_format: { type: 'json_schema', json_schema: { name: 'tree', schema, strict: true } } })
		const body = lastRequest(m.mocks.anthropic).body
		expect(body.output_config).toBeUndefined()
		expect(body.system).toContain('conforms to the JSON Schema "tree"')
	})

	it('should still ask for json_object mode in the system prompt (structured outputs need a schema)', async () => {
		const acct = await m.account()
		await acct.openai.chat.completions.create({ model: 'claude-m', messages: [{ role: 'user', content: 'any json' }], response_format: { type: 'json_object' } })
		const body = lastRequest(m.mocks.anthropic).body
		expect(body.output_config).toBeUndefined()
		expect(body.system).toContain('Respond with a single valid JSON object')
	})
})

describe('Claude strict tool use from an OpenAI client', () => {
	const Lookup = z.object({ city: z.string().min(2), days: z.number().int().min(1).max(100) })

	it('should send a strict function as a strict Claude tool, its schema cut to what Claude accepts', async () => {
		const acct = await m.account()
		const r = await acct.openai.chat.completions.parse({
			model: 'claude-m',
			messages: [{ role: 'user', content: 'weather in Oslo' }],
			tools: [zodFunction({ name: 'lookup', parameters: Lookup })],
			tool_choice: 'required',
		})
		const call = r.choices[0].message.tool_calls?.[0]
		if (call?.type !== 'function') throw new Error(`expected a function call, got ${JSON.stringify(call)}`)
		expect(call.function.name).toBe('lookup')
		expect(call.function.parsed_arguments).toEqual({ city: 'weather in Oslo', days: 42 })
		const tool = lastRequest(m.mocks.anthropic).body.tools[0]
		expect(tool.strict).toBe(true)
		expect(tool.input_schema).toMatchObject({
			type: 'object',
			additionalProperties: false,
			properties: { city: { type: 'string', description: '{minLength: 2}' }, days: { type: 'integer', description: '{minimum: 1, maximum: 100}' } },
		})
	})

	it('should leave a strict function as a plain tool for a model without strict tool use', async () => {
		const acct = await m.account()
		await acct.openai.chat.completions.create({ model: OLD, messages: [{ role: 'user', content: 'weather in Oslo' }], tools: [zodFunction({ name: 'lookup', parameters: Lookup })] })
		const tool = lastRequest(m.mocks.anthropic).body.tools[0]
		expect(tool.strict).toBeUndefined()
		expect(tool.input_schema.properties.days).toMatchObject({ minimum: 1, maximum: 100 })
	})
})
