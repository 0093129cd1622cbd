/**
 * Named end-to-end regressions for the usage, billing and routing bugs other gateways shipped
 * (../shared/WIRE-NOTES.md): cached tokens billed as the client sees them, thinking tokens billed as output,
 * concurrent requests that cannot overspend, Anthropic's request constraints met for OpenAI clients, and failover
 * only before the first byte. Each title names the public issue.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import { countWords } from '../../mocks'
import { chat, messages, PROTOCOLS } from './clients'
import { type Account, expectCharges, FAILOVER, label, lastRequest, type Matrix, MODEL, PAIRS, SETUP_MS, startMatrix, type Upstream, usageRows } from './harness'
import { postRaw, simpleBody } from './raw'
import { sseFrames } from './wire-checks'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const CACHED = 'please #cache this long prompt so that more than ten of its words are read from the cache today'

function ask(proto: 'chat' | 'messages', acct: Account, model: string, stream: boolean, text: string, extra: Record<string, unknown> = {}) {
	if (proto === 'chat') return chat(acct.openai, { model, messages: [{ role: 'user', content: text }], ...extra }, stream)
	return messages(acct.anthropic, { model, max_tokens: 256, messages: [{ role: 'user', content: text }], ...extra } as never, stream)
}

describe('QuantumNous/new-api#6144, BerriAI/litellm#31069: cached tokens', () => {
	for (const proto of PROTOCOLS)
		for (const [up, stream] of PAIRS)
			it(`should show and bill the 10 cached tokens the same way (${proto}, ${label(up, stream)})`, async () => {
				const acct = await m.account()
				const a = await ask(proto, acct, MODEL[up], stream, CACHED)
				const input = countWords(CACHED)
				expect(a.usage).toMatchObject({ input, cached: 10, output: countWords(`Hello! You said: ${CACHED}`) })
				// Anthropic states cache reads up front; message_start must not show them as 0 (#31069).
				if (a.startInput !== undefined && up === 'anthropic') expect(a.startInput).toBe(input - 10)
				await expectCharges(m, acct, [{ model: MODEL[up], input, cached: 10, output: a.usage.output, stream }])
			})
})

describe('Wei-Shaw/sub2api#554: Gemini thinking tokens', () => {
	it('should bill thoughtsTokenCount as output and report it as reasoning', async () => {
		const acct = await m.account()
		const a = await ask('chat', acct, MODEL.gemini, false, 'deep thought', { reasoning_effort: 'high' })
		const thoughts = countWords('Let me think about deep thought.')
		expect(a.usage).toMatchObject({ output: thoughts + countWords('Hello! You said: deep thought'), reasoning: thoughts })
		await expectCharges(m, acct, [{ model: MODEL.gemini, input: 2, output: a.usage.output, reasoning: thoughts }])
	})
})

describe('BerriAI/litellm#34732, songquanpeng/one-api#1132: concurrent requests and the balance', () => {
	it('should never let concurrent requests spend more than the balance', async () => {
		const acct = await m.account(0.004)
		// Slow answers keep every request in flight at once, so all reserve before any settles.
		m.mocks.anthropic.fault = { kind: 'slow', firstByteMs: 300 }
		try {
			const statuses = await Promise.all(
				Array.from({ length: 20 }, (_, i) => postRaw(m, 'messages', acct, { ...simpleBody('messages', MODEL.anthropic, `request ${i}`, false), max_tokens: 100 }).then(async (r) => (await r.text(), r.status))),
			)
			const ok = statuses.filter((s) => s === 200).length
			expect(ok).toBeGreaterThanOrEqual(2)
			expect(statuses.filter((s) => s === 402).length).toBe(20 - ok)
			expect(ok).toBeLessThan(20)
		} finally {
			m.mocks.anthropic.fault = undefined
		}
		const rows = await usageRows(m, acct.accountId)
		const spent = rows.reduce((n, r) => n + Math.round(r.cost * 1e6), 0)
		const balance = Math.round((await m.app.balance(acct.accountId)) * 1e6)
		expect(balance).toBeGreaterThanOrEqual(0)
		expect(balance + spent).toBe(4000)
		expect(rows.filter((r) => r.status === 200)).toHaveLength(rows.length)
	})
})

describe('WIRE-NOTES wire §20: Anthropic constraints for an OpenAI client', () => {
	it('should clamp temperature, merge same-role turns and lift system and developer messages to the top', async () => {
		const acct = await m.account()
		const a = await chat(
			acct.openai,
			{
				model: MODEL.anthropic,
				temperature: 1.7,
				messages: [
					{ role: 'system', content: 'be brief' },
					{ role: 'developer', content: 'use plain words' },
					{ role: 'user', content: 'first part' },
					{ role: 'user', content: 'second part' },
				],
			},
			false,
		)
		// One merged user turn: the mock answers all of its text.
		expect(a.text).toBe('Hello! You said: first part second part')
		const body = lastRequest(m.mocks.anthropic).body
		expect(body.temperature).toBe(1)
		expect(typeof body.max_tokens).toBe('number')
		expect([body.system].flat().map((s: string | { text: string }) => (typeof s === 'string' ? s : s.text)).join('\n')).toContain('be brief')
		expect(JSON.stringify(body.system)).toContain('use plain words')
		expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'first part' }, { type: 'text', text: 'second part' }] }])
	})
})

describe('WIRE-NOTES wire §21: failover only before the first byte', () => {
	// Each case starts with healthy channels: the failures injected by earlier cases would otherwise open the first
	// channel's circuit breaker (issue 4) and change the order the next case relies on.
	beforeEach(() => {
		for (const c of m.app.svc.catalog.channelsFor(FAILOVER)) m.app.svc.health.success(c.id)
	})
	const failover = async (stream: boolean, fault: NonNullable<typeof m.mocks.openai.faultOnce>, up: Upstream = 'openai') => {
		const acct = await m.account()
		m.mocks[up].faultOnce = fault
		const before = m.mocks.gemini.requests.length
		const res = await postRaw(m, 'chat', acct, simpleBody('chat', FAILOVER, 'fail over please', stream))
		expect(res.status).toBe(200)
		const text = await res.text()
		const answer = stream
			? sseFrames(text)
					.filter((f) => f.data !== '[DONE]')
					.map((f) => JSON.parse(f.data).choices[0]?.delta.content ?? '')
					.join('')
			: JSON.parse(text).choices[0].message.content
		expect(answer).toBe('Hello! You said: fail over please')
		expect(m.mocks.gemini.requests.length).toBe(before + 1)
		const rows = await usageRows(m, acct.accountId)
		expect(rows.map((r) => [r.channel, r.end_reason])).toEqual([['fo-gemini', 'ok']])
		await expectCharges(m, acct, [{ model: FAILOVER, input: 3, output: 6 }])
	}

	it('should fail over to the next channel on a 500', () => failover(false, { kind: 'status', status: 500 }))
	it('should fail over to the next channel on a 429', () => failover(false, { kind: 'status', status: 429, retryAfter: 1 }))
	it('should fail over when the stream fails before any content (Azure-style 200 then error)', () => failover(true, { kind: 'midstream', afterChunks: 0 }))
	it('should fail over when the first channel refuses connections', () => failover(true, { kind: 'refuse' }))

	it('should not fail over once content reached the client', async () => {
		const acct = await m.account()
		m.mocks.openai.faultOnce = { kind: 'midstream', afterChunks: 3 }
		const before = m.mocks.gemini.requests.length
		const res = await postRaw(m, 'chat', acct, simpleBody('chat', FAILOVER, 'no second chance here', true))
		const frames = sseFrames(await res.text())
		expect(JSON.parse(frames[frames.length - 1]!.data).error).toBeDefined()
		expect(m.mocks.gemini.requests.length).toBe(before)
	})
})
