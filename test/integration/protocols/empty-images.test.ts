/**
 * An image with no bytes (`data:image/png;base64,`, or an Anthropic base64 source with empty `data`), a known shape of
 * an agent's thread that cannot go on: refused 400 in the caller's own vendor's words before any upstream call and
 * without a charge, whichever vendor serves the model. OpenAI's `invalid_value` at the `image_url` is what Codex
 * recognises to roll the turn back (openai/codex#23494); before, a Claude model's refusal came through in Anthropic's
 * words with no `param`, and a Gemini or OpenAI model was sent the empty image.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type Account, type Matrix, MODEL, SETUP_MS, startMatrix, type Upstream } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const sent = () => (['openai', 'anthropic', 'gemini'] as Upstream[]).map((u) => m.mocks[u].requests.length)
const EXPECTED = "Expected a base64-encoded data URL with an image MIME type (e.g. 'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got empty base64-encoded bytes."

async function refusal(acct: Account, call: () => Promise<unknown>) {
	const before = sent()
	const err: any = await call().then(
		() => undefined,
		(e) => e,
	)
	expect(err?.status).toBe(400)
	await m.app.svc.ledger.flush()
	expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
	expect(sent()).toEqual(before)
	return err
}

describe('an image with no bytes', () => {
	for (const up of ['openai', 'anthropic', 'gemini'] as const) {
		it(`should be refused to a Responses client in OpenAI's words, in a message and in a tool output (${up})`, async () => {
			const acct = await m.account()
			const err = await refusal(acct, () =>
				acct.openai.responses.create({ model: MODEL[up], input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', image_url: 'data:image/png;base64,', detail: 'auto' }] }] }),
			)
			expect(err.error).toEqual({ type: 'invalid_request_error', code: 'invalid_value', param: 'input[0].content[1].image_url', message: `Invalid 'input[0].content[1].image_url'. ${EXPECTED}` })
			const input = [
				{ role: 'user' as const, content: 'Take a screenshot' },
				{ type: 'function_call' as const, call_id: 'call_s1', name: 'screenshot', arguments: '{}' },
				{ type: 'function_call_output' as const, call_id: 'call_s1', output: [{ type: 'input_image' as const, image_url: 'data:image/png;base64,', detail: 'auto' as const }] },
			]
			const tools = [{ type: 'function' as const, name: 'screenshot', strict: false, parameters: { type: 'object', properties: {} } }]
			const inTool = await refusal(acct, () => acct.openai.responses.create({ model: MODEL[up], input, tools, stream: true }))
			expect(inTool.error).toMatchObject({ code: 'invalid_value', param: 'input[2].output[0].image_url' })
		})
		it(`should be refused to a Chat Completions client in OpenAI's words (${up})`, async () => {
			const acct = await m.account()
			const err = await refusal(acct, () =>
				acct.openai.chat.completions.create({ model: MODEL[up], messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,' } }] }] }),
			)
			expect(err.error).toEqual({ type: 'invalid_request_error', code: 'invalid_value', param: 'messages[0].content[1].image_url.url', message: `Invalid image URL: 'messages[0].content[1].image_url.url'. ${EXPECTED}` })
		})
		it(`should be refused to an Anthropic client in Anthropic's words (${up})`, async () => {
			const acct = await m.account()
			const err = await refusal(acct, () =>
				acct.anthropic.messages.create({
					model: MODEL[up],
					max_tokens: 50,
					messages: [
						{ role: 'user', content: 'Hi' },
						{ role: 'assistant', content: 'Hello.' },
						{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: '' } }, { type: 'text', text: 'What is this?' }] },
					],
				}),
			)
			expect(err.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: 'messages.2.content.0.image.source.base64: image cannot be empty' } })
		})
	}
	it('should still take an image with bytes', async () => {
		const acct = await m.account()
		const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
		const r = await acct.openai.responses.create({ model: MODEL.anthropic, input: [{ role: 'user', content: [{ type: 'input_image', image_url: `data:image/png;base64,${png}`, detail: 'auto' }, { type: 'input_text', text: 'What is this?' }] }] })
		expect(r.output_text).toContain('image')
	})
})
