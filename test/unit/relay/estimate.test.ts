import { describe, expect, it } from 'bun:test'
import type { ChatRequest } from '../../../src/core/ir'
import { boundInputTokens, boundText, estimateInputTokens } from '../../../src/relay/estimate'

/** The bound as it was first defined: ASCII characters / 3 (rounded up) plus one per other UTF-16 unit. */
function boundByLoop(text: string): number {
	let ascii = 0
	let other = 0
	for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) < 128) ascii++
	else other++
	return Math.ceil(ascii / 3) + other
}

describe('boundText', () => {
	it('should give the per-character bound for ASCII, Latin-1, CJK, emoji and mixed texts', () => {
		for (const t of ['', 'a', 'hello world', 'x'.repeat(10_000), 'café crème', 'naïve — “quoted”', '日本語のテキスト', 'emoji 🎉🎉 end', `${'ascii '.repeat(500)}ß`, '\u0080\u07ff\u0800\uffff'])
			expect(boundText(t)).toBe(boundByLoop(t))
	})
})

describe('boundInputTokens', () => {
	const req: ChatRequest = {
		model: 'm',
		stream: false,
		system: [{ type: 'text', text: 'You are a careful coding agent. '.repeat(20) }],
		messages: [
			{ role: 'user', content: [{ type: 'text', text: 'Fix the failing test in src/app.ts, please.' }] },
			{ role: 'assistant', content: [{ type: 'tool_call', id: 'c1', name: 'read_file', input: { path: 'src/app.ts' } }] },
			{
				role: 'user',
				content: [
					{
						type: 'tool_result',
						toolCallId: 'c1',
						content: [
							{ type: 'text', text: 'export const app = createApp()\n'.repeat(40) },
							{ type: 'text', text: '// 日本語のコメント\n'.repeat(5) },
						],
					},
				],
			},
		],
		tools: [{ name: 'read_file', description: 'Reads a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } }],
	}

	it('should bound the tokenizer count from above', () => {
		expect(boundInputTokens(req)).toBeGreaterThanOrEqual(estimateInputTokens(req))
	})

	it('should count a tool result text by text, with one token per separator', () => {
		const [a, b] = (req.messages[2]!.content[0] as { content: { text: string }[] }).content
		const joined = structuredClone(req)
		;(joined.messages[2]!.content[0] as { content: unknown[] }).content = [{ type: 'text', text: `${a!.text}\n${b!.text}` }]
		// One separator: the pieces' bounds plus one, never less than the joined text's bound.
		expect(boundInputTokens(req)).toBeGreaterThanOrEqual(boundInputTokens(joined))
		expect(boundInputTokens(req) - boundInputTokens(joined)).toBeLessThanOrEqual(2)
	})
})
