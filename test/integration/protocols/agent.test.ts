/**
 * Coding-agent-shaped traffic (issue 3): Claude Code over `/v1/messages` — 30 tools, thinking with a 31999-token
 * budget, cache_control, beta headers, `max_tokens: 32000` — streamed against a GPT model (the headline case), a
 * Gemini model and a Claude model whose maximum is 16384, through a full tool round trip.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { countWords, thinkingSignature, thoughtSignatureFor } from '../../mocks'
import { AGENT_ASK, AGENT_HEADERS, AGENT_REMINDER, AGENT_SYSTEM, AGENT_TOOLS, agentBody, agentFirstUser } from './agent-shape'
import { messages } from './clients'
import { CAPPED, CAPPED_MAX, CAPPED_UPSTREAM, expectCharges, lastRequest, type Matrix, SETUP_MS, startMatrix, UPSTREAMS } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const SYSTEM_WORDS = AGENT_SYSTEM.reduce((n, s) => n + countWords(s.text), 0)

describe('Claude-Code-shaped count_tokens', () => {
	for (const up of UPSTREAMS)
		it(`vercel/ai#17326: should count the agent's prompt for a ${up} model instead of answering 404`, async () => {
			const acct = await m.account()
			const client = new Anthropic({ apiKey: acct.key, baseURL: m.app.url, maxRetries: 0, defaultHeaders: AGENT_HEADERS })
			const { max_tokens: _max, ...body } = agentBody([agentFirstUser])
			const r = await client.messages.countTokens({ model: CAPPED[up], ...body } as never)
			const words = SYSTEM_WORDS + countWords(AGENT_REMINDER) + countWords(AGENT_ASK)
			// Anthropic and Gemini count for their own models (the mocks count words); OpenAI has no endpoint, so the
			// gateway estimates, tools included.
			if (up === 'openai') expect(r.input_tokens).toBeGreaterThan(words)
			else expect(r.input_tokens).toBe(words)
			expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
		})
})

describe('Claude-Code-shaped /v1/messages', () => {
	for (const up of UPSTREAMS) {
		it(`should serve a 30-tool thinking turn and its tool results from ${up} (${CAPPED_UPSTREAM[up]}, max ${CAPPED_MAX})`, async () => {
			const acct = await m.account()
			const client = new Anthropic({ apiKey: acct.key, baseURL: m.app.url, maxRetries: 0, defaultHeaders: AGENT_HEADERS })
			const model = CAPPED[up]
			const first = await messages(client, { model, ...agentBody([agentFirstUser]) } as never, true)
			expect(first.calls.map((c) => [c.name, c.args])).toEqual([
				['Bash', { command: 'Paris' }],
				['Glob', { pattern: 'Tokyo' }],
			])
			expect(first.stop).toBe('tool_use')
			expect(first.reasoning).toStartWith('Let me think about ')
			expect(first.reasoning).toContain(AGENT_ASK)
			expect(first.replay.content.map((b: { type: string }) => b.type)).toEqual(['thinking', 'tool_use', 'tool_use'])
			expect(first.startInput).toBeGreaterThan(0)

			const sent = lastRequest(m.mocks[up])
			if (up === 'openai') {
				expect(sent.body.model).toBe('o3-mini')
				expect(sent.body.max_completion_tokens).toBe(CAPPED_MAX)
				expect(sent.body.max_tokens).toBeUndefined()
				expect(sent.body.reasoning_effort).toBe('high')
				expect(sent.body.stream_options).toEqual({ include_usage: true })
				expect(sent.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(AGENT_TOOLS.map((t) => t.name))
				// Anthropic-only markers must not reach an OpenAI endpoint, which rejects unknown fields.
				expect(JSON.stringify(sent.body)).not.toContain('cache_control')
			} else if (up === 'anthropic') {
				const { thinking, max_tokens, model: upstreamModel, ...rest } = sent.body
				expect(upstreamModel).toBe(CAPPED_UPSTREAM.anthropic)
				expect(max_tokens).toBe(CAPPED_MAX)
				expect(thinking.budget_tokens).toBeLessThan(CAPPED_MAX)
				const { max_tokens: _m, thinking: _t, ...asSent } = { ...agentBody([agentFirstUser]), stream: true }
				expect(rest).toEqual(asSent)
				expect(sent.headers['anthropic-beta']).toBe(AGENT_HEADERS['anthropic-beta'])
			} else {
				expect(sent.body.generationConfig.maxOutputTokens).toBe(CAPPED_MAX)
				const decls = sent.body.tools.flatMap((t: { functionDeclarations?: unknown[] }) => t.functionDeclarations ?? [])
				expect(decls).toHaveLength(30)
				expect(JSON.stringify(sent.body.tools)).not.toMatch(/\$schema|additionalProperties|cache_control/)
			}

			const results = {
				role: 'user',
				content: [
					{ type: 'tool_result', tool_use_id: first.calls[0]!.id, content: [{ type: 'text', text: '1 failed' }] },
					{ type: 'tool_result', tool_use_id: first.calls[1]!.id, content: 'no match', is_error: true },
					{ type: 'text', text: AGENT_REMINDER },
				],
			}
			const second = await messages(client, { model, ...agentBody([agentFirstUser, first.replay, results]) } as never, true)
			// OpenAI takes tool results as `tool` messages, so the reminder after them becomes a user message of its
			// own, which the model then answers; the others keep results and reminder in one user turn.
			expect(second.text).toBe(up === 'openai' ? `Hello! You said: ${AGENT_REMINDER}` : 'Tool results: 1 failed; no match')
			expect(second.stop).toBe('end_turn')

			const replayed = lastRequest(m.mocks[up]).body
			if (up === 'anthropic') expect(replayed.messages[1].content[0]).toEqual({ type: 'thinking', thinking: first.reasoning, signature: thinkingSignature(first.reasoning) })
			if (up === 'openai') {
				expect(replayed.messages.find((x: { role: string }) => x.role === 'assistant').reasoning_content).toBe(first.reasoning)
				expect(replayed.messages.slice(-3).map((x: { role: string; content: unknown }) => [x.role, x.content])).toEqual([
					['tool', '1 failed'],
					// OpenAI's tool message has no error flag: the failure is stated ahead of the text (tool-result-error.test.ts).
					['tool', 'Error: the tool call failed.\nno match'],
					['user', AGENT_REMINDER],
				])
			}
			if (up === 'gemini') {
				const call = replayed.contents.flatMap((c: { parts: unknown[] }) => c.parts).find((p: { functionCall?: unknown }) => p.functionCall)
				expect(call.thoughtSignature).toBe(thoughtSignatureFor('Bash', { command: 'Paris' }))
			}
			const input1 = SYSTEM_WORDS + countWords(AGENT_REMINDER) + countWords(AGENT_ASK)
			await expectCharges(m, acct, [
				{ model, input: input1, output: countWords(first.reasoning) + 4, reasoning: countWords(first.reasoning), stream: true },
				{ model, input: input1 + countWords(up === 'openai' ? '1 failed Error: the tool call failed. no match' : '1 failed no match') + countWords(AGENT_REMINDER), output: countWords(second.reasoning) + countWords(second.text), stream: true },
			])
		})
	}
})
