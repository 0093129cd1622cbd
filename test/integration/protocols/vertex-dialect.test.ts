/**
 * Claude Code pointed at the gateway in Vertex AI's format (`CLAUDE_CODE_USE_VERTEX=1`,
 * `ANTHROPIC_VERTEX_BASE_URL={root}/v1`, `CLAUDE_CODE_SKIP_VERTEX_AUTH=1`, the key in a header): what the Anthropic
 * Vertex SDK sends, `…/publishers/anthropic/models/{model}:rawPredict`, `:streamRawPredict` and
 * `count-tokens:rawPredict`, with `anthropic_version` in the body. Each is served as the `/v1/messages` call it is, for
 * any vendor's model, with Anthropic's answers and the betas passed on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, usageRows } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const base = () => `${m.app.url}/v1/projects/my-project/locations/us-east5/publishers/anthropic/models`
const vertex = (key: string, path: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
	fetch(`${base()}/${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify({ anthropic_version: 'vertex-2023-10-16', ...body }) })

describe("Claude Code in Vertex AI's format", () => {
	it('should reach Claude as Anthropic Messages, without the Vertex fields, the betas passed on', async () => {
		const acct = await m.account()
		const res = await vertex(acct.key, `${MODEL.anthropic}:rawPredict`, { max_tokens: 64, messages: [{ role: 'user', content: 'Hello over Vertex' }] }, { 'anthropic-beta': 'interleaved-thinking-2025-05-14' })
		expect(res.status).toBe(200)
		const msg = await res.json()
		expect(msg).toMatchObject({ type: 'message', role: 'assistant' })
		const seen = lastRequest(m.mocks.anthropic)
		expect(seen.path).toBe('/v1/messages')
		expect(seen.body.anthropic_version).toBeUndefined()
		expect(seen.body.stream).toBe(false)
		expect(seen.headers['anthropic-beta']).toContain('interleaved-thinking-2025-05-14')
	})

	it('should stream with :streamRawPredict, converted for another vendor, and bill each call', async () => {
		const acct = await m.account()
		const res = await vertex(acct.key, `${MODEL.openai}:streamRawPredict`, { max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Streamed over Vertex' }] })
		expect(res.status).toBe(200)
		expect(res.headers.get('content-type')).toContain('text/event-stream')
		const text = await res.text()
		expect(text).toContain('event: message_start')
		const said = [...text.matchAll(/"text_delta","text":("(?:[^"\\]|\\.)*")/g)].map((d) => JSON.parse(d[1]!) as string).join('')
		expect(said).toContain('Streamed over Vertex')
		expect(text).toContain('event: message_stop')
		expect(lastRequest(m.mocks.openai).body.stream).toBe(true)
		expect((await usageRows(m, acct.accountId)).map((r) => r.model)).toEqual([MODEL.openai])
	})

	it('should count tokens with count-tokens:rawPredict, the model in the body', async () => {
		const acct = await m.account()
		const res = await vertex(acct.key, 'count-tokens:rawPredict', { model: MODEL.anthropic, messages: [{ role: 'user', content: 'How many tokens is this?' }] })
		expect(res.status).toBe(200)
		expect((await res.json()).input_tokens).toBeGreaterThan(0)
	})

	it("should refuse a missing key and an unknown model in Anthropic's shape", async () => {
		const acct = await m.account()
		const unknown = await vertex(acct.key, 'claude-nowhere@20250101:rawPredict', { max_tokens: 8, messages: [{ role: 'user', content: 'x' }] })
		expect(unknown.status).toBe(404)
		expect((await unknown.json()).type).toBe('error')
		const keyless = await fetch(`${base()}/${MODEL.anthropic}:rawPredict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"max_tokens":8,"messages":[]}' })
		expect(keyless.status).toBe(401)
		expect(await keyless.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } })
		// Refused before its body is read (a wrong key): still Anthropic's shape, which Claude Code reads.
		const wrong = await vertex('sk-wrong', `${MODEL.anthropic}:streamRawPredict`, { max_tokens: 8, messages: [{ role: 'user', content: 'x' }] })
		expect(wrong.status).toBe(401)
		expect(await wrong.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } })
		expect(await usageRows(m, acct.accountId)).toEqual([])
	})
})
