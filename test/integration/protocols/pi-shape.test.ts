/**
 * The pi coding agent (`@mariozechner/pi-coding-agent` 0.73, its `anthropic-messages` provider on the official Anthropic
 * SDK) pointed at the gateway with a GPT or Gemini model. pi replays a thinking block whose `signature` is empty as a
 * plain text block (pi-ai providers/anthropic.js: "If thinking signature is missing/empty … convert to plain text
 * block"), as a client of Anthropic's own API may: Anthropic signs every thinking block. So the gateway signs the
 * thinking no vendor signed, and the model gets its reasoning back as reasoning, not as words it said to the user.
 * With `--thinking off` pi turns thinking off in each protocol's terms (Anthropic `thinking: {type: "disabled"}`, Gemini
 * `thinkingBudget: 0` on @google/genai); an OpenAI reasoning model then gets the least effort it takes, and a Gemini
 * model the least thinking it takes, not their default (which thinks, and bills it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import { lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, THINKER, type Upstream } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const ASK = '#call read {"path":"hello.txt"}'
const THINKING = `Let me think about ${ASK}.`
const TOOLS = [{ name: 'read', description: 'Read a file', input_schema: { type: 'object' as const, properties: { path: { type: 'string' } }, required: ['path'] } }]

/** An assistant turn as pi sends it back: unsigned thinking as text, signed thinking and tool calls as they came. */
const piReplay = (content: Anthropic.ContentBlock[]) =>
	content.flatMap((b): Anthropic.ContentBlockParam[] => {
		if (b.type === 'thinking') return b.signature.trim() ? [{ type: 'thinking', thinking: b.thinking, signature: b.signature }] : [{ type: 'text', text: b.thinking }]
		if (b.type === 'tool_use') return [{ type: 'tool_use', id: b.id, name: b.name, input: b.input }]
		if (b.type === 'text' && b.text.trim()) return [{ type: 'text', text: b.text }]
		return []
	})

/** The replayed assistant turn as the vendor received it, and whatever of it was sent as text. */
function sentTurn(up: Upstream): { text: string[]; turn: any } {
	const body = lastRequest(m.mocks[up]).body
	if (up === 'gemini') {
		const turn = body.contents.find((c: any) => c.role === 'model')
		return { turn, text: turn.parts.filter((p: any) => typeof p.text === 'string' && !p.thought).map((p: any) => p.text) }
	}
	const turn = body.messages.find((x: any) => x.role === 'assistant')
	return { turn, text: typeof turn.content === 'string' && turn.content ? [turn.content] : [] }
}

describe('pi (Anthropic SDK) tool loop on a model of another vendor, thinking on', () => {
	for (const up of ['openai', 'gemini'] as const)
		for (const stream of [false, true])
			it(`should keep ${up}'s thinking as thinking when pi replays it (${stream ? 'stream' : 'JSON'})`, async () => {
				const acct = await m.account()
				const model = up === 'openai' ? THINKER.openai : MODEL.gemini
				const ask = { model, max_tokens: 4000, thinking: { type: 'enabled' as const, budget_tokens: 1024 }, tools: TOOLS }
				const user: Anthropic.MessageParam = { role: 'user', content: ASK }
				const first = stream ? await acct.anthropic.messages.stream({ ...ask, messages: [user] }).finalMessage() : await acct.anthropic.messages.create({ ...ask, messages: [user] })
				expect(first.content.map((b) => b.type)).toEqual(['thinking', 'tool_use'])
				const thought = first.content[0] as Anthropic.ThinkingBlock
				expect(thought.thinking).toBe(THINKING)
				expect(thought.signature).not.toBe('')

				const call = first.content[1] as Anthropic.ToolUseBlock
				const results: Anthropic.MessageParam = { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'hello world' }] }
				const second = await acct.anthropic.messages.create({ ...ask, messages: [user, { role: 'assistant', content: piReplay(first.content) }, results] })
				expect(second.content.flatMap((b) => (b.type === 'text' ? [b.text] : []))).toEqual(['Tool results: hello world'])
				const sent = sentTurn(up)
				expect(sent.text).toEqual([])
				if (up === 'openai') expect(sent.turn.reasoning_content).toBe(THINKING)
			})
})

describe('pi --thinking off on an OpenAI reasoning model', () => {
	// THINKER.openai is o4-mini upstream, whose least effort is low (routing/reasoning-models.ts).
	it('should send the least effort for Anthropic thinking disabled', async () => {
		const acct = await m.account()
		await acct.anthropic.messages.create({ model: THINKER.openai, max_tokens: 4000, thinking: { type: 'disabled' }, messages: [{ role: 'user', content: 'hi' }] })
		expect(lastRequest(m.mocks.openai).body.reasoning_effort).toBe('low')
	})

	it('should send the least effort for Gemini thinkingBudget 0', async () => {
		const acct = await m.account()
		const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
		const stream = await ai.models.generateContentStream({ model: THINKER.openai, contents: 'hi', config: { maxOutputTokens: 4000, thinkingConfig: { thinkingBudget: 0 } } })
		for await (const _ of stream);
		expect(lastRequest(m.mocks.openai).body.reasoning_effort).toBe('low')
	})

	it('should still send no effort to a model that does not reason', async () => {
		const acct = await m.account()
		await acct.anthropic.messages.create({ model: MODEL.openai, max_tokens: 4000, thinking: { type: 'disabled' }, messages: [{ role: 'user', content: 'hi' }] })
		expect(lastRequest(m.mocks.openai).body.reasoning_effort).toBeUndefined()
	})
})

describe('pi --thinking off (anthropic-messages) on a Gemini model', () => {
	it('should turn Gemini 2.5 Flash thinking off rather than leave it at its default', async () => {
		const acct = await m.account()
		await acct.anthropic.messages.create({ model: MODEL.gemini, max_tokens: 4000, thinking: { type: 'disabled' }, messages: [{ role: 'user', content: 'hi' }] })
		expect(lastRequest(m.mocks.gemini).body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 0 })
	})
})
