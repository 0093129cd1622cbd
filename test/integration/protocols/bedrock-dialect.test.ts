/**
 * Claude Code pointed at the gateway in Amazon Bedrock's format (`CLAUDE_CODE_USE_BEDROCK=1`,
 * `ANTHROPIC_BEDROCK_BASE_URL={root}`, `CLAUDE_CODE_SKIP_BEDROCK_AUTH=1`, the key in a header): what the Anthropic
 * Bedrock SDK sends, `/model/{modelId}/invoke` and `/invoke-with-response-stream` with `anthropic_version` and
 * `anthropic_beta` in the body. Each is served as the `/v1/messages` call it is, for any vendor's model; a stream goes
 * back framed as Bedrock frames it (AWS event-stream `chunk` messages whose `bytes` are Anthropic's events), read here
 * with the gateway's own Bedrock decoder, which checks every CRC.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { eventMessages } from '../../../src/providers/aws/event-stream'
import { lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, usageRows } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const invoke = (key: string, model: string, stream: boolean, body: Record<string, unknown>) =>
	fetch(`${m.app.url}/model/${encodeURIComponent(model)}/${stream ? 'invoke-with-response-stream' : 'invoke'}`, {
		method: 'POST',
		headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
		body: JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', ...body }),
	})

describe("Claude Code in Amazon Bedrock's format", () => {
	it('should reach Claude as Anthropic Messages, the body betas sent as the header', async () => {
		const acct = await m.account()
		const res = await invoke(acct.key, MODEL.anthropic, false, { anthropic_beta: ['interleaved-thinking-2025-05-14'], max_tokens: 64, messages: [{ role: 'user', content: 'Hello over Bedrock' }] })
		expect(res.status).toBe(200)
		expect(await res.json()).toMatchObject({ type: 'message', role: 'assistant' })
		const seen = lastRequest(m.mocks.anthropic)
		expect(seen.body.anthropic_version).toBeUndefined()
		expect(seen.body.anthropic_beta).toBeUndefined()
		expect(seen.headers['anthropic-beta']).toContain('interleaved-thinking-2025-05-14')
	})

	it('should stream as Bedrock frames it, for another vendor, and bill the call', async () => {
		const acct = await m.account()
		const res = await invoke(acct.key, MODEL.gemini, true, { max_tokens: 64, messages: [{ role: 'user', content: 'Streamed over Bedrock' }] })
		expect(res.status).toBe(200)
		expect(res.headers.get('content-type')).toBe('application/vnd.amazon.eventstream')
		const events: Array<{ type: string; delta?: { type: string; text?: string } }> = []
		for await (const msg of eventMessages(res.body!.getReader())) {
			expect(msg.headers).toMatchObject({ ':event-type': 'chunk', ':message-type': 'event', ':content-type': 'application/json' })
			const { bytes } = JSON.parse(new TextDecoder().decode(msg.payload)) as { bytes: string }
			events.push(JSON.parse(Buffer.from(bytes, 'base64').toString('utf8')))
		}
		expect(events[0]!.type).toBe('message_start')
		expect(events.at(-1)!.type).toBe('message_stop')
		const said = events.map((e) => (e.delta?.type === 'text_delta' ? e.delta.text : '')).join('')
		expect(said).toContain('Streamed over Bedrock')
		expect((await usageRows(m, acct.accountId)).map((r) => r.model)).toEqual([MODEL.gemini])
	})

	it("should refuse a body it cannot read in Anthropic's shape, as it does a bad field", async () => {
		// Refused before the rewrite onto /v1/messages, these once came in OpenAI's shape, which the Bedrock SDK does not read.
		const acct = await m.account()
		const raw = (path: string, body: BodyInit, headers: Record<string, string> = {}) =>
			fetch(`${m.app.url}/model/${MODEL.anthropic}/${path}`, { method: 'POST', headers: { authorization: `Bearer ${acct.key}`, 'content-type': 'application/json', ...headers }, body })
		for (const path of ['invoke', 'invoke-with-response-stream'])
			for (const [what, res, status] of [
				['invalid JSON', await raw(path, '{"max_tokens":'), 400],
				['an array', await raw(path, '[]'), 400],
				['null', await raw(path, 'null'), 400],
				['bad gzip', await raw(path, 'not gzip', { 'content-encoding': 'gzip' }), 400],
				['an unknown encoding', await raw(path, '{}', { 'content-encoding': 'zz' }), 415],
				['a bad field', await raw(path, JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 8, messages: [{ role: 'wizard', content: 'x' }] })), 400],
			] as const) {
				expect({ path, what, status: res.status }).toEqual({ path, what, status })
				expect({ path, what, body: await res.json() }).toMatchObject({ path, what, body: { type: 'error', error: { type: 'invalid_request_error' } } })
			}
		expect(await usageRows(m, acct.accountId)).toEqual([])
	})

	it("should refuse an unknown model in Anthropic's JSON, not framed", async () => {
		const acct = await m.account()
		const res = await invoke(acct.key, 'us.anthropic.claude-nowhere-v1:0', true, { max_tokens: 8, messages: [{ role: 'user', content: 'x' }] })
		expect(res.status).toBe(404)
		expect((await res.json()).type).toBe('error')
		expect(await usageRows(m, acct.accountId)).toEqual([])
	})
})
