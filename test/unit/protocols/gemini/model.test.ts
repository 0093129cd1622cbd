import { describe, expect, it } from 'bun:test'
import { Elysia } from 'elysia'
import { GeminiRequest } from '../../../../src/protocols/gemini/model'

const app = new Elysia().post('/generate', ({ body }) => ({ ok: body.contents.length }), { body: GeminiRequest })

const post = (body: unknown) =>
	app.handle(new Request('http://localhost/generate', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }))

describe('GeminiRequest schema', () => {
	it('should accept a documented request, unknown fields and snake_case spellings', async () => {
		const res = await post({
			contents: [{ role: 'user', parts: [{ text: 'hi' }, { inline_data: { mime_type: 'image/png', data: 'x' } }] }],
			system_instruction: { parts: [{ text: 'sys' }] },
			generationConfig: { temperature: 0.1, seed: 4, thinkingConfig: { thinkingBudget: 128 } },
			tools: [{ googleSearch: {} }, { functionDeclarations: [{ name: 'f', parameters: { type: 'OBJECT', properties: { a: { type: 'STRING' } } } }] }],
			safetySettings: [{ category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'BLOCK_ONLY_HIGH' }],
			labels: { team: 'a' },
		})
		expect(res.status).toBe(200)
		expect(await res.json()).toEqual({ ok: 1 })
	})

	it('should reject bad roles, missing contents and wrong types', async () => {
		for (const body of [
			{},
			{ contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] },
			{ contents: [{ role: 'user' }] },
			{ contents: [{ role: 'user', parts: [{ text: 1 }] }] },
			{ contents: [{ parts: [{ text: 'x' }] }], generationConfig: { maxOutputTokens: 'many' } },
			{ contents: [{ parts: [{ text: 'x' }] }], toolConfig: { functionCallingConfig: { mode: 'SOMETIMES' } } },
			{ contents: [{ parts: [{ functionCall: { args: {} } }] }] },
		]) {
			const res = await post(body)
			// Elysia answers schema violations with 422 before the codec runs.
			expect(res.status).toBe(422)
		}
	})
})
