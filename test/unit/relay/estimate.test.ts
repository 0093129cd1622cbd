import { describe, expect, it } from 'bun:test'
import type { ChatRequest } from '../../../src/core/ir'
import { anthropicMessages } from '../../../src/protocols/anthropic-messages'
import { openaiChat } from '../../../src/protocols/openai-chat'
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

describe('boundInputTokens from the body text', () => {
	/** A coding agent's turn: a system prompt, tools with schemas, and `rounds` tool round trips of ASCII text. */
	function agentTurn(protocol: 'chat' | 'messages', rounds: number, extra: unknown[] = []) {
		const tools = Array.from({ length: 12 }, (_, i) => ({
			name: `tool_${i}`,
			description: `Does thing number ${i} to the workspace. `.repeat(4),
			schema: { type: 'object', properties: { path: { type: 'string', description: 'A path in the repository' }, limit: { type: 'integer', minimum: 1 } }, required: ['path'] },
		}))
		const system = 'You are a careful coding agent working in a repository. '.repeat(40)
		if (protocol === 'chat') {
			const messages: unknown[] = [{ role: 'system', content: system }, { role: 'user', content: 'Fix the failing test, please.' }]
			for (let r = 0; r < rounds; r++) {
				messages.push({ role: 'assistant', content: null, tool_calls: [{ id: `call_${r}`, type: 'function', function: { name: 'tool_1', arguments: JSON.stringify({ path: `src/file_${r}.ts`, limit: 200 }) } }] })
				messages.push({ role: 'tool', tool_call_id: `call_${r}`, content: `export function f${r}() { return ${r} }\n`.repeat(30) })
			}
			messages.push(...extra)
			return { model: 'm', stream: true, max_tokens: 4096, messages, tools: tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.schema } })) }
		}
		const messages: unknown[] = [{ role: 'user', content: 'Fix the failing test, please.' }]
		for (let r = 0; r < rounds; r++) {
			messages.push({ role: 'assistant', content: [{ type: 'text', text: 'Reading it.' }, { type: 'tool_use', id: `toolu_${r}`, name: 'tool_1', input: { path: `src/file_${r}.ts`, limit: 200 } }] })
			messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${r}`, content: `export function f${r}() { return ${r} }\n`.repeat(30) }] })
		}
		messages.push(...extra)
		return { model: 'm', stream: true, max_tokens: 4096, system, messages, tools: tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.schema })) }
	}
	const decode = (protocol: 'chat' | 'messages', body: unknown) => (protocol === 'chat' ? openaiChat.decodeRequest(body as never) : anthropicMessages.decodeRequest(body as never))

	for (const protocol of ['chat', 'messages'] as const) {
		it(`should bound a large ASCII ${protocol} body by its length / 3, never below the text-by-text bound`, () => {
			const body = agentTurn(protocol, 40)
			for (const raw of [JSON.stringify(body), JSON.stringify(body, null, 2)]) {
				expect(raw.length).toBeGreaterThan(16 * 1024)
				const ir = decode(protocol, JSON.parse(raw))
				const byText = boundInputTokens(ir)
				expect(boundInputTokens(ir, raw)).toBe(Math.ceil(raw.length / 3))
				expect(boundInputTokens(ir, raw)).toBeGreaterThanOrEqual(byText)
				expect(boundInputTokens(ir, raw)).toBeGreaterThanOrEqual(estimateInputTokens(ir))
			}
			// Compact JSON: the text's own characters add less than half again.
			const raw = JSON.stringify(body)
			expect(boundInputTokens(decode(protocol, body), raw)).toBeLessThan(1.5 * boundInputTokens(decode(protocol, body)))
		})

		it(`should count ${protocol} bodies text by text when small, not ASCII, or carrying an image or a document`, () => {
			const small = agentTurn(protocol, 1)
			const smallRaw = JSON.stringify(small)
			expect(smallRaw.length).toBeLessThan(16 * 1024)
			expect(boundInputTokens(decode(protocol, small), smallRaw)).toBe(boundInputTokens(decode(protocol, small)))

			const cjk = agentTurn(protocol, 40, [{ role: 'user', content: '日本語で説明してください' }])
			const cjkIr = decode(protocol, cjk)
			expect(boundInputTokens(cjkIr, JSON.stringify(cjk))).toBe(boundInputTokens(cjkIr))

			const png = 'iVBORw0KGgo'.repeat(3000)
			const image =
				protocol === 'chat'
					? { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] }
					: { role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }] }
			const withImage = agentTurn(protocol, 40, [image])
			const imageIr = decode(protocol, withImage)
			// Per image, not by the size of its data.
			expect(boundInputTokens(imageIr, JSON.stringify(withImage))).toBe(boundInputTokens(imageIr))
			expect(boundInputTokens(imageIr)).toBeLessThan(Math.ceil(JSON.stringify(withImage).length / 3))

			if (protocol === 'messages') {
				// A PDF rides along for the same protocol; its base64 is not text to bound.
				const document = { role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: png } }, { type: 'text', text: 'Summarise it.' }] }
				const withDocument = agentTurn(protocol, 40, [document])
				const documentIr = decode(protocol, withDocument)
				expect(boundInputTokens(documentIr, JSON.stringify(withDocument))).toBe(boundInputTokens(documentIr))
			}
		})
	}
})
