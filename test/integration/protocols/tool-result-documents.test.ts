/**
 * A tool that returns a document: Anthropic's `tool_result.content` takes `document` blocks beside text and images
 * (https://docs.anthropic.com/en/api/messages, ToolResultBlockParam), which MCP servers and agents use for a file's
 * text. A plain-text or a custom-content document is text to a vendor without documents, and
 * belongs in the tool's answer: toward OpenAI chat it was moved into a user message after the `role:"tool"` message,
 * which was left empty, so the model read the call as having returned nothing and the file as the user's words.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type Anthropic from '@anthropic-ai/sdk'
import { messages } from './clients'
import { label, lastRequest, type Matrix, MODEL, PAIRS, SETUP_MS, startMatrix } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const TOOL: Anthropic.Messages.Tool = { name: 'read_file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }

/** Three calls answered with a document each: plain text with a title, with a context, and custom content with an image after text. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
const history: Anthropic.Messages.MessageParam[] = [
	{ role: 'user', content: 'read three files' },
	{
		role: 'assistant',
		content: [
			{ type: 'tool_use', id: 'toolu_01A', name: 'read_file', input: { path: 'a.txt' } },
			{ type: 'tool_use', id: 'toolu_01B', name: 'read_file', input: { path: 'b.txt' } },
			{ type: 'tool_use', id: 'toolu_01C', name: 'read_file', input: { path: 'c.md' } },
		],
	},
	{
		role: 'user',
		content: [
			{ type: 'tool_result', tool_use_id: 'toolu_01A', content: [{ type: 'document', title: 'a.txt', source: { type: 'text', media_type: 'text/plain', data: 'alpha body' } }] },
			{ type: 'tool_result', tool_use_id: 'toolu_01B', content: [{ type: 'document', context: 'cached copy', source: { type: 'text', media_type: 'text/plain', data: 'beta body' } }] },
			{
				type: 'tool_result',
				tool_use_id: 'toolu_01C',
				content: [
					{ type: 'text', text: 'read:' },
					{ type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'gamma body' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] } },
				],
			},
		],
	},
]

describe('a tool result holding a document', () => {
	for (const [up, stream] of PAIRS) {
		it(`should reach the model as the tool's answer, not as the user's words (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const a = await messages(acct.anthropic, { model: MODEL[up], max_tokens: 100, tools: [TOOL], messages: history }, stream)
			const sent = lastRequest(m.mocks[up]).body
			if (up === 'anthropic') {
				expect(sent.messages).toEqual(history)
				expect(a.text).toBe('Tool results: alpha body; beta body; read: gamma body')
				return
			}
			if (up === 'openai') {
				// Each document's text is its call's answer; only the image, which a tool message cannot hold, follows in a user turn.
				expect(sent.messages.slice(2)).toEqual([
					{ role: 'tool', tool_call_id: 'toolu_01A', content: 'a.txt\n\nalpha body' },
					{ role: 'tool', tool_call_id: 'toolu_01B', content: 'cached copy\n\nbeta body' },
					{ role: 'tool', tool_call_id: 'toolu_01C', content: 'read:\ngamma body' },
					{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] },
				])
			} else {
				const responses = sent.contents.at(-1).parts.flatMap((p: { functionResponse?: { response: unknown } }) => (p.functionResponse ? [p.functionResponse.response] : []))
				expect(responses).toEqual([{ result: 'a.txt\n\nalpha body' }, { result: 'cached copy\n\nbeta body' }, { result: 'read:\ngamma body' }])
				expect(sent.contents.at(-1).parts.at(-1)).toEqual({ inlineData: { mimeType: 'image/png', data: PNG } })
			}
			// Gemini's last turn is still the tool results, which its mock answers; OpenAI's ends with the image's user turn.
			if (up === 'gemini') expect(a.text).toBe('Tool results: a.txt\n\nalpha body; cached copy\n\nbeta body; read:\ngamma body')
			else expect(a.text).toBe('I see 1 image. Hello! You said: ')
		})
	}
})
