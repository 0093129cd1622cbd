/**
 * The fast path's edits: of relayed OpenAI chunks (removing the usage the client did not ask for), of Anthropic
 * bodies that carry another vendor's thinking, and of Gemini bodies that carry Claude's.
 */
import { describe, expect, it } from 'bun:test'
import { tagSignature } from '../../../src/core/signatures'
import { REDACTED_PREFIX } from '../../../src/protocols/gemini/read'
import { SKIP_SIGNATURE } from '../../../src/protocols/gemini/signatures'
import { bodyText, rewriteBody, claudeTakes, stripUsage, thinkingOffFor } from '../../../src/relay/fast-path'

describe('stripUsage', () => {
	it('should remove "usage":null with its comma wherever the member stands', () => {
		expect(stripUsage('{"id":"c","choices":[{"index":0}],"usage":null}')).toBe('{"id":"c","choices":[{"index":0}]}')
		expect(stripUsage('{"usage":null,"id":"c","choices":[]}')).toBe('{"id":"c","choices":[]}')
		expect(stripUsage('{"id":"c","usage":null,"choices":[]}')).toBe('{"id":"c","choices":[]}')
		expect(stripUsage('{"usage":null}')).toBe('{}')
		for (const d of ['{"id":"c","choices":[{"index":0}],"usage":null}', '{"usage":null,"id":"c","choices":[]}', '{"id":"c","usage":null,"choices":[]}'])
			expect(JSON.parse(stripUsage(d)!)).not.toHaveProperty('usage')
	})
	it('should drop the usage-only chunk and leave other chunks as they are', () => {
		expect(stripUsage('{"id":"c","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}')).toBeUndefined()
		const plain = '{"id":"c","choices":[{"index":0,"delta":{"content":"hi"}}]}'
		expect(stripUsage(plain)).toBe(plain)
	})
	it('should remove only the first member, as a chunk has one top-level usage', () => {
		// A later "usage":null can only be inside a string (escaped quotes) or a nested object; the first is the chunk's.
		expect(stripUsage('{"usage":null,"choices":[{"delta":{"content":"say \\"usage\\":null"}}]}')).toBe('{"choices":[{"delta":{"content":"say \\"usage\\":null"}}]}')
	})
})

describe('rewriteBody (openai-chat): the output cap of a reasoning model', () => {
	const ask = { model: 'think', messages: [{ role: 'user', content: 'hi' }], max_tokens: 32000 }
	it("should move max_tokens to max_completion_tokens for a reasoning model (OpenAI's 400 \"Use 'max_completion_tokens' instead\")", () => {
		expect(rewriteBody('openai-chat', ask, 'o4-mini', undefined, false)).toEqual({ model: 'o4-mini', messages: ask.messages, max_completion_tokens: 32000 })
		expect(rewriteBody('openai-chat', ask, 'gpt-5', 16384, false)).toEqual({ model: 'gpt-5', messages: ask.messages, max_completion_tokens: 16384 })
		// Both sent: max_completion_tokens is the one OpenAI reads.
		expect(rewriteBody('openai-chat', { ...ask, max_completion_tokens: 100 }, 'o3', undefined, false)).toEqual({ model: 'o3', messages: ask.messages, max_completion_tokens: 100 })
	})
	it('should leave max_tokens to a model that takes it', () => {
		expect(rewriteBody('openai-chat', ask, 'gpt-4.1', undefined, false)).toEqual({ ...ask, model: 'gpt-4.1' })
		expect(rewriteBody('openai-chat', ask, 'gpt-4.1', 1000, false)).toEqual({ ...ask, model: 'gpt-4.1', max_tokens: 1000 })
	})
})

describe('rewriteBody (openai-chat): sampling sent to a reasoning model', () => {
	const ask = { model: 'm', messages: [{ role: 'user', content: 'hi' }], temperature: 0.1, top_p: 1 }
	const { temperature: _t, top_p: _p, ...bare } = ask
	it("should leave out the temperature and top_p a reasoning model refuses (400 \"Unsupported parameter: 'temperature'\")", () => {
		expect(rewriteBody('openai-chat', ask, 'o4-mini', undefined, false)).toEqual({ ...bare, model: 'o4-mini' })
		expect(rewriteBody('openai-chat', { ...ask, max_tokens: 100 }, 'gpt-5', undefined, false)).toEqual({ ...bare, model: 'gpt-5', max_completion_tokens: 100 })
	})
	it('should keep them for a model that samples', () => {
		expect(rewriteBody('openai-chat', ask, 'gpt-4.1', undefined, false)).toEqual({ ...ask, model: 'gpt-4.1' })
		expect(rewriteBody('openai-chat', ask, 'gpt-5-chat-latest', undefined, false)).toEqual({ ...ask, model: 'gpt-5-chat-latest' })
	})
	it('should keep them for GPT-5.1 and later at effort none, their default, and leave them out at any other effort', () => {
		expect(rewriteBody('openai-chat', ask, 'gpt-5.2', undefined, false)).toEqual({ ...ask, model: 'gpt-5.2' })
		expect(rewriteBody('openai-chat', { ...ask, reasoning_effort: 'none' }, 'gpt-5.1', undefined, false)).toEqual({ ...ask, reasoning_effort: 'none', model: 'gpt-5.1' })
		expect(rewriteBody('openai-chat', { ...ask, reasoning_effort: 'high' }, 'gpt-5.2', undefined, false)).toEqual({ ...bare, reasoning_effort: 'high', model: 'gpt-5.2' })
		// OpenRouter's reasoning object becomes the effort first: the sampling follows that effort.
		expect(rewriteBody('openai-chat', { ...ask, reasoning: { effort: 'low' } }, 'gpt-5.1', undefined, false)).toEqual({ ...bare, reasoning_effort: 'low', model: 'gpt-5.1' })
		// gpt-5 has no effort none: it never samples.
		expect(rewriteBody('openai-chat', { ...ask, reasoning_effort: 'minimal' }, 'gpt-5-mini', undefined, false)).toEqual({ ...bare, reasoning_effort: 'minimal', model: 'gpt-5-mini' })
	})
})

describe("rewriteBody (openai-chat): OpenRouter's reasoning object (Qwen Code's)", () => {
	const ask = { model: 'm', messages: [{ role: 'user', content: 'hi' }], reasoning: { effort: 'xhigh' } }
	const { reasoning: _, ...bare } = ask
	it("should send it to OpenAI's models as the effort they take, or not at all (400 \"Unrecognized request argument supplied: reasoning\")", () => {
		expect(rewriteBody('openai-chat', ask, 'gpt-5.1', undefined, false)).toEqual({ ...bare, model: 'gpt-5.1', reasoning_effort: 'high' })
		expect(rewriteBody('openai-chat', { ...ask, reasoning: { enabled: false } }, 'gpt-5.1', undefined, false)).toEqual({ ...bare, model: 'gpt-5.1', reasoning_effort: 'none' })
		// The client's own reasoning_effort wins; a model that does not reason gets neither.
		expect(rewriteBody('openai-chat', { ...ask, reasoning_effort: 'low' }, 'o3', undefined, false)).toEqual({ ...bare, model: 'o3', reasoning_effort: 'low' })
		expect(rewriteBody('openai-chat', ask, 'gpt-4.1', undefined, false)).toEqual({ ...bare, model: 'gpt-4.1' })
	})
	it("should leave it to another vendor's model, whose OpenAI-compatible API may take it (OpenRouter does)", () => {
		expect(rewriteBody('openai-chat', ask, 'deepseek-chat', undefined, false)).toEqual({ ...ask, model: 'deepseek-chat' })
		expect(rewriteBody('openai-chat', ask, 'anthropic/claude-sonnet-4.5', undefined, false)).toEqual({ ...ask, model: 'anthropic/claude-sonnet-4.5' })
	})
})

describe('rewriteBody (anthropic-messages): thinking no Anthropic signature vouches for', () => {
	const CLAUDE_SIG = 'EqQBCkgIARABGAIiQL5ZtMmXqy+/=='
	const GEMINI_SIG = tagSignature('gemini-text', 'R0VNX1NJR18y')
	const THINKING = { type: 'enabled', budget_tokens: 1024 }
	const ask = { role: 'user', content: 'x' }
	const claudeTurn = { role: 'assistant', content: [{ type: 'thinking', thinking: 'Mine.', signature: CLAUDE_SIG }, { type: 'text', text: 'Hi.' }] }
	const geminiTurn = { role: 'assistant', content: [{ type: 'thinking', thinking: 'Pondering.', signature: GEMINI_SIG }, { type: 'text', text: 'Answer.' }] }
	const more = { role: 'user', content: 'more' }

	it("should forward a body of Anthropic's own signatures as it came: the same object and the client's bytes", () => {
		const body = { model: 'claude-m', max_tokens: 2048, thinking: THINKING, messages: [ask, claudeTurn, more, claudeTurn, more] }
		const raw = JSON.stringify(body)
		const out = rewriteBody('anthropic-messages', body, 'claude-m', undefined, false)
		expect(out).toBe(body)
		expect(bodyText(raw, body, out)).toBe(raw)
		expect(claudeTakes(body.messages)).toBeUndefined()
	})

	it("should leave out redacted reasoning another vendor made (Converse's, origin-tagged) and keep Anthropic's", () => {
		const mine = { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' }
		const turn = { role: 'assistant', content: [{ type: 'redacted_thinking', data: tagSignature('converse', 'Q09OVkVSU0U=') }, mine, { type: 'text', text: 'Answer.' }] }
		expect(claudeTakes([ask, turn, more])![1]).toEqual({ role: 'assistant', content: [mine, { type: 'text', text: 'Answer.' }] })
	})

	it("should leave out thinking signed by another vendor (origin-tagged) and keep Anthropic's blocks byte for byte", () => {
		const body = { model: 'claude-m', max_tokens: 2048, thinking: THINKING, messages: [ask, geminiTurn, more, claudeTurn, more] }
		const out = rewriteBody('anthropic-messages', body, 'claude-m', undefined, false)
		const messages = out.messages as Array<{ content: unknown[] }>
		expect(messages[1]!.content).toEqual([{ type: 'text', text: 'Answer.' }])
		// Untouched messages are the client's own objects, not copies.
		expect(messages[3]).toBe(claudeTurn)
		expect(out.thinking).toBe(THINKING)
		expect(body.messages[1]).toBe(geminiTurn)
	})

	it('should turn thinking off when the tool turn being continued loses its thinking, as the converted path does', () => {
		const toolTurn = { role: 'assistant', content: [{ type: 'thinking', thinking: 'P', signature: GEMINI_SIG }, { type: 'tool_use', id: 't1', name: 'f', input: {} }] }
		const results = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] }
		const body = { model: 'claude-m', max_tokens: 4096, thinking: THINKING, messages: [ask, toolTurn, results] }
		expect(rewriteBody('anthropic-messages', body, 'claude-m', undefined, false).thinking).toEqual({ type: 'disabled' })
		// A lowered cap does not turn it back on.
		expect(rewriteBody('anthropic-messages', body, 'claude-m', 2000, false)).toMatchObject({ max_tokens: 2000, thinking: { type: 'disabled' } })
		// Unsigned thinking (an OpenAI-compatible vendor's) on a tool turn: the same.
		const unsigned = { ...toolTurn, content: [{ type: 'thinking', thinking: 'P', signature: '' }, toolTurn.content[1]] }
		expect(rewriteBody('anthropic-messages', { ...body, messages: [ask, unsigned, results] }, 'claude-m', undefined, false).thinking).toEqual({ type: 'disabled' })
	})

	it("should leave out whitespace-only text (an OpenAI-compatible model's \"\\n\\n\" before its call), and a message of nothing else", () => {
		const use = { type: 'tool_use', id: 't1', name: 'f', input: {} }
		const results = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] }
		const turn = { role: 'assistant', content: [{ type: 'text', text: '\n\n' }, use] }
		const body = { model: 'claude-m', max_tokens: 4096, messages: [ask, turn, results] }
		const raw = JSON.stringify(body)
		const out = rewriteBody('anthropic-messages', body, 'claude-m', undefined, false)
		expect(out.messages).toEqual([ask, { role: 'assistant', content: [use] }, results])
		// Only the messages member is written again; the rest is the client's text.
		expect(bodyText(raw, body, out)).toBe(JSON.stringify({ ...body, messages: out.messages }))
		// The tool turn being continued then no longer starts with thinking: thinking goes off, as on the converted path.
		expect(rewriteBody('anthropic-messages', { ...body, thinking: THINKING }, 'claude-m', undefined, false).thinking).toEqual({ type: 'disabled' })
		// Empty text too; text beside something real stays, as does whitespace inside text.
		expect(claudeTakes([ask, { role: 'assistant', content: [{ type: 'text', text: '' }, { type: 'text', text: ' a \n' }] }])).toEqual([ask, { role: 'assistant', content: [{ type: 'text', text: ' a \n' }] }])
		// A message of only whitespace between two others is left out (Anthropic merges the turns around it).
		expect(claudeTakes([ask, { role: 'assistant', content: '\n' }, more])).toEqual([ask, more])
		expect(claudeTakes([ask, { role: 'assistant', content: [{ type: 'text', text: ' \t' }] }, more])).toEqual([ask, more])
		// The last message: a prefill may be empty; a user message is sent as written, for Anthropic to refuse.
		expect(claudeTakes([ask, { role: 'assistant', content: [{ type: 'text', text: ' ' }] }])).toEqual([ask, { role: 'assistant', content: [] }])
		const blankAsk = { role: 'user', content: [{ type: 'text', text: ' ' }] }
		expect(claudeTakes([ask, claudeTurn, blankAsk])).toBeUndefined()
		expect(claudeTakes([ask, claudeTurn, { role: 'user', content: ' ' }])).toBeUndefined()
		// Nothing refused: nothing copied.
		expect(claudeTakes([ask, claudeTurn, more, { role: 'assistant', content: [{ type: 'text', text: 'x' }, use] }, results])).toBeUndefined()
	})

	it('should keep thinking on when the last assistant turn still starts with thinking, used no tools, or thinking is off', () => {
		const use = { type: 'tool_use', id: 't', name: 'f', input: {} }
		const on = { type: 'adaptive' }
		expect(thinkingOffFor([{ role: 'assistant', content: [use] }], on)).toEqual({ type: 'disabled' })
		expect(thinkingOffFor([{ role: 'assistant', content: [{ type: 'redacted_thinking', data: 'x' }, use] }], on)).toBeUndefined()
		expect(thinkingOffFor([{ role: 'assistant', content: [{ type: 'text', text: 'a' }] }], on)).toBeUndefined()
		expect(thinkingOffFor([{ role: 'assistant', content: [use] }, { role: 'user', content: 'x' }, { role: 'assistant', content: 'fine' }], on)).toBeUndefined()
		expect(thinkingOffFor([{ role: 'assistant', content: [use] }], { type: 'disabled' })).toBeUndefined()
		expect(thinkingOffFor([{ role: 'assistant', content: [use] }], undefined)).toBeUndefined()
	})
})

describe('rewriteBody (gemini): signatures only this gateway explains', () => {
	const CLAUDE = tagSignature('anthropic', 'EqQBCkgIARABGAIiQL5ZtMmXqy+/==')
	const GEMINI = 'R0VNX1NJR18y'
	const ask = { role: 'user', parts: [{ text: 'q' }] }
	const geminiTurn = { role: 'model', parts: [{ text: 'P', thought: true }, { text: 'A', thoughtSignature: GEMINI }] }

	it("should forward a history of Gemini's own signatures as it came: the same object and the client's bytes", () => {
		const body = { contents: [ask, geminiTurn, ask], generationConfig: { thinkingConfig: { includeThoughts: true } } }
		const raw = JSON.stringify(body)
		const out = rewriteBody('gemini', body, 'gemini-3-pro-preview', undefined, false)
		expect(out).toBe(body)
		expect(bodyText(raw, body, out)).toBe(raw)
	})

	it("should leave out Claude's thinking (tagged signatures, redacted thinking) and keep Gemini's turns as they are", () => {
		const claudeTurn = {
			role: 'model',
			parts: [
				{ text: 'Mine.', thought: true, thoughtSignature: CLAUDE },
				{ text: '', thought: true, thoughtSignature: `${REDACTED_PREFIX}ZW5j` },
				{ text: 'Answer.' },
			],
		}
		const body = { contents: [ask, geminiTurn, ask, claudeTurn, ask] }
		const raw = JSON.stringify(body)
		const out = rewriteBody('gemini', body, 'gemini-3-pro-preview', undefined, false)
		const contents = out.contents as unknown[]
		expect(contents[3]).toEqual({ role: 'model', parts: [{ text: 'Answer.' }] })
		expect(contents[1]).toBe(geminiTurn)
		expect(body.contents[3]).toBe(claudeTurn)
		expect(JSON.parse(String(bodyText(raw, body, out)!))).toEqual(out)
	})

	it('should give a function call the documented placeholder, strip a text part, untag a Gemini tag, and drop an emptied turn', () => {
		const body = {
			contents: [
				ask,
				{ role: 'model', parts: [{ text: 'Mine.', thought: true, thought_signature: CLAUDE }] },
				ask,
				{
					role: 'model',
					parts: [
						{ functionCall: { name: 'f', args: {} }, thoughtSignature: CLAUDE },
						{ text: 'A', thoughtSignature: CLAUDE },
						{ text: '', thoughtSignature: CLAUDE },
						{ text: 'B', thoughtSignature: tagSignature('gemini-text', GEMINI) },
					],
				},
				ask,
			],
		}
		const out = rewriteBody('gemini', body, 'gemini-3-pro-preview', undefined, false)
		expect(out.contents).toEqual([
			ask,
			ask,
			{ role: 'model', parts: [{ functionCall: { name: 'f', args: {} }, thoughtSignature: SKIP_SIGNATURE }, { text: 'A' }, { text: 'B', thoughtSignature: GEMINI }] },
			ask,
		])
	})

	it("should drop the bare empty text parts a chat session keeps from converted streams' last chunk, and the turns they leave empty", () => {
		// @google/genai's chats keep each streamed chunk as a model turn of its own: the answer, then the finishReason
		// chunk's empty text part (Gemini refuses an empty text parameter).
		const answer = { role: 'model', parts: [{ text: 'Hello' }] }
		const body = { contents: [ask, answer, { role: 'model', parts: [{ text: '' }] }, { role: 'model', parts: [{ text: 'x' }, { text: '' }] }, ask] }
		const out = rewriteBody('gemini', body, 'gemini-3-pro-preview', undefined, false)
		expect(out.contents).toEqual([ask, answer, { role: 'model', parts: [{ text: 'x' }] }, ask])
		expect((out.contents as unknown[])[1]).toBe(answer)
		// An empty text part that carries something else (a signature) is the vendor's and stays.
		const signed = { contents: [ask, { role: 'model', parts: [{ text: 'A' }, { text: '', thoughtSignature: GEMINI }] }, ask] }
		expect(rewriteBody('gemini', signed, 'gemini-3-pro-preview', undefined, false)).toBe(signed)
	})
})

describe('rewriteBody (gemini): a Gemini 3 thinking level for an earlier model', () => {
	const ask = (thinkingConfig: Record<string, unknown>) => ({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { temperature: 1, thinkingConfig } })
	it('should send Gemini 2.5 the budget of the level (2.5 refuses thinkingLevel), the rest of the config as it was', () => {
		const high = ask({ includeThoughts: true, thinkingLevel: 'HIGH' })
		expect(rewriteBody('gemini', high, 'gemini-2.5-flash-lite', undefined, true)).toEqual(ask({ includeThoughts: true, thinkingBudget: 4096 }))
		expect(rewriteBody('gemini', ask({ thinkingLevel: 'low' }), 'models/gemini-2.0-flash', undefined, false)).toEqual(ask({ thinkingBudget: 1024 }))
		const snake = { contents: [], generation_config: { thinking_config: { thinking_level: 'MEDIUM' } } }
		expect(rewriteBody('gemini', snake, 'gemini-2.5-pro', undefined, false)).toEqual({ contents: [], generation_config: { thinking_config: { thinking_budget: 2048 } } })
	})
	it('should keep a budget sent beside the level (Gemini refuses the two together) and drop the level', () => {
		expect(rewriteBody('gemini', ask({ thinkingLevel: 'HIGH', thinkingBudget: 512 }), 'gemini-2.5-flash', undefined, false)).toEqual(ask({ thinkingBudget: 512 }))
	})
	it('should leave the level to Gemini 3 and later, and to a model whose name tells no Gemini version', () => {
		const body = ask({ includeThoughts: true, thinkingLevel: 'HIGH' })
		for (const model of ['gemini-3-flash-preview', 'gemini-3.5-flash-lite', 'my-tuned-model']) expect(rewriteBody('gemini', body, model, undefined, false)).toBe(body)
	})
	it('should lower the cap in the same config', () => {
		expect(rewriteBody('gemini', ask({ thinkingLevel: 'HIGH' }), 'gemini-2.5-flash', 100, false)).toEqual({
			contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
			generationConfig: { temperature: 1, thinkingConfig: { thinkingBudget: 4096 }, maxOutputTokens: 100 },
		})
	})
})
