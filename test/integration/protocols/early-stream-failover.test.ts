/**
 * A stream that fails before any content, on the fast path (the client's protocol is the channel's), fails over to
 * the next channel as a converted one does: an Anthropic overload right after `message_start` and the first block's
 * empty `content_block_start`, or an OpenAI stream cut right after its role-only first chunk. The client gets the
 * next channel's whole answer and one usage row; before, it got an empty message (or an error) billed as a success.
 * An upstream's 408 (its own timeout) fails over too, rather than reaching the caller as its own bad request.
 * A Responses stream (an OpenAI channel's, relayed verbatim) likewise, while it has sent only its lifecycle events
 * and empty items and parts. A stream the upstream fails after the window committed to it, but before any content
 * (a stall past `idle_ms` right after its preamble), ends with its error event and is charged nothing; and an
 * upstream's error event ends the usage row as `error` though the SDK hangs up before the upstream's body ends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import OpenAI from 'openai'
import { chat, messages } from './clients'
import { type Matrix, SETUP_MS, startMatrix, usageRows } from './harness'

let m: Matrix
/** An OpenAI-compatible upstream that sends some text, then an error chunk, then holds its body open a while. */
let erring: ReturnType<typeof Bun.serve>
beforeAll(async () => {
	erring = Bun.serve({
		port: 0,
		fetch: () => {
			const chunk = (delta: Record<string, unknown>) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`
			const body = new ReadableStream({
				async start(c) {
					c.enqueue(new TextEncoder().encode(chunk({ role: 'assistant', content: '' }) + chunk({ content: 'Hello there' }) + `data: ${JSON.stringify({ error: { message: 'The server had an error', type: 'server_error' } })}\n\n`))
					await Bun.sleep(400)
					c.close()
				},
			})
			return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
		},
	})
	m = await startMatrix({
		env: { BREAKER_THRESHOLD: '1000' },
		models: [
			{ name: 'early-claude', input_per_mtok: 1, output_per_mtok: 2 },
			{ name: 'early-gpt', input_per_mtok: 1, output_per_mtok: 2 },
			{ name: 'stall-gpt', input_per_mtok: 1, output_per_mtok: 2 },
			{ name: 'stall-claude', input_per_mtok: 1, output_per_mtok: 2 },
			{ name: 'err-gpt', input_per_mtok: 1, output_per_mtok: 2 },
		],
		// Lower priority first: each model's own vendor, then the other.
		channels: (mocks): GatewayConfig['channels'] => [
			{ name: 'early-an', type: 'anthropic', base_url: mocks.anthropic.url, api_key: 'up-anthropic', models: ['early-claude'], model_map: { 'early-claude': 'claude-sonnet-4-6' }, priority: 1 },
			{ name: 'early-an-oa', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: ['early-claude'], model_map: { 'early-claude': 'gpt-4o-mini' }, priority: 2 },
			{ name: 'early-oa', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: ['early-gpt'], model_map: { 'early-gpt': 'gpt-4o-mini' }, priority: 1 },
			{ name: 'early-oa-an', type: 'anthropic', base_url: mocks.anthropic.url, api_key: 'up-anthropic', models: ['early-gpt'], model_map: { 'early-gpt': 'claude-sonnet-4-6' }, priority: 2 },
			// One channel each, silent past 1.5 s: a stall outlasts the 1 s prefetch window.
			{ name: 'stall-oa', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: ['stall-gpt'], model_map: { 'stall-gpt': 'gpt-4o-mini' }, settings: { timeouts: { idle_ms: 1500 } } },
			{ name: 'stall-an', type: 'anthropic', base_url: mocks.anthropic.url, api_key: 'up-anthropic', models: ['stall-claude'], model_map: { 'stall-claude': 'claude-sonnet-4-6' }, settings: { timeouts: { idle_ms: 1500 } } },
			{ name: 'err-oa', type: 'openai', base_url: erring.url.href.replace(/\/$/, ''), api_key: 'up-openai', models: ['err-gpt'], model_map: { 'err-gpt': 'gpt-4o-mini' } },
		],
	})
}, SETUP_MS)
afterAll(async () => {
	await m.close()
	await erring.stop(true)
})

const ask = [{ role: 'user' as const, content: 'hello friend' }]

describe('a stream that fails before content on the fast path', () => {
	for (const [label, fault] of [
		['an overload after message_start and an empty content_block_start', { kind: 'midstream', afterChunks: 2, status: 529 }],
		['a cut after message_start and an empty content_block_start', { kind: 'cut', afterChunks: 2 }],
	] as const)
		it(`should fail over an Anthropic client's stream on ${label}, and bill the answer it got once`, async () => {
			const acct = await m.account()
			m.mocks.anthropic.faultOnce = fault
			const a = await messages(acct.anthropic, { model: 'early-claude', max_tokens: 100, messages: ask }, true)
			expect(a.text).toBe('Hello! You said: hello friend')
			const rows = await usageRows(m, acct.accountId)
			expect(rows.map((r) => [r.channel, r.status, r.end_reason])).toEqual([['early-an-oa', 200, 'ok']])
		})

	it("should fail over an OpenAI client's stream cut after its role-only first chunk, and bill the answer it got once", async () => {
		const acct = await m.account()
		m.mocks.openai.faultOnce = { kind: 'cut', afterChunks: 1 }
		const a = await chat(acct.openai, { model: 'early-gpt', messages: ask }, true)
		expect(a.text).toBe('Hello! You said: hello friend')
		const rows = await usageRows(m, acct.accountId)
		expect(rows.map((r) => [r.channel, r.status, r.end_reason])).toEqual([['early-oa-an', 200, 'ok']])
	})

	it("should fail over an upstream's 408 (its own timeout, not the caller's fault)", async () => {
		const acct = await m.account()
		m.mocks.openai.faultOnce = { kind: 'status', status: 408 }
		const a = await chat(acct.openai, { model: 'early-gpt', messages: ask }, false)
		expect(a.text).toBe('Hello! You said: hello friend')
		const rows = await usageRows(m, acct.accountId)
		expect(rows.map((r) => [r.channel, r.status])).toEqual([['early-oa-an', 200]])
	})

	it('should still relay a stream that fails after content as it is, billed for what came', async () => {
		const acct = await m.account()
		m.mocks.anthropic.faultOnce = { kind: 'midstream', afterChunks: 4, status: 529 }
		const err = await messages(acct.anthropic, { model: 'early-claude', max_tokens: 100, messages: ask }, true).then(
			() => undefined,
			(e: Error) => e,
		)
		expect(err?.message).toContain('overloaded')
		const rows = await usageRows(m, acct.accountId)
		expect(rows.map((r) => [r.channel, r.end_reason])).toEqual([['early-an', 'error']])
	})

	for (const [label, afterChunks, kind] of [
		['a cut after response.created', 1, 'cut'],
		['a cut after response.in_progress', 2, 'cut'],
		['a cut after the empty message item and text part', 4, 'cut'],
		['an error event after the empty message item and text part', 4, 'midstream'],
	] as const)
		it(`should fail over a Responses stream on ${label}, and bill the answer it got once`, async () => {
			const acct = await m.account()
			m.mocks.openai.faultOnce = kind === 'cut' ? { kind, afterChunks } : { kind, afterChunks, status: 500 }
			let text = ''
			for await (const e of await acct.openai.responses.create({ model: 'early-gpt', input: 'hello friend', stream: true })) if (e.type === 'response.output_text.delta') text += e.delta
			expect(text).toBe('Hello! You said: hello friend')
			const rows = await usageRows(m, acct.accountId)
			expect(rows.map((r) => [r.channel, r.status, r.end_reason])).toEqual([['early-oa-an', 200, 'ok']])
		})
})

describe('a stream the upstream fails after the window, before any content', () => {
	it("should end an OpenAI client's stream stalled after its role-only chunk with an error, charged nothing", async () => {
		const acct = await m.account()
		m.mocks.openai.faultOnce = { kind: 'stall', afterChunks: 1 }
		const err = await chat(acct.openai, { model: 'stall-gpt', messages: ask }, true).then(
			() => undefined,
			(e: Error) => e,
		)
		expect(err).toBeDefined()
		const rows = await usageRows(m, acct.accountId)
		expect(rows.map((r) => [r.channel, r.end_reason, r.cost])).toEqual([['stall-oa', 'upstream_cut', 0]])
		expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
	})

	it("should end an Anthropic client's stream stalled after message_start with an error, charged nothing", async () => {
		const acct = await m.account()
		m.mocks.anthropic.faultOnce = { kind: 'stall', afterChunks: 1 }
		const err = await messages(acct.anthropic, { model: 'stall-claude', max_tokens: 100, messages: ask }, true).then(
			() => undefined,
			(e: Error) => e,
		)
		expect(err).toBeDefined()
		const rows = await usageRows(m, acct.accountId)
		expect(rows.map((r) => [r.channel, r.end_reason, r.cost])).toEqual([['stall-an', 'upstream_cut', 0]])
		expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
	})

	it("should record an upstream's error event as `error` though the SDK hangs up before the upstream ends", async () => {
		const acct = await m.account()
		let text = ''
		const err = await (async () => {
			for await (const c of await acct.openai.chat.completions.create({ model: 'err-gpt', messages: ask, stream: true })) text += c.choices[0]?.delta.content ?? ''
		})().then(
			() => undefined,
			(e: Error) => e,
		)
		expect(err).toBeInstanceOf(OpenAI.APIError)
		expect(text).toBe('Hello there')
		await Bun.sleep(600)
		const rows = await usageRows(m, acct.accountId)
		expect(rows.map((r) => [r.channel, r.end_reason])).toEqual([['err-oa', 'error']])
		expect(rows[0]!.cost).toBeGreaterThan(0)
	})
})
