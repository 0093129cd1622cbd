/**
 * The fast path (issue 3): when the caller speaks the channel's own protocol the body goes upstream unchanged except
 * for the model (after model_map), the auth header and, on OpenAI streams, `stream_options.include_usage`; fields
 * the gateway does not know pass through untouched; the usage chunk the gateway asked for is stripped when the
 * client did not (WIRE-NOTES wire §12, Portkey-AI/gateway#691). Also: the Anthropic SDK pointed at `{root}/v1`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { CAPPED, CAPPED_MAX, CAPPED_UPSTREAM, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, UPSTREAM_MODEL } from './harness'
import { sseFrames } from './wire-checks'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const post = (path: string, headers: Record<string, string>, body: unknown) =>
	fetch(`${m.app.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })

describe('OpenAI fast path', () => {
	it('should pass unknown and unmapped fields to the upstream untouched', async () => {
		const acct = await m.account()
		const extra = {
			seed: 42,
			logprobs: true,
			top_logprobs: 2,
			response_format: { type: 'json_object' },
			parallel_tool_calls: false,
			metadata: { team: 'qa' },
			service_tier: 'flex',
			frequency_penalty: 0.5,
			x_vendor_option: { nested: [1, 2, { deep: true }] },
			user: 'end-user-7',
		}
		const body = { model: MODEL.openai, messages: [{ role: 'user', content: 'json please' }], ...extra }
		const res = await post('/v1/chat/completions', { authorization: `Bearer ${acct.key}` }, body)
		expect(res.status).toBe(200)
		const sent = lastRequest(m.mocks.openai)
		expect(sent.body).toEqual({ ...body, model: UPSTREAM_MODEL.openai })
		// The channel's key replaces the caller's.
		expect(sent.headers.authorization).toBe('Bearer up-openai')
	})

	it("should forward the client's own bytes with only the mapped model and the lowered cap rewritten in place", async () => {
		const acct = await m.account()
		// Spacing, key order and escapes JSON.stringify would not reproduce; a quoted "model" key inside a string.
		const text = (model: string, field: string, cap: number) =>
			`{ "${field}" : ${cap},\n  "messages": [{"role": "user", "content": "caf\\u00e9 \\"model\\": x"}],\n  "model" : ${JSON.stringify(model)}, "x_vendor": [1, {"model": "inner"}] }`
		// The capped model is a reasoning model, which takes only max_completion_tokens: its cap is written into that field.
		for (const [asked, upstream, field, cap, expectedCap] of [
			[MODEL.openai, UPSTREAM_MODEL.openai, 'max_tokens', 64, 64],
			[CAPPED.openai, CAPPED_UPSTREAM.openai, 'max_completion_tokens', CAPPED_MAX + 1000, CAPPED_MAX],
		] as const) {
			const res = await fetch(`${m.app.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${acct.key}` }, body: text(asked, field, cap) })
			expect(res.status).toBe(200)
			const sent = lastRequest(m.mocks.openai)
			expect(m.mocks.openai.requests.at(-1)!.text).toBe(text(upstream, field, expectedCap))
			expect(sent.body.messages[0].content).toBe('café "model": x')
		}

		// A reasoning model sent max_tokens, which it refuses: the lowered cap goes as max_completion_tokens (a renamed
		// field, so the body is written anew).
		const res = await fetch(`${m.app.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${acct.key}` }, body: text(CAPPED.openai, 'max_tokens', CAPPED_MAX + 1000) })
		expect(res.status).toBe(200)
		const { max_tokens: _, ...rest } = JSON.parse(text(CAPPED_UPSTREAM.openai, 'max_tokens', 0))
		expect(lastRequest(m.mocks.openai).body).toEqual({ ...rest, max_completion_tokens: CAPPED_MAX })
	})

	it('should ask for the usage chunk upstream and strip it when the client did not', async () => {
		const acct = await m.account()
		const res = await post('/v1/chat/completions', { authorization: `Bearer ${acct.key}` }, {
			model: MODEL.openai,
			stream: true,
			stream_options: { continuous_usage_stats: false },
			messages: [{ role: 'user', content: 'no usage for me' }],
		})
		expect(res.headers.get('content-type')).toStartWith('text/event-stream')
		const frames = sseFrames(await res.text())
		expect(lastRequest(m.mocks.openai).body.stream_options).toEqual({ continuous_usage_stats: false, include_usage: true })
		expect(frames[frames.length - 1]!.data).toBe('[DONE]')
		const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.data))
		expect(chunks.every((c) => !('usage' in c))).toBe(true)
		expect(chunks.every((c) => c.choices.length === 1)).toBe(true)
		expect(chunks.map((c) => c.choices[0].delta.content ?? '').join('')).toBe('Hello! You said: no usage for me')
		// The gateway still billed from the chunk it stripped.
		const usage = await m.app.admin(`/api/usage?account_id=${acct.accountId}`)
		expect(usage.body.data[0]).toMatchObject({ input_tokens: 4, output_tokens: 7, estimated: false })
	})

	it('should keep the usage chunk, with usage null on the others, when the client asked for it', async () => {
		const acct = await m.account()
		const res = await post('/v1/chat/completions', { authorization: `Bearer ${acct.key}` }, {
			model: MODEL.openai,
			stream: true,
			stream_options: { include_usage: true },
			messages: [{ role: 'user', content: 'usage please' }],
		})
		const frames = sseFrames(await res.text())
		const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.data))
		const last = chunks[chunks.length - 1]
		expect(last.choices).toEqual([])
		expect(last.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 5, total_tokens: 7 })
		expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true)
	})
})

describe('Anthropic fast path', () => {
	it("should forward the client's own bytes with the model, the lowered max_tokens and the thinking budget rewritten in place", async () => {
		const acct = await m.account()
		const text = (model: string, cap: number, budget: number) =>
			`{"model":${JSON.stringify(model)},"max_tokens":${cap},\n "thinking": {"type": "enabled", "budget_tokens": ${budget}},\n "messages":[{"role":"user","content":"\\u00fcber"}]}`
		const res = await fetch(`${m.app.url}/v1/messages`, {
			method: 'POST',
			headers: { 'content-type': 'application/json', 'x-api-key': acct.key, 'anthropic-version': '2023-06-01' },
			body: text(CAPPED.anthropic, 32000, 31999),
		})
		expect(res.status).toBe(200)
		// The model's maximum is CAPPED_MAX: the budget keeps half of it (a rewritten member is serialised compactly).
		expect(m.mocks.anthropic.requests.at(-1)!.text).toBe(text(CAPPED_UPSTREAM.anthropic, CAPPED_MAX, CAPPED_MAX / 2).replace('{"type": "enabled", "budget_tokens": ', '{"type":"enabled","budget_tokens":'))
	})
	it('should pass metadata, top_k, cache_control, unknown fields and the beta header untouched', async () => {
		const acct = await m.account()
		const body = {
			model: MODEL.anthropic,
			max_tokens: 300,
			metadata: { user_id: 'user-123' },
			top_k: 5,
			system: [{ type: 'text', text: 'You are a careful assistant', cache_control: { type: 'ephemeral', ttl: '1h' } }],
			messages: [{ role: 'user', content: [{ type: 'text', text: 'cache me', cache_control: { type: 'ephemeral' } }] }],
			service_tier: 'standard_only',
			context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
		}
		const res = await post('/v1/messages', { 'x-api-key': acct.key, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'context-management-2025-06-27,extended-cache-ttl-2025-04-11' }, body)
		expect(res.status).toBe(200)
		const sent = lastRequest(m.mocks.anthropic)
		expect(sent.body).toEqual({ ...body, model: UPSTREAM_MODEL.anthropic })
		expect(sent.headers['anthropic-beta']).toBe('context-management-2025-06-27,extended-cache-ttl-2025-04-11')
		expect(sent.headers['anthropic-version']).toBe('2023-06-01')
		expect(sent.headers['x-api-key']).toBe('up-anthropic')
	})

	it('should relay the stream with event: lines and no [DONE]', async () => {
		const acct = await m.account()
		const res = await post('/v1/messages', { 'x-api-key': acct.key, 'anthropic-version': '2023-06-01' }, {
			model: MODEL.anthropic,
			max_tokens: 100,
			stream: true,
			messages: [{ role: 'user', content: 'stream it' }],
		})
		const frames = sseFrames(await res.text())
		expect(frames.every((f) => f.event !== undefined && JSON.parse(f.data).type === f.event)).toBe(true)
		expect(frames.map((f) => f.event).filter((e) => e !== 'ping')[0]).toBe('message_start')
		expect(frames[frames.length - 1]!.event).toBe('message_stop')
		expect(frames.some((f) => f.data === '[DONE]')).toBe(false)
	})
})

describe('converted streams', () => {
	it('should always ask an OpenAI upstream for include_usage, even for a messages client', async () => {
		const acct = await m.account()
		const s = acct.anthropic.messages.stream({ model: MODEL.openai, max_tokens: 100, messages: [{ role: 'user', content: 'hello' }] })
		const msg = await s.finalMessage()
		expect(msg.usage).toMatchObject({ input_tokens: 1, output_tokens: 4 })
		expect(lastRequest(m.mocks.openai).body.stream_options).toEqual({ include_usage: true })
	})

	it('should not send a usage chunk to a chat client that did not ask (Anthropic upstream)', async () => {
		const acct = await m.account()
		const res = await post('/v1/chat/completions', { authorization: `Bearer ${acct.key}` }, { model: MODEL.anthropic, stream: true, messages: [{ role: 'user', content: 'hi' }] })
		const frames = sseFrames(await res.text())
		expect(frames[frames.length - 1]!.data).toBe('[DONE]')
		const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.data))
		expect(chunks.every((c) => !('usage' in c) && c.choices.length === 1)).toBe(true)
	})
})

describe('base URL mistakes', () => {
	it('should answer 404 to the Anthropic SDK configured with {root}/v1', async () => {
		const acct = await m.account()
		const wrong = new Anthropic({ apiKey: acct.key, baseURL: `${m.app.url}/v1`, maxRetries: 0 })
		const err = await wrong.messages.create({ model: MODEL.anthropic, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(Anthropic.NotFoundError)
		expect((err as InstanceType<typeof Anthropic.NotFoundError>).status).toBe(404)
		expect(m.mocks.anthropic.requests.some((r) => r.path.includes('/v1/v1/'))).toBe(false)
	})
})
