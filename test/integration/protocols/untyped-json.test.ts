/**
 * A JSON body sent without its content type: what `curl -d '{…}'` sends without `-H 'content-type: application/json'`
 * (application/x-www-form-urlencoded), what a page sends as text/plain to spare a preflight, or no type at all. The
 * model API takes JSON, so such a body is read as the JSON it is, on every protocol, rather than refused with
 * "Expected object" or "model is required" for a body holding both; a real form is refused as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, usageRows } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const post = (path: string, headers: Record<string, string>, body: string, type: string | undefined) =>
	fetch(`${m.app.url}${path}`, {
		method: 'POST',
		// Bytes, so that fetch adds no content type of its own.
		headers: { ...headers, ...(type !== undefined && { 'content-type': type }) },
		body: new TextEncoder().encode(body),
	})

describe('a JSON body sent untyped or mistyped', () => {
	for (const type of ['application/x-www-form-urlencoded', 'text/plain;charset=UTF-8', undefined])
		it(`should be served as JSON on chat, messages and Gemini (${type ?? 'no content type'})`, async () => {
			const acct = await m.account()
			const chat = await post('/v1/chat/completions', { authorization: `Bearer ${acct.key}` }, JSON.stringify({ model: MODEL.anthropic, messages: [{ role: 'user', content: 'untyped chat' }] }), type)
			expect(chat.status).toBe(200)
			expect((await chat.json()).choices[0].message.content).toContain('untyped chat')
			const messages = await post('/v1/messages', { 'x-api-key': acct.key }, JSON.stringify({ model: MODEL.gemini, max_tokens: 32, messages: [{ role: 'user', content: 'untyped messages' }] }), type)
			expect(messages.status).toBe(200)
			expect(JSON.stringify(lastRequest(m.mocks.gemini).body.contents)).toContain('untyped messages')
			const gemini = await post(`/v1beta/models/${MODEL.openai}:generateContent`, { 'x-goog-api-key': acct.key }, JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'untyped gemini' }] }] }), type)
			expect(gemini.status).toBe(200)
			expect(lastRequest(m.mocks.openai).body.messages).toEqual([{ role: 'user', content: 'untyped gemini' }])
			expect((await usageRows(m, acct.accountId)).length).toBe(3)
		})

	it('should refuse a real form as before, charging nothing', async () => {
		const acct = await m.account()
		const form = await post('/v1/chat/completions', { authorization: `Bearer ${acct.key}` }, `model=${MODEL.openai}&messages=hi`, 'application/x-www-form-urlencoded')
		expect(form.status).toBe(400)
		expect((await form.json()).error.param).toBe('messages')
		expect(await usageRows(m, acct.accountId)).toEqual([])
	})
})
