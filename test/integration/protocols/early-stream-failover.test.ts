/**
 * A stream that fails before any content, on the fast path (the client's protocol is the channel's), fails over to
 * the next channel as a converted one does: an Anthropic overload right after `message_start` and the first block's
 * empty `content_block_start`, or an OpenAI stream cut right after its role-only first chunk. The client gets the
 * next channel's whole answer and one usage row; before, it got an empty message (or an error) billed as a success.
 * An upstream's 408 (its own timeout) fails over too, rather than reaching the caller as its own bad request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { chat, messages } from './clients'
import { type Matrix, SETUP_MS, startMatrix, usageRows } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		env: { BREAKER_THRESHOLD: '1000' },
		models: [
			{ name: 'early-claude', input_per_mtok: 1, output_per_mtok: 2 },
			{ name: 'early-gpt', input_per_mtok: 1, output_per_mtok: 2 },
		],
		// Lower priority first: each model's own vendor, then the other.
		channels: (mocks): GatewayConfig['channels'] => [
			{ name: 'early-an', type: 'anthropic', base_url: mocks.anthropic.url, api_key: 'up-anthropic', models: ['early-claude'], model_map: { 'early-claude': 'claude-sonnet-4-6' }, priority: 1 },
			{ name: 'early-an-oa', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: ['early-claude'], model_map: { 'early-claude': 'gpt-4o-mini' }, priority: 2 },
			{ name: 'early-oa', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: ['early-gpt'], model_map: { 'early-gpt': 'gpt-4o-mini' }, priority: 1 },
			{ name: 'early-oa-an', type: 'anthropic', base_url: mocks.anthropic.url, api_key: 'up-anthropic', models: ['early-gpt'], model_map: { 'early-gpt': 'claude-sonnet-4-6' }, priority: 2 },
		],
	})
}, SETUP_MS)
afterAll(() => m.close())

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
})
